// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a run measures, per policy. Definitions (docs/sim.md, with the JSON
// names used in --json):
//  - Levels are integrated exactly over the measured window [start, end):
//    healthy nodes, busy nodes (healthy and running a job), stranded nodes.
//  - stranded: healthy nodes running nothing at a moment when at least one
//    job is pending and eligible (submitted, past its requeue delay) after the
//    scheduling pass, i.e. idle capacity that the waiting jobs cannot use
//    (topology, withheld spares, holds, a backfill reservation); 0 while no
//    eligible job waits.
//  - lost work: node-seconds a failure (or a preemption) rolls back, from the
//    job's last checkpoint to the moment it is killed, clipped to the window.
//  - useful = busy - lost; goodput = useful / healthy; utilization = busy / healthy.
//  - waits: first start - submit, by the job's requested GPUs (nearest-rank
//    percentiles).
//  - response: final end - submit, restarts included, for the jobs that
//    completed (what a user sees of failures, restarts and reclaims).
//  - reclaim victims' loss: the part of the preemption loss of jobs that lost
//    their nodes to an in-place restart (rule 3b).
//  - bounded slowdown: response / max(run time, 10 s), at least 1, for the
//    jobs that completed (Feitelson's bound keeps very short jobs from
//    dominating it).
//  - a victim's extra response time: from its first start to its end,
//    beyond its run time (what moving it cost it: requeue waits and work
//    done again; failures that hit it too are included).
//  - standby node-seconds (nvrx): healthy nodes a running job holds as
//    in-job standbys. They are busy (allocated) and do no work: useful =
//    busy - lost - standby.
//  - spread (with --hierarchy): at its first start in the window, how many
//    racks and scalable units (the lowest --hierarchy level) a job spans.
//    Multi-rack: 2 racks or more; it fits in one SU when it needs no more
//    racks than an SU has (ceil(nodes / slice) <= racks per SU).
#pragma once

#include "sim_types.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nvlblock::sim {

struct Levels {
    int healthy = 0;
    int busy = 0;
    int busy_preemptible = 0;
    int standby = 0; // of the busy nodes, in-job standbys (nvrx)
    int stranded = 0;
    bool waiting = false; // an eligible job is pending after the scheduling pass
    int pending = 0;      // jobs waiting (eligible or not)
    int running = 0;
};

// kReclaim: a preemption or requeue for an in-place restart (counted as a
// preemption too).
enum class LossCause { kFailure, kPreemption, kReclaim };

struct WaitStats {
    std::string size_class; // "all", "gpus_1_4", ...
    std::size_t count = 0;
    double mean = 0, p50 = 0, p95 = 0, p99 = 0, max = 0; // seconds
};

struct SpreadStats {
    std::uint64_t multi_rack = 0;   // jobs that started on 2 racks or more
    std::uint64_t fit_one_su = 0;   // of those, jobs that need no more racks than an SU has
    std::uint64_t confined = 0;     // of those that fit, jobs that started inside one SU
    std::uint64_t confined_any = 0; // of all multi-rack jobs, those inside one SU
    double sus_spanned = 0;         // sum over multi-rack jobs of the SUs they span
    double mean_sus() const { return multi_rack ? sus_spanned / static_cast<double>(multi_rack) : 0.0; }
};

struct SeriesPoint {
    Seconds start = 0, end = 0;
    // Means over the bucket.
    double healthy = 0, busy = 0, busy_preemptible = 0, stranded = 0, useful = 0, pending = 0, running = 0;
};

// Job size classes by requested GPUs.
inline constexpr std::array<const char*, 6> kSizeClasses = {"gpus_1_4",    "gpus_5_32",     "gpus_33_64",
                                                            "gpus_65_256", "gpus_257_1024", "gpus_1025_plus"};
std::size_t size_class_of(std::uint32_t gpus);

// Nearest-rank percentile of sorted values: the smallest value with at least
// p% of the values at or below it.
double percentile(const std::vector<double>& sorted, double p);

class Metrics {
  public:
    Metrics(Seconds window_start, Seconds window_end, Seconds bucket);

    // Levels held constant over [from, to).
    void advance(Seconds from, Seconds to, const Levels& l);
    void lost(LossCause cause, std::uint32_t nodes, Seconds from, Seconds to);
    void job_waited(std::uint32_t gpus, Seconds wait);
    void job_responded(std::uint32_t gpus, Seconds response);
    void job_slowed(std::uint32_t gpus, Seconds response, Seconds run);
    // A job a reclaim (or Slurm's preemption) moved has completed; `extra`:
    // its time from first start to end beyond its run time.
    void victim_done(bool reclaimed, bool preempted, Seconds extra);
    void job_spread(int racks, int sus, bool fits_one_su);
    const SpreadStats& spread() const { return spread_; }
    // `multi_node`: the job had more than one node (the jobs in-place restarts are for).
    void restarted(bool in_place, Seconds delay, bool multi_node);
    bool in_window(Seconds t) const { return t >= start_ && t < end_; }

    Seconds window_start() const { return start_; }
    Seconds window_end() const { return end_; }
    double healthy_node_s() const { return healthy_; }
    double busy_node_s() const { return busy_; }
    double busy_preemptible_node_s() const { return busy_pre_; }
    double stranded_node_s() const { return stranded_; }
    double standby_node_s() const { return standby_; }
    double stranded_time_s() const { return stranded_time_; } // time with eligible jobs waiting
    // kPreemption: every preemption, reclaims included.
    double lost_node_s(LossCause c) const {
        return c == LossCause::kFailure ? lost_failure_ : c == LossCause::kReclaim ? lost_reclaim_ : lost_preempt_;
    }

    std::vector<WaitStats> wait_stats() const;
    std::vector<WaitStats> response_stats() const;
    std::vector<WaitStats> slowdown_stats() const;
    WaitStats victim_extra_stats(bool reclaimed) const;
    std::size_t restarts() const { return restart_delays_.size(); }
    std::size_t restarts_in_place() const { return in_place_; }
    WaitStats restart_delay_stats() const;
    std::size_t multi_node_restarts() const { return multi_delays_.size(); }
    std::size_t multi_node_restarts_in_place() const { return multi_in_place_; }
    WaitStats multi_node_restart_delay_stats() const;
    std::vector<SeriesPoint> series() const;

  private:
    template <typename Fn>
    void per_bucket(Seconds from, Seconds to, Fn&& fn);

    Seconds start_, end_, bucket_;
    double healthy_ = 0, busy_ = 0, busy_pre_ = 0, stranded_ = 0, stranded_time_ = 0, standby_ = 0;
    double lost_failure_ = 0, lost_preempt_ = 0, lost_reclaim_ = 0;
    using ByClass = std::vector<std::vector<double>>;
    ByClass waits_ = ByClass(kSizeClasses.size()), responses_ = ByClass(kSizeClasses.size());
    ByClass slowdowns_ = ByClass(kSizeClasses.size());
    std::vector<double> reclaimed_extra_, preempted_extra_;
    std::vector<double> restart_delays_, multi_delays_;
    SpreadStats spread_;
    std::size_t in_place_ = 0, multi_in_place_ = 0;
    struct Bucket {
        double healthy = 0, busy = 0, busy_pre = 0, stranded = 0, lost = 0, pending = 0, running = 0;
    };
    std::vector<Bucket> buckets_;
};

} // namespace nvlblock::sim
