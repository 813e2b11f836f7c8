// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/snapshot.hpp"

#include <stdexcept>

namespace nvlblock {

BlockTally count_block(const Topology& topo, const Block& b, std::span<const NodeState> states) {
    BlockTally t;
    t.size = b.size();
    t.spares_configured = b.settings.spares;
    // Count by state with a table rather than a switch: node states are
    // effectively random, and a branch per node mispredicts.
    int by_state[8] = {};
    for (NodeIndex n : b.nodes)
        ++by_state[static_cast<std::uint8_t>(states[n]) & 7u];
    t.free = by_state[static_cast<int>(NodeState::kFree)];
    t.busy = by_state[static_cast<int>(NodeState::kBusy)];
    const int lent = by_state[static_cast<int>(NodeState::kLent)];
    (b.settings.lending ? t.lent : t.busy) += lent;
    t.down = by_state[static_cast<int>(NodeState::kDown)];
    t.drained = by_state[static_cast<int>(NodeState::kDrained)];
    t.failed = t.down + t.drained;
    t.fault = is_block_fault(t.size, t.failed, b.settings.spares, topo.policy().block_fault_fraction);
    return t;
}

void check_state_count(const Topology& topo, std::span<const NodeState> states) {
    if (states.size() != topo.node_count())
        throw std::invalid_argument("node state array and topology differ in node count");
}

namespace {

std::shared_ptr<const Tallies> count_all(const Topology& topo, std::span<const NodeState> states) {
    check_state_count(topo, states);
    auto tallies = std::make_shared<Tallies>();
    tallies->reserve(topo.block_count());
    for (const Block& b : topo.blocks())
        tallies->push_back(count_block(topo, b, states));
    return tallies;
}

} // namespace

Snapshot::Snapshot(const Topology& topo, std::span<const NodeState> states, std::span<const RecoveryClaim> claims)
    : Snapshot(topo, states, count_all(topo, states), claims) {}

Snapshot::Snapshot(const Topology& topo, std::span<const NodeState> states, std::shared_ptr<const Tallies> tallies,
                   std::span<const RecoveryClaim> claims)
    : topo_(&topo), states_(states), tallies_(std::move(tallies)) {
    check_state_count(topo, states);
    if (!tallies_ || tallies_->size() != topo.block_count())
        throw std::invalid_argument("block tallies do not match the topology");
    if (!claims.empty())
        add_claims(claims);
}

void Snapshot::add_claims(std::span<const RecoveryClaim> claims) {
    // Each free prior healthy node of a claim is held for the first claim
    // that lists it (claims in ledger order).
    struct Candidate {
        NodeIndex node;
        std::uint32_t job_id;
        std::size_t hold;
    };
    std::vector<std::pair<BlockIndex, BlockHold>> holds;
    std::vector<Candidate> candidates;
    for (const RecoveryClaim& c : claims) {
        for (const RecoveryNeed& need : c.blocks) {
            if (need.block < 0 || static_cast<std::size_t>(need.block) >= tallies_->size())
                continue;
            if (tally(need.block).fault)
                continue; // a faulted block holds nothing: its jobs go elsewhere
            for (NodeIndex n : need.prior_healthy)
                if (n < states_.size() && states_[n] == NodeState::kFree)
                    candidates.push_back({n, c.job_id, holds.size()});
            holds.push_back({need.block, BlockHold{c.job_id, need.need, 0}});
        }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.node < b.node; });
    for (std::size_t i = 0; i < candidates.size();) {
        std::uint32_t holder = 0;
        std::size_t j = i;
        for (; j < candidates.size() && candidates[j].node == candidates[i].node; ++j)
            if (holder == 0) {
                holder = candidates[j].job_id;
                ++holds[candidates[j].hold].second.held_nodes;
            }
        if (holder != 0) {
            held_.emplace_back(candidates[i].node, holder);
            held_blocks_.push_back(topo_->block_of(candidates[i].node));
        }
        i = j;
    }
    std::sort(held_blocks_.begin(), held_blocks_.end());
    held_blocks_.erase(std::unique(held_blocks_.begin(), held_blocks_.end()), held_blocks_.end());
    std::stable_sort(holds.begin(), holds.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    hold_blocks_.reserve(holds.size());
    holds_.reserve(holds.size());
    for (const auto& [b, h] : holds) {
        hold_blocks_.push_back(b);
        holds_.push_back(h);
    }
}

std::span<const BlockHold> Snapshot::holds_on(BlockIndex b) const {
    const auto [lo, hi] = std::equal_range(hold_blocks_.begin(), hold_blocks_.end(), b);
    return std::span<const BlockHold>(holds_).subspan(static_cast<std::size_t>(lo - hold_blocks_.begin()),
                                                      static_cast<std::size_t>(hi - lo));
}

std::uint32_t Snapshot::held_for(NodeIndex n) const {
    if (held_.empty())
        return 0;
    const auto it =
        std::lower_bound(held_.begin(), held_.end(), n, [](const auto& h, NodeIndex node) { return h.first < node; });
    return it != held_.end() && it->first == n ? it->second : 0;
}

} // namespace nvlblock
