// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/reclaim_eligibility.hpp"

namespace nvlblock {

const char* victim_status_name(VictimStatus s) {
    switch (s) {
    case VictimStatus::kPreempt:
        return "preempt";
    case VictimStatus::kRequeue:
        return "requeue";
    case VictimStatus::kNotAllowed:
        return "not_allowed";
    case VictimStatus::kNotRequeueable:
        return "not_requeueable";
    case VictimStatus::kProtected:
        return "never_reclaim";
    case VictimStatus::kOtherReservation:
        return "other_reservation";
    case VictimStatus::kSameJob:
        return "same_job";
    case VictimStatus::kExempt:
        return "exempt";
    case VictimStatus::kCoolingDown:
        return "cooling_down";
    case VictimStatus::kBeingPreempted:
        return "being_preempted";
    }
    return "?";
}

namespace {

// Slurm's preemption frees the nodes only when it requeues or cancels the
// job: a suspended job keeps them (and with PreemptMode=OFF nothing happens).
bool frees_its_nodes(PreemptMode m) {
    return m == PreemptMode::kRequeue || m == PreemptMode::kCancel;
}

} // namespace

VictimStatus victim_status(const RunningJob& j, const Reclaimer& for_job, const RecoveryPolicy& policy,
                           const ReclaimHistory& history, std::int64_t now) {
    if (j.job_id == for_job.job_id || (for_job.het_job_id && j.het_job_id == for_job.het_job_id))
        return VictimStatus::kSameJob;
    if (j.being_preempted)
        return VictimStatus::kBeingPreempted;
    if (!j.requeueable)
        return VictimStatus::kNotRequeueable;
    if (policy.never_reclaim.matches(j.qos, j.partition, j.account))
        return VictimStatus::kProtected;
    if (!j.reservation.empty() && j.reservation != for_job.reservation)
        return VictimStatus::kOtherReservation;
    if (j.exempt)
        return VictimStatus::kExempt;
    if (history.moved_since(reclaim_unit(j), now - policy.reclaim_cooldown_seconds + 1))
        return VictimStatus::kCoolingDown;
    if (j.slurm_may_preempt && frees_its_nodes(j.preempt_mode))
        return VictimStatus::kPreempt;
    if (policy.reclaim_from.matches(j.qos, j.partition, j.account))
        return VictimStatus::kRequeue;
    return VictimStatus::kNotAllowed;
}

} // namespace nvlblock
