// SPDX-License-Identifier: GPL-2.0-or-later
//
// Everything a run reports for one policy: the numbers behind the summary
// table, --json (names as documented in docs/sim.md) and the --csv series.
#pragma once

#include "metrics.hpp"
#include "policy.hpp"
#include "sim_types.hpp"

#include <string>
#include <vector>

namespace nvlblock::sim {

struct PolicyResult {
    PolicyConfig policy;
    int nodes = 0;
    int gpus_per_node = 4;
    Seconds window_start = 0, window_end = 0, sim_end = 0;

    // GPU-hours over the window.
    double capacity_gpu_hours = 0; // every node, failed or not
    double healthy_gpu_hours = 0;
    double busy_gpu_hours = 0;
    double busy_preemptible_gpu_hours = 0;
    double useful_gpu_hours = 0;
    double standby_gpu_hours = 0; // nvrx: held as in-job standbys (busy, not useful)
    double lost_failure_gpu_hours = 0;
    double lost_preemption_gpu_hours = 0;
    double utilization = 0; // busy / healthy
    double goodput = 0;     // useful / healthy

    // Mean nodes over the window.
    double healthy_nodes_mean = 0, busy_nodes_mean = 0, idle_nodes_mean = 0, stranded_nodes_mean = 0;
    double waiting_time_fraction = 0; // share of the window with an eligible job waiting

    std::uint64_t jobs_submitted = 0, jobs_started = 0, jobs_completed = 0, jobs_unstarted = 0, jobs_rejected = 0;
    double completed_gpu_hours = 0; // work of the jobs that completed (whenever)
    std::vector<WaitStats> waits;
    std::vector<WaitStats> responses; // submit to final end, restarts included (completed jobs)
    std::vector<WaitStats> slowdowns; // bounded slowdown (no unit), completed jobs
    bool hierarchy = false;           // --hierarchy given: spread is measured
    SpreadStats spread;

    std::uint64_t failure_requeues = 0; // runs ended by a failure (node down, or a fault with the node up)
    std::uint64_t restarts = 0;         // of those jobs, restarts
    std::uint64_t restarts_in_place = 0;
    std::uint64_t preemptions = 0;
    std::uint64_t reclaims = 0; // of the preemptions, jobs moved to reclaim spares (rule 3b)
    // Reclaim victims: requeued (after their grace time; a victim that ended
    // in its grace time is moved but not requeued), of those checkpointed on
    // the signal, the most moves of one job, their lost work (in the window).
    std::uint64_t reclaim_requeues = 0, victims_checkpointed = 0, most_moves_one_job = 0;
    double lost_reclaim_node_hours = 0;
    WaitStats reclaimed_extra_response; // completed reclaim victims: first start to end beyond the run time
    // Jobs Slurm's preemption requeued (not for a reclaim), the most times
    // one of them was, their lost work (in the window), their extra time.
    std::uint64_t preempted_jobs = 0, most_preemptions_one_job = 0;
    double lost_preempted_node_hours = 0;
    WaitStats preempted_extra_response;
    std::uint64_t in_job_restarts = 0, standbys_used = 0; // nvrx: failures absorbed in the job
    double moved_per_1000_jobs() const {
        return jobs_submitted ? 1000.0 * static_cast<double>(reclaims) / static_cast<double>(jobs_submitted) : 0.0;
    }
    double checkpointed_share() const {
        return reclaim_requeues ? static_cast<double>(victims_checkpointed) / static_cast<double>(reclaim_requeues)
                                : 0.0;
    }
    bool ledger = false; // the Planner's recovery ledger was used (nvlblock policies)
    std::uint64_t ledger_failures = 0, ledger_in_place = 0, ledger_elsewhere = 0;
    // Of the ledger's failures, why their nodes counted as failed (FailureTrigger):
    // down, drained at the job's end, failed or drained within the failure window after it.
    std::uint64_t ledger_node_down = 0, ledger_drained = 0, ledger_after_end = 0;
    WaitStats restart_delay;
    std::uint64_t multi_node_restarts = 0, multi_node_in_place = 0; // of the restarts, jobs of 2+ nodes
    WaitStats multi_node_restart_delay;

    std::uint64_t node_failures = 0, rack_faults = 0, node_repairs = 0;
    // Failure kinds (failure_kinds.hpp), in the window: interruptions with
    // the node up and of jobs alone; runs such faults ended (whenever), of
    // which jobs that started on a node with a hidden fault; failed jobs the
    // site did not requeue, and the work they had left.
    std::uint64_t up_faults = 0, job_faults = 0, fault_ends = 0, hidden_fault_hits = 0;
    std::uint64_t jobs_not_requeued = 0;
    double not_requeued_gpu_hours = 0;

    std::uint64_t events = 0, passes = 0, backfill_passes = 0, place_calls = 0, reservations = 0;
    std::uint64_t bound_calls = 0; // questions to the planner's room bound (not written out: a cost)
    double wall_seconds = 0;

    std::vector<SeriesPoint> series;
};

} // namespace nvlblock::sim
