// SPDX-License-Identifier: GPL-2.0-or-later
//
// A job ended by a fault with its nodes up (failure_kinds.hpp: a GPU or
// network fault, or a fault of the job itself), the same way for every
// policy: Slurm sees a batch script exit non-zero. What happens next is
// Slurm's and the site's: the node Epilog runs on every node of the job (its
// health check drains a faulty one at its end), and the job is requeued
// only if RequeueExit lists its exit status. Where the job goes back is the
// core's: it hears of the end as the plugin's epilog hook tells it
// (Planner::job_ended, the C ABI's nvlb_job_ended) and decides.
#include "world.hpp"

#include "rng.hpp"

#include <algorithm>

namespace nvlblock::sim {

using nvlblock::NodeIndex;
using nvlblock::NodeState;

namespace {
constexpr std::uint64_t kRequeueStream = 0x52455155; // "REQU"
}

void World::fault_end(std::uint32_t index, Seconds now, const std::vector<NodeIndex>& faulty) {
    SimJob& j = jobs_[index];
    close_in_job_restart(j, now);
    Seconds work = 0;
    const Seconds saved = keep_checkpointed(j, now, work);
    metrics_.lost(LossCause::kFailure, static_cast<std::uint32_t>(working_nodes(j)), j.run_start + saved, now);
    j.remaining -= saved;
    j.restore = j.remaining < j.shape.duration ? opt_.victims.checkpoint_restore : 0;
    ++counters_.failure_kills;
    ++counters_.fault_ends;
    log_line(now, "fault", j, j.nodes, std::to_string(faulty.size()) + " faulty");
    standby_nodes_ -= static_cast<int>(j.standbys.size());
    j.standbys.clear();
    running_by_end_.erase({j.run_start + j.limit, index});
    j.grace_until = -1; // a reclaim or preemption that signalled it is moot
    signalled_.erase(index);
    // Slurm 25.11's --requeue=expedite requeues a job on any non-zero exit,
    // whatever RequeueExit says, and holds it until its Epilogs are done:
    // expedited if one of them failed (job_mgr.c, batch_requeue_fini:
    // epilog_failed), else held (REQUEUE_HOLD, priority 0) for someone to
    // release. A node Epilog's health check fails on the faulty node.
    const bool epilog_failed = !faulty.empty() && opt_.kinds.epilog >= 0;
    const bool requeued = policy_.expedite ? epilog_failed : site_requeues(j);
    report_fault_end(index, now, requeued);
    if (requeued)
        j.prev_nodes = j.nodes;
    // Every node runs its Epilog: COMPLETING (no job's, not free) until it
    // ends; its health check then drains a node whose fault is still hidden.
    const Seconds epilog = opt_.kinds.epilog;
    Seconds completed = now;
    if (epilog > 0) {
        completed = now + epilog;
        cluster_.complete(j.nodes, completed);
        events_.push({completed, EventKind::kCompletionEnd, 0, 0, 0, 0});
        for (NodeIndex n : faulty)
            if (const std::uint32_t fault = cluster_.hidden_fault(n))
                events_.push({completed, EventKind::kDrain, n, fault, 0, 0});
    } else {
        completed = leave_killed(j.nodes, now);
    }
    j.nodes.clear();
    if (requeued)
        requeue_after_fault(index, now, completed, !faulty.empty(), policy_.expedite);
    else
        drop_after_fault(index, now);
    bump_epoch();
}

bool World::site_requeues(const SimJob& j) const {
    const double share = opt_.kinds.requeue;
    if (share >= 1)
        return true;
    if (share <= 0)
        return false;
    // By job and run, so that every policy requeues the same failed runs.
    Rng r(stream_seed(opt_.seed, kRequeueStream, name_index(j.spec.name) ^ j.run));
    return r.uniform() < share;
}

void World::report_fault_end(std::uint32_t index, Seconds now, bool requeued) {
    if (!policy_.recovery)
        return;
    const SimJob& j = jobs_[index];
    nvlblock::JobEnd end;
    end.job_id = job_id(index);
    // A batch job that may be requeued (JobRequeue=1); RequeueExit lists
    // its exit status, or does not.
    end.facts = nvlblock::kEndBatch | nvlblock::kEndRequeueAllowed | (requeued ? nvlblock::kEndExitRequeues : 0u);
    end.ended_at = now;
    end.started_at = std::min(j.run_start, now);
    for (NodeIndex n : j.nodes) {
        const NodeState st = cluster_.state(n);
        const unsigned signs = st == NodeState::kDrained ? nvlblock::kNodeDrain
                               : st == NodeState::kDown  ? nvlblock::kNodeDown
                                                         : 0u;
        end.nodes.push_back({n, signs, signs & nvlblock::kNodeDrain ? "gpu fault" : ""});
    }
    const nvlblock::JobEndOutcome outcome = planner_.job_ended(end);
    if (hooks_.on_job_ended)
        hooks_.on_job_ended(end, outcome);
    if (outcome == nvlblock::JobEndOutcome::kOpened)
        recovery_timers(index);
    // A watch holds the job's released nodes while others complete, and
    // ends by time alone.
    const auto& watches = planner_.recovery().watches();
    if (const auto w = watches.find(end.job_id); w != watches.end())
        timer(w->second.until, true);
}

void World::requeue_after_fault(std::uint32_t index, Seconds now, Seconds completed, bool node_lost, bool expedited) {
    SimJob& j = jobs_[index];
    // Its restart counts (in place or not, and how long after) when it lost
    // a node; after a fault of the job alone there is no place to go back to.
    if (node_lost) {
        if (!j.awaiting_restart)
            j.failed_at = now;
        j.awaiting_restart = true;
    }
    j.state = SimJob::State::kPending;
    // Slurm requeues it once the last Epilog of its nodes has ended, and it
    // cannot start before the requeue delay after that; an expedited one
    // can (begin time 0), first in the queue (as kill() puts it).
    queue_requeued(index, completed, expedited);
    timer(j.eligible_at, false);
    crossing_timer(j);
}

void World::drop_after_fault(std::uint32_t index, Seconds now) {
    SimJob& j = jobs_[index];
    // Not requeued: the job leaves the queue unfinished. Its work since its
    // last checkpoint is lost like any failed run's; what it had left is
    // never done, and counted apart.
    j.state = SimJob::State::kDone;
    ++counters_.not_requeued;
    counters_.not_requeued_node_s += static_cast<double>(j.shape.nodes) * static_cast<double>(j.remaining);
    log_line(now, "abandon", j, {}, policy_.expedite ? "expedited requeue held" : "exit status not requeued");
}

bool World::restart_job_fault(std::uint32_t index, Seconds now) {
    SimJob& j = jobs_[index];
    if (policy_.standbys <= 0 || j.spec.kind != JobKind::kSlice)
        return false;
    log_line(now, "absorb", j, {}, "job fault, restart in job");
    restart_in_job(index, now, working_nodes(j), false);
    return true;
}

} // namespace nvlblock::sim
