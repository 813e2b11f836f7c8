// SPDX-License-Identifier: GPL-2.0-or-later
//
// The cluster as the engine sees it at one moment: node states, per-block
// failure tallies (which make a block degraded or down as a whole) and the
// nodes held for jobs waiting to restart in place. Built once per decision
// (or once per scheduling pass) in O(nodes + held claims).
#pragma once

#include "model/topology.hpp"
#include "placement/node_state.hpp"
#include "placement/request.hpp"
#include "recovery/block_fault.hpp"

#include <algorithm>
#include <span>
#include <vector>

namespace nvlblock {

// Held capacity of one block for jobs waiting to restart there.
struct BlockHold {
    std::uint32_t job_id = 0;
    std::uint32_t need = 0;       // nodes the job will take on this block
    std::uint32_t held_nodes = 0; // of which specific free nodes (its prior healthy ones)
};

struct BlockTally {
    int size = 0;
    int failed = 0; // down + drained
    int down = 0;
    int drained = 0;
    int busy = 0;
    int lent = 0; // counted only where lending is on; elsewhere such nodes are busy
    int free = 0;
    bool fault = false; // block fault: failed together beyond spares and the fault fraction
    std::vector<BlockHold> holds;

    int spares_configured = 0;
    // Spares still held back: the configured count less failures it absorbs.
    int spare_reserve() const { return std::max(0, spares_configured - failed); }
    bool degraded() const { return failed > spares_configured; }
};

class Snapshot {
public:
    // `claims`: jobs waiting to restart in place (not yet expired).
    Snapshot(const Topology& topo, std::span<const NodeState> states, std::span<const RecoveryClaim> claims);

    const Topology& topology() const { return *topo_; }
    std::span<const NodeState> states() const { return states_; }
    NodeState state(NodeIndex n) const { return states_[n]; }
    const BlockTally& tally(BlockIndex b) const { return tallies_[static_cast<std::size_t>(b)]; }
    const std::vector<BlockTally>& tallies() const { return tallies_; }
    // The job a node is held for (its prior healthy node), 0 when none.
    std::uint32_t held_for(NodeIndex n) const { return held_for_.empty() ? 0 : held_for_[n]; }

private:
    const Topology* topo_;
    std::span<const NodeState> states_;
    std::vector<BlockTally> tallies_;
    std::vector<std::uint32_t> held_for_;
};

} // namespace nvlblock
