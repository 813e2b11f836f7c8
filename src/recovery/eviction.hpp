// SPDX-License-Identifier: GPL-2.0-or-later
//
// Making room for an in-place restart by requeueing ordinary work. A job that
// lost nodes to a failure waits for its own block; while it waits, its healthy
// nodes are held idle (rule 5). Where the site allows it (recovery.evict),
// jobs running on that block are requeued instead, when the work they lose
// (nodes x time run) is less than what holding the block for the recovery
// wait would leave idle. Pure: the caller carries the requeues out.
#pragma once

#include "placement/request.hpp"
#include "placement/snapshot.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace nvlblock {

// A running job the caller could requeue.
struct RunningJob {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes;
    std::int64_t started = 0;  // start of its current run
    bool requeueable = true;   // Slurm may requeue it (a batch job that allows requeue)
    bool exempt = false;       // protected from preemption now (e.g. PreemptExemptTime)
};

struct Eviction {
    std::vector<std::uint32_t> jobs;   // to requeue, cheapest first
    std::int64_t lost_node_seconds = 0; // work they lose
    std::int64_t budget_node_seconds = 0;
};

// Which jobs to requeue so that the refused in-place restart `refusal` (reason
// recovery_waiting, with its shortfalls) of `claim` fits now; nullopt when no
// set of jobs within the budget makes room (or a block is down). The budget is
// the job's held nodes times `wait_seconds`.
std::optional<Eviction> plan_eviction(const Snapshot& snap, const RecoveryClaim& claim, const Placement& refusal,
                                      std::span<const RunningJob> running, std::int64_t now,
                                      std::int64_t wait_seconds);

} // namespace nvlblock
