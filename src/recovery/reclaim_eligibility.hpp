// SPDX-License-Identifier: GPL-2.0-or-later
//
// Whether a running job may lose its nodes so that a failed job restarts in
// place (rule 3b of docs/placement.md), and how. nvlblock decides where and
// which work is cheapest to move; Slurm's preemption configuration decides
// whether a job may be moved at all and how. The caller reports what Slurm
// says of each running job (slurm_may_preempt: slurm_find_preemptable_jobs()
// for the recovering job, which applies PreemptType, the QOS Preempt= lists,
// partition PriorityTier, min_exempt_priority and reservations; preempt_mode;
// exempt: PreemptExemptTime, global or its QOS's); the site may name more
// work in nvlblock.yaml (recovery.reclaim_from) or protect work
// (recovery.never_reclaim). Pure.
#pragma once

#include "model/topology.hpp"
#include "recovery/reclaim_history.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace nvlblock {

// How Slurm's preemption would stop a job (slurm_job_preempt_mode()).
enum class PreemptMode : std::uint8_t { kOff, kRequeue, kCancel, kSuspend };

// A running job, as the caller (the plugin from Slurm's job records, the
// simulator from its own) sees it.
struct RunningJob {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes;
    std::int64_t started = 0; // start of its current run
    std::int64_t waited = 0;  // seconds it waited in the queue before that run
    std::uint32_t user = 0;
    std::string qos, partition, account, reservation; // "" when none or not known
    std::uint32_t het_job_id = 0;                     // its heterogeneous job (the leader's id); 0: none
    bool requeueable = true;                          // a batch job that allows requeue
    bool exempt = false;                              // PreemptExemptTime protects it now
    bool being_preempted = false;                     // Slurm is already preempting it (its GraceTime runs)
    bool slurm_may_preempt = false;                   // Slurm's preemption lets the recovering job preempt it
    PreemptMode preempt_mode = PreemptMode::kOff;
    bool preemptible = false; // selected by the topology's `preemptible:` (lending)
};

// What goes whole when `j` is moved: the job, or its heterogeneous job
// (Slurm preempts and requeues a heterogeneous job with all its components).
inline std::uint32_t reclaim_unit(const RunningJob& j) {
    return j.het_job_id ? j.het_job_id : j.job_id;
}

// The job a reclaim makes room for, as Slurm knows it.
struct Reclaimer {
    std::uint32_t job_id = 0;
    std::uint32_t user = 0;
    std::uint32_t het_job_id = 0;
    std::string reservation;
    // Held (Slurm's priority 0: RequeueExitHold, scontrol requeuehold or
    // hold): it cannot start until someone releases it, so nothing is
    // moved for it.
    bool held = false;
};

inline Reclaimer reclaimer_of_user(std::uint32_t user) {
    Reclaimer r;
    r.user = user;
    return r;
}

enum class VictimStatus : std::uint8_t {
    kPreempt,          // through Slurm's preemption: its PreemptMode, GraceTime and signal
    kRequeue,          // named by recovery.reclaim_from: requeued for the restart
    kNotAllowed,       // neither Slurm's preemption nor reclaim_from lets it go
    kNotRequeueable,   // --no-requeue, or not a batch job
    kProtected,        // recovery.never_reclaim
    kOtherReservation, // runs in a reservation the recovering job is not in
    kSameJob,          // the recovering job, or another component of its heterogeneous job
    kExempt,           // PreemptExemptTime protects it now
    kCoolingDown,      // nvlblock moved it less than recovery.reclaim_cooldown ago
    kBeingPreempted,   // Slurm is preempting it already
};
inline constexpr std::size_t kVictimStatusCount = 10;
const char* victim_status_name(VictimStatus s);

inline bool may_lose_nodes(VictimStatus s) {
    return s == VictimStatus::kPreempt || s == VictimStatus::kRequeue;
}

// The status of `j` as a victim for `for_job` at `now`, first reason first.
VictimStatus victim_status(const RunningJob& j, const Reclaimer& for_job, const RecoveryPolicy& policy,
                           const ReclaimHistory& history, std::int64_t now);

} // namespace nvlblock
