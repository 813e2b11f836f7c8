// SPDX-License-Identifier: GPL-2.0-or-later
//
// The end of a job's run, as Slurm reports it at the moment its nodes are
// released (epilog_slurmctld), and the rules that read it (docs/placement.md
// rule 5): whether Slurm is putting the job back in the queue, by which
// path, and which of its nodes count as failed and why. One event crosses
// from the shim: Slurm's facts, unshaped; the core decides.
//
// Slurm decides whether a job is requeued (RequeueExit, NODE_FAIL, the
// job's owner or an admin); nvlblock only reads the facts that say so:
//   - `scontrol requeue` (and Slurm's own requeues: a launch failure): the
//     job is PENDING again when its nodes are released;
//   - a node failure: its state is NODE_FAIL without COMPLETING (with
//     COMPLETING it is not requeued);
//   - its exit status is listed by RequeueExit (or RequeueExitHold, which
//     holds it): Slurm requeues it once the last Epilog of its nodes ends;
//   - preemption is never a recovery: the job lost nothing.
#pragma once

#include "model/topology.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// What Slurm says of the job whose nodes are released, as bits (the C ABI's
// NVLB_END_*).
enum JobEndFact : unsigned {
    kEndBatch = 1u << 0,          // a batch job
    kEndRequeueAllowed = 1u << 1, // --requeue (or JobRequeue=1)
    kEndPending = 1u << 2,        // already PENDING: requeued (scontrol requeue, or by Slurm)
    kEndNodeFail = 1u << 3,       // its state is NODE_FAIL
    kEndCompleting = 1u << 4,     // the COMPLETING flag is set
    kEndPreempted = 1u << 5,      // preemption is ending it (preempt_time set)
    kEndCancelled = 1u << 6,      // CANCELLED
    kEndExitRequeues = 1u << 7,   // RequeueExit lists its exit status
    kEndExitHolds = 1u << 8,      // RequeueExitHold lists its exit status
};

// What Slurm says of one node of that job, as bits (the C ABI's NVLB_NODE_SIGN_*).
enum NodeFailureSign : unsigned {
    kNodeMissing = 1u << 0,       // no such node any more
    kNodeDown = 1u << 1,          // DOWN (or powered off)
    kNodeNotResponding = 1u << 2, // NO_RESPOND
    kNodeFailing = 1u << 3,       // FAIL (an operator's or health check's failure)
    kNodeNamedFailed = 1u << 4,   // the node Slurm named when it requeued the job (failed_node)
    kNodeDrain = 1u << 5,         // DRAIN or DRAINING: taken out of service (a health check, an Epilog, the job)
};

// How a job got back into the queue.
enum class RequeuePath : std::uint8_t {
    kNone,      // not requeued: it ended, was cancelled, or was preempted
    kNodeFail,  // Slurm requeued it after a node failure
    kExitCode,  // its exit status is in RequeueExit (or RequeueExitHold)
    kRequested, // PENDING at once: scontrol requeue (owner or admin), or Slurm's own
};
inline constexpr std::size_t kRequeuePathCount = 4;
const char* requeue_path_name(RequeuePath p);

// Why a node counts as failed.
enum class FailureTrigger : std::uint8_t {
    kDown,     // down, not responding, gone, or the node Slurm named
    kDrained,  // drained or failing at the job's end
    kAfterEnd, // drained or down after the job's end, within recovery.failure_window
};
inline constexpr std::size_t kFailureTriggerCount = 3;
const char* failure_trigger_name(FailureTrigger t);

struct EndedNode {
    NodeIndex node = 0;
    unsigned signs = 0;
    std::string reason; // Slurm's reason for the node's state, when it has one
};

struct JobEnd {
    std::uint32_t job_id = 0;
    unsigned facts = 0;          // JobEndFact bits
    std::int64_t ended_at = 0;   // when its nodes were released
    std::int64_t started_at = 0; // when the run that ended began (0: unknown, so no restart is counted)
    std::vector<EndedNode> nodes;
};

// Which path, if any, puts the job back in the queue. Only batch jobs are
// requeued; preemption never counts.
RequeuePath requeue_path(unsigned facts);
// Whether Slurm holds it when it requeues it (RequeueExitHold). A hold by
// `scontrol requeuehold` looks like `scontrol requeue` at this moment: the
// job's priority says so later (reclaim never moves work for a held job).
bool requeued_held(unsigned facts);

// Whether a node counts as failed, and why (kDown wins over kDrained).
bool node_counts_as_failed(unsigned signs);
FailureTrigger trigger_of(unsigned signs);

} // namespace nvlblock
