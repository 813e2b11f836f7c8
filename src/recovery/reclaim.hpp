// SPDX-License-Identifier: GPL-2.0-or-later
//
// Reclaiming spares for an in-place restart (rule 3b of docs/placement.md).
// On a block whose spares are `reserve: reclaim`, nothing is held back while
// nothing fails: any job may run on every node. When a job there loses nodes
// and its block has no free room for it, the nodes it lacks are reclaimed
// from the cheapest work on that block: preemptible jobs first, then the
// jobs that lose the least work (nodes x time run), at most the block's
// spares, and only while the work lost stays below a budget: the failed
// job's held nodes times recovery.reclaim_budget. A job on several blocks
// may get them on any of its own blocks. Pure: the caller requeues the
// chosen jobs.
#pragma once

#include "placement/request.hpp"
#include "placement/snapshot.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// A running job, as the caller sees it.
struct RunningJob {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes;
    std::int64_t started = 0; // start of its current run
    bool requeueable = true;  // Slurm may requeue it (a batch job that allows requeue)
    bool exempt = false;      // protected now (e.g. still within PreemptExemptTime)
    bool preemptible = false; // selected by the topology's `preemptible:`
};

struct Reclaim {
    std::vector<std::uint32_t> jobs;    // to requeue, cheapest first
    std::uint32_t nodes = 0;            // nodes they free on the blocks that lacked room
    std::int64_t lost_node_seconds = 0; // run time lost by the non-preemptible ones
    std::int64_t budget_node_seconds = 0;
};

// Which running jobs to requeue so that `req` (a recovery: its claim set),
// refused in place with `refusal` (reason recovery_waiting and its
// shortfalls), fits now. The nodes are freed on the blocks that lack them;
// failing that, for a job on several blocks without --segment, on any of its
// own blocks (it comes back with nodes shifted between them, rule 5).
// std::nullopt when reclaiming cannot make room: a block is down or does not
// reclaim, the job lacks more nodes than the blocks that lost nodes have
// spares, no requeueable work is there, or it would cost more than the budget
// (the job's held healthy nodes times `budget_seconds`, recovery.reclaim_budget).
std::optional<Reclaim> plan_reclaim(const Snapshot& snap, const Request& req, const Placement& refusal,
                                    std::span<const RunningJob> running, std::int64_t now, std::int64_t budget_seconds);

// One line for the operator's log: what was requeued, and why.
std::string describe_reclaim(const Topology& topo, const RecoveryClaim& claim, const Reclaim& r);

} // namespace nvlblock
