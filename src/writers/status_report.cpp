// SPDX-License-Identifier: GPL-2.0-or-later
#include "writers/status_report.hpp"

#include "recovery/reclaim.hpp"

#include "model/node_names.hpp"
#include "recovery/rules.hpp"

#include "model/hostlist.hpp"
#include "writers/json_writer.hpp"
#include "writers/status_schema.hpp"
#include "writers/time_text.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace nvlblock {

const char* health_name(BlockHealth h) {
    switch (h) {
    case BlockHealth::kHealthy:
        return "healthy";
    case BlockHealth::kDegraded:
        return "degraded";
    case BlockHealth::kDown:
        return "down";
    }
    return "unknown";
}

namespace {

// A block's node counts added to a total (the cluster's, a group's).
template <typename Total>
void add_counts(Total& t, const BlockReport& b) {
    t.healthy += b.healthy;
    t.failed += b.failed;
    t.busy += b.busy;
    t.lent += b.lent;
    t.free += b.free;
    t.stranded += b.stranded;
    t.ordinary_free += b.ordinary_free;
}

// One block's line of the report: its nodes' states, its spares, its holds.
BlockReport block_report(const Topology& topo, const Snapshot& snap, std::span<const NodeState> states, BlockIndex b) {
    const Block& block = topo.block(b);
    const BlockTally& t = snap.tally(b);
    BlockReport br;
    br.name = block.name;
    br.nodes = block.nodes_expr;
    br.size = t.size;
    br.slice = block.settings.slice;
    br.spares = block.settings.spares;
    br.lending = block.settings.lending;
    br.health = t.fault ? BlockHealth::kDown : (t.degraded() ? BlockHealth::kDegraded : BlockHealth::kHealthy);
    br.failed = t.failed;
    br.down = t.down;
    br.drained = t.drained;
    br.healthy = t.size - t.failed;
    br.spare_deficit = std::max(0, br.slice + br.spares - br.healthy);
    br.busy = t.busy;
    br.lent = t.lent;
    br.free = t.free;
    std::vector<std::string> failed;
    for (NodeIndex n : block.nodes)
        if (is_failed(states[n]))
            failed.push_back(topo.node_name(n));
    br.failed_nodes = failed.empty() ? "" : hostlist::compress(failed);
    for (const auto& h : snap.holds(b))
        br.held += static_cast<int>(h.need);
    br.reclaim = block.settings.reserve == SpareReserve::kReclaim;
    br.spares_used = std::min(t.failed, br.spares);
    const int reserve = t.spare_reserve();
    if (br.reclaim) {
        // Nothing withheld: free nodes first stand ready as spares; the
        // rest of the reserve runs work that a recovery would reclaim.
        br.spares_free = std::min(reserve, t.free);
        br.spares_lent = std::min(reserve - br.spares_free, t.busy + t.lent);
    } else {
        br.spares_lent = std::min(t.lent, reserve);
        br.spares_free = std::max(0, std::min(reserve - br.spares_lent, t.free));
    }
    if (!t.fault) {
        const int withheld = br.reclaim ? t.failed : std::max(t.failed, br.spares);
        br.ordinary_free = std::max(0, std::min(t.free, t.size - withheld - t.busy - br.held));
        br.stranded = br.slice > 0 ? br.ordinary_free % br.slice : 0;
    }
    return br;
}

// A group of the hierarchy: the sums of its blocks' lines.
GroupReport group_report(const HierarchyLevel& level, const Group& g, const std::vector<BlockReport>& blocks) {
    GroupReport gr;
    gr.name = g.name;
    gr.level = level.name;
    std::vector<std::string> names;
    for (BlockIndex b : g.blocks) {
        const BlockReport& br = blocks[static_cast<std::size_t>(b)];
        names.push_back(br.name);
        ++gr.block_count;
        gr.size += br.size;
        add_counts(gr, br);
        gr.spares_free += br.spares_free;
        gr.held += br.held;
        gr.degraded_blocks += br.health != BlockHealth::kHealthy;
    }
    gr.blocks = hostlist::compress(names);
    return gr;
}

// The lemons, listed and counted on their blocks.
void add_lemons(ClusterReport& r, const Topology& topo, const FailureHistory& history,
                std::span<const NodeIndex> lemons, std::span<const NodeState> states, std::int64_t now) {
    std::vector<std::vector<std::string>> per_block(r.blocks.size());
    for (NodeIndex n : lemons) {
        ClusterReport::Lemon l;
        l.node = topo.node_name(n);
        const BlockIndex b = topo.block_of(n);
        if (b != kNoBlock) {
            l.block = topo.block(b).name;
            per_block[static_cast<std::size_t>(b)].push_back(l.node);
        }
        l.failures = history.failures_within(n, now, topo.policy().recovery.lemon);
        l.last_failure = history.last_failure(n);
        l.in_service = is_healthy(states[n]);
        r.lemons.push_back(std::move(l));
    }
    for (std::size_t b = 0; b < per_block.size(); ++b) {
        r.blocks[b].lemons = static_cast<int>(per_block[b].size());
        r.blocks[b].lemon_nodes = per_block[b].empty() ? "" : hostlist::compress(per_block[b]);
    }
}

} // namespace

ClusterReport make_report(const Planner& planner, std::span<const NodeState> states, std::int64_t now) {
    const Topology& topo = planner.topology();
    const Snapshot snap = planner.snapshot(states, now);
    ClusterReport r;
    r.generated_at = now;
    r.nodes = static_cast<int>(topo.node_count());
    r.nodes_in_blocks = static_cast<int>(topo.nodes_in_blocks());
    for (BlockIndex b = 0; b < static_cast<BlockIndex>(topo.block_count()); ++b) {
        BlockReport br = block_report(topo, snap, states, b);
        br.short_seconds = planner.health().short_seconds(b);
        add_counts(r, br);
        r.blocks.push_back(std::move(br));
    }
    r.fragmentation = r.ordinary_free ? static_cast<double>(r.stranded) / r.ordinary_free : 0.0;
    for (const HierarchyLevel& level : topo.hierarchy().levels())
        for (const Group& g : level.groups) {
            if (g.implicit)
                continue;
            r.groups.push_back(group_report(level, g, r.blocks));
        }
    const Ledger& ledger = planner.ledger();
    r.counters = ledger.counters();
    r.recovery = topo.policy().recovery;
    r.reclaim_per_hour = reclaim_per_hour(r.recovery, topo.node_count());
    r.reclaims = std::any_of(r.blocks.begin(), r.blocks.end(), [](const BlockReport& b) { return b.reclaim; });
    r.reclaim_passes = planner.reclaim_pass_times();
    r.recent.assign(ledger.recent().begin(), ledger.recent().end());
    for (const auto& [id, rec] : ledger.records())
        r.pending.push_back({id, blocks_of(topo, rec.nodes), static_cast<std::uint32_t>(rec.failed.size()),
                             rec.failed_at, rec.fallback_at, rec.fallback});
    add_lemons(r, topo, ledger.node_failures(), snap.last_choice(), states, now);
    return r;
}

namespace {

// The failures by kind: why their nodes counted as failed (by_trigger), and
// how Slurm requeued the job (by_path), each a list of (name, count).
using KindCounts = std::vector<std::pair<const char*, std::uint64_t>>;

KindCounts by_trigger(const LedgerCounters& c) {
    KindCounts out;
    for (std::size_t i = 0; i < kFailureTriggerCount; ++i)
        out.emplace_back(failure_trigger_name(static_cast<FailureTrigger>(i)), c.by_trigger[i]);
    return out;
}

KindCounts by_path(const LedgerCounters& c) {
    KindCounts out;
    for (std::size_t i = 1; i < kRequeuePathCount; ++i) // kNone (0) never opens a recovery
        out.emplace_back(requeue_path_name(static_cast<RequeuePath>(i)), c.by_path[i]);
    return out;
}

std::string kind_counts_text(const KindCounts& kinds) {
    std::string out;
    for (const auto& [name, n] : kinds)
        out += (out.empty() ? "" : ",") + std::string(name) + ":" + std::to_string(n);
    return out;
}

} // namespace

std::string block_line(const BlockReport& b) {
    std::ostringstream o;
    o << "BlockName=" << b.name << " Nodes=" << b.nodes << " BlockSize=" << b.size << " Slice=" << b.slice
      << " Spares=" << b.spares << " SparesFree=" << b.spares_free << " SparesUsed=" << b.spares_used
      << " SparesLent=" << b.spares_lent << " Lending=" << (b.lending ? "yes" : "no")
      << " Reserve=" << (b.reclaim ? "reclaim" : "idle") << " Health=" << health_name(b.health) << " Free=" << b.free
      << " Busy=" << b.busy << " Lent=" << b.lent << " Held=" << b.held << " Failed=" << b.failed
      << " FailedNodes=" << (b.failed_nodes.empty() ? "(null)" : b.failed_nodes) << " SpareDeficit=" << b.spare_deficit
      << " ShortOfSliceSeconds=" << b.short_seconds << " Lemons=" << (b.lemon_nodes.empty() ? "(null)" : b.lemon_nodes);
    return o.str();
}

std::string summary_line(const ClusterReport& r) {
    std::ostringstream o;
    o << "nvlblock: Blocks=" << r.blocks.size() << " Nodes=" << r.nodes_in_blocks << " Healthy=" << r.healthy
      << " Failed=" << r.failed << " Stranded=" << r.stranded << " Recoveries=" << r.counters.failures
      << " InPlace=" << r.counters.in_place << " Fallbacks=" << r.counters.elsewhere
      << " Abandoned=" << r.counters.abandoned << " Pending=" << r.pending.size() << " Lemons=" << r.lemons.size();
    o << " RecoveriesByTrigger=" << kind_counts_text(by_trigger(r.counters))
      << " RecoveriesByPath=" << kind_counts_text(by_path(r.counters));
    if (r.reclaims)
        o << " Reclaims=" << r.counters.reclaims << " ReclaimedJobs=" << r.counters.reclaimed_jobs
          << " ReclaimFrom=slurm_preemption" << (r.recovery.reclaim_from.empty() ? "" : ",")
          << (r.recovery.reclaim_from.empty() ? "" : selector_text(r.recovery.reclaim_from))
          << " NeverReclaim=" << selector_text(r.recovery.never_reclaim)
          << " ReclaimCooldown=" << r.recovery.reclaim_cooldown_seconds
          << " ReclaimPerUserPerDay=" << r.recovery.reclaim_per_user_per_day
          << " ReclaimPerHour=" << r.reclaim_per_hour;
    return o.str();
}

std::string selector_text(const JobSelector& s) {
    std::string out;
    const auto add = [&out](const char* kind, const std::vector<std::string>& names) {
        for (const std::string& n : names)
            out += (out.empty() ? "" : ",") + std::string(kind) + ":" + n;
    };
    add("qos", s.qos);
    add("partition", s.partitions);
    add("account", s.accounts);
    return out.empty() ? "(null)" : out;
}

std::string reclaim_policy_text(const RecoveryPolicy& p, int per_hour, const std::string& slurm_preemption) {
    std::ostringstream o;
    o << "reserve: reclaim: a failed job takes back nodes from ";
    if (!slurm_preemption.empty())
        o << "work Slurm's preemption lets it preempt, with its PreemptMode and GraceTime (" << slurm_preemption << ")"
          << (p.reclaim_from.empty() ? "" : " and from ");
    if (!p.reclaim_from.empty())
        o << "work recovery.reclaim_from names (" << selector_text(p.reclaim_from) << ")";
    if (slurm_preemption.empty() && p.reclaim_from.empty())
        o << "no work (Slurm's preemption is off and recovery.reclaim_from names none)";
    if (!p.never_reclaim.empty())
        o << ", never from " << selector_text(p.never_reclaim);
    o << "; a moved job is not moved again for " << p.reclaim_cooldown_seconds << " s; at most "
      << p.reclaim_per_user_per_day << " jobs a day for one user's failures and " << per_hour
      << " an hour in all; run time lost at most " << p.reclaim_budget_seconds << " s per held node";
    return o.str();
}

std::string group_line(const GroupReport& g) {
    std::ostringstream o;
    o << "GroupName=" << g.name << " Level=" << g.level << " Blocks=" << g.blocks << " BlockCount=" << g.block_count
      << " Nodes=" << g.size << " Healthy=" << g.healthy << " Failed=" << g.failed << " Free=" << g.free
      << " OrdinaryFree=" << g.ordinary_free << " SparesFree=" << g.spares_free << " Busy=" << g.busy
      << " Lent=" << g.lent << " Held=" << g.held << " DegradedBlocks=" << g.degraded_blocks;
    return o.str();
}

namespace {

std::string local_time(std::int64_t t) {
    return time_text(t, "%Y-%m-%dT%H:%M:%S", TimeZone::kLocal);
}

} // namespace

std::vector<std::string> recovery_lines(const ClusterReport& r, std::size_t recent) {
    std::vector<std::string> out;
    for (const auto& p : r.pending) {
        std::ostringstream o;
        o << "RecoveryPending JobId=" << p.job_id << " Blocks=" << p.blocks << " Lost=" << p.lost
          << " FailedAt=" << local_time(p.failed_at) << " FallbackAt=" << local_time(p.fallback_at)
          << " Fallback=" << (p.fallback ? "yes" : "no");
        out.push_back(o.str());
    }
    std::size_t shown = 0;
    for (auto it = r.recent.rbegin(); it != r.recent.rend() && shown < recent; ++it, ++shown) {
        std::ostringstream o;
        o << "Recovery JobId=" << it->job_id << " Outcome=" << outcome_name(it->outcome)
          << " Blocks=" << comma_list(it->blocks) << " Lost=" << it->lost << " SparesUsed=" << it->spares_used
          << " Seconds=" << it->seconds << " At=" << local_time(it->at);
        out.push_back(o.str());
    }
    return out;
}

namespace {

// The "recoveries" member of the status JSON.
void write_recoveries(JsonWriter& w, const ClusterReport& r) {
    namespace key = status_schema::key;
    w.key(key::recoveries).begin_object();
    w.field(key::failures, r.counters.failures).field(key::in_place, r.counters.in_place);
    w.field(key::fallbacks, r.counters.elsewhere).field(key::abandoned, r.counters.abandoned);
    w.field(key::reclaims, r.counters.reclaims).field(key::reclaimed_jobs, r.counters.reclaimed_jobs);
    if (r.reclaims) {
        const ReclaimPassTimes& t = r.reclaim_passes;
        w.key(key::reclaim_passes).begin_object();
        w.field(key::passes, t.passes).field(key::recoveries, t.recoveries);
        w.field(key::lock_held_us_total, t.held_us_total).field(key::lock_held_us_max, t.held_us_max);
        w.field(key::cpu_us_total, t.cpu_us_total).field(key::cpu_us_max, t.cpu_us_max);
        w.end_object();
    }
    for (const auto& [k, kinds] :
         {std::pair{key::by_trigger, by_trigger(r.counters)}, std::pair{key::by_path, by_path(r.counters)}}) {
        w.key(k).begin_object();
        for (const auto& [name, n] : kinds)
            w.field(name, n);
        w.end_object();
    }
    w.key(key::pending).begin_array();
    for (const auto& p : r.pending) {
        w.begin_object();
        w.field(key::job_id, static_cast<std::uint64_t>(p.job_id)).field(key::blocks, p.blocks);
        w.field(key::lost, static_cast<std::uint64_t>(p.lost)).field(key::failed_at, p.failed_at);
        w.field(key::fallback_at, p.fallback_at).field(key::fallback, p.fallback);
        w.end_object();
    }
    w.end_array();
    w.key(key::recent).begin_array();
    for (const auto& e : r.recent) {
        w.begin_object();
        w.field(key::at, e.at).field(key::job_id, static_cast<std::uint64_t>(e.job_id));
        w.field(key::outcome, outcome_name(e.outcome)).field(key::blocks, comma_list(e.blocks));
        w.field(key::lost, static_cast<std::uint64_t>(e.lost))
            .field(key::spares_used, static_cast<std::uint64_t>(e.spares_used));
        w.field(key::seconds, e.seconds);
        w.end_object();
    }
    w.end_array();
    w.end_object();
}

} // namespace

std::string report_json(const ClusterReport& r) {
    namespace key = status_schema::key;
    JsonWriter w;
    w.begin_object();
    w.field(key::schema, kStatusSchema);
    w.field(key::generated_at, r.generated_at);
    w.key(key::cluster).begin_object();
    w.field(key::nodes, r.nodes).field(key::nodes_in_blocks, r.nodes_in_blocks).field(key::healthy, r.healthy);
    w.field(key::failed, r.failed).field(key::busy, r.busy).field(key::lent, r.lent).field(key::free, r.free);
    w.field(key::ordinary_free, r.ordinary_free).field(key::stranded, r.stranded);
    w.field(key::fragmentation, r.fragmentation, 4);
    w.end_object();
    write_recoveries(w, r);
    w.key(key::blocks).begin_array();
    for (const auto& b : r.blocks) {
        w.begin_object();
        w.field(key::name, b.name).field(key::nodes, b.nodes).field(key::size, b.size).field(key::slice, b.slice);
        w.field(key::spares, b.spares)
            .field(key::lending, b.lending)
            .field(key::reserve, b.reclaim ? "reclaim" : "idle");
        w.field(key::health, health_name(b.health));
        w.field(key::healthy, b.healthy)
            .field(key::failed, b.failed)
            .field(key::down, b.down)
            .field(key::drained, b.drained);
        w.field(key::failed_nodes, b.failed_nodes)
            .field(key::busy, b.busy)
            .field(key::lent, b.lent)
            .field(key::free, b.free);
        w.field(key::spares_free, b.spares_free)
            .field(key::spares_used, b.spares_used)
            .field(key::spares_lent, b.spares_lent);
        w.field(key::held, b.held).field(key::ordinary_free, b.ordinary_free).field(key::stranded, b.stranded);
        w.field(key::spare_deficit, b.spare_deficit).field(key::short_of_slice_seconds, b.short_seconds);
        w.field(key::lemons, b.lemon_nodes);
        w.end_object();
    }
    w.end_array();
    w.key(key::groups).begin_array();
    for (const auto& g : r.groups) {
        w.begin_object();
        w.field(key::name, g.name)
            .field(key::level, g.level)
            .field(key::blocks, g.blocks)
            .field(key::block_count, g.block_count);
        w.field(key::size, g.size).field(key::healthy, g.healthy).field(key::failed, g.failed).field(key::busy, g.busy);
        w.field(key::lent, g.lent).field(key::free, g.free).field(key::ordinary_free, g.ordinary_free);
        w.field(key::spares_free, g.spares_free)
            .field(key::held, g.held)
            .field(key::degraded_blocks, g.degraded_blocks);
        w.end_object();
    }
    w.end_array();
    w.key(key::lemons).begin_array();
    for (const auto& l : r.lemons) {
        w.begin_object();
        w.field(key::node, l.node).field(key::block, l.block).field(key::failures, l.failures);
        w.field(key::last_failure, l.last_failure).field(key::in_service, l.in_service);
        w.end_object();
    }
    w.end_array();
    w.end_object();
    return w.str();
}

namespace {

// Prometheus text format: a label value escapes backslash, double quote and newline.
std::string label_value(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\' || c == '"')
            out += '\\';
        if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

void help(std::ostringstream& o, const char* name, const char* type, const char* text) {
    o << "# HELP " << name << ' ' << text << "\n# TYPE " << name << ' ' << type << '\n';
}

// A gauge per row of `table` (name, help text, field), one sample per item,
// labelled by `labels(item)`.
template <typename Item, std::size_t N, typename Labels>
void gauges(std::ostringstream& o, const std::tuple<const char*, const char*, int Item::*> (&table)[N],
            const std::vector<Item>& items, Labels labels) {
    for (const auto& [name, text, field] : table) {
        help(o, name, "gauge", text);
        for (const Item& it : items)
            o << name << '{' << labels(it) << "} " << it.*field << '\n';
    }
}

// The recoveries by trigger and by requeue path.
void recovery_kind_samples(std::ostringstream& o, const ClusterReport& r) {
    help(o, "nvlblock_recovery_triggers_total", "counter",
         "Recoveries opened, by why the job's nodes counted as failed (node_down; drained at its end, as a GPU "
         "or NVLink fault leaves them; after_end: failed or drained within recovery.failure_window).");
    for (const auto& [name, n] : by_trigger(r.counters))
        o << "nvlblock_recovery_triggers_total{trigger=\"" << name << "\"} " << n << '\n';
    help(o, "nvlblock_recovery_paths_total", "counter",
         "Recoveries opened, by how Slurm requeued the job (node_fail; exit_code: RequeueExit or "
         "RequeueExitHold; requeue: scontrol requeue).");
    for (const auto& [name, n] : by_path(r.counters))
        o << "nvlblock_recovery_paths_total{path=\"" << name << "\"} " << n << '\n';
}

// Slurm's locks held by the reclaim passes (core/reclaim_pass_times.hpp).
void reclaim_pass_samples(std::ostringstream& o, const ReclaimPassTimes& t) {
    help(o, "nvlblock_reclaim_passes_total", "counter",
         "Reclaim passes that held Slurm's job, node and partition write locks.");
    o << "nvlblock_reclaim_passes_total " << t.passes << '\n';
    help(o, "nvlblock_reclaim_pass_recoveries_total", "counter",
         "Open recoveries those passes looked at, in all (divide the lock time by it: per recovery).");
    o << "nvlblock_reclaim_pass_recoveries_total " << t.recoveries << '\n';
    help(o, "nvlblock_reclaim_pass_lock_seconds_total", "counter",
         "Seconds the reclaim passes held Slurm's write locks.");
    o << "nvlblock_reclaim_pass_lock_seconds_total " << static_cast<double>(t.held_us_total) / 1e6 << '\n';
    help(o, "nvlblock_reclaim_pass_lock_seconds_max", "gauge",
         "The longest single reclaim pass's hold of Slurm's write locks, since slurmctld started.");
    o << "nvlblock_reclaim_pass_lock_seconds_max " << static_cast<double>(t.held_us_max) / 1e6 << '\n';
    help(o, "nvlblock_reclaim_pass_cpu_seconds_total", "counter",
         "CPU seconds nvlblock's thread used while it held those locks (the rest of the hold it waited for a CPU).");
    o << "nvlblock_reclaim_pass_cpu_seconds_total " << static_cast<double>(t.cpu_us_total) / 1e6 << '\n';
}

// One sample per lemon (recovery/lemons.hpp).
void lemon_samples(std::ostringstream& o, const ClusterReport& r) {
    help(o, "nvlblock_lemon_failures", "gauge",
         "Failures under jobs within recovery.lemon.window of each lemon node (in_service: 1 when healthy).");
    for (const auto& l : r.lemons)
        o << "nvlblock_lemon_failures{node=\"" << label_value(l.node) << "\",block=\"" << label_value(l.block)
          << "\",in_service=\"" << (l.in_service ? 1 : 0) << "\"} " << l.failures << '\n';
}

} // namespace

std::string report_prometheus(const ClusterReport& r) {
    std::ostringstream o;
    using PerBlock = std::tuple<const char*, const char*, int BlockReport::*>;
    const PerBlock per_block[] = {
        {"nvlblock_block_nodes", "Nodes in the block.", &BlockReport::size},
        {"nvlblock_block_healthy_nodes", "Healthy nodes in the block.", &BlockReport::healthy},
        {"nvlblock_block_failed_nodes", "Failed (down or drained) nodes in the block.", &BlockReport::failed},
        {"nvlblock_block_allocated_nodes", "Nodes running ordinary work.", &BlockReport::busy},
        {"nvlblock_block_lent_nodes", "Nodes running preemptible work.", &BlockReport::lent},
        {"nvlblock_block_free_nodes", "Healthy idle nodes.", &BlockReport::free},
        {"nvlblock_block_spares", "Configured spare count.", &BlockReport::spares},
        {"nvlblock_block_spares_free", "Idle spares ready for an in-place recovery.", &BlockReport::spares_free},
        {"nvlblock_block_spares_used", "Spares standing in for failed nodes.", &BlockReport::spares_used},
        {"nvlblock_block_spares_lent", "Spares running preemptible work.", &BlockReport::spares_lent},
        {"nvlblock_block_held_nodes", "Nodes held for jobs restarting in place.", &BlockReport::held},
        {"nvlblock_block_stranded_nodes", "Free non-spare nodes short of a whole slice.", &BlockReport::stranded},
        {"nvlblock_block_spare_deficit", "Healthy nodes the block lacks for a slice plus its spares.",
         &BlockReport::spare_deficit},
        {"nvlblock_block_lemon_nodes",
         "Nodes of the block that failed under recovery.lemon.failures jobs within its window (taken last).",
         &BlockReport::lemons},
    };
    gauges(o, per_block, r.blocks, [](const BlockReport& b) { return "block=\"" + label_value(b.name) + "\""; });
    help(o, "nvlblock_block_short_of_slice_seconds_total", "counter",
         "Seconds the block could not host a whole slice (fewer healthy nodes than its slice, or a block "
         "fault) since slurmctld started.");
    for (const auto& b : r.blocks)
        o << "nvlblock_block_short_of_slice_seconds_total{block=\"" << label_value(b.name) << "\"} " << b.short_seconds
          << '\n';
    help(o, "nvlblock_block_health", "gauge", "Block health: 0 healthy, 1 degraded, 2 down.");
    for (const auto& b : r.blocks)
        o << "nvlblock_block_health{block=\"" << label_value(b.name) << "\"} " << static_cast<int>(b.health) << '\n';
    using PerGroup = std::tuple<const char*, const char*, int GroupReport::*>;
    const PerGroup per_group[] = {
        {"nvlblock_group_nodes", "Nodes in the group (an SU, a pod, a BlockSizes aggregate).", &GroupReport::size},
        {"nvlblock_group_healthy_nodes", "Healthy nodes in the group.", &GroupReport::healthy},
        {"nvlblock_group_failed_nodes", "Failed nodes in the group.", &GroupReport::failed},
        {"nvlblock_group_free_nodes", "Healthy idle nodes in the group.", &GroupReport::free},
        {"nvlblock_group_ordinary_free_nodes", "Free nodes ordinary work may take now.", &GroupReport::ordinary_free},
        {"nvlblock_group_spares_free", "Idle spares in the group.", &GroupReport::spares_free},
        {"nvlblock_group_degraded_blocks", "Blocks of the group that are degraded or down.",
         &GroupReport::degraded_blocks},
    };
    if (!r.groups.empty())
        gauges(o, per_group, r.groups, [](const GroupReport& g) {
            return "group=\"" + label_value(g.name) + "\",level=\"" + label_value(g.level) + "\"";
        });
    help(o, "nvlblock_stranded_nodes", "gauge", "Free non-spare nodes short of a whole slice, cluster-wide.");
    o << "nvlblock_stranded_nodes " << r.stranded << '\n';
    help(o, "nvlblock_fragmentation_ratio", "gauge", "Stranded share of the free non-spare nodes.");
    o << "nvlblock_fragmentation_ratio " << r.fragmentation << '\n';
    help(o, "nvlblock_recoveries_total", "counter", "Jobs requeued after losing nodes, by outcome.");
    o << "nvlblock_recoveries_total{outcome=\"in_place\"} " << r.counters.in_place << '\n';
    o << "nvlblock_recoveries_total{outcome=\"fallback\"} " << r.counters.elsewhere << '\n';
    o << "nvlblock_recoveries_total{outcome=\"abandoned\"} " << r.counters.abandoned << '\n';
    help(o, "nvlblock_reclaims_total", "counter", "Rounds of reclaiming spares for in-place restarts (rule 3b).");
    o << "nvlblock_reclaims_total " << r.counters.reclaims << '\n';
    help(o, "nvlblock_reclaimed_jobs_total", "counter",
         "Jobs preempted or requeued to make room for in-place restarts.");
    o << "nvlblock_reclaimed_jobs_total " << r.counters.reclaimed_jobs << '\n';
    if (r.reclaims)
        reclaim_pass_samples(o, r.reclaim_passes);
    help(o, "nvlblock_node_failures_total", "counter", "Jobs that lost nodes to a failure and were requeued.");
    o << "nvlblock_node_failures_total " << r.counters.failures << '\n';
    recovery_kind_samples(o, r);
    lemon_samples(o, r);
    help(o, "nvlblock_recoveries_pending", "gauge", "Jobs waiting to restart in place.");
    o << "nvlblock_recoveries_pending " << r.pending.size() << '\n';
    help(o, "nvlblock_status_generated_seconds", "gauge", "Unix time the status was computed.");
    o << "nvlblock_status_generated_seconds " << r.generated_at << '\n';
    return o.str();
}

} // namespace nvlblock
