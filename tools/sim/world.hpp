// SPDX-License-Identifier: GPL-2.0-or-later
//
// The state of one policy's simulation and the operations that change it:
// submit, start, finish, kill (failure or preemption) and the one way any
// placement is decided, decide(), which calls nvlblock::Planner::place. The
// event loop (simulator.hpp) and the queue policy (scheduler.hpp) both work
// on a World.
#pragma once

#include "cluster_state.hpp"
#include "event_queue.hpp"
#include "failure_kinds.hpp"
#include "metrics.hpp"
#include "pending_queue.hpp"
#include "policy.hpp"
#include "sim_types.hpp"
#include "victim_model.hpp"
#include "withheld_map.hpp"

#include "core/planner.hpp"

#include <algorithm>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <vector>

namespace nvlblock::sim {

enum class QueueMode { kFifo, kEasy };

// Where a requeued job (failure or preemption) goes in the queue: behind
// every job submitted before the requeue, as Slurm does (default:
// batch_requeue_fini() sets the job's submit time to the requeue time and
// sets its priority again, which priority/basic makes the lowest and
// priority/multifactor's age factor restarts; read in 24.11, 25.05.8 and
// 25.11.7), or back to its place by original submit time (kSubmit, not
// Slurm's: victims of preemption can then take back the nodes their
// preemptors wait for, docs/sim.md).
enum class RequeueOrder { kSubmit, kRequeue };

struct SimOptions {
    ClusterShape shape;
    QueueMode queue = QueueMode::kEasy;
    PreemptionMode preemption = PreemptionMode::kLend;
    Seconds checkpoint_interval = 3600; // 0: no checkpoints, a failure loses the whole run
    Seconds requeue_delay = 11;         // a requeued job cannot start before now + this (cred_expire + 1)
    RequeueOrder requeue_order = RequeueOrder::kRequeue;
    Seconds horizon = 0;      // 0: run until every job has finished
    Seconds window_start = 0; // the measured window
    Seconds window_end = 0;
    Seconds bucket = 3600;              // time-series resolution
    Seconds bf_interval = 30;           // at most one backfill pass per this many seconds (0: every pass)
    int bf_max_job_test = 500;          // jobs a backfill pass examines
    bool reuse_reservation = true;      // keep a reservation while provably unchanged (false: recompute each pass)
    bool cache_refusals = true;         // a refusal stands until the epoch changes (false: ask the Planner again)
    bool warm_search = true;            // a head job's new reservation search starts at its last reserved time
    bool bound_attempts = true;         // a start attempt the planner's room bound refuses is not asked (false: ask)
    bool keep_bound_refusals = true;    // ...and stays refused until ends freed the nodes it lacked (false: epoch)
    bool long_first = true;             // backfill asks a long job without the reserved nodes first (false: last)
    bool note_changes = true;           // name changed nodes to the planner (false: it compares every node)
    Seconds max_time = 3 * 365 * 86400; // safety stop for runs without a horizon
    VictimModel victims;                // how jobs reclaimed for an in-place restart fare
    // nvrx: from a failure to the job working again on its standby, in the
    // job (detection, rendezvous, GPU memory reclaim; docs/sim.md, "Peers").
    Seconds in_job_restart = 60;
    // What interruptions do to nodes and jobs (failure_kinds.hpp), and the
    // seed of the draws of which failed jobs the site requeues.
    FailureKindSpec kinds;
    std::uint64_t seed = 1;
    // A job started on a node with a hidden GPU fault fails this long
    // after its start (CUDA and NCCL initialisation touch every GPU).
    Seconds hidden_fault_shows = 60;
};

// One placement decision, for tests that replay the simulator's decisions
// through the plugin's C ABI.
struct DecisionRecord {
    Seconds now = 0;
    bool hypothetical = false; // a backfill what-if (future state), not a start attempt
    std::vector<nvlblock::NodeState> states;
    std::uint32_t job_id = 0, min_nodes = 0, max_nodes = 0, segment = 0;
    bool preemptible = false;
    Seconds waited = 0;
    std::vector<std::uint8_t> available; // empty: free nodes
    nvlblock::Placement result;
};

// One reclaim decision (rule 3b), for the same tests.
struct ReclaimRecord {
    Seconds now = 0;
    std::vector<nvlblock::NodeState> states;
    nvlblock::Request request; // without `available`
    nvlblock::Reclaimer for_job;
    std::vector<nvlblock::RunningJob> running;
    std::optional<nvlblock::Reclaim> result;
};

// One advance of the recovery clock (Planner::advance), for the same tests.
struct AdvanceRecord {
    Seconds now = 0;
    std::vector<nvlblock::NodeState> states;
    std::size_t fell_back = 0;
};

// One "could this job ever run" decision, at submission.
struct CanEverRunRecord {
    nvlblock::Request request;
    bool result = false;
    Seconds now = 0;
    std::vector<nvlblock::NodeState> states; // the cluster at the submission
};

struct SimHooks {
    std::function<void(const DecisionRecord&)> on_place;
    std::function<void(const AdvanceRecord&)> on_advance;
    std::function<void(const CanEverRunRecord&)> on_can_ever_run;
    std::function<void(const std::string& qos, bool preemptible)> on_preemptible;
    std::function<void(const ReclaimRecord&)> on_reclaim; // every plan asked for, also when it finds none
    std::function<void(std::uint32_t job, const nvlblock::Reclaim& plan, const nvlblock::Reclaimer& for_job,
                       Seconds released_by, Seconds now)>
        on_reclaim_started;
    std::function<void(std::uint32_t job, const std::vector<nvlblock::NodeIndex>& nodes,
                       const std::vector<nvlblock::NodeIndex>& failed, Seconds now)>
        on_job_failed;
    std::function<void(std::uint32_t job, const std::vector<nvlblock::NodeIndex>& nodes, Seconds now)> on_job_started;
    // A job failed with its nodes up (fault_end), and what the core made of it.
    std::function<void(const nvlblock::JobEnd& end, nvlblock::JobEndOutcome outcome)> on_job_ended;
    std::ostream* log = nullptr; // CSV of starts, ends, failures, preemptions
};

// What the backfill reads of every job it walks comes first, in one cache
// line (a pass walks up to bf_max_job_test jobs; a deep queue's walks were a
// fifth of a run, mostly waiting for memory).
struct alignas(64) SimJob {
    enum class State : std::uint8_t { kPending, kRunning, kDone, kRejected };

    Seconds eligible_at = 0;
    Seconds preempting_until = -1; // it preempted jobs that keep their nodes until then
    JobShape shape;
    Seconds limit = 0;        // time limit the scheduler plans with
    bool preemptible = false; // the topology's selector matches its QOS
    State state = State::kPending;

    JobSpec spec;
    Seconds queued_at = 0; // its place in the queue: submit time, or last requeue (RequeueOrder::kRequeue, default)
    Seconds first_start = -1;
    Seconds remaining = 0; // run time still to do, from its last checkpoint
    Seconds restore = 0;   // the current run first loads its checkpoint this long (no work)
    Seconds run_start = 0;
    std::uint32_t run = 0; // runs started so far
    std::vector<nvlblock::NodeIndex> nodes;
    std::vector<nvlblock::NodeIndex> prev_nodes; // when last killed by a failure
    bool awaiting_restart = false;               // killed by a failure, not started since
    Seconds failed_at = 0;
    VictimTraits traits;         // checkpoints on a signal; may be requeued
    Seconds grace_until = -1;    // signalled (preempted or reclaimed): requeued then (-1: not signalled)
    std::uint32_t moves = 0;     // times a reclaim took its nodes
    std::uint32_t preempted = 0; // times Slurm's preemption requeued it
    // nvrx: its standbys (nodes of its allocation that do no work until a
    // failure promotes them), and since when it restarts in the job (-1: not).
    std::vector<nvlblock::NodeIndex> standbys;
    Seconds restart_from = -1;
};

struct Counters {
    std::uint64_t events = 0, passes = 0, backfill_passes = 0, place_calls = 0, reservations = 0;
    std::uint64_t bound_calls = 0; // questions to the planner's room bound (not reported: a cost, like place_calls)
    std::uint64_t submitted = 0, started = 0, completed = 0, rejected = 0;
    std::uint64_t failure_kills = 0, preemptions = 0, reclaims = 0;
    std::uint64_t reclaim_requeues = 0, victims_checkpointed = 0;       // victims requeued; of those, checkpointed
    std::uint64_t in_job_restarts = 0, standbys_used = 0;               // nvrx: failures absorbed in the job
    std::uint64_t node_failures = 0, rack_faults = 0, node_repairs = 0; // in the window
    double completed_node_s = 0;                                        // work of the jobs that completed
    // Failure kinds (failure_kinds.hpp): interruptions with the node up and
    // of jobs alone (in the window); runs they ended, of which on a node
    // with a hidden fault; failed jobs the site did not requeue and the
    // work (node-seconds) they had left.
    std::uint64_t up_faults = 0, job_faults = 0;
    std::uint64_t fault_ends = 0, hidden_fault_hits = 0, not_requeued = 0;
    double not_requeued_node_s = 0;
};

class World {
  public:
    World(const SimOptions& options, PolicyConfig policy, SimHooks hooks = {});

    const SimOptions& options() const { return opt_; }
    const PolicyConfig& policy() const { return policy_; }
    const nvlblock::Topology& topology() const { return planner_.topology(); }
    nvlblock::Planner& planner() { return planner_; }
    // Where the simulator notes the nodes it changes in arrays the planner
    // tracks (null with note_changes off: the planner compares every node).
    nvlblock::ChangeJournal* changes() { return opt_.note_changes ? &planner_.changes() : nullptr; }
    const nvlblock::Planner& planner() const { return planner_; }
    ClusterState& cluster() { return cluster_; }
    const ClusterState& cluster() const { return cluster_; }
    Metrics& metrics() { return metrics_; }
    const Metrics& metrics() const { return metrics_; }
    EventQueue& events() { return events_; }
    Counters& counters() { return counters_; }
    const Counters& counters() const { return counters_; }
    std::vector<SimJob>& jobs() { return jobs_; }
    const std::vector<SimJob>& jobs() const { return jobs_; }
    SimJob& job(std::uint32_t i) { return jobs_[i]; }
    static std::uint32_t job_id(std::uint32_t index) { return index + 1; } // the id the planner sees

    // Pending jobs in priority order (queued_at, then arrival) and running
    // jobs by expected end (start + time limit).
    PendingQueue& pending() { return pending_; }
    const PendingQueue& pending() const { return pending_; }
    const std::set<std::pair<Seconds, std::uint32_t>>& running_by_end() const { return running_by_end_; }
    int pending_closed_loop() const { return pending_closed_; }

    // Bumped whenever something may let a refused placement succeed (nodes
    // freed or repaired, failures, time-based changes to holds): a refusal
    // at the current epoch stands until it changes.
    std::uint64_t epoch() const { return epoch_; }
    void bump_epoch() {
        ++epoch_;
        ++other_changes_;
    }
    // Changes other than jobs finishing (a backfill reservation survives
    // finishes of jobs it already counted as gone by its start time).
    std::uint64_t other_changes() const { return other_changes_; }
    // Nodes freed by jobs finishing, since the run began: while other_changes()
    // stays, the room any map offers a job has grown by at most this much
    // since (a refusal by the room bound stands while it grew by less than the
    // refusal's shortfall).
    std::uint64_t freed() const { return freed_; }
    // The latest expected end (start + limit) of the jobs finished since the last reset.
    Seconds finished_expected_end_max() const { return finished_max_; }
    void reset_finished_expected_end_max() { finished_max_ = -kNever; }

    std::uint32_t submit(JobSpec spec, Seconds now);
    nvlblock::Request request_for(const SimJob& j, Seconds now) const;
    // Whether the job has waited long enough to cross a level of the hierarchy.
    bool crosses_levels(const SimJob& j, Seconds now) const;
    // The state the engine sees on the nodes of `j` while it runs.
    nvlblock::NodeState running_state(const SimJob& j) const;
    // Whether any block reclaims its spares (rule 3b).
    bool reclaims() const { return reclaims_; }
    // Whether the job may preempt work of the preemptible QOS.
    bool may_preempt(const SimJob& j) const;
    // Nodes this job could use at most (free healthy, plus preemptible work it may preempt).
    int usable_nodes(const SimJob& j) const;

    // Time passes for the recovery module (Planner::advance): jobs whose wait
    // for their block is over fall back. Called at the start of each pass.
    void advance(Seconds now);
    // The only place decisions are made.
    nvlblock::Placement decide(std::span<const nvlblock::NodeState> states, nvlblock::Request request,
                               const std::vector<std::uint8_t>* available, Seconds now, bool hypothetical);
    // A start attempt as Slurm makes it: on free nodes; failing that, where
    // allowed, also on nodes running preemptible work. `exclude`: nodes a
    // backfill reservation keeps.
    // `shortfall` (if given): attempt_shortfall's answer when the room bound
    // ruled out every map, else 0 (a decision was asked).
    nvlblock::Placement attempt(SimJob& j, Seconds now, const std::vector<nvlblock::NodeIndex>* exclude = nullptr,
                                long* shortfall = nullptr);
    // 0 where attempt(j, now) could place the job; else how many nodes short
    // the planner's room bound finds it on every map it would offer (the
    // fewest over those maps).
    long attempt_shortfall(const SimJob& j, Seconds now);
    // How many nodes short the planner's room bound finds `r` over these
    // arrays (Planner::bound_shortfall; 0: it may be placed): an attempt it
    // would refuse anyway is not asked.
    long bound_shortfall(std::span<const nvlblock::NodeState> states, const nvlblock::Request& r,
                         const std::vector<std::uint8_t>* available, Seconds now);
    bool may_place(std::span<const nvlblock::NodeState> states, const nvlblock::Request& r,
                   const std::vector<std::uint8_t>* available, Seconds now) {
        return bound_shortfall(states, r, available, now) == 0;
    }

    // For a job waiting to restart in place: requeues the jobs the Planner
    // names to reclaim spares for it (rule 3b); false if there are none.
    bool reclaim_for(const SimJob& j, Seconds now);
    nvlblock::RunningJob running_job(std::uint32_t index, const SimJob& for_job) const;
    // False when the job must first wait for the jobs it preempts (a grace time).
    bool start(std::uint32_t index, const nvlblock::Placement& p, Seconds now);
    void finish(std::uint32_t index, Seconds now);
    void kill(std::uint32_t index, Seconds now, LossCause cause, const std::vector<nvlblock::NodeIndex>& failed);
    // The job's processes died of a fault with its nodes up (world_faults.cpp):
    // `faulty` (none for a fault of the job itself) are drained already or
    // hidden until a check drains them; the batch script exits non-zero,
    // the Epilog runs, and Slurm requeues the job if the site requeues the
    // exit status. The core hears of it as the plugin would (JobEnd).
    void fault_end(std::uint32_t index, Seconds now, const std::vector<nvlblock::NodeIndex>& faulty);
    // nvrx: a fault of the job itself restarts it in the job, on its own
    // nodes, as ft_launcher restarts every rank; false when the job has no
    // in-job restart (it then ends as fault_end says).
    bool restart_job_fault(std::uint32_t index, Seconds now);
    // The nodes of killed jobs whose kill wait ends `now` are free (kCompletionEnd).
    void completion_over(Seconds now);
    // The work of its run a job keeps when it stops `now`: back to its last
    // periodic checkpoint (none if it writes none); `work` gets the run's work
    // (its time less the checkpoint's loading).
    Seconds keep_checkpointed(const SimJob& j, Seconds now, Seconds& work) const;
    // nvrx: a failure of `failed` absorbed by the job's standbys (in_job_spares.hpp);
    // false when the job has none that can (it is then killed and requeued).
    bool absorb_in_job(std::uint32_t index, Seconds now, const std::vector<nvlblock::NodeIndex>& failed);
    // A job preempted (or reclaimed: `cause`) at `now` keeps its nodes for
    // the grace time; grace_over() then requeues it (kGraceEnd).
    void signal(std::uint32_t index, Seconds now, LossCause cause);
    void grace_over(std::uint32_t index, std::uint32_t run, bool reclaim, Seconds now);
    // Whether the job waits for the jobs it preempted to go.
    static bool preempting(const SimJob& j, Seconds now) { return j.preempting_until > now; }
    // Before then the job may not start: not eligible yet, or waiting for the jobs it preempted.
    static Seconds not_before(const SimJob& j) { return std::max(j.eligible_at, j.preempting_until); }
    // A pass at `at`; bumps the epoch then if `changes_decisions`.
    void timer(Seconds at, bool changes_decisions);

    Levels levels(Seconds now) const;
    bool any_eligible_pending(Seconds now) const;
    void log_line(Seconds now, const char* event, const SimJob& j, const std::vector<nvlblock::NodeIndex>& nodes,
                  const std::string& detail = "");

  private:
    template <class Ask>
    bool each_offer(const SimJob& j, const std::vector<nvlblock::NodeIndex>* exclude, Ask&& ask);
    // fault_end: whether the site requeues this run's exit status (a draw per job and run).
    bool site_requeues(const SimJob& j) const;
    // fault_end: what the core hears (the plugin's nvlb_job_ended).
    void report_fault_end(std::uint32_t index, Seconds now, bool requeued);
    // fault_end: the job back in the queue (as kill() puts it) or gone
    // (not requeued, or an expedited requeue held); `completed`: when its
    // nodes stopped completing.
    void requeue_after_fault(std::uint32_t index, Seconds now, Seconds completed, bool node_lost, bool expedited);
    void drop_after_fault(std::uint32_t index, Seconds now);
    // Timers for the holds of a recovery that opened for the job now.
    void recovery_timers(std::uint32_t index);
    // A requeued job back in the queue, as Slurm requeues it once its nodes
    // stopped completing (`completed`): eligible the requeue delay later (an
    // expedited one at once, first), queued by `opt_.requeue_order`.
    void queue_requeued(std::uint32_t index, Seconds completed, bool expedited);
    // A killed job's nodes: free at once, or completing for the kill wait.
    // Returns when the last of them stops completing (`now` if none does):
    // Slurm requeues the job only then (see kill()).
    Seconds leave_killed(const std::vector<nvlblock::NodeIndex>& nodes, Seconds now);
    void crossing_timer(const SimJob& j);
    // `node_lost`: after a node's failure (counted as a restart, in place);
    // a fault of the job itself is not (nothing to restart "in place" from).
    void restart_in_job(std::uint32_t index, Seconds now, std::size_t working, bool node_lost = true);
    // The restart time spent so far, counted as lost work (a restart ends, or is cut short).
    void close_in_job_restart(SimJob& j, Seconds now);
    // Nodes of the job that do its work (its standbys do none).
    static std::size_t working_nodes(const SimJob& j) { return j.nodes.size() - j.standbys.size(); }

    const SimOptions& opt_;
    PolicyConfig policy_;
    SimHooks hooks_;
    nvlblock::Planner planner_;
    ClusterState cluster_;
    WithheldMap withheld_; // the free map less the nodes a start attempt excludes
    bool reclaims_ = false;
    nvlblock::JobSelector selector_;
    std::map<std::tuple<std::uint32_t, std::uint32_t, bool>, bool> can_ever_run_; // by job shape
    Metrics metrics_;
    EventQueue events_;
    Counters counters_;
    std::vector<SimJob> jobs_;
    PendingQueue pending_;
    std::set<std::pair<Seconds, std::uint32_t>> running_by_end_;
    int pending_closed_ = 0;
    std::uint64_t epoch_ = 1, other_changes_ = 0, freed_ = 0;
    Seconds finished_max_ = -kNever;
    std::set<std::uint32_t> signalled_; // jobs whose grace time runs (grace_until >= 0)
    int standby_nodes_ = 0;             // healthy standbys of running jobs (nvrx)
};

} // namespace nvlblock::sim
