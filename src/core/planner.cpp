// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/planner.hpp"

#include <algorithm>

namespace nvlblock {

Planner::Planner(Topology topology) : topology_(std::make_shared<const Topology>(std::move(topology))) {}

Snapshot Planner::snapshot(std::span<const NodeState> states, std::int64_t now) const {
    claims_cache_ = ledger_.active_claims(*topology_, now);
    return Snapshot(*topology_, states, tally_cache_.tallies(*topology_, states), claims_cache_);
}

Placement Planner::place(std::span<const NodeState> states, Request request, std::int64_t now) {
    const Topology& topo = *topology_;
    const RecoveryRecord* record = ledger_.find(request.job_id);
    if (record && !record->fallback) {
        RecoveryClaim claim = Ledger::claim_for(topo, *record);
        const std::uint32_t need = claim.total_need();
        if (need >= request.min_nodes && need <= request.max_nodes) {
            request.recovery = std::move(claim);
            Snapshot snap = snapshot(states, now);
            Placement p = nvlblock::place(snap, request);
            if (p.placed())
                return p;
            bool fault = false;
            for (const auto& b : request.recovery->blocks)
                fault = fault || snap.tally(b.block).fault;
            if (!fault && now < record->fallback_at && now < record->hold_until)
                return p; // keep waiting for its own block
            // The engine's sentence is "...: waiting for its block; <why>": log the why.
            const auto semi = p.message.find("; ");
            ledger_.fall_back(topo, request.job_id, now,
                              semi == std::string::npos ? p.message : p.message.substr(semi + 2));
        } else {
            ledger_.fall_back(topo, request.job_id, now,
                              "its node count changed (" + std::to_string(need) + " before)");
        }
        request.recovery.reset();
    }
    // A fallback restart prefers the groups of the blocks it had.
    if (record && request.prefer_blocks.empty())
        for (NodeIndex n : record->nodes) {
            const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
            if (b != kNoBlock && std::find(request.prefer_blocks.begin(), request.prefer_blocks.end(), b) ==
                                     request.prefer_blocks.end())
                request.prefer_blocks.push_back(b);
        }
    return nvlblock::place(snapshot(states, now), request);
}

std::optional<Reclaim> Planner::plan_reclaim(std::span<const NodeState> states, Request request,
                                             std::span<const RunningJob> running, std::int64_t now) const {
    const RecoveryRecord* record = ledger_.find(request.job_id);
    if (!record || record->fallback || now < record->reclaimed_until)
        return std::nullopt;
    request.recovery = Ledger::claim_for(*topology_, *record);
    Snapshot snap = snapshot(states, now);
    const Placement refusal = nvlblock::place(snap, request);
    if (refusal.placed())
        return std::nullopt;
    return nvlblock::plan_reclaim(snap, *request.recovery, refusal, running, now,
                                  topology_->policy().recovery.wait_seconds);
}

void Planner::reclaim_started(std::uint32_t job_id, const Reclaim& plan, std::int64_t now) {
    const RecoveryRecord* record = ledger_.find(job_id);
    if (!record)
        return;
    ledger_.reclaimed(job_id, now + std::max<std::int64_t>(requeue_delay_, 1),
                      describe_reclaim(*topology_, Ledger::claim_for(*topology_, *record), plan));
}

void Planner::job_failed(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::span<const NodeIndex> failed,
                         std::int64_t now) {
    // A job whose blocks reclaim their spares waits for nothing but Slurm's
    // requeue delay: holding its nodes idle longer is the cost reclaiming
    // exists to avoid; if its blocks cannot take it back by then, it goes
    // anywhere at once (rule 3b).
    bool reclaim = !nodes.empty();
    for (NodeIndex n : nodes) {
        const BlockIndex b = n < topology_->node_count() ? topology_->block_of(n) : kNoBlock;
        reclaim = reclaim && b != kNoBlock && topology_->block(b).settings.reserve == SpareReserve::kReclaim;
    }
    ledger_.job_failed(*topology_, job_id, nodes, failed, now,
                       reclaim ? requeue_delay_ : topology_->policy().recovery.wait_seconds, requeue_delay_);
}

void Planner::job_started(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::int64_t now) {
    ledger_.job_started(*topology_, job_id, nodes, now);
}

void Planner::job_gone(std::uint32_t job_id, std::int64_t now) { ledger_.job_gone(*topology_, job_id, now); }

void Planner::replace_topology(Topology topology) {
    auto next = std::make_shared<const Topology>(std::move(topology));
    ledger_.remap(*topology_, *next);
    tally_cache_.reset(); // counted for the old blocks
    topology_ = std::move(next);
}

} // namespace nvlblock
