// SPDX-License-Identifier: GPL-2.0-or-later
//
// Choosing blocks for a node count: the packing policy, separated from node
// bookkeeping so it can be read (and tested) on its own.
#pragma once

#include "model/topology.hpp"

#include <optional>
#include <vector>

namespace nvlblock {

struct BlockRoom {
    BlockIndex block = kNoBlock;
    int limit = 0;       // nodes the request may take here
    int segment_cap = 0; // of those, nodes usable in whole segments
};

struct BlockTake {
    BlockIndex block = kNoBlock;
    int count = 0;
};

// `nodes` nodes in whole segments of `segment` (1 for none). First a single
// block, best fit (least room left, then lowest index); else as few blocks as
// possible, largest first, with the last one again chosen by best fit.
std::optional<std::vector<BlockTake>> choose_blocks(const std::vector<BlockRoom>& rooms, int nodes, int segment);

} // namespace nvlblock
