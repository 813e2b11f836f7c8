// SPDX-License-Identifier: GPL-2.0-or-later
//
// The planner ties the pieces together for a caller that lives through time:
// the topology, the placement engine and the recovery module (src/recovery:
// the ledger of jobs restarting after failures, its rules and its clock).
// The Slurm plugin, the simulator and the C ABI all decide through it, so no
// rule exists twice.
//
// Questions (place, plan_reclaim, snapshot, can_ever_run) change nothing: Slurm
// asks the same question for real starts, test-only and will-run evaluations,
// with nothing to tell them apart. State changes only through the calls that
// report a fact (job_failed, job_started, job_gone, reclaim_started) and
// through advance(), the one call that moves time.
#pragma once

#include "core/health_clock.hpp"
#include "core/reclaim_pass_times.hpp"
#include "core/topology_change.hpp"
#include "model/topology.hpp"
#include "placement/change_journal.hpp"
#include "placement/engine.hpp"
#include "placement/held_offers.hpp"
#include "placement/room_index.hpp"
#include "placement/tally_cache.hpp"
#include "recovery/reclaim.hpp"
#include "recovery/recovery.hpp"
#include "state/ledger_file.hpp"

#include <array>
#include <memory>
#include <span>

namespace nvlblock {

class Planner {
  public:
    explicit Planner(Topology topology);

    const Topology& topology() const { return *topology_; }
    const Recovery& recovery() const { return recovery_; }
    const Ledger& ledger() const { return recovery_.ledger(); }
    // What recovery did since the last call, for the caller's log: the notes,
    // oldest first, each batch with the topology its notes were made on
    // (a reconfigure or a node moved between them swaps it);
    // writers/recovery_log_text.hpp words them.
    struct LogBatch {
        std::shared_ptr<const Topology> topology;
        std::vector<RecoveryNote> notes;
    };
    std::vector<LogBatch> take_log();
    // Saved state (the ledger), replaced wholesale on load.
    std::string save_state() const { return ledger_state_text(recovery_.ledger(), *topology_); }
    void load_state(const std::string& text, const std::string& label);

    // Which nodes the caller changed in the arrays it asks with
    // (placement/change_journal.hpp): a caller that tracks its arrays and
    // notes each change there makes a decision cost what changed instead
    // of a pass over every node. Not noting is always correct, only slower.
    ChangeJournal& changes() { return changes_; }

    // Seconds after a requeued job's end before Slurm lets it start again
    // (KillWait + cred_expire + 1: nvlb_set_requeue_delay); the recovery
    // module adds the scheduling slack.
    void set_slurm_requeue_delay(std::int64_t seconds) { recovery_.set_slurm_requeue_delay(seconds); }

    // Decide for one request. A job waiting to restart in place is placed
    // back on its block(s), or waits; once advance() has found its wait over
    // (or its block down) with no room there, it is placed like any other
    // job, preferring the groups of the blocks it had. Nodes Slurm offers
    // that are failed count as healthy and free (it offers them only when it
    // asks whether the job could ever run: see offered_as_healthy).
    // Changes nothing.
    Placement place(std::span<const NodeState> states, Request request, std::int64_t now) const;
    // Whether place() at `now` could place the request: false only where it
    // refuses (engine.hpp may_place, with other jobs' holds at `now`
    // counted; a job waiting for its own block(s) is always asked, a
    // fallen-back one refused only while its blocks are short too). For
    // callers that need no refusal's facts. Changes nothing.
    bool may_place(std::span<const NodeState> states, const Request& request, std::int64_t now) const {
        return bound_shortfall(states, request, now) == 0;
    }
    // How many nodes short of may_place's yes the request is (0: it may be
    // placed; engine.hpp bound_shortfall). Changes nothing.
    long bound_shortfall(std::span<const NodeState> states, const Request& request, std::int64_t now) const;

    // Time passes: jobs whose wait for their block is over (or whose block
    // is down) and whose block cannot take them now fall back (recovery.hpp).
    // The only call that moves time. Returns how many fell back.
    std::size_t advance(std::span<const NodeState> states, std::int64_t now);
    // Block health over time (core/health_clock.hpp): an explicit call,
    // every pass of the caller's clock; the report reads it.
    // Also forgets node failures older than the lemon window.
    void observe_health(std::span<const NodeState> states, std::int64_t now);
    const HealthClock& health() const { return health_; }

    // Nodes that are lemons at `now` (recovery/lemons.hpp), sorted: placed
    // last within their block (docs/placement.md rule 5a).
    // Valid until the next call with another `now` or after the ledger changed.
    const std::vector<NodeIndex>& lemons(std::int64_t now) const;
    // An operator cleared the node's failures (it had its part replaced).
    // Logged; returns whether it had any.
    bool clear_lemon(NodeIndex node);

    // When, after `now`, advance() next has something to do by time alone
    // (INT64_MAX: never).
    std::int64_t next_deadline(std::int64_t now) const { return recovery_.next_deadline(now); }

    // Whether the job could ever start as asked: placed on an idle cluster
    // with every node healthy, nothing held. A job refused here waits for
    // nothing (the simulator rejects it, as Slurm holds it at submission).
    bool can_ever_run(Request request) const;

    // For a job waiting to restart in place (`request` as for place(), made
    // for `for_job`): which of `running` to preempt or requeue so that it
    // fits its block(s) now, on blocks whose spares are reclaimed; or why
    // none. Changes nothing.
    ReclaimDecision plan_reclaim(std::span<const NodeState> states, Request request, const Reclaimer& for_job,
                                 std::span<const RunningJob> running, std::int64_t now) const;
    // plan_reclaim's refusal where no running job could change it (the job
    // fits now, is held, lacks more than the spares, a limit is reached:
    // refused_whatever_runs), asked before the caller gathers what Slurm
    // says of the running jobs; nullopt when the answer depends on them.
    // Changes nothing.
    std::optional<ReclaimRefusal> reclaim_ruled_out(std::span<const NodeState> states, Request request,
                                                    const Reclaimer& for_job, std::int64_t now) const;
    // The caller preempted or requeued the jobs of `plan` for `job_id`, the
    // last releasing its nodes by `released_by`: logged, remembered for the
    // cooldown and the limits, and no new round for the job until the hold
    // delay has passed after that.
    void reclaim_started(std::uint32_t job_id, const Reclaim& plan, const Reclaimer& for_job, std::int64_t released_by,
                         std::int64_t now);
    // Nothing could be reclaimed for the job (a plan's refusal, or Slurm's
    // the caller found): logged once per new reason.
    void reclaim_refused(std::uint32_t job_id, const ReclaimRefusal& why) {
        recovery_.reclaim_refused(*topology_, job_id, why);
    }

    // The caller held Slurm's locks `held_us` for a reclaim pass over
    // `recoveries` open recoveries: counted for the reports only.
    void note_reclaim_pass(std::int64_t held_us, std::int64_t cpu_us, std::size_t recoveries) {
        pass_times_.note(held_us, cpu_us, recoveries);
    }
    const ReclaimPassTimes& reclaim_pass_times() const { return pass_times_; }

    // The snapshot place() would use, for callers that want the tallies.
    Snapshot snapshot(std::span<const NodeState> states, std::int64_t now) const;

    // A job's nodes were released (Recovery::job_ended).
    JobEndOutcome job_ended(const JobEnd& end) { return recovery_.job_ended(*topology_, end); }
    void job_failed(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::span<const NodeIndex> failed,
                    std::int64_t now);
    // `started`: when the run began (see Recovery::job_started).
    void job_started(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::int64_t started);
    void job_gone(std::uint32_t job_id, std::int64_t now);

    // Reconfigure: swap the topology, keeping the ledger by node name.
    // It is also the one nvlblock's file gives from then on (configured()).
    void replace_topology(Topology topology);

    // The topology as read from nvlblock's file, before any change at run time.
    const Topology& configured() const { return *configured_; }
    // A node moved at run time (core/topology_change.hpp): decided over the
    // current topology, the jobs running on the node and the open
    // recoveries, and applied when allowed. Jobs whose blocks changed under
    // them cannot be among the recoveries (refused), so the ledger stays.
    TopologyChange change_node_block(const NodeAssignment& asked, std::span<const JobNodes> running, bool restoring);

  private:
    template <class Then>
    ReclaimDecision ask_reclaim(std::span<const NodeState> states, Request request, const Reclaimer& for_job,
                                std::int64_t now, Then&& then) const;
    // One decision through the engine, with the room index of `states`
    // under the request's map attached (the same answer as without it).
    // `holds`: whether other jobs' holds count (see offered_as_healthy).
    Placement decide(std::span<const NodeState> states, const Request& request, std::int64_t now,
                     bool holds = true) const;
    // The room bound's shortfall for the request placed anywhere (engine.hpp).
    long room_shortfall(std::span<const NodeState> states, const Request& request, std::int64_t now) const;
    // What place() at `now` counts as held over `states` (null: nothing).
    // `counted`: their tallies where the caller has them (else asked of the
    // cache, and only when the holds must be counted).
    std::shared_ptr<const Holds> holds_at(std::span<const NodeState> states, std::int64_t now,
                                          const Tallies* counted = nullptr) const;
    // Other jobs' holds at `now` as the bound over `index` (of `states`
    // under `available`) counts them; null where nothing is held.
    const HeldOffers* held_offers_for(std::span<const NodeState> states, std::span<const std::uint8_t> available,
                                      const RoomIndex& index, std::int64_t now) const;
    // The states a decision answers over: offered_as_healthy's, asked of the
    // room index where the caller's arrays are tracked (no pass over them).
    std::span<const NodeState> answered_states(std::span<const NodeState> states,
                                               std::span<const std::uint8_t> available,
                                               std::vector<NodeState>& scratch) const;
    std::shared_ptr<const Tallies> tallies(std::span<const NodeState> states) const {
        return tally_cache_.tallies(*topology_, states, &changes_);
    }

    std::shared_ptr<const Topology> topology_;
    // Notes made on topologies swapped out since the log was last taken.
    std::vector<LogBatch> earlier_log_;
    // Swaps the topology, the notes so far kept with the old one.
    void set_topology(std::shared_ptr<const Topology> next);
    // Sizes the journal to the topology; every copy is compared whole once.
    void restart_journal();
    std::shared_ptr<const Topology> configured_;
    Recovery recovery_;
    // The held claims with the watched jobs' (scratch: recomputed per
    // snapshot while jobs are watched).
    mutable std::vector<RecoveryClaim> claims_cache_;
    // The records' claims last computed for a tracked state array (two
    // arrays in turn: the cluster's and a what-if), and what they hold
    // there, kept while nothing was noted, the ledger and the topology are
    // the same and the time too: a backfill pass asks many decisions at one
    // time (a cache, not state).
    struct ClaimsMemo {
        const NodeState* states = nullptr; // null: an untracked array's, never matched
        std::size_t size = 0;
        ChangeJournal::Position journal = 0;
        std::uint64_t ledger = 0, topology = 0;
        std::int64_t now = 0;
        std::vector<RecoveryClaim> claims;
        std::shared_ptr<const Holds> holds; // count_holds() of `claims` (once holds_counted)
        bool holds_counted = false;
    };
    mutable std::array<ClaimsMemo, 2> claims_memo_;
    mutable ClaimsMemo untracked_claims_;
    mutable std::size_t next_claims_memo_ = 0;
    ClaimsMemo& held_claims(std::span<const NodeState> states, std::int64_t now) const;
    // Block tallies recounted only where node states changed between calls.
    mutable TallyCache tally_cache_;
    // Blocks by room under each map asked with, updated the same way.
    mutable RoomIndexCache room_cache_;
    // The indexes may_place last used (one per pair of arrays, the last
    // four pairs), for tracked arrays answered as they are: a backfill pass
    // asks the bound of many jobs in a row, of the free map and of the free
    // map less the reserved nodes, with nothing noted between them, and then
    // needs no cache lookups (a cache, not state: the same index the lookups
    // would return).
    struct BoundMemo {
        const NodeState* states = nullptr;
        std::size_t size = 0;
        const std::uint8_t* map = nullptr;
        std::size_t map_size = 0;
        ChangeJournal::Position journal = 0;
        std::uint64_t rooms = 0; // room_cache_.generation()
        const RoomIndex* index = nullptr;
    };
    mutable std::array<BoundMemo, 4> bound_memo_;
    mutable std::size_t next_memo_ = 0;
    // held_offers_for's answers for the last indexes and holds it was asked
    // of (a cache: an index is the same while its address and the room
    // cache's generation are, holds while their address is, kept alive here).
    struct HeldOffersMemo {
        const RoomIndex* index = nullptr;
        std::uint64_t rooms = 0;
        std::shared_ptr<const Holds> holds;
        HeldOffers offers;
    };
    mutable std::array<HeldOffersMemo, 4> held_offers_memo_;
    mutable std::size_t next_held_offers_ = 0;
    const RoomIndex* remembered_index(std::span<const NodeState> states, std::span<const std::uint8_t> available) const;
    // What the caller noted changing: both caches read it.
    ChangeJournal changes_;
    HealthClock health_;
    ReclaimPassTimes pass_times_;
    struct LemonCache {
        std::uint64_t version = 0; // FailureHistory::version() (never 0)
        LemonPolicy policy;
        std::int64_t from = 0, until = 0;
        std::vector<NodeIndex> nodes;
    };
    mutable LemonCache lemon_cache_;
};

// Slurm offers a node that is down, drained, failing or not responding only
// when it asks whether a job could ever run "if all configured nodes were
// available" (at submission and after every failed attempt); a refusal there
// holds the job as never runnable. That question is answered as asked: such
// offered nodes count as healthy and free, and holds for jobs waiting to
// restart in place do not count (a hold ends within recovery.wait; answered
// "never", it would lose the job). Returns `states` itself when no offered
// node is failed, else `scratch` filled with the shaped states.
std::span<const NodeState> offered_as_healthy(std::span<const NodeState> states,
                                              std::span<const std::uint8_t> available, std::vector<NodeState>& scratch);

// A job restarting in place never takes a node that runs ordinary work, even
// where Slurm offers it (its node_map holds the nodes of jobs Slurm could
// preempt for it): Slurm would then preempt, or cancel under
// PreemptMode=REQUEUE if it cannot be requeued, whatever runs there, which
// topology/block, free to restart the job elsewhere, would not. Which work
// may lose its nodes for an in-place restart is rule 3b's decision (reclaim),
// and a reclaim frees the nodes before the job takes them. Lent nodes (the
// topology's `preemptible:` work) stay offered: lending is Slurm's
// preemption of work the site named for it. The job's own healthy nodes
// stay offered while they still finish its last run (Slurm asks whether a
// job could ever run right after its requeue). Returns `available` itself
// when nothing changes, else `scratch`.
std::span<const std::uint8_t> without_busy_nodes(std::span<const NodeState> states,
                                                 std::span<const std::uint8_t> available, const RecoveryClaim& claim,
                                                 std::vector<std::uint8_t>& scratch);

} // namespace nvlblock
