// SPDX-License-Identifier: GPL-2.0-or-later
#include "world.hpp"

#include "in_job_spares.hpp"
#include "patch.hpp"

#include "model/hostlist.hpp"
#include "recovery/reclaim.hpp"
#include "recovery/rules.hpp"
#include "writers/recovery_log_text.hpp"

#include <algorithm>
#include <ostream>
#include <set>

namespace nvlblock::sim {

using nvlblock::NodeIndex;
using nvlblock::NodeState;
using nvlblock::Placement;
using nvlblock::Request;

World::World(const SimOptions& options, PolicyConfig policy, SimHooks hooks)
    : opt_(options), policy_(std::move(policy)), hooks_(std::move(hooks)), planner_(build_policy_topology(policy_)),
      cluster_(planner_.topology()),
      reclaims_(
          std::any_of(planner_.topology().blocks().begin(), planner_.topology().blocks().end(),
                      [](const nvlblock::Block& b) { return b.settings.reserve == nvlblock::SpareReserve::kReclaim; })),
      selector_(preemptible_selector(policy_, planner_.topology())),
      metrics_(options.window_start, options.window_end, options.bucket) {
    // As the plugin does (KillWait + cred_expire + 1): a killed job's nodes
    // complete for the kill wait before Slurm requeues it (kill()).
    planner_.set_slurm_requeue_delay(opt_.victims.kill_wait + opt_.requeue_delay);
    if (changes())
        cluster_.set_journal(changes());
}

std::uint32_t World::submit(JobSpec spec, Seconds now) {
    const auto index = static_cast<std::uint32_t>(jobs_.size());
    SimJob j;
    j.spec = std::move(spec);
    j.shape = shape_for(j.spec, policy_);
    j.limit = time_limit_for(j.shape.duration);
    j.preemptible = selector_.matches(j.spec.qos(), "");
    j.traits = draw_victim_traits(opt_.victims, j.spec.name);
    if (hooks_.on_preemptible)
        hooks_.on_preemptible(j.spec.qos(), j.preemptible);
    j.remaining = j.shape.duration;
    j.eligible_at = now;
    j.queued_at = j.spec.submit;
    ++counters_.submitted;
    // A job that could never start as asked (larger than what the blocks
    // can hold for it, spares withheld included) is refused, as Slurm holds
    // it at submission: it would otherwise block the queue for ever.
    Request r;
    r.job_id = job_id(index);
    r.min_nodes = r.max_nodes = j.shape.nodes;
    r.segment = j.shape.segment;
    r.preemptible = j.preemptible;
    const auto key = std::make_tuple(r.min_nodes, r.segment, r.preemptible);
    auto known = can_ever_run_.find(key);
    if (known == can_ever_run_.end())
        known = can_ever_run_.emplace(key, planner_.can_ever_run(r)).first; // the topology never changes here
    const bool can_run = known->second;
    if (hooks_.on_can_ever_run)
        hooks_.on_can_ever_run({r, can_run, now, cluster_.states()});
    if (!can_run) {
        j.state = SimJob::State::kRejected;
        ++counters_.rejected;
        jobs_.push_back(std::move(j));
        log_line(now, "reject", jobs_.back(), {}, "can never run as asked");
        return index;
    }
    if (j.spec.closed_loop)
        ++pending_closed_;
    pending_.insert({j.queued_at, index}, not_before(j));
    jobs_.push_back(std::move(j));
    crossing_timer(jobs_.back());
    return index;
}

Request World::request_for(const SimJob& j, Seconds now) const {
    Request r;
    r.waited = std::max<Seconds>(0, now - j.eligible_at);
    r.job_id = job_id(static_cast<std::uint32_t>(&j - jobs_.data()));
    r.min_nodes = r.max_nodes = j.shape.nodes;
    r.segment = j.shape.segment;
    r.preemptible = j.preemptible;
    return r;
}

NodeState World::running_state(const SimJob& j) const {
    return nvlblock::running_state(j.preemptible);
}

bool World::may_preempt(const SimJob& j) const {
    return policy_.preemption && !j.preemptible;
}

int World::usable_nodes(const SimJob& j) const {
    // A job restarting in place may reclaim spares from running work.
    if (policy_.recovery && reclaims_ &&
        planner_.recovery().waiting_in_place(job_id(static_cast<std::uint32_t>(&j - jobs_.data()))))
        return cluster_.healthy_count();
    return cluster_.free_count() + (may_preempt(j) ? cluster_.busy_preemptible_count() : 0);
}

Placement World::decide(std::span<const NodeState> states, Request request, const std::vector<std::uint8_t>* available,
                        Seconds now, bool hypothetical) {
    if (available)
        request.available = std::span<const std::uint8_t>(*available);
    ++counters_.place_calls;
    if (!hooks_.on_place)
        return planner_.place(states, std::move(request), now);
    DecisionRecord d;
    d.now = now;
    d.hypothetical = hypothetical;
    d.states.assign(states.begin(), states.end());
    d.job_id = request.job_id;
    d.min_nodes = request.min_nodes;
    d.max_nodes = request.max_nodes;
    d.segment = request.segment;
    d.preemptible = request.preemptible;
    d.waited = request.waited;
    if (available)
        d.available = *available;
    d.result = planner_.place(states, std::move(request), now);
    hooks_.on_place(d);
    return std::move(d.result);
}

void World::advance(Seconds now) {
    // A watched job (fault_end) whose node was drained since its end opens
    // its recovery here: its holds need the timers a failure sets.
    std::vector<std::uint32_t> watched;
    for (const auto& [id, w] : planner_.recovery().watches())
        watched.push_back(id);
    const std::size_t fell_back = planner_.advance(cluster_.states(), now);
    if (hooks_.on_advance)
        hooks_.on_advance({now, cluster_.states(), fell_back});
    bool opened = false;
    for (std::uint32_t id : watched)
        if (!planner_.recovery().watches().contains(id) && planner_.recovery().waiting_in_place(id)) {
            recovery_timers(id - 1);
            opened = true;
        }
    if (fell_back || opened)
        bump_epoch(); // holds ended or began: refused jobs may fit now, placed ones may not
}

void World::recovery_timers(std::uint32_t index) {
    if (const auto* rec = planner_.recovery().waiting_in_place(job_id(index))) {
        timer(rec->fallback_at, true);
        timer(rec->hold_until, true);
    }
}

// Every question is asked where the run records its decisions (hooks), or
// where the options say so.
long World::bound_shortfall(std::span<const NodeState> states, const Request& r,
                            const std::vector<std::uint8_t>* available, Seconds now) {
    if (hooks_.on_place || !opt_.bound_attempts)
        return 0;
    ++counters_.bound_calls;
    if (!available)
        return planner_.bound_shortfall(states, r, now);
    Request mapped = r;
    mapped.available = std::span<const std::uint8_t>(*available);
    return planner_.bound_shortfall(states, mapped, now);
}

// The maps a start attempt offers the job, in Slurm's order, each given
// to `ask` until it answers yes: free nodes (less `exclude`); failing that,
// where the job may preempt, also the nodes of preemptible work.
template <class Ask>
bool World::each_offer(const SimJob& j, const std::vector<NodeIndex>* exclude, Ask&& ask) {
    if (!exclude) {
        if (ask(nullptr))
            return true;
    } else if (ask(&withheld_.of(cluster_.free_map(), cluster_.map_changes(), *exclude, changes()))) {
        return true; // the free map less the excluded nodes
    }
    if (!may_preempt(j) || cluster_.busy_preemptible_count() == 0)
        return false;
    // Slurm offers the nodes of preemptible jobs only when the job cannot
    // start without them, and not those of a job it is preempting already
    // (signalled by a reclaim): their grace time runs.
    Patch<std::uint8_t> avail(cluster_.preemptor_map(), changes());
    for (std::uint32_t s : signalled_)
        for (NodeIndex n : jobs_[s].nodes)
            avail.set(n, 0);
    if (exclude)
        for (NodeIndex n : *exclude)
            avail.set(n, 0);
    return ask(&avail.array());
}

Placement World::attempt(SimJob& j, Seconds now, const std::vector<NodeIndex>* exclude, long* shortfall) {
    const Request r = request_for(j, now);
    Placement p; // refused until a decision places it; else the first refusal
    bool asked = false;
    long fewest = 0; // the bound's shortfall over the maps it ruled out
    each_offer(j, exclude, [&](const std::vector<std::uint8_t>* map) {
        if (const long s = bound_shortfall(cluster_.states(), r, map, now); s > 0) {
            fewest = fewest == 0 ? s : std::min(fewest, s);
            return false;
        }
        Placement q = decide(cluster_.states(), r, map, now, false);
        if (q.placed() || !asked)
            p = std::move(q);
        asked = true;
        return p.placed();
    });
    if (shortfall)
        *shortfall = asked ? 0 : fewest;
    return p;
}

long World::attempt_shortfall(const SimJob& j, Seconds now) {
    const Request r = request_for(j, now);
    long fewest = 0;
    const bool may = each_offer(j, nullptr, [&](const std::vector<std::uint8_t>* map) {
        const long s = bound_shortfall(cluster_.states(), r, map, now);
        fewest = fewest == 0 ? s : std::min(fewest, s);
        return s == 0;
    });
    return may ? 0 : fewest;
}

bool World::reclaim_for(const SimJob& j, Seconds now) {
    const std::uint32_t id = job_id(static_cast<std::uint32_t>(&j - jobs_.data()));
    const nvlblock::RecoveryRecord* rec = planner_.recovery().waiting_in_place(id);
    if (!rec)
        return false;
    // The running jobs on the blocks the job had, as the plugin lists them.
    std::set<nvlblock::BlockIndex> blocks;
    for (NodeIndex n : rec->nodes)
        blocks.insert(topology().block_of(n));
    std::vector<nvlblock::RunningJob> running;
    std::set<std::int32_t> seen;
    for (nvlblock::BlockIndex b : blocks)
        for (NodeIndex n : topology().block(b).nodes) {
            const std::int32_t k = cluster_.job_on(n);
            if (k < 0 || !seen.insert(k).second)
                continue;
            running.push_back(running_job(static_cast<std::uint32_t>(k), j));
        }
    const nvlblock::Request request = request_for(j, now);
    // Traces name no users: each failed job counts as a user of its own.
    const nvlblock::Reclaimer for_job = nvlblock::reclaimer_of_user(id);
    const nvlblock::ReclaimDecision decision = planner_.plan_reclaim(cluster_.states(), request, for_job, running, now);
    if (hooks_.on_reclaim)
        hooks_.on_reclaim({now, cluster_.states(), request, for_job, running, decision.plan});
    if (!decision.plan) {
        // Logged once per new reason, as the plugin's thread reports it.
        planner_.reclaim_refused(id, decision.refusal);
        return false;
    }
    const nvlblock::Reclaim& plan = *decision.plan;
    // The victims release their nodes when their grace time is over and
    // their processes have ended (the kill wait); the core holds the job's
    // block until then (and Slurm's requeue delay).
    const Seconds grace = opt_.victims.grace_time;
    const Seconds released_by = now + grace + opt_.victims.kill_wait;
    planner_.reclaim_started(id, plan, for_job, released_by, now);
    if (hooks_.on_reclaim_started)
        hooks_.on_reclaim_started(id, plan, for_job, released_by, now);
    for (const nvlblock::ReclaimVictim& victim : plan.victims) {
        const std::uint32_t index = victim.job_id - 1;
        log_line(now, "reclaim", jobs_[index], jobs_[index].nodes, "for " + j.spec.name);
        ++jobs_[index].moves;
        if (grace > 0)
            signal(index, now, LossCause::kReclaim);
        else
            kill(index, now, LossCause::kReclaim, {});
        ++counters_.reclaims;
    }
    return true;
}

void World::signal(std::uint32_t index, Seconds now, LossCause cause) {
    SimJob& v = jobs_[index];
    v.grace_until = now + opt_.victims.grace_time;
    signalled_.insert(index);
    const std::uint32_t reclaim = cause == LossCause::kReclaim ? 1 : 0;
    events_.push({v.grace_until, EventKind::kGraceEnd, index, v.run, reclaim, 0});
}

void World::grace_over(std::uint32_t index, std::uint32_t run, bool reclaim, Seconds now) {
    const SimJob& v = jobs_[index];
    // Stale when the run ended meanwhile (completed, or killed by a failure).
    if (v.state == SimJob::State::kRunning && v.run == run && v.grace_until == now)
        kill(index, now, reclaim ? LossCause::kReclaim : LossCause::kPreemption, {});
}

// A running job as the plugin reports it for a reclaim made for `for_job`.
// Slurm's preemption is modelled as preempt/qos with PreemptMode=REQUEUE
// where the policy models it at all: the preemptible QOS may be preempted by
// any other. Whatever else may be requeued is the site's
// recovery.reclaim_from, which the core applies.
nvlblock::RunningJob World::running_job(std::uint32_t index, const SimJob& for_job) const {
    const SimJob& v = jobs_[index];
    nvlblock::RunningJob r;
    r.job_id = job_id(index);
    r.nodes = v.nodes;
    r.started = v.run_start;
    r.waited = std::max<Seconds>(0, v.run_start - v.queued_at);
    r.user = r.job_id;
    r.qos = v.spec.qos();
    r.preemptible = v.preemptible;
    r.requeueable = v.traits.requeueable;
    r.being_preempted = v.grace_until >= 0; // signalled by an earlier reclaim, its grace time runs
    r.slurm_may_preempt = policy_.preemption && v.preemptible && !for_job.preemptible;
    r.preempt_mode = nvlblock::PreemptMode::kRequeue;
    return r;
}

void World::log_line(Seconds now, const char* event, const SimJob& j, const std::vector<NodeIndex>& nodes,
                     const std::string& detail) {
    if (!hooks_.log)
        return;
    std::vector<std::string> names;
    names.reserve(nodes.size());
    for (NodeIndex n : nodes)
        names.push_back(topology().node_name(n));
    // A host list with several ranges holds commas ("gb[00001-00008,00010-00017]"): quote it (RFC 4180).
    std::string hosts = names.empty() ? std::string() : nvlblock::hostlist::compress(names);
    if (hosts.find(',') != std::string::npos)
        hosts = '"' + hosts + '"';
    *hooks_.log << now << ',' << event << ',' << j.spec.name << ',' << j.shape.nodes << ',' << hosts << ',' << detail
                << '\n';
}

bool World::start(std::uint32_t index, const Placement& p, Seconds now) {
    SimJob& j = jobs_[index];
    // Preempt whatever runs on the chosen nodes (only preemptible work can).
    std::set<std::int32_t> victims;
    for (NodeIndex n : p.nodes)
        if (cluster_.job_on(n) >= 0)
            victims.insert(cluster_.job_on(n));
    const Seconds grace = opt_.victims.grace_time, kill_wait = opt_.victims.kill_wait;
    for (std::int32_t v : victims) {
        log_line(now, "preempt", jobs_[static_cast<std::size_t>(v)], jobs_[static_cast<std::size_t>(v)].nodes,
                 "by " + j.spec.name);
        if (grace > 0)
            signal(static_cast<std::uint32_t>(v), now, LossCause::kPreemption);
        else
            kill(static_cast<std::uint32_t>(v), now, LossCause::kPreemption, {});
    }
    // With a grace time the job waits for its victims to go, as Slurm's
    // preemptor does, and is placed again then; their nodes then complete
    // for the kill wait (COMPLETING nodes cannot be allocated).
    if ((grace > 0 || kill_wait > 0) && !victims.empty()) {
        j.preempting_until = now + grace + kill_wait;
        pending_.hold({j.queued_at, index}, j.preempting_until);
        return false;
    }
    pending_.erase({j.queued_at, index});
    if (j.queued_at < 0)
        j.queued_at += kNever; // an expedited requeue is over once the job runs (Slurm unsets JOB_EXPEDITING)
    if (j.spec.closed_loop)
        --pending_closed_;
    cluster_.allocate(p.nodes, static_cast<std::int32_t>(index), j.preemptible, running_state(j));
    j.state = SimJob::State::kRunning;
    j.nodes = p.nodes;
    if (policy_.standbys > 0 && j.spec.kind == JobKind::kSlice) {
        j.standbys = initial_standbys(topology(), j.nodes, policy_.slice - policy_.standbys);
        standby_nodes_ += static_cast<int>(j.standbys.size());
    }
    j.run_start = now;
    ++j.run;
    ++counters_.started;
    running_by_end_.insert({now + j.limit, index});
    events_.push({now + j.restore + j.remaining, EventKind::kJobEnd, index, j.run, 0, 0});
    // Slurm sees nothing wrong with a node whose GPU fault no check has
    // found yet: the job starts there and fails on it.
    if (std::any_of(j.nodes.begin(), j.nodes.end(), [&](NodeIndex n) { return cluster_.hidden_fault(n) != 0; }))
        events_.push({now + opt_.hidden_fault_shows, EventKind::kFaultHit, index, j.run, 0, 0});
    if (j.first_start < 0) {
        j.first_start = now;
        metrics_.job_waited(j.spec.nominal_gpus(), now - j.spec.submit);
        if (!opt_.shape.hierarchy.empty() && metrics_.in_window(now)) {
            const int per_su = opt_.shape.hierarchy.front();
            std::set<nvlblock::BlockIndex> racks;
            std::set<int> sus;
            for (NodeIndex n : p.nodes) {
                const nvlblock::BlockIndex b = topology().block_of(n);
                racks.insert(b);
                sus.insert(b / per_su);
            }
            const auto slice = static_cast<std::uint32_t>(std::max(1, policy_.slice));
            const bool fits = (j.shape.nodes + slice - 1) / slice <= static_cast<std::uint32_t>(per_su);
            metrics_.job_spread(static_cast<int>(racks.size()), static_cast<int>(sus.size()), fits);
        }
    }
    std::string detail;
    if (j.awaiting_restart) {
        const bool in_place = nvlblock::restarted_in_place(topology(), j.prev_nodes, j.nodes);
        metrics_.restarted(in_place, now - j.failed_at, j.prev_nodes.size() > 1);
        j.awaiting_restart = false;
        detail = in_place ? "restart in place" : "restart elsewhere";
    }
    if (policy_.recovery) {
        // Closing a recovery record ends its holds: a change for every other decision.
        if (planner_.recovery().recovering(job_id(index)))
            bump_epoch();
        planner_.job_started(job_id(index), j.nodes, now);
        if (hooks_.on_job_started)
            hooks_.on_job_started(job_id(index), j.nodes, now);
    }
    log_line(now, "start", j, j.nodes, detail);
    return true;
}

void World::finish(std::uint32_t index, Seconds now) {
    SimJob& j = jobs_[index];
    const int free_before = cluster_.free_count();
    close_in_job_restart(j, now);
    standby_nodes_ -= static_cast<int>(j.standbys.size());
    j.standbys.clear();
    cluster_.release(j.nodes);
    running_by_end_.erase({j.run_start + j.limit, index});
    j.state = SimJob::State::kDone;
    ++counters_.completed;
    // nvrx's standbys are part of the allocation but do none of the work.
    const std::uint32_t worked = policy_.standbys > 0 && j.spec.kind == JobKind::kSlice
                                     ? j.spec.slices * static_cast<std::uint32_t>(policy_.slice - policy_.standbys)
                                     : j.shape.nodes;
    counters_.completed_node_s += static_cast<double>(worked) * static_cast<double>(j.shape.duration);
    metrics_.job_responded(j.spec.nominal_gpus(), now - j.spec.submit);
    metrics_.job_slowed(j.spec.nominal_gpus(), now - j.spec.submit, j.shape.duration);
    // A victim's extra time: from its first start to its end, beyond its run time.
    if (j.moves || j.preempted)
        metrics_.victim_done(j.moves > 0, j.preempted > 0, now - j.first_start - j.shape.duration);
    j.grace_until = -1;
    signalled_.erase(index);
    log_line(now, "end", j, j.nodes);
    j.nodes.clear();
    j.remaining = 0;
    ++epoch_;
    freed_ += static_cast<std::uint64_t>(std::max(0, cluster_.free_count() - free_before));
    finished_max_ = std::max(finished_max_, j.run_start + j.limit);
}

Seconds World::keep_checkpointed(const SimJob& j, Seconds now, Seconds& work) const {
    // 0 while restarting in the job; loading a checkpoint is not work
    work = std::max<Seconds>(0, now - j.run_start - j.restore);
    const Seconds C = opt_.checkpoint_interval;
    return C > 0 && j.traits.checkpoints ? work / C * C : 0;
}

void World::kill(std::uint32_t index, Seconds now, LossCause cause, const std::vector<NodeIndex>& failed) {
    SimJob& j = jobs_[index];
    close_in_job_restart(j, now);
    Seconds work = 0;
    Seconds saved = keep_checkpointed(j, now, work);
    if (cause == LossCause::kReclaim) {
        ++counters_.reclaim_requeues;
        // Signalled with time to write a checkpoint: only the write is lost.
        const VictimModel& vm = opt_.victims;
        if (j.grace_until >= 0 && j.traits.checkpoints_on_signal && vm.signal_checkpoint_fits()) {
            saved = std::max(saved, work - vm.checkpoint_write);
            ++counters_.victims_checkpointed;
        }
    }
    j.grace_until = -1;
    signalled_.erase(index);
    metrics_.lost(cause, static_cast<std::uint32_t>(working_nodes(j)), j.run_start + saved, now);
    j.remaining -= saved;
    j.restore = j.remaining < j.shape.duration ? opt_.victims.checkpoint_restore : 0;
    if (cause == LossCause::kFailure) {
        ++counters_.failure_kills;
        if (!j.awaiting_restart)
            j.failed_at = now;
        j.awaiting_restart = true;
        j.prev_nodes = j.nodes;
        log_line(now, "fail", j, j.nodes, std::to_string(failed.size()) + " failed");
        if (policy_.recovery) {
            planner_.job_failed(job_id(index), j.nodes, failed, now);
            if (hooks_.on_job_failed)
                hooks_.on_job_failed(job_id(index), j.nodes, failed, now);
            recovery_timers(index);
        }
    } else {
        ++counters_.preemptions;
        if (cause == LossCause::kPreemption)
            ++j.preempted;
    }
    standby_nodes_ -= static_cast<int>(j.standbys.size());
    j.standbys.clear();
    const Seconds completed = leave_killed(j.nodes, now);
    running_by_end_.erase({j.run_start + j.limit, index});
    j.nodes.clear();
    j.state = SimJob::State::kPending;
    // Slurm requeues a killed job once its nodes stopped completing
    // (cleanup_completing -> batch_requeue_fini; a COMPLETING job is not
    // runnable, _job_runnable_test1) and it cannot start before the requeue
    // delay after that (begin_time = now + cred_expire + 1). Counted from
    // the kill instead, a victim would be eligible before its preemptor's
    // nodes are free, take them first when it queues ahead, and be preempted
    // again, for ever (test/sim/test_kill_wait.cpp).
    // Slurm 25.11's expedited requeue (--requeue=expedite) of a job a node
    // failure killed: no requeue delay (begin_time 0) and "infinite" priority
    // (sort_job_queue2), until it runs again. Its nodes are held through the
    // epilog, which the simulator takes as instant for every job (beyond
    // the kill wait, leave_killed).
    const bool expedited = cause == LossCause::kFailure && policy_.expedite;
    queue_requeued(index, completed, expedited);
    if (j.eligible_at > now)
        timer(j.eligible_at, false);
    crossing_timer(j);
    bump_epoch();
}

void World::queue_requeued(std::uint32_t index, Seconds completed, bool expedited) {
    SimJob& j = jobs_[index];
    j.eligible_at = completed + (expedited ? 0 : opt_.requeue_delay);
    if (opt_.requeue_order == RequeueOrder::kRequeue)
        j.queued_at = completed; // batch_requeue_fini sets the submit time then
    if (expedited)
        j.queued_at -= kNever; // before every job that is not expedited, in its own order
    pending_.insert({j.queued_at, index}, not_before(j));
    if (j.spec.closed_loop)
        ++pending_closed_;
}

Seconds World::leave_killed(const std::vector<NodeIndex>& nodes, Seconds now) {
    const Seconds wait = opt_.victims.kill_wait;
    if (wait <= 0) {
        cluster_.release(nodes);
        return now;
    }
    // Slurm signals the processes (SIGTERM, then SIGKILL after KillWait) and
    // keeps the nodes COMPLETING until they end: here for the whole kill
    // wait. A failed job restarting in place waits for them too.
    if (cluster_.complete(nodes, now + wait) == 0)
        return now; // every node of it is down
    events_.push({now + wait, EventKind::kCompletionEnd, 0, 0, 0, 0});
    return now + wait;
}

void World::completion_over(Seconds now) {
    if (cluster_.completion_over(now) > 0)
        bump_epoch(); // nodes freed: refused jobs may fit now
}

bool World::absorb_in_job(std::uint32_t index, Seconds now, const std::vector<NodeIndex>& failed) {
    SimJob& j = jobs_[index];
    if (policy_.standbys <= 0 || j.spec.kind != JobKind::kSlice)
        return false;
    const InJobFailure f = in_job_failure(topology(), j.nodes, j.standbys, failed, policy_.slice - policy_.standbys);
    if (f.requeue)
        return false;
    const std::size_t working = working_nodes(j);
    // Slurm's --no-kill: a failed node leaves the allocation
    // (excise_node_from_job) and the job runs on; a repaired node is free
    // for anyone, not the job's again.
    auto drop = [](std::vector<NodeIndex>& v, const std::vector<NodeIndex>& gone) {
        v.erase(std::remove_if(v.begin(), v.end(),
                               [&](NodeIndex n) { return std::find(gone.begin(), gone.end(), n) != gone.end(); }),
                v.end());
    };
    drop(j.nodes, failed);
    drop(j.standbys, failed);
    drop(j.standbys, f.promoted);
    // Each failed node costs its rack one standby: itself, or the one promoted in its place.
    standby_nodes_ -= static_cast<int>(failed.size());
    counters_.standbys_used += failed.size();
    cluster_.release(failed);
    log_line(now, "absorb", j, failed, f.restart ? "restart in job" : "standby failed");
    if (f.restart)
        restart_in_job(index, now, working);
    return true;
}

void World::restart_in_job(std::uint32_t index, Seconds now, std::size_t working, bool node_lost) {
    SimJob& j = jobs_[index];
    close_in_job_restart(j, now); // a restart cut short by another failure
    Seconds work = 0;
    const Seconds saved = keep_checkpointed(j, now, work);
    // Back to its last checkpoint as a requeued job would be, on its own
    // nodes, working again after the restart time.
    metrics_.lost(LossCause::kFailure, static_cast<std::uint32_t>(working), j.run_start + saved, now);
    j.remaining -= saved;
    j.restore = j.remaining < j.shape.duration ? opt_.victims.checkpoint_restore : 0;
    running_by_end_.erase({j.run_start + j.limit, index});
    j.restart_from = now;
    j.run_start = now + opt_.in_job_restart;
    ++j.run; // the end planned for the run before is stale
    running_by_end_.insert({j.run_start + j.limit, index});
    events_.push({j.run_start + j.restore + j.remaining, EventKind::kJobEnd, index, j.run, 0, 0});
    ++counters_.in_job_restarts;
    if (node_lost)
        metrics_.restarted(true, opt_.in_job_restart, true);
}

void World::close_in_job_restart(SimJob& j, Seconds now) {
    if (j.restart_from < 0)
        return;
    metrics_.lost(LossCause::kFailure, static_cast<std::uint32_t>(working_nodes(j)), j.restart_from,
                  std::min(now, j.run_start));
    j.restart_from = -1;
}

bool World::crosses_levels(const SimJob& j, Seconds now) const {
    const auto& after = topology().hierarchy().cross_after();
    return after && now - j.eligible_at >= *after;
}

void World::crossing_timer(const SimJob& j) {
    // A job that may cross a level once it has waited long enough: its
    // placement can change with time alone.
    if (const auto& after = topology().hierarchy().cross_after())
        timer(j.eligible_at + *after, true);
}

void World::timer(Seconds at, bool changes_decisions) {
    events_.push({at, EventKind::kTimer, changes_decisions ? 1u : 0u, 0, 0, 0});
}

bool World::any_eligible_pending(Seconds now) const {
    bool any = false;
    pending_.for_each([&](PendingQueue::Key k) { return any = jobs_[k.second].eligible_at <= now; });
    return any;
}

Levels World::levels(Seconds now) const {
    Levels l;
    l.healthy = cluster_.healthy_count();
    l.busy = cluster_.busy_count();
    l.busy_preemptible = cluster_.busy_preemptible_count();
    l.standby = standby_nodes_;
    l.waiting = any_eligible_pending(now);
    l.stranded = l.waiting ? cluster_.free_count() : 0;
    l.pending = static_cast<int>(pending_.size());
    l.running = static_cast<int>(running_by_end_.size());
    return l;
}

} // namespace nvlblock::sim
