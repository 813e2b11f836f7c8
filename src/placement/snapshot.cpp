// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/snapshot.hpp"

#include <stdexcept>

namespace nvlblock {

Snapshot::Snapshot(const Topology& topo, std::span<const NodeState> states, std::span<const RecoveryClaim> claims)
    : topo_(&topo), states_(states) {
    if (states.size() != topo.node_count())
        throw std::invalid_argument("node state array has " + std::to_string(states.size()) +
                                    " entries; the topology has " + std::to_string(topo.node_count()) + " nodes");
    tallies_.resize(topo.block_count());
    for (std::size_t bi = 0; bi < topo.block_count(); ++bi) {
        const Block& b = topo.blocks()[bi];
        BlockTally& t = tallies_[bi];
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
    }
    for (const RecoveryClaim& c : claims) {
        for (const RecoveryNeed& need : c.blocks) {
            if (need.block < 0 || static_cast<std::size_t>(need.block) >= tallies_.size())
                continue;
            BlockTally& t = tallies_[static_cast<std::size_t>(need.block)];
            if (t.fault)
                continue; // a faulted block holds nothing: its jobs go elsewhere
            BlockHold h{c.job_id, need.need, 0};
            for (NodeIndex n : need.prior_healthy) {
                if (n >= states.size() || states[n] != NodeState::kFree)
                    continue;
                if (held_for_.empty())
                    held_for_.assign(states.size(), 0);
                if (held_for_[n] == 0) {
                    held_for_[n] = c.job_id;
                    ++h.held_nodes;
                }
            }
            t.holds.push_back(h);
        }
    }
}

} // namespace nvlblock
