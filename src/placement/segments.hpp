// SPDX-License-Identifier: GPL-2.0-or-later
//
// The segments of an allocation (Slurm 25.11+ hands them to switch/nvidia_imex,
// which opens one IMEX channel per segment): per block, in block order, runs
// of `segment_size` of the allocation's nodes there (all of them when 0), in
// node order; nodes outside every block form one more segment. A segment
// never crosses a block, as placement guarantees (rule 2).
#pragma once

#include "model/topology.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace nvlblock {

std::vector<std::vector<NodeIndex>> segments_of(const Topology& topo, std::span<const NodeIndex> nodes,
                                                std::uint32_t segment_size);

} // namespace nvlblock
