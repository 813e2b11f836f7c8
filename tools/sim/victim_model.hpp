// SPDX-License-Identifier: GPL-2.0-or-later
//
// How a job that loses its nodes to a reclaim (rule 3b) fares, as Slurm's
// preemption with PreemptMode=REQUEUE treats it: it is signalled, keeps its
// nodes for the grace time (Slurm's GraceTime, 0 by default), and is then
// requeued. A job that writes a checkpoint when signalled keeps its work if
// the grace time covers the write; any other loses what it did since its
// last periodic checkpoint. Which jobs checkpoint on a signal, and which may
// be requeued at all (--no-requeue), is drawn from the seed and the job's
// name, so every policy sees the same jobs the same way.
#pragma once

#include "sim_types.hpp"

#include <cstdint>
#include <string>

namespace nvlblock::sim {

struct VictimModel {
    Seconds grace_time = 0;          // a victim keeps its nodes this long after the reclaim
    double checkpoint_on_signal = 0; // share of jobs that checkpoint when signalled
    Seconds checkpoint_write = 0;    // the write takes this long: the grace time must cover it
    double requeueable_share = 1;    // share of jobs Slurm may requeue (the rest are never victims)
    // Every job that loses its nodes (failure, preemption, reclaim): the
    // share of jobs that write periodic checkpoints at all (the rest start
    // over), and the time a job restarted from a checkpoint spends loading
    // it before it works again.
    double checkpoint_share = 1;
    Seconds checkpoint_restore = 0;
    // Every killed job: its nodes complete (busy, no job's) this long before
    // they are free, the most a job that ignores SIGTERM holds them (Slurm's
    // KillWait, 30 s by default; 0: free at once, the optimistic bound). A job
    // that ends by itself frees its nodes at once.
    Seconds kill_wait = 0;
    std::uint64_t seed = 1; // the draws of the two shares

    // Whether a victim that checkpoints on a signal has the time to.
    bool signal_checkpoint_fits() const { return grace_time > 0 && grace_time >= checkpoint_write; }
};

// The traits one job draws, the same for every policy.
struct VictimTraits {
    bool checkpoints_on_signal = false;
    bool requeueable = true;
    bool checkpoints = true; // writes periodic checkpoints (--checkpoint-share)
};
VictimTraits draw_victim_traits(const VictimModel& model, const std::string& job_name);

} // namespace nvlblock::sim
