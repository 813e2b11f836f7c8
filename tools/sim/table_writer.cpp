// SPDX-License-Identifier: GPL-2.0-or-later
#include "table_writer.hpp"

#include "cli.hpp"
#include "units.hpp"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>

namespace nvlblock::sim {

const char* queue_name(QueueMode q) {
    return q == QueueMode::kFifo ? "fifo" : "easy";
}

const char* preemption_name(PreemptionMode p) {
    switch (p) {
    case PreemptionMode::kLend:
        return "lend";
    case PreemptionMode::kAll:
        return "all";
    case PreemptionMode::kNone:
        return "none";
    }
    return "?";
}

namespace {

std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}
std::string pct(double v) {
    return fmt("%.1f%%", 100 * v);
}
std::string num(double v, int decimals = 0) {
    return cli::grouped(v, decimals);
}
std::string dur(double s) {
    return s <= 0 ? "0" : format_duration(s);
}
std::string ratio(double v) {
    return fmt(v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
}

using Rows = std::vector<std::pair<std::string, std::vector<std::string>>>;

// One row per size class that has jobs under some policy: p50/p95(/p99).
void class_rows(Rows& rows, const std::vector<PolicyResult>& results, const std::string& what,
                std::vector<WaitStats> PolicyResult::*stats, bool p99) {
    for (const WaitStats& w : results.front().*stats) {
        bool any = false;
        for (const auto& r : results)
            for (const auto& x : r.*stats)
                any = any || (x.size_class == w.size_class && x.count > 0);
        if (!any)
            continue;
        std::vector<std::string> cells;
        for (const auto& r : results) {
            std::string cell = "-";
            for (const auto& x : r.*stats)
                if (x.size_class == w.size_class && x.count)
                    cell = dur(x.p50) + "/" + dur(x.p95) + (p99 ? "/" + dur(x.p99) : std::string());
            cells.push_back(cell);
        }
        rows.emplace_back(what + (p99 ? " p50/p95/p99 " : " p50/p95 ") + w.size_class, std::move(cells));
    }
}

// Bounded slowdown (no unit): mean/p95 per size class with jobs.
void slowdown_rows(Rows& rows, const std::vector<PolicyResult>& results) {
    for (std::size_t c = 0; c < results.front().slowdowns.size(); ++c) {
        bool any = false;
        for (const auto& r : results)
            any = any || (c < r.slowdowns.size() && r.slowdowns[c].count > 0);
        if (!any)
            continue;
        std::vector<std::string> cells;
        for (const auto& r : results) {
            const bool has = c < r.slowdowns.size() && r.slowdowns[c].count > 0;
            cells.push_back(has ? ratio(r.slowdowns[c].mean) + "/" + ratio(r.slowdowns[c].p95) : "-");
        }
        rows.emplace_back("bounded slowdown mean/p95 " + results.front().slowdowns[c].size_class, std::move(cells));
    }
}

std::string p50_p95(const WaitStats& s) {
    return s.count ? dur(s.p50) + "/" + dur(s.p95) : std::string("-");
}

// The run's settings, before the table.
void write_header(std::ostream& out, const RunInfo& run, const PolicyResult& first) {
    const SimOptions& o = run.options;
    char head[512];
    std::snprintf(head, sizeof head, "nvlblock-sim: %d racks x %d nodes (%s nodes, %s GPUs), seed %llu\n",
                  o.shape.racks, o.shape.nodes_per_rack, num(first.nodes).c_str(),
                  num(static_cast<double>(first.nodes) * first.gpus_per_node).c_str(),
                  static_cast<unsigned long long>(run.seed));
    out << head;
    out << "workload: " << run.workload << "\n";
    out << "failures: " << run.failures << "\n";
    std::snprintf(
        head, sizeof head,
        "window %s - %s s (%s); %s queue; checkpoint every %s; requeue delay %llu s; recovery wait %llu s; reclaim "
        "budget %llu s\n",
        num(static_cast<double>(first.window_start)).c_str(), num(static_cast<double>(first.window_end)).c_str(),
        dur(static_cast<double>(first.window_end - first.window_start)).c_str(),
        o.queue == QueueMode::kEasy ? "EASY backfill" : "FIFO",
        o.checkpoint_interval > 0 ? dur(static_cast<double>(o.checkpoint_interval)).c_str() : "never",
        static_cast<unsigned long long>(o.requeue_delay), static_cast<unsigned long long>(o.shape.recovery_wait),
        static_cast<unsigned long long>(o.shape.reclaim_budget));
    out << head;
    const VictimModel& v = o.victims;
    if (!o.shape.reclaim_from_qos.empty() || v.grace_time > 0 || v.checkpoint_on_signal > 0 ||
        v.requeueable_share < 1) {
        std::string from;
        for (const std::string& q : o.shape.reclaim_from_qos)
            from += (from.empty() ? "" : ",") + q;
        out << "reclaim from QOS: " << (from.empty() ? "none" : from) << " (and what preemption allows); grace time "
            << dur(static_cast<double>(v.grace_time)) << "; " << pct(v.checkpoint_on_signal)
            << " checkpoint on signal (write " << dur(static_cast<double>(v.checkpoint_write)) << "); "
            << pct(v.requeueable_share) << " requeueable\n";
    }
    if (v.kill_wait > 0)
        out << "a killed job's nodes complete for " << dur(static_cast<double>(v.kill_wait))
            << " before they are free (KillWait)\n";
    if (v.checkpoint_share < 1 || v.checkpoint_restore > 0)
        out << pct(v.checkpoint_share) << " of jobs checkpoint; a restart loads its checkpoint for "
            << dur(static_cast<double>(v.checkpoint_restore)) << "\n";
    if (!o.shape.hierarchy.empty()) {
        std::string levels;
        for (int per : o.shape.hierarchy)
            levels += (levels.empty() ? "" : ", ") + std::to_string(per) + " racks";
        out << "hierarchy: groups of " << levels << " (SU: the first); nvlblock crossing: "
            << (o.shape.crossing < 0 ? std::string("strict") : dur(static_cast<double>(o.shape.crossing))) << "\n";
    }
    out << "\n";
}

// The table's rows, a cell per policy; an empty row is a blank line.
class RowTable {
  public:
    explicit RowTable(const std::vector<PolicyResult>& results) : results_(results) {}
    template <class Cell>
    void row(const std::string& label, Cell&& cell) {
        std::vector<std::string> cells;
        for (const auto& r : results_)
            cells.push_back(cell(r));
        rows_.emplace_back(label, std::move(cells));
    }
    void sep() { rows_.emplace_back("", std::vector<std::string>()); }
    Rows& rows() { return rows_; }
    const std::vector<PolicyResult>& results() const { return results_; }

  private:
    const std::vector<PolicyResult>& results_;
    Rows rows_;
};

// What the cluster delivered and lost.
void usage_rows(RowTable& t) {
    t.row("useful GPU-hours", [](const PolicyResult& r) { return num(r.useful_gpu_hours); });
    t.row("goodput (useful / healthy)", [](const PolicyResult& r) { return pct(r.goodput); });
    t.row("utilization of healthy nodes", [](const PolicyResult& r) { return pct(r.utilization); });
    t.row("  of which preemptible work", [](const PolicyResult& r) {
        return r.healthy_gpu_hours > 0 ? pct(r.busy_preemptible_gpu_hours / r.healthy_gpu_hours) : "-";
    });
    t.row("healthy nodes (mean)", [](const PolicyResult& r) { return num(r.healthy_nodes_mean, 1); });
    t.row("idle healthy nodes (mean)", [](const PolicyResult& r) { return num(r.idle_nodes_mean, 1); });
    t.row("stranded nodes (mean)", [](const PolicyResult& r) { return num(r.stranded_nodes_mean, 1); });
    t.row("time with jobs waiting", [](const PolicyResult& r) { return pct(r.waiting_time_fraction); });
    t.row("lost to failures (GPU-h)", [](const PolicyResult& r) { return num(r.lost_failure_gpu_hours, 1); });
    t.row("lost to preemption (GPU-h)", [](const PolicyResult& r) { return num(r.lost_preemption_gpu_hours, 1); });
    t.row("held as in-job standbys (GPU-h)", [](const PolicyResult& r) { return num(r.standby_gpu_hours, 1); });
}

// What the jobs saw: how many ran, waits, responses, slowdowns, and where
// multi-rack jobs landed in the hierarchy.
void job_rows(RowTable& t, const PolicyResult& first) {
    const std::vector<PolicyResult>& results = t.results();
    t.row("jobs completed / submitted", [](const PolicyResult& r) {
        return num(static_cast<double>(r.jobs_completed)) + " / " + num(static_cast<double>(r.jobs_submitted));
    });
    t.row("jobs never started", [](const PolicyResult& r) { return num(static_cast<double>(r.jobs_unstarted)); });
    class_rows(t.rows(), results, "wait", &PolicyResult::waits, true);
    class_rows(t.rows(), results, "response", &PolicyResult::responses, false);
    slowdown_rows(t.rows(), results);
    if (first.hierarchy) {
        t.sep();
        t.row("multi-rack jobs started",
              [](const PolicyResult& r) { return num(static_cast<double>(r.spread.multi_rack)); });
        t.row("  in one SU, of those that fit one", [](const PolicyResult& r) {
            return r.spread.fit_one_su
                       ? pct(static_cast<double>(r.spread.confined) / static_cast<double>(r.spread.fit_one_su)) +
                             " of " + num(static_cast<double>(r.spread.fit_one_su))
                       : std::string("-");
        });
        t.row("  mean SUs spanned", [](const PolicyResult& r) {
            return r.spread.multi_rack ? num(r.spread.mean_sus(), 2) : std::string("-");
        });
    }
}

// How failed jobs came back.
void recovery_rows(RowTable& t) {
    t.row("runs killed by failures",
          [](const PolicyResult& r) { return num(static_cast<double>(r.failure_requeues)); });
    t.row("restarts (in place)", [](const PolicyResult& r) {
        return num(static_cast<double>(r.restarts)) + " (" + num(static_cast<double>(r.restarts_in_place)) + ")";
    });
    t.row("restart delay p50/p95", [](const PolicyResult& r) {
        return r.restart_delay.count ? dur(r.restart_delay.p50) + "/" + dur(r.restart_delay.p95) : std::string("-");
    });
    t.row("multi-node restarts (in place)", [](const PolicyResult& r) {
        return num(static_cast<double>(r.multi_node_restarts)) + " (" +
               num(static_cast<double>(r.multi_node_in_place)) + ")";
    });
    t.row("multi-node restart delay p50/p95", [](const PolicyResult& r) {
        return r.multi_node_restart_delay.count
                   ? dur(r.multi_node_restart_delay.p50) + "/" + dur(r.multi_node_restart_delay.p95)
                   : std::string("-");
    });
}

// What reclaims and preemption moved, and what it cost those moved.
void preemption_rows(RowTable& t) {
    t.row("preemptions (of which reclaims)", [](const PolicyResult& r) {
        return num(static_cast<double>(r.preemptions)) + " (" + num(static_cast<double>(r.reclaims)) + ")";
    });
    t.row("jobs moved by reclaims (per 1,000)", [](const PolicyResult& r) {
        return num(static_cast<double>(r.reclaims)) + " (" + num(r.moved_per_1000_jobs(), 1) + ")";
    });
    t.row("  victims' lost node-hours", [](const PolicyResult& r) { return num(r.lost_reclaim_node_hours, 1); });
    t.row("  most moves of one job",
          [](const PolicyResult& r) { return num(static_cast<double>(r.most_moves_one_job)); });
    t.row("  reclaim victims' extra time p50/p95",
          [](const PolicyResult& r) { return p50_p95(r.reclaimed_extra_response); });
    t.row("  checkpointed in grace time",
          [](const PolicyResult& r) { return r.reclaim_requeues ? pct(r.checkpointed_share()) : std::string("-"); });
    t.row("jobs preempted (most times one job)", [](const PolicyResult& r) {
        return num(static_cast<double>(r.preempted_jobs)) + " (" +
               num(static_cast<double>(r.most_preemptions_one_job)) + ")";
    });
    t.row("  their lost node-hours", [](const PolicyResult& r) { return num(r.lost_preempted_node_hours, 1); });
    t.row("  their extra time p50/p95", [](const PolicyResult& r) { return p50_p95(r.preempted_extra_response); });
}

// In-job restarts and the faults behind every recovery.
void fault_rows(RowTable& t) {
    const std::vector<PolicyResult>& results = t.results();
    t.row("in-job restarts (standbys used)", [](const PolicyResult& r) {
        return num(static_cast<double>(r.in_job_restarts)) + " (" + num(static_cast<double>(r.standbys_used)) + ")";
    });
    t.row("node failures / rack faults", [](const PolicyResult& r) {
        return num(static_cast<double>(r.node_failures)) + " / " + num(static_cast<double>(r.rack_faults));
    });
    if (std::any_of(results.begin(), results.end(),
                    [](const PolicyResult& r) { return r.up_faults || r.job_faults; })) {
        t.row("faults with the node up / of the job", [](const PolicyResult& r) {
            return num(static_cast<double>(r.up_faults)) + " / " + num(static_cast<double>(r.job_faults));
        });
        t.row("  runs they ended (on a hidden fault)", [](const PolicyResult& r) {
            return num(static_cast<double>(r.fault_ends)) + " (" + num(static_cast<double>(r.hidden_fault_hits)) + ")";
        });
        t.row("  jobs not requeued (GPU-h left)", [](const PolicyResult& r) {
            return num(static_cast<double>(r.jobs_not_requeued)) + " (" + num(r.not_requeued_gpu_hours, 0) + ")";
        });
    }
}

void print_rows(std::ostream& out, const Rows& rows, const std::vector<PolicyResult>& results) {
    std::size_t label_w = 0, cell_w = 12;
    for (const auto& [label, cells] : rows) {
        label_w = std::max(label_w, label.size());
        for (const auto& c : cells)
            cell_w = std::max(cell_w, c.size());
    }
    auto pad_left = [](const std::string& s, std::size_t w) {
        return std::string(w > s.size() ? w - s.size() : 0, ' ') + s;
    };
    out << std::string(label_w, ' ');
    for (const auto& r : results)
        out << "  " << pad_left(r.policy.name, cell_w);
    out << "\n";
    for (const auto& [label, cells] : rows) {
        if (cells.empty()) {
            out << "\n";
            continue;
        }
        out << label << std::string(label_w - label.size(), ' ');
        for (const auto& c : cells)
            out << "  " << pad_left(c, cell_w);
        out << "\n";
    }
}

} // namespace

void write_table(std::ostream& out, const RunInfo& run, const std::vector<PolicyResult>& results) {
    if (results.empty())
        return;
    const PolicyResult& first = results.front();
    write_header(out, run, first);
    RowTable t(results);
    t.row("slice / spares / lending", [](const PolicyResult& r) {
        return std::to_string(r.policy.slice) + " / " + std::to_string(r.policy.spares) +
               (r.policy.reclaim ? " reclaim" : "") +
               (r.policy.standbys ? " +" + std::to_string(r.policy.standbys) + " in job" : "") + " / " +
               (r.policy.lending ? "on" : "off") + (r.policy.expedite ? " expedite" : "");
    });
    t.sep();
    usage_rows(t);
    t.sep();
    job_rows(t, first);
    t.sep();
    recovery_rows(t);
    preemption_rows(t);
    fault_rows(t);
    t.sep();
    t.row("events", [](const PolicyResult& r) { return num(static_cast<double>(r.events)); });
    t.row("placement calls", [](const PolicyResult& r) { return num(static_cast<double>(r.place_calls)); });
    print_rows(out, t.rows(), results);
    // A policy that starts fewer jobs can show shorter waits: say whom each counts.
    out << "\nwait: jobs that started in the window; response and slowdown: jobs that completed in it; "
           "the others are the 'jobs never started' row\n";
}

} // namespace nvlblock::sim
