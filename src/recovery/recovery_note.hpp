// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a recovery decision did, as facts: one note per event the operator's
// log tells (a failure recorded, a restart, a fallback, a reclaim, a lemon).
// The ledger keeps the notes until the caller takes them; writers/
// recovery_log_text.hpp words them, against the topology they were made on
// (Planner::take_log hands both over). Node and block indices here are that
// topology's; names are kept only where the topology no longer has them
// (a held block that changed) or where they are Slurm's own words (a drain
// reason).
#pragma once

#include "model/topology.hpp"
#include "placement/request.hpp"
#include "recovery/held_blocks.hpp"
#include "recovery/job_end.hpp"
#include "recovery/reclaim.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace nvlblock {

// A node that counted as failed because it was drained at the job's end,
// with Slurm's reason for its state ("" when it has none).
struct DrainedNode {
    NodeIndex node = 0;
    std::string reason;
};

// Why a job's nodes counted as failed and how it was requeued, for its
// record's counters and its log line. The default is a node failure that
// Slurm requeued (the simulator's and the C ABI's job_failed).
struct FailureCause {
    RequeuePath path = RequeuePath::kNodeFail;
    FailureTrigger trigger = FailureTrigger::kDown;
    bool held = false;                // requeued held (RequeueExitHold)
    std::vector<DrainedNode> drained; // drained at its end (not down)
    // Nodes that failed or drained after the job ended (a watch, failure_watch.hpp),
    // and how long after its end that showed.
    std::vector<NodeIndex> failed_after_end;
    std::int64_t seconds_after_end = 0;
    // When the failure showed, if after the job's end (a drain within the
    // failure window): its hold and wait count from then, since Slurm
    // requeues a RequeueExit job only once the last Epilog ends, and it
    // cannot start before its requeue delay after that. 0: at the failure.
    std::int64_t shown_at = 0;
};

// A job's failure reported again for the same run (slurmctld restored it).
struct NoteReportedAgain {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> failed; // every failed node of the run so far
    std::int64_t waiting = 0;      // seconds since the first report
};

// A recovery opened: the job waits for its blocks.
struct NoteOpened {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes; // its nodes on blocks when the failure hit
    std::vector<NodeIndex> failed;
    std::int64_t wait = 0; // seconds until its fallback
    FailureCause cause;
};

// A node became a lemon (recovery/lemons.hpp), or an operator cleared it.
struct NoteLemon {
    NodeIndex node = 0;
    int failures = 0;                // the policy's count reached
    std::int64_t window_seconds = 0; // within which
};
struct NoteLemonCleared {
    NodeIndex node = 0;
};

// The job started again, on its own blocks (`spares` the nodes it had not)
// or elsewhere (`nodes` where it runs now).
struct NoteRestarted {
    std::uint32_t job_id = 0;
    bool in_place = false;
    std::vector<NodeIndex> had;    // its nodes when the failure hit
    std::vector<NodeIndex> nodes;  // where it started
    std::vector<NodeIndex> spares; // of those, nodes it had not (in place)
    std::uint32_t reused = 0;      // of those, nodes it had (in place)
    std::int64_t seconds = 0;      // from the failure
};

// It left the queue before restarting.
struct NoteLeftQueue {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> had;
};

// Spares were reclaimed for it.
struct NoteReclaimed {
    RecoveryClaim claim;
    Reclaim plan;
};

// Nothing could be reclaimed for it (said once per new reason).
struct NoteReclaimRefused {
    RecoveryClaim claim; // the job and its blocks
    ReclaimRefusal refusal;
};

// Why a job stopped waiting for its blocks.
enum class FallbackReason : std::uint8_t {
    kWaitOverSlurmDidNotStart, // its blocks can take it; Slurm has not started it
    kRefused,                  // its blocks cannot take it: `refused` says why
    kBlocksChanged,            // a block it had changed: `change` says how
};

struct NoteFallback {
    std::uint32_t job_id = 0;
    std::int64_t seconds = 0; // since the failure
    std::vector<NodeIndex> had;
    FallbackReason reason = FallbackReason::kRefused;
    Placement refused;                     // kRefused: the in-place question's answer
    std::optional<HeldBlockChange> change; // kBlocksChanged
};

// A record dropped because none of its nodes is in a block any more: when
// the state was loaded, or after a reconfigure.
struct NoteDropped {
    std::uint32_t job_id = 0;
    bool on_load = false; // from saved state; else after a reconfigure
};

using RecoveryNote = std::variant<NoteReportedAgain, NoteOpened, NoteLemon, NoteLemonCleared, NoteRestarted,
                                  NoteLeftQueue, NoteReclaimed, NoteReclaimRefused, NoteFallback, NoteDropped>;

} // namespace nvlblock
