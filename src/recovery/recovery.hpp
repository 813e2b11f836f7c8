// SPDX-License-Identifier: GPL-2.0-or-later
//
// In-place recovery as one state machine (docs/placement.md rules 3b, 5-7):
// the ledger of jobs restarting after failures, changed only by explicit
// calls, each for a fact the caller reports or for time passing:
//   job_ended        a job's nodes were released (job_end.hpp): a requeue
//                    with a failed node is a job_failed, one without is
//                    watched for a failure that shows later (failure_watch.hpp)
//   job_failed       a node failure requeued the job (hold or not: rules.hpp)
//   job_started      it runs again: closed, in place or elsewhere
//   job_gone         it left the queue before restarting
//   reclaim_started  jobs were requeued to make room for it (rule 3b)
//   advance(now)     time passes: jobs whose wait is over (or whose block is
//                    down) and whose block cannot take them now fall back
// Everything else is a question and changes nothing: what a job needs back
// and whether it still waits for its block (Planner::place asks these), which
// nodes are held. So Slurm's test-only and will-run evaluations, which ask
// the same questions as real ones, leave the state as they found it.
#pragma once

#include "model/topology.hpp"
#include "placement/node_state.hpp"
#include "placement/request.hpp"
#include "placement/snapshot.hpp"
#include "recovery/failure_watch.hpp"
#include "recovery/job_end.hpp"
#include "recovery/ledger.hpp"
#include "recovery/reclaim.hpp"
#include "recovery/recovery_note.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// What a job's end did to the ledger.
enum class JobEndOutcome : std::uint8_t {
    kNothing,  // not a requeue, or not a multi-node job on blocks
    kOpened,   // a recovery opened (or a restored run failed again)
    kWatching, // requeued with every node healthy: watched (failure_watch.hpp)
};

class Recovery {
  public:
    // Seconds after a requeued job's end before Slurm lets it start again
    // (KillWait + cred_expire + 1); nodes are held for this plus the
    // scheduling slack.
    void set_slurm_requeue_delay(std::int64_t seconds) { slurm_requeue_delay_ = seconds; }
    std::int64_t slurm_requeue_delay() const { return slurm_requeue_delay_; }
    std::int64_t hold_delay() const;

    Ledger& ledger() { return ledger_; }
    const Ledger& ledger() const { return ledger_; }

    // ---- Facts -----------------------------------------------------------------
    // A job's nodes were released (job_end.hpp). A run that restarted after
    // an earlier failure counts as that restart first (job_started); then,
    // if Slurm is requeueing it, a failed node opens its recovery
    // (job_failed) and none makes it watched.
    JobEndOutcome job_ended(const Topology& topo, const JobEnd& end);
    // A node failure requeued the job: it had `nodes`, of which `failed` failed.
    void job_failed(const Topology& topo, std::uint32_t job_id, std::span<const NodeIndex> nodes,
                    std::span<const NodeIndex> failed, std::int64_t now, const FailureCause& cause = {});
    // The job runs on `nodes`, a run that began at `started`. A run that
    // began before the failure is the failed run itself (slurmctld restored
    // from state saved before the requeue, after a crash): not a restart,
    // the record stays. Otherwise the recovery ends, in place or elsewhere,
    // `started - failed_at` seconds after the failure.
    void job_started(const Topology& topo, std::uint32_t job_id, std::span<const NodeIndex> nodes,
                     std::int64_t started);
    // The job left the queue (cancelled, finished) before restarting.
    void job_gone(const Topology& topo, std::uint32_t job_id, std::int64_t now);
    // The caller preempted or requeued the jobs of `plan` for the job (made
    // for `for_job`'s user); the last of them releases its nodes by
    // `released_by` (its GraceTime; `now` when none). No new round, and the
    // job's hold and wait last, until they have had the hold delay after that.
    void reclaim_started(const Topology& topo, std::uint32_t job_id, const Reclaim& plan, const Reclaimer& for_job,
                         std::int64_t released_by, std::int64_t now);
    // Nothing could be reclaimed for it: logged when the reason is new.
    void reclaim_refused(const Topology& topo, std::uint32_t job_id, const ReclaimRefusal& why);

    // ---- Time ------------------------------------------------------------------
    // Every job whose wait for its block is over at `now` (rules.hpp:
    // wait_over) or whose block is down (rule 7), and that cannot restart in
    // place on `snap` now, falls back: from then on it is placed like any
    // other job, and its holds end. One whose block can take it falls back
    // too once its hold is over (hold_until: its wait, and at least until
    // Slurm could have started it): the wait bounds how long a job is kept
    // to its block, whatever keeps Slurm from starting it there. Logged one
    // line each, with the shortfall that made it fall back. Returns how many
    // fell back.
    // Jobs whose blocks changed since their failure (held_blocks.hpp: a
    // reconfigure, a node moved) fall back first, logged with what changed.
    // Before all that, a watched job with a node failed since its end opens
    // its recovery, and watches whose window is over end.
    std::size_t advance(const Snapshot& snap, std::int64_t now);
    // Only that first step: every waiting job whose block(s) no longer
    // exist with the same nodes in `topo` falls back. Returns how many.
    std::size_t end_changed(const Topology& topo, std::int64_t now);
    // The earliest time after `now` at which advance() could change
    // something by time alone (a wait ending); INT64_MAX when none.
    std::int64_t next_deadline(std::int64_t now) const;
    // Whether any job still waits for its own block(s), or is watched.
    bool any_waiting() const;
    // Jobs a reclaim (rule 3b) could be planned for at `now`: waiting for
    // their own blocks, no earlier round still releasing nodes, blocks
    // unchanged, one of them `reserve: reclaim`. The caller walks Slurm's
    // running jobs only when there is one.
    std::vector<std::uint32_t> reclaim_candidates(const Topology& topo, std::int64_t now) const;

    // ---- Questions -------------------------------------------------------------
    bool recovering(std::uint32_t job_id) const { return ledger_.find(job_id) != nullptr; }
    // Requeued jobs watched for a failure that shows after their end.
    const std::map<std::uint32_t, FailureWatch>& watches() const { return watches_; }
    // The job's record while it still waits for its own block(s); null when
    // it has none or has fallen back.
    const RecoveryRecord* waiting_in_place(std::uint32_t job_id) const;
    // Whether the record's blocks are not what they were at its failure:
    // it no longer waits for them (advance() makes that its fallback).
    static bool blocks_changed(const Topology& topo, const RecoveryRecord& r);
    // Claims whose holds are in force at `now` (what the engine keeps for
    // them), less those of jobs whose blocks changed; then the watched
    // jobs' nodes while some still complete.
    std::vector<RecoveryClaim> active_claims(const Topology& topo, std::span<const NodeState> states,
                                             std::int64_t now) const;
    // Its two parts: the records' claims, which follow the ledger (its
    // version), the states and the time; and the watched jobs'.
    std::vector<RecoveryClaim> held_claims(const Topology& topo, std::span<const NodeState> states,
                                           std::int64_t now) const;
    void add_watch_claims(const Topology& topo, std::span<const NodeState> states, std::int64_t now,
                          std::vector<RecoveryClaim>& out) const;

    // Reconfigure: records follow their nodes by name.
    void remap(const Topology& from, const Topology& to) { ledger_.remap(from, to); }

  private:
    // Watched jobs with a node failed since their end open their recovery;
    // watches whose window is over end. Returns how many opened.
    std::size_t settle_watches(std::span<const NodeState> states, const Topology& topo, std::int64_t now);
    void fall_back(const RecoveryRecord& r, std::int64_t now, NoteFallback why);
    // `failed` failed under a job at `at` (lemons.hpp); logged when one becomes a lemon.
    void note_failures(const Topology& topo, std::span<const NodeIndex> failed, std::int64_t at);

    Ledger ledger_;
    std::map<std::uint32_t, FailureWatch> watches_; // not saved (failure_watch.hpp)
    std::int64_t slurm_requeue_delay_ = 0;
};

} // namespace nvlblock
