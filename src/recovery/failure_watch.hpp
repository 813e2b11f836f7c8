// SPDX-License-Identifier: GPL-2.0-or-later
//
// A requeued job whose nodes were all healthy when they were released may
// still have lost one: a node Epilog or a health check drains a node with a
// GPU or NVLink fault seconds to minutes after the job's processes died.
// Slurm makes the drain visible before that node leaves COMPLETING (the
// Epilog's own `scontrol update`, or slurmctld's "Epilog error" drain, both
// come before the node's epilog-complete is processed), and the job cannot
// start again before its requeue delay (cred_expire + 1 s). So the job is
// watched (docs/placement.md rule 5):
//   - while any of its nodes still completes, the ones already released are
//     held for it, as topology/block's --requeue=expedite holds them: a
//     waiting job would otherwise take the healthy half of the rack while
//     the faulty node's Epilog still runs;
//   - until recovery.failure_window after its end (default: Slurm's requeue
//     delay, before which it cannot start anyway), a node of it that fails
//     or drains makes its recovery open: the failure counted from its end,
//     its hold and wait from the drain (Slurm requeues a RequeueExit job
//     when its last Epilog ends, and it cannot start before its requeue
//     delay after that). A drain later than the window (an Epilog health
//     check longer than it) is nobody's: the watch cannot tell a node still
//     completing from one another job took once the Epilogs ended, so it
//     does not outlast its window; a site sets the window above its
//     Epilog's length.
// A watch opens no recovery by itself and is not saved: a slurmctld restart
// inside the window forgets it (the job then restarts as under block).
#pragma once

#include "model/topology.hpp"
#include "placement/node_state.hpp"
#include "placement/request.hpp"
#include "recovery/job_end.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace nvlblock {

struct FailureWatch {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes; // its block nodes when it ended
    std::int64_t ended_at = 0;
    std::int64_t until = 0; // ended_at + the failure window
    RequeuePath path = RequeuePath::kNone;
    bool held = false; // RequeueExitHold (requeued_held)
};

// How long after a requeued job's end a node failure still counts as its
// own: recovery.failure_window, or (when that is "auto", negative) Slurm's
// requeue delay.
std::int64_t failure_window(const Topology& topo, std::int64_t slurm_requeue_delay);

// Whether the watch holds the job's released nodes at `now`: inside its
// window while any of its nodes is still busy (completing its run) or has
// failed. Slurm drains a node whose Epilog failed and releases it in the
// same step, and may schedule at once: until the next advance() opens the
// recovery, the watch's own claim keeps the rack for the job.
bool watch_holds(const FailureWatch& w, std::span<const NodeState> states, std::int64_t now);

// Its nodes held for it: the healthy ones as its own, the failed ones as
// room for spares (as a recovery's claim).
RecoveryClaim watch_claim(const Topology& topo, const FailureWatch& w, std::span<const NodeState> states);

// Its nodes that have failed (down or drained) by now.
std::vector<NodeIndex> failed_since_end(const FailureWatch& w, std::span<const NodeState> states);

} // namespace nvlblock
