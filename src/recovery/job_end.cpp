// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/job_end.hpp"

namespace nvlblock {

const char* requeue_path_name(RequeuePath p) {
    switch (p) {
    case RequeuePath::kNodeFail:
        return "node_fail";
    case RequeuePath::kExitCode:
        return "exit_code";
    case RequeuePath::kRequested:
        return "requeue";
    case RequeuePath::kNone:
        break;
    }
    return "none";
}

const char* failure_trigger_name(FailureTrigger t) {
    switch (t) {
    case FailureTrigger::kDrained:
        return "drained";
    case FailureTrigger::kAfterEnd:
        return "after_end";
    case FailureTrigger::kDown:
        break;
    }
    return "node_down";
}

RequeuePath requeue_path(unsigned facts) {
    if (!(facts & kEndBatch) || (facts & kEndPreempted))
        return RequeuePath::kNone;
    if (facts & kEndPending)
        return RequeuePath::kRequested;
    // NODE_FAIL with COMPLETING is a node failure Slurm does not requeue.
    if ((facts & kEndNodeFail) && !(facts & kEndCompleting))
        return RequeuePath::kNodeFail;
    // --no-requeue overrides RequeueExit, and a job cancelled while its
    // nodes complete is not requeued (Slurm's job_hold_requeue).
    if ((facts & kEndRequeueAllowed) && !(facts & kEndCancelled) && (facts & (kEndExitRequeues | kEndExitHolds)))
        return RequeuePath::kExitCode;
    return RequeuePath::kNone;
}

bool requeued_held(unsigned facts) {
    // Slurm tests RequeueExit first: a status in both lists is not held.
    return requeue_path(facts) == RequeuePath::kExitCode && !(facts & kEndExitRequeues);
}

bool node_counts_as_failed(unsigned signs) {
    return (signs & (kNodeMissing | kNodeDown | kNodeNotResponding | kNodeFailing | kNodeNamedFailed | kNodeDrain)) !=
           0;
}

FailureTrigger trigger_of(unsigned signs) {
    if (signs & (kNodeMissing | kNodeDown | kNodeNotResponding | kNodeNamedFailed))
        return FailureTrigger::kDown;
    return FailureTrigger::kDrained;
}

} // namespace nvlblock
