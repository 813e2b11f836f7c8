// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, reclaim face (include/nvlblock/reclaim.h): which running jobs
// to move so that a job waiting to restart in place fits its blocks, and
// what the caller did about it.
#include "capi/abi_support.hpp"

#include "recovery/rules.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>

using namespace nvlblock;
using namespace nvlblock::capi;

namespace {

std::string text_of(const char* s) {
    return s ? s : "";
}

Reclaimer reclaimer_of(const nvlb_reclaimer_t* r) {
    Reclaimer out;
    if (r) {
        out.user = r->user;
        out.het_job_id = r->het_job_id;
        out.reservation = text_of(r->reservation);
        out.held = r->held;
    }
    return out;
}

PreemptMode preempt_mode_of(std::uint8_t m) {
    switch (m) {
    case NVLB_PREEMPT_REQUEUE:
        return PreemptMode::kRequeue;
    case NVLB_PREEMPT_CANCEL:
        return PreemptMode::kCancel;
    case NVLB_PREEMPT_SUSPEND:
        return PreemptMode::kSuspend;
    default:
        return PreemptMode::kOff;
    }
}

RunningJob running_job_of(const nvlb_running_job_t& r) {
    RunningJob j;
    j.job_id = r.job_id;
    j.nodes.assign(r.nodes, r.nodes + r.node_count);
    j.started = r.started;
    j.waited = r.waited;
    j.user = r.user;
    j.het_job_id = r.het_job_id;
    j.qos = text_of(r.qos);
    j.partition = text_of(r.partition);
    j.account = text_of(r.account);
    j.reservation = text_of(r.reservation);
    j.requeueable = r.requeueable;
    j.exempt = r.exempt;
    j.preemptible = r.preemptible;
    j.slurm_may_preempt = r.slurm_may_preempt;
    j.being_preempted = r.being_preempted;
    j.preempt_mode = preempt_mode_of(r.preempt_mode);
    return j;
}

// A reclaim question's answer before it is asked: no job, no refusal.
void clear_reclaim_answer(nvlb_reclaim_t& out) {
    out.job_count = 0;
    out.nodes = 0;
    out.lost_node_seconds = 0;
    out.budget_node_seconds = 0;
    out.block_count = 0;
    out.refusal = nvlb_reclaim_refusal_t{};
}

static_assert(NVLB_VICTIM_STATUS_COUNT == kVictimStatusCount);
static_assert(static_cast<std::size_t>(NVLB_SLURM_RESERVATION) + 1 == kSlurmStartRefusalCount);

// The core's refusal, for the caller to hand back to nvlb_reclaim_refused.
nvlb_reclaim_refusal_t refusal_out(const ReclaimRefusal& r) {
    nvlb_reclaim_refusal_t out{};
    out.refused = true;
    out.reason = static_cast<std::uint8_t>(r.reason);
    out.slurm = static_cast<std::uint8_t>(r.slurm);
    std::copy(r.jobs_by_status.begin(), r.jobs_by_status.end(), out.jobs_by_status);
    return out;
}

// The refusal the caller hands back: the core's own, or Slurm's (slurm
// set). Nothing when a code is not one nvlblock knows.
std::optional<ReclaimRefusal> refusal_in(const nvlb_reclaim_refusal_t& in) {
    if (!in.refused || in.reason >= kReclaimRefusalReasonCount || in.slurm >= kSlurmStartRefusalCount)
        return std::nullopt;
    ReclaimRefusal r;
    r.reason = in.slurm != NVLB_SLURM_WOULD_START ? ReclaimRefusalReason::kSlurmRefuses
                                                  : static_cast<ReclaimRefusalReason>(in.reason);
    r.slurm = static_cast<SlurmStartRefusal>(in.slurm);
    if (r.reason == ReclaimRefusalReason::kSlurmRefuses && r.slurm == SlurmStartRefusal::kWouldStart)
        return std::nullopt;
    std::copy(std::begin(in.jobs_by_status), std::end(in.jobs_by_status), r.jobs_by_status.begin());
    return r;
}

// What both reclaim questions ask first, inside guarded(): the planner
// locked, the node array checked against the topology; `ask` gets the
// states and the request as the core reads them.
template <class Ask>
nvlb_status_t ask_reclaim(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                          const nvlb_request_t& request, Ask&& ask) {
    std::lock_guard lock(p->mutex);
    if (node_count != p->planner.topology().node_count())
        return NVLB_E_INVALID;
    std::vector<std::uint8_t> candidates;
    return ask(states_of(p, node_states, node_count), request_of(*p, request, node_count, candidates));
}

} // namespace

extern "C" {

nvlb_status_t nvlb_plan_reclaim(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                                const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                const nvlb_running_job_t* running, size_t running_count, nvlb_reclaim_t* out) {
    if (!p || !node_states || !request || !out || (!running && running_count) ||
        ((!out->jobs || !out->actions) && out->jobs_capacity) || (!out->blocks && out->blocks_capacity))
        return NVLB_E_INVALID;
    clear_reclaim_answer(*out);
    return guarded(nullptr, [&] {
        return ask_reclaim(p, node_states, node_count, *request, [&](std::span<const NodeState> states, Request req) {
            std::vector<RunningJob> jobs;
            jobs.reserve(running_count);
            for (size_t i = 0; i < running_count; ++i) {
                if (!running[i].nodes && running[i].node_count)
                    return NVLB_E_INVALID;
                jobs.push_back(running_job_of(running[i]));
            }
            const ReclaimDecision d =
                p->planner.plan_reclaim(states, std::move(req), reclaimer_of(for_job), jobs, request->now);
            if (!d.plan) {
                out->refusal = refusal_out(d.refusal);
                return NVLB_OK;
            }
            const RecoveryRecord* r = p->planner.ledger().find(request->job_id);
            const RecoveryClaim claim = r ? claim_for(p->planner.topology(), *r, {}) : RecoveryClaim{};
            if (d.plan->victims.size() > out->jobs_capacity || claim.blocks.size() > out->blocks_capacity)
                return NVLB_E_INVALID;
            for (const ReclaimVictim& v : d.plan->victims) {
                out->jobs[out->job_count] = v.job_id;
                out->actions[out->job_count++] = v.how == VictimStatus::kPreempt ? NVLB_RECLAIM_PREEMPT
                                                 : v.at_once                     ? NVLB_RECLAIM_REQUEUE_NOW
                                                                                 : NVLB_RECLAIM_REQUEUE;
            }
            out->nodes = d.plan->nodes;
            out->lost_node_seconds = d.plan->lost_node_seconds;
            out->budget_node_seconds = d.plan->budget_node_seconds;
            for (const RecoveryNeed& need : claim.blocks)
                out->blocks[out->block_count++] = need.block;
            return NVLB_OK;
        });
    });
}

nvlb_status_t nvlb_reclaim_ruled_out(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                                     const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                     nvlb_reclaim_t* out) {
    if (!p || !node_states || !request || !out)
        return NVLB_E_INVALID;
    clear_reclaim_answer(*out);
    return guarded(nullptr, [&] {
        return ask_reclaim(p, node_states, node_count, *request, [&](std::span<const NodeState> states, Request req) {
            const std::optional<ReclaimRefusal> refusal =
                p->planner.reclaim_ruled_out(states, std::move(req), reclaimer_of(for_job), request->now);
            if (refusal)
                out->refusal = refusal_out(*refusal);
            return NVLB_OK;
        });
    });
}

nvlb_status_t nvlb_reclaim_started(nvlb_planner_t* p, uint32_t job_id, const nvlb_reclaimer_t* for_job,
                                   const nvlb_reclaim_t* plan, int64_t released_by, int64_t now) {
    if (!p || !plan || ((!plan->jobs || !plan->actions) && plan->job_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        Reclaim r;
        for (size_t i = 0; i < plan->job_count; ++i)
            r.victims.push_back(
                {plan->jobs[i],
                 plan->actions[i] == NVLB_RECLAIM_PREEMPT ? VictimStatus::kPreempt : VictimStatus::kRequeue, 0,
                 plan->actions[i] == NVLB_RECLAIM_REQUEUE_NOW});
        r.nodes = plan->nodes;
        r.lost_node_seconds = plan->lost_node_seconds;
        r.budget_node_seconds = plan->budget_node_seconds;
        p->planner.reclaim_started(job_id, r, reclaimer_of(for_job), released_by, now);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_reclaim_refused(nvlb_planner_t* p, uint32_t job_id, const nvlb_reclaim_refusal_t* why) {
    if (!p || !why)
        return NVLB_E_INVALID;
    const std::optional<ReclaimRefusal> refusal = refusal_in(*why);
    if (!refusal)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.reclaim_refused(job_id, *refusal);
        return NVLB_OK;
    });
}

size_t nvlb_reclaim_candidates(const nvlb_planner_t* p, int64_t now, uint32_t* out, size_t cap) {
    if (!p)
        return 0;
    try {
        std::lock_guard lock(p->mutex);
        const std::vector<std::uint32_t> ids = p->planner.recovery().reclaim_candidates(p->planner.topology(), now);
        if (out)
            std::copy_n(ids.begin(), std::min(cap, ids.size()), out);
        return ids.size();
    } catch (...) {
        return 0; // out of memory: no reclaim this pass
    }
}

void nvlb_note_reclaim_pass(nvlb_planner_t* p, int64_t held_us, int64_t cpu_us, size_t recoveries) {
    if (!p)
        return;
    // Not a change a waiter wakes for (no version bump): a report figure.
    nothrow_do([&] {
        std::lock_guard lock(p->mutex);
        p->planner.note_reclaim_pass(held_us, cpu_us, recoveries);
    });
}

} // extern "C"
