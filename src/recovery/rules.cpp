// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/rules.hpp"

#include "recovery/ledger.hpp"

#include <algorithm>
#include <set>

namespace nvlblock {
namespace {

bool contains(std::span<const NodeIndex> v, NodeIndex n) {
    return std::find(v.begin(), v.end(), n) != v.end();
}

} // namespace

bool earns_hold(std::span<const NodeIndex> nodes, std::span<const NodeIndex> failed) {
    return nodes.size() >= 2 && !failed.empty();
}

std::int64_t hold_delay(std::int64_t slurm_requeue_delay) {
    return std::max<std::int64_t>(0, slurm_requeue_delay) + kRequeueSchedulingSlack;
}

std::int64_t wait_after_failure(const Topology& topo, std::span<const NodeIndex> nodes, std::int64_t hold) {
    bool reclaim = !nodes.empty();
    for (NodeIndex n : nodes) {
        const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
        reclaim = reclaim && b != kNoBlock && topo.block(b).settings.reserve == SpareReserve::kReclaim;
    }
    return reclaim ? hold : topo.policy().recovery.wait_seconds;
}

bool holds_at(const RecoveryRecord& r, std::int64_t now) {
    return !r.fallback && now < r.hold_until;
}

bool wait_over(const RecoveryRecord& r, std::int64_t now) {
    return now >= r.fallback_at || now >= r.hold_until;
}

void claim_node(const Topology& topo, RecoveryClaim& claim, NodeIndex n, bool lost) {
    const BlockIndex b = topo.block_of(n);
    auto it =
        std::find_if(claim.blocks.begin(), claim.blocks.end(), [b](const RecoveryNeed& x) { return x.block == b; });
    if (it == claim.blocks.end()) {
        claim.blocks.push_back({b, 0, 0, {}});
        it = claim.blocks.end() - 1;
    }
    ++it->need;
    if (lost)
        ++it->lost;
    else
        it->prior_healthy.push_back(n);
}

RecoveryClaim claim_for(const Topology& topo, const RecoveryRecord& r, std::span<const NodeState> states) {
    RecoveryClaim c;
    c.job_id = r.job_id;
    c.deadline = r.hold_until;
    for (NodeIndex n : r.nodes) {
        // Failed now (a failed node not repaired since, or a prior node
        // drained after the requeue), or, without states, at the failure.
        const bool lost = n < states.size() ? is_failed(states[n]) : contains(r.failed, n);
        claim_node(topo, c, n, lost);
    }
    return c;
}

long in_place_shortfall(const Topology& topo, std::span<const NodeIndex> had, std::span<const NodeState> states,
                        std::span<const std::uint8_t> available) {
    const bool mapped = available.size() == states.size();
    // Its nodes come block by block (an allocation is sorted): a block is
    // counted when it first comes, looked for among those seen.
    std::vector<BlockIndex> seen;
    long room = 0;
    for (NodeIndex h : had) {
        const BlockIndex b = h < topo.node_count() ? topo.block_of(h) : kNoBlock;
        if (b == kNoBlock || (!seen.empty() && seen.back() == b) ||
            std::find(seen.begin(), seen.end(), b) != seen.end())
            continue;
        seen.push_back(b);
        for (NodeIndex n : topo.block(b).nodes)
            if (n < states.size() &&
                (mapped ? available[n] != 0 : !is_failed(states[n]) && states[n] != NodeState::kBusy))
                ++room;
    }
    return std::max<long>(0, static_cast<long>(had.size()) - room);
}

bool any_block_down(const Snapshot& snap, const RecoveryClaim& claim) {
    for (const RecoveryNeed& need : claim.blocks)
        if (need.block >= 0 && static_cast<std::size_t>(need.block) < snap.topology().block_count() &&
            snap.tally(need.block).fault)
            return true;
    return false;
}

bool restarted_in_place(const Topology& topo, std::span<const NodeIndex> before, std::span<const NodeIndex> after) {
    if (after.empty() || after.size() != before.size())
        return false;
    std::set<BlockIndex> had;
    for (NodeIndex n : before)
        if (n < topo.node_count())
            had.insert(topo.block_of(n));
    return std::all_of(after.begin(), after.end(), [&](NodeIndex n) {
        return n < topo.node_count() && topo.block_of(n) != kNoBlock && had.count(topo.block_of(n));
    });
}

} // namespace nvlblock
