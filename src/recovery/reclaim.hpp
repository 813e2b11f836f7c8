// SPDX-License-Identifier: GPL-2.0-or-later
//
// Reclaiming spares for an in-place restart (rule 3b of docs/placement.md).
// On a block whose spares are `reserve: reclaim`, nothing is held back while
// nothing fails: any job may run on every node. When a job there loses nodes
// and its block has no free room for it, the nodes it lacks are reclaimed
// from work on that block that may lose them (reclaim_eligibility.hpp: Slurm's
// preemption says whether, the site may name more): work Slurm's own
// preemption lets it preempt before work only the site named; a plan whose
// victims are exactly the nodes needed before one that requeues more; then
// the cheapest (recovery.reclaim_cost). At most the block's spares, only
// while the run time lost stays below the budget (the failed job's held
// nodes times recovery.reclaim_budget), and within the cooldown and limits.
// A job on several blocks may get them on any of its own blocks. A
// heterogeneous job goes whole and is costed whole. Pure: the caller
// preempts or requeues the chosen jobs.
#pragma once

#include "placement/request.hpp"
#include "placement/snapshot.hpp"
#include "recovery/reclaim_eligibility.hpp"
#include "recovery/reclaim_history.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

struct ReclaimVictim {
    std::uint32_t job_id = 0;                  // the job, or the leader of its heterogeneous job
    VictimStatus how = VictimStatus::kPreempt; // kPreempt or kRequeue
    std::uint32_t nodes = 0;                   // its nodes in all (what it costs)
    // kRequeue only: requeued at once, not through Slurm's preemption. With
    // a GraceTime Slurm's preemption only signals, and when the grace ends
    // it applies the victim's own PreemptMode: unless that is REQUEUE, the
    // job would be cancelled or killed, not requeued.
    bool at_once = false;
};

struct Reclaim {
    std::vector<ReclaimVictim> victims; // cheapest first
    std::uint32_t nodes = 0;            // nodes they free on the blocks that lacked room
    std::int64_t lost_node_seconds = 0; // run time lost by the non-preemptible ones (whole jobs)
    std::int64_t budget_node_seconds = 0;
    bool exact = true; // every node they run on is one the job lacks
};

// Why there is no plan, for the log.
enum class ReclaimRefusalReason : std::uint8_t {
    kNotWaiting,     // no open recovery waits for its block, or a round is still releasing nodes
    kFitsNow,        // its block(s) can take it without reclaiming
    kNotReclaimed,   // a block that lacks room is down or keeps idle spares
    kMoreThanSpares, // it lacks more nodes than the blocks' spares
    kNoEligibleWork, // not enough work there may lose its nodes
    kOverBudget,     // making room would cost more run time than the budget
    kUserLimit,      // reclaim_limits.per_user_per_day reached for its user
    kClusterLimit,   // reclaim_limits.per_hour reached
    kHeld,           // the job is held: it cannot start until released
    kSlurmRefuses,   // Slurm would not start it on the nodes a reclaim would free (the caller found)
};
inline constexpr std::size_t kReclaimRefusalReasonCount = 10;
static_assert(static_cast<std::size_t>(ReclaimRefusalReason::kSlurmRefuses) + 1 == kReclaimRefusalReasonCount);

// Why Slurm would not start a job on the nodes a reclaim would free, as the
// caller found asking Slurm (plugin/topology/reclaim_eligible.c).
enum class SlurmStartRefusal : std::uint8_t {
    kWouldStart,     // no refusal
    kNoDetails,      // the job has no details
    kNotInPartition, // the nodes are not in a partition of it that is up
    kExcluded,       // it excludes some of them
    kConstraints,    // its constraints exclude some of them
    kReservation,    // a reservation keeps some of them
};
inline constexpr std::size_t kSlurmStartRefusalCount = 6;
static_assert(static_cast<std::size_t>(SlurmStartRefusal::kReservation) + 1 == kSlurmStartRefusalCount);

struct ReclaimRefusal {
    ReclaimRefusalReason reason = ReclaimRefusalReason::kNotWaiting;
    // Running jobs on the blocks that lacked room, by their status as victims.
    std::array<std::uint32_t, kVictimStatusCount> jobs_by_status{};
    SlurmStartRefusal slurm = SlurmStartRefusal::kWouldStart; // kSlurmRefuses: why

    bool operator==(const ReclaimRefusal&) const = default;
};

struct ReclaimDecision {
    std::optional<Reclaim> plan;
    ReclaimRefusal refusal; // when there is no plan
};

// What a plan may do: the policy, what was done lately, and the cluster's size.
struct ReclaimContext {
    const RecoveryPolicy& policy;
    const ReclaimHistory& history;
    std::int64_t now = 0;
    // reclaim_limits.per_hour, with 0 ("auto") resolved for the cluster's size.
    int per_hour = 0;
};

// reclaim_limits.per_hour as set, or one per 100 nodes (at least 2).
int reclaim_per_hour(const RecoveryPolicy& policy, std::size_t node_count);

// Which running jobs to move so that `req` (a recovery: its claim set, made
// for `for_job`), refused in place with `refusal` (reason recovery_waiting
// and its shortfalls), fits now. The nodes are freed on the blocks that lack
// them; failing that, for a job on several blocks without --segment, on any
// of its own blocks (it comes back with nodes shifted between them, rule 5).
ReclaimDecision plan_reclaim(const Snapshot& snap, const Request& req, const Placement& refusal,
                             const Reclaimer& for_job, std::span<const RunningJob> running, const ReclaimContext& ctx);

// The refusal no running job could change, asked before the running jobs
// are gathered (under Slurm's locks, each costs a preemption question): the
// job fits now, a block it lacks room on is down or keeps idle spares, it
// lacks more nodes than their spares, or one more move would pass a limit.
// nullopt: the answer depends on the work running there (plan_reclaim,
// which asks this first).
std::optional<ReclaimRefusalReason> refused_whatever_runs(const Snapshot& snap, const Request& req,
                                                          const Placement& refusal, const Reclaimer& for_job,
                                                          const ReclaimContext& ctx);

} // namespace nvlblock
