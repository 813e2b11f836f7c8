// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, recovery face (include/nvlblock/recovery.h): the facts of a
// job's end, start and departure, time passing, and the decision lines the
// ledger queues.
#include "capi/abi_support.hpp"
#include "writers/recovery_log_text.hpp"

#include <algorithm>

using namespace nvlblock;
using namespace nvlblock::capi;

namespace {

// The ABI's bits are the core's (job_end.hpp), compared as numbers.
constexpr bool same_bits(unsigned core, unsigned abi) {
    return core == abi;
}
static_assert(same_bits(kEndBatch, NVLB_END_BATCH) && same_bits(kEndRequeueAllowed, NVLB_END_REQUEUE_ALLOWED) &&
              same_bits(kEndPending, NVLB_END_PENDING) && same_bits(kEndNodeFail, NVLB_END_NODE_FAIL) &&
              same_bits(kEndCompleting, NVLB_END_COMPLETING) && same_bits(kEndPreempted, NVLB_END_PREEMPTED) &&
              same_bits(kEndCancelled, NVLB_END_CANCELLED) && same_bits(kEndExitRequeues, NVLB_END_EXIT_REQUEUES) &&
              same_bits(kEndExitHolds, NVLB_END_EXIT_HOLDS));
static_assert(same_bits(kNodeMissing, NVLB_NODE_SIGN_MISSING) && same_bits(kNodeDown, NVLB_NODE_SIGN_DOWN) &&
              same_bits(kNodeNotResponding, NVLB_NODE_SIGN_NOT_RESPONDING) &&
              same_bits(kNodeFailing, NVLB_NODE_SIGN_FAILING) &&
              same_bits(kNodeNamedFailed, NVLB_NODE_SIGN_NAMED_FAILED) && same_bits(kNodeDrain, NVLB_NODE_SIGN_DRAIN));

} // namespace

extern "C" {

nvlb_status_t nvlb_job_ended(nvlb_planner_t* p, const nvlb_job_end_t* end, nvlb_end_outcome_t* outcome) {
    if (outcome)
        *outcome = NVLB_END_NOTHING;
    if (!p || !end || (!end->nodes && end->node_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        JobEnd e;
        e.job_id = end->job_id;
        e.facts = end->facts;
        e.ended_at = end->ended_at;
        e.started_at = end->started_at;
        for (std::size_t i = 0; i < end->node_count; ++i)
            e.nodes.push_back(
                {end->nodes[i].node, end->nodes[i].signs, end->nodes[i].reason ? end->nodes[i].reason : ""});
        ChangingLock lock(p);
        const JobEndOutcome o = p->planner.job_ended(e);
        if (outcome)
            *outcome = o == JobEndOutcome::kOpened     ? NVLB_END_OPENED
                       : o == JobEndOutcome::kWatching ? NVLB_END_WATCHING
                                                       : NVLB_END_NOTHING;
        return NVLB_OK;
    });
}

bool nvlb_is_recovering(const nvlb_planner_t* p, uint32_t job_id) {
    if (!p)
        return false;
    return nothrow_or<bool>(false, [&]() -> bool {
        std::lock_guard lock(p->mutex);
        return p->planner.recovery().recovering(job_id);
    });
}

nvlb_status_t nvlb_advance(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now,
                           size_t* fell_back) {
    if (fell_back)
        *fell_back = 0;
    if (!p || !node_states)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        if (node_count != p->planner.topology().node_count())
            return NVLB_E_INVALID;
        const std::size_t n = p->planner.advance(states_of(p, node_states, node_count), now);
        if (fell_back)
            *fell_back = n;
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_observe_health(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count, int64_t now) {
    if (!p || !node_states)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p); // old node failures are forgotten: saved
        if (node_count != p->planner.topology().node_count())
            return NVLB_E_INVALID;
        p->planner.observe_health(states_of(p, node_states, node_count), now);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_clear_lemon(nvlb_planner_t* p, const char* node_name, bool* cleared) {
    if (cleared)
        *cleared = false;
    if (!p || !node_name)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        const auto node = p->planner.topology().find_node(node_name);
        if (!node)
            return NVLB_E_INVALID;
        const bool had = p->planner.clear_lemon(*node);
        if (cleared)
            *cleared = had;
        return NVLB_OK;
    });
}

int64_t nvlb_next_deadline(const nvlb_planner_t* p, int64_t now) {
    if (!p)
        return INT64_MAX;
    return nothrow_or<int64_t>(INT64_MAX, [&]() -> int64_t {
        std::lock_guard lock(p->mutex);
        return p->planner.next_deadline(now);
    });
}

nvlb_status_t nvlb_job_started(nvlb_planner_t* p, uint32_t job_id, const uint32_t* nodes, size_t node_count,
                               int64_t now) {
    if (!p || (!nodes && node_count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.job_started(job_id, {nodes, node_count}, now);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_job_gone(nvlb_planner_t* p, uint32_t job_id, int64_t now) {
    if (!p)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        ChangingLock lock(p);
        p->planner.job_gone(job_id, now);
        return NVLB_OK;
    });
}

size_t nvlb_pending_jobs(const nvlb_planner_t* p, uint32_t* out, size_t cap) {
    if (!p)
        return 0;
    std::lock_guard lock(p->mutex);
    const auto& records = p->planner.ledger().records();
    const auto& watches = p->planner.recovery().watches();
    std::vector<std::uint32_t> ids;
    try {
        ids.reserve(records.size() + watches.size());
        for (const auto& kv : records)
            ids.push_back(kv.first);
        for (const auto& kv : watches)
            ids.push_back(kv.first);
    } catch (...) {
        return 0; // out of memory: nothing to report this time
    }
    // Each map is in job id order: one merge, each id once.
    std::inplace_merge(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(records.size()), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (out)
        std::copy_n(ids.begin(), std::min(cap, ids.size()), out);
    return ids.size();
}

size_t nvlb_drain_log(nvlb_planner_t* p, void (*fn)(void*, const char*), void* ctx) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::vector<Planner::LogBatch> batches;
        {
            std::lock_guard lock(p->mutex);
            batches = p->planner.take_log();
        }
        // Worded outside the lock: each batch keeps its own topology.
        const std::vector<std::string> lines = recovery_log_lines(batches);
        if (fn)
            for (const auto& l : lines)
                fn(ctx, l.c_str());
        return lines.size();
    });
}

} // extern "C"
