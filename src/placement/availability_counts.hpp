// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a request's availability map (Slurm's node_map) leaves of a block:
// counted on every decision for every block, so it is the engine's inner
// loop. Racks are usually contiguous runs of node indices; there eight
// nodes are counted per step (one 64-bit word of each byte array), which
// keeps a decision at 147,456 nodes well under a scheduling cycle.
#pragma once

#include "model/topology.hpp"
#include "placement/node_state.hpp"

#include <cstdint>
#include <span>

namespace nvlblock {

struct AvailabilityCounts {
    int available = 0;        // available (non-zero in the map) and healthy
    int preempted = 0;        // of those, not free: Slurm would preempt what runs there
    int lent_unavailable = 0; // lent (running preemptible work) and not available
};

// Counts over the nodes of `block`; `available` has one byte per node.
AvailabilityCounts count_available(const Block& block, std::span<const NodeState> states,
                                   std::span<const std::uint8_t> available);

} // namespace nvlblock
