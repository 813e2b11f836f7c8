// SPDX-License-Identifier: GPL-2.0-or-later
#include "simulator.hpp"

#include <algorithm>
#include <chrono>
#include <map>

namespace nvlblock::sim {

using nvlblock::NodeIndex;

namespace {
// Event flags of a failure cause: it starts; a whole rack; down at the
// start (stationary state); the kind of a node's interruption (failure_kinds.hpp).
constexpr std::uint32_t kDown = 1, kRack = 2, kInitial = 4, kUpKind = 8, kJobKind = 16;
constexpr std::uint64_t kCheckStream = 0x43484543; // "CHEC": each node's health-check phase

std::uint32_t cause_flags(const FailureEvent& f) {
    return (f.down ? kDown : 0u) | (f.rack ? kRack : 0u) | (f.initial ? kInitial : 0u) |
           (f.down && f.kind == FailureKind::kUp ? kUpKind : 0u) |
           (f.down && f.kind == FailureKind::kJob ? kJobKind : 0u);
}

FailureKind kind_of(std::uint32_t flags) {
    return flags & kUpKind ? FailureKind::kUp : flags & kJobKind ? FailureKind::kJob : FailureKind::kDown;
}
} // namespace

Simulator::Simulator(const SimOptions& options, PolicyConfig policy, std::unique_ptr<Workload> workload,
                     FailureSource failures, SimHooks hooks)
    : opt_(options), world_(options, std::move(policy), std::move(hooks)), scheduler_(world_),
      workload_(std::move(workload)), failures_(std::move(failures)) {
    if (opt_.kinds.periodic > 0) {
        check_phase_.reserve(world_.cluster().size());
        for (std::size_t n = 0; n < world_.cluster().size(); ++n)
            check_phase_.push_back(
                static_cast<Seconds>(Rng(stream_seed(opt_.seed, kCheckStream, n))
                                         .between(0, static_cast<std::uint64_t>(opt_.kinds.periodic - 1))));
    }
}

void Simulator::fetch_arrival() {
    next_arrival_ = workload_->next_open();
    if (next_arrival_)
        world_.events().push({next_arrival_->submit, EventKind::kSubmit, 0, 0, 0, 0});
}

bool Simulator::finished() const {
    const World& w = world_;
    return !next_arrival_ && w.pending().empty() && w.running_by_end().empty() && workload_->closed_target() == 0;
}

void Simulator::push_cause(const FailureEvent& f) {
    world_.events().push(
        {f.at, f.down ? EventKind::kCauseDown : EventKind::kCauseUp, f.target, cause_flags(f), f.process, 0});
}

void Simulator::cause_event(const Event& e, Seconds t, Hits& hits) {
    Counters& c = world_.counters();
    ClusterState& cluster = world_.cluster();
    const bool down = e.b & kDown, rack = e.b & kRack;
    const FailureKind kind = kind_of(e.b);
    const bool counted = down && !(e.b & kInitial) && world_.metrics().in_window(t);
    FailureEvent f{t, down, rack, e.a, e.c, false, kind};
    if (down && !rack && kind != FailureKind::kDown) {
        // The node stays up: its job dies; a `job` fault leaves the node
        // sound, an `up` fault hides in it until a check drains it.
        const NodeIndex n = e.a;
        const std::int32_t job = cluster.job_on(n);
        if (kind == FailureKind::kJob) {
            if (job >= 0)
                hits.job[static_cast<std::uint32_t>(job)];
            if (auto next = failures_.follow(f))
                push_cause(*next);
        } else {
            const std::uint32_t fault = cluster.hide_fault(n, e.c);
            if (job >= 0)
                hits.up[static_cast<std::uint32_t>(job)].push_back(n);
            if (opt_.kinds.periodic > 0)
                world_.events().push({next_check(n, t), EventKind::kDrain, n, fault, 0, 0});
        }
        if (counted)
            ++(kind == FailureKind::kUp ? c.up_faults : c.job_faults);
        return;
    }
    const int per_rack = opt_.shape.nodes_per_rack;
    const NodeIndex first = rack ? e.a * static_cast<NodeIndex>(per_rack) : e.a;
    const NodeIndex last = rack ? first + static_cast<NodeIndex>(per_rack) : first + 1;
    for (NodeIndex n = first; n < last; ++n) {
        if (down) {
            const std::int32_t job = cluster.job_on(n);
            if (cluster.cause_down(n) && job >= 0)
                hits.down[static_cast<std::uint32_t>(job)].push_back(n);
        } else if (cluster.cause_up(n) && world_.metrics().in_window(t)) {
            ++c.node_repairs;
        }
    }
    if (counted)
        ++(rack ? c.rack_faults : c.node_failures);
    if (auto next = failures_.follow(f))
        push_cause(*next);
    world_.bump_epoch();
}

Seconds Simulator::next_check(NodeIndex n, Seconds t) const {
    const Seconds period = opt_.kinds.periodic, phase = check_phase_[n];
    // The first check of the node strictly after t.
    return t < phase ? phase : phase + ((t - phase) / period + 1) * period;
}

void Simulator::drain(NodeIndex n, Seconds t, Hits* hits) {
    ClusterState& cluster = world_.cluster();
    const std::uint32_t process = cluster.hidden_fault_process(n);
    cluster.fault_found(n);
    // A job started on the node since the fault runs into it now: it fails
    // in the second the check drains the node.
    const std::int32_t job = cluster.job_on(n);
    if (job >= 0 && hits)
        hits->up[static_cast<std::uint32_t>(job)].push_back(n);
    cluster.cause_down(n, nvlblock::NodeState::kDrained);
    // Repaired MTTR after the drain, as a node that went down.
    if (auto next = failures_.follow(FailureEvent{t, true, false, n, process, false, FailureKind::kUp}))
        push_cause(*next);
    world_.bump_epoch();
}

void Simulator::apply_hits(Seconds t, Hits& hits) {
    for (const auto& [job, failed] : hits.down)
        if (world_.job(job).state == SimJob::State::kRunning && !world_.absorb_in_job(job, t, failed))
            world_.kill(job, t, LossCause::kFailure, failed);
    const Seconds epilog = opt_.kinds.epilog;
    for (auto& [job, faulty] : hits.up) {
        if (world_.job(job).state != SimJob::State::kRunning)
            continue;
        std::sort(faulty.begin(), faulty.end());
        faulty.erase(std::unique(faulty.begin(), faulty.end()), faulty.end());
        // NVRx finds the fault in the job and keeps the node out of its
        // work; the job's own script (epilog=0) drains it before it exits.
        const bool nvrx = world_.policy().standbys > 0 && world_.job(job).spec.kind == JobKind::kSlice;
        if (nvrx || epilog == 0)
            for (NodeIndex n : faulty)
                if (world_.cluster().hidden_fault(n))
                    drain(n, t, nullptr); // its job is the one ending here
        if (!nvrx || !world_.absorb_in_job(job, t, faulty))
            world_.fault_end(job, t, faulty);
    }
    for (const auto& [job, unused] : hits.job)
        if (world_.job(job).state == SimJob::State::kRunning && !world_.restart_job_fault(job, t))
            world_.fault_end(job, t, {});
}

// Whether the run ends before the events at t: the horizon, the time cap
// (a stopped run), or every job finished once the window is over.
bool Simulator::past_the_end(Seconds t) {
    if (opt_.horizon > 0 && t >= opt_.horizon)
        return true;
    if (t > opt_.max_time) {
        stopped_ = true;
        return true;
    }
    return finished() && t >= opt_.window_end;
}

// A hidden fault hit a running job's node: counted, and the job's faulty
// nodes noted for apply_hits.
void Simulator::fault_hit(const Event& e, Seconds t, Hits& hits) {
    const SimJob& j = world_.job(e.a);
    if (j.state != SimJob::State::kRunning || j.run != e.b)
        return;
    for (NodeIndex n : j.nodes)
        if (world_.cluster().hidden_fault(n))
            hits.up[e.a].push_back(n);
    if (world_.metrics().in_window(t))
        ++world_.counters().hidden_fault_hits;
}

void Simulator::handle(const Event& e, Seconds t, Hits& hits) {
    switch (e.kind) {
    case EventKind::kCauseUp:
    case EventKind::kCauseDown:
        cause_event(e, t, hits);
        break;
    case EventKind::kDrain:
        if (world_.cluster().hidden_fault(e.a) == e.b)
            drain(e.a, t, &hits);
        break;
    case EventKind::kFaultHit:
        fault_hit(e, t, hits);
        break;
    case EventKind::kJobEnd: {
        SimJob& j = world_.job(e.a);
        if (j.state == SimJob::State::kRunning && j.run == e.b)
            world_.finish(e.a, t);
        break;
    }
    case EventKind::kSubmit:
        world_.submit(*next_arrival_, t);
        fetch_arrival();
        break;
    case EventKind::kTimer:
        if (e.a)
            world_.bump_epoch();
        break;
    case EventKind::kGraceEnd:
        world_.grace_over(e.a, e.b, e.c != 0, t);
        break;
    case EventKind::kCompletionEnd:
        world_.completion_over(t);
        break;
    }
}

// The scheduler's passes at t, the closed-loop workload topped up between
// them; the recovery log is dropped (the simulator reports outcomes).
void Simulator::schedule(Seconds t) {
    const int target = workload_->closed_target();
    auto top_up = [&] {
        int added = 0;
        while (world_.pending_closed_loop() < target) {
            world_.submit(workload_->next_closed(t), t);
            ++added;
        }
        return added;
    };
    top_up();
    int started = scheduler_.pass(t);
    for (int rounds = 0; target > 0 && started > 0 && top_up() > 0 && rounds < 10000; ++rounds)
        started = scheduler_.pass(t);
    world_.planner().take_log();
}

PolicyResult Simulator::run(const Progress& progress) {
    const auto wall0 = std::chrono::steady_clock::now();
    EventQueue& q = world_.events();
    Counters& c = world_.counters();
    for (const FailureEvent& f : failures_.initial())
        push_cause(f);
    fetch_arrival();

    Seconds t_prev = 0;
    Levels lv = world_.levels(0);
    std::uint64_t next_report = 0;
    while (!q.empty()) {
        const Seconds t = q.next_time();
        if (past_the_end(t))
            break;
        world_.metrics().advance(t_prev, t, lv);
        t_prev = t;
        Hits hits;
        while (!q.empty() && q.next_time() == t) {
            const Event e = q.pop();
            ++c.events;
            handle(e, t, hits);
        }
        apply_hits(t, hits);
        schedule(t);
        lv = world_.levels(t);
        if (progress && c.events >= next_report) {
            progress(t, c.completed);
            next_report = c.events + 20000;
        }
    }
    end_ = opt_.horizon > 0 ? opt_.horizon : std::max(t_prev, opt_.window_end);
    world_.metrics().advance(t_prev, end_, lv);
    if (progress)
        progress(end_, c.completed);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return result(wall);
}

namespace {

// What users feel beyond waits and responses: bounded slowdown, what moving
// them cost the victims of Slurm's preemption and of reclaims, and the
// failures absorbed inside jobs (nvrx).
void user_metrics(PolicyResult& r, const World& w) {
    const Metrics& m = w.metrics();
    for (const SimJob& j : w.jobs()) {
        r.most_preemptions_one_job = std::max<std::uint64_t>(r.most_preemptions_one_job, j.preempted);
        r.preempted_jobs += j.preempted > 0;
    }
    r.lost_preempted_node_hours = (m.lost_node_s(LossCause::kPreemption) - m.lost_node_s(LossCause::kReclaim)) / 3600.0;
    r.reclaimed_extra_response = m.victim_extra_stats(true);
    r.preempted_extra_response = m.victim_extra_stats(false);
    r.slowdowns = m.slowdown_stats();
    r.in_job_restarts = w.counters().in_job_restarts;
    r.standbys_used = w.counters().standbys_used;
}

// What the cluster delivered in the window, in GPU-hours and mean nodes.
void usage_figures(PolicyResult& r, const Metrics& m) {
    const double span = static_cast<double>(r.window_end - r.window_start);
    const double gph = r.gpus_per_node / 3600.0; // node-seconds -> GPU-hours
    r.capacity_gpu_hours = r.nodes * span * gph;
    r.healthy_gpu_hours = m.healthy_node_s() * gph;
    r.busy_gpu_hours = m.busy_node_s() * gph;
    r.busy_preemptible_gpu_hours = m.busy_preemptible_node_s() * gph;
    r.lost_failure_gpu_hours = m.lost_node_s(LossCause::kFailure) * gph;
    r.lost_preemption_gpu_hours = m.lost_node_s(LossCause::kPreemption) * gph;
    r.standby_gpu_hours = m.standby_node_s() * gph;
    r.useful_gpu_hours =
        r.busy_gpu_hours - r.lost_failure_gpu_hours - r.lost_preemption_gpu_hours - r.standby_gpu_hours;
    r.utilization = r.healthy_gpu_hours > 0 ? r.busy_gpu_hours / r.healthy_gpu_hours : 0;
    r.goodput = r.healthy_gpu_hours > 0 ? r.useful_gpu_hours / r.healthy_gpu_hours : 0;
    if (span > 0) {
        r.healthy_nodes_mean = m.healthy_node_s() / span;
        r.busy_nodes_mean = m.busy_node_s() / span;
        r.idle_nodes_mean = r.healthy_nodes_mean - r.busy_nodes_mean;
        r.stranded_nodes_mean = m.stranded_node_s() / span;
        r.waiting_time_fraction = m.stranded_time_s() / span;
    }
}

// How many jobs came, started, finished, and how long they waited.
void job_figures(PolicyResult& r, const World& w) {
    const Metrics& m = w.metrics();
    const Counters& c = w.counters();
    r.jobs_submitted = c.submitted;
    r.jobs_started = 0;
    for (const SimJob& j : w.jobs()) {
        r.most_moves_one_job = std::max<std::uint64_t>(r.most_moves_one_job, j.moves);
        if (j.first_start >= 0)
            ++r.jobs_started;
        else if (j.state == SimJob::State::kPending)
            ++r.jobs_unstarted;
    }
    r.jobs_completed = c.completed;
    r.jobs_rejected = c.rejected;
    r.completed_gpu_hours = c.completed_node_s * (r.gpus_per_node / 3600.0); // as usage_figures' GPU-hours
    r.waits = m.wait_stats();
    r.hierarchy = !w.options().shape.hierarchy.empty();
    r.spread = m.spread();
}

// Restarts, preemptions and the recovery ledger's account.
void recovery_figures(PolicyResult& r, const World& w) {
    const Metrics& m = w.metrics();
    const Counters& c = w.counters();
    r.failure_requeues = c.failure_kills;
    r.restarts = m.restarts();
    r.restarts_in_place = m.restarts_in_place();
    r.preemptions = c.preemptions;
    r.reclaims = c.reclaims;
    r.reclaim_requeues = c.reclaim_requeues;
    r.victims_checkpointed = c.victims_checkpointed;
    r.lost_reclaim_node_hours = m.lost_node_s(LossCause::kReclaim) / 3600.0;
    user_metrics(r, w);
    r.responses = m.response_stats();
    r.restart_delay = m.restart_delay_stats();
    r.multi_node_restarts = m.multi_node_restarts();
    r.multi_node_in_place = m.multi_node_restarts_in_place();
    r.multi_node_restart_delay = m.multi_node_restart_delay_stats();
    if (!w.policy().recovery)
        return;
    r.ledger = true;
    const auto& lc = w.planner().ledger().counters();
    r.ledger_failures = lc.failures;
    r.ledger_in_place = lc.in_place;
    r.ledger_elsewhere = lc.elsewhere;
    r.ledger_node_down = lc.by_trigger[static_cast<std::size_t>(nvlblock::FailureTrigger::kDown)];
    r.ledger_drained = lc.by_trigger[static_cast<std::size_t>(nvlblock::FailureTrigger::kDrained)];
    r.ledger_after_end = lc.by_trigger[static_cast<std::size_t>(nvlblock::FailureTrigger::kAfterEnd)];
}

// Faults and what the simulation itself did.
void fault_and_cost_figures(PolicyResult& r, const Counters& c) {
    r.node_failures = c.node_failures;
    r.rack_faults = c.rack_faults;
    r.node_repairs = c.node_repairs;
    r.up_faults = c.up_faults;
    r.job_faults = c.job_faults;
    r.fault_ends = c.fault_ends;
    r.hidden_fault_hits = c.hidden_fault_hits;
    r.jobs_not_requeued = c.not_requeued;
    r.not_requeued_gpu_hours = c.not_requeued_node_s * (r.gpus_per_node / 3600.0);
    r.events = c.events;
    r.passes = c.passes;
    r.backfill_passes = c.backfill_passes;
    r.place_calls = c.place_calls;
    r.bound_calls = c.bound_calls;
    r.reservations = c.reservations;
}

} // namespace

PolicyResult Simulator::result(double wall_seconds) const {
    const World& w = world_;
    PolicyResult r;
    r.policy = w.policy();
    r.nodes = static_cast<int>(w.cluster().size());
    r.gpus_per_node = opt_.shape.gpus_per_node;
    r.window_start = w.metrics().window_start();
    r.window_end = w.metrics().window_end();
    r.sim_end = end_;
    usage_figures(r, w.metrics());
    job_figures(r, w);
    recovery_figures(r, w);
    fault_and_cost_figures(r, w.counters());
    r.wall_seconds = wall_seconds;
    r.series = w.metrics().series();
    return r;
}

} // namespace nvlblock::sim
