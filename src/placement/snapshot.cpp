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
    : Snapshot(topo, states, tallies, nullptr) {
    if (!claims.empty())
        holds_ = count_holds(topo, states, *tallies_, claims);
}

Snapshot::Snapshot(const Topology& topo, std::span<const NodeState> states, std::shared_ptr<const Tallies> tallies,
                   std::shared_ptr<const Holds> holds)
    : topo_(&topo), states_(states), tallies_(std::move(tallies)), holds_(std::move(holds)) {
    check_state_count(topo, states);
    if (!tallies_ || tallies_->size() != topo.block_count())
        throw std::invalid_argument("block tallies do not match the topology");
}

std::shared_ptr<const Holds> count_holds(const Topology& topo, std::span<const NodeState> states,
                                         const Tallies& tallies, std::span<const RecoveryClaim> claims) {
    struct Candidate {
        NodeIndex node;
        std::uint32_t job_id;
        std::size_t hold;
    };
    std::vector<std::pair<BlockIndex, BlockHold>> holds;
    std::vector<Candidate> candidates;
    for (const RecoveryClaim& c : claims) {
        for (const RecoveryNeed& need : c.blocks) {
            if (need.block < 0 || static_cast<std::size_t>(need.block) >= tallies.size())
                continue;
            if (tallies[static_cast<std::size_t>(need.block)].fault)
                continue; // a faulted block holds nothing: its jobs go elsewhere
            for (NodeIndex n : need.prior_healthy)
                if (n < states.size() && states[n] == NodeState::kFree)
                    candidates.push_back({n, c.job_id, holds.size()});
            holds.push_back({need.block, BlockHold{c.job_id, need.need, 0}});
        }
    }
    if (holds.empty())
        return nullptr;
    auto out = std::make_shared<Holds>();
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
            out->held.emplace_back(candidates[i].node, holder);
            out->held_blocks.push_back(topo.block_of(candidates[i].node));
        }
        i = j;
    }
    std::sort(out->held_blocks.begin(), out->held_blocks.end());
    out->held_blocks.erase(std::unique(out->held_blocks.begin(), out->held_blocks.end()), out->held_blocks.end());
    std::stable_sort(holds.begin(), holds.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out->hold_blocks.reserve(holds.size());
    out->holds.reserve(holds.size());
    for (const auto& [b, h] : holds) {
        out->hold_blocks.push_back(b);
        out->holds.push_back(h);
    }
    return out;
}

std::span<const BlockHold> Snapshot::holds_on(BlockIndex b) const {
    const auto [lo, hi] = std::equal_range(holds_->hold_blocks.begin(), holds_->hold_blocks.end(), b);
    return std::span<const BlockHold>(holds_->holds)
        .subspan(static_cast<std::size_t>(lo - holds_->hold_blocks.begin()), static_cast<std::size_t>(hi - lo));
}

std::uint32_t Snapshot::held_for(NodeIndex n) const {
    if (!holds_ || holds_->held.empty())
        return 0;
    const auto& held = holds_->held;
    const auto it =
        std::lower_bound(held.begin(), held.end(), n, [](const auto& h, NodeIndex node) { return h.first < node; });
    return it != held.end() && it->first == n ? it->second : 0;
}

} // namespace nvlblock
