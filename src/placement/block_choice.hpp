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
    int usable = 0;      // every node the request could use there, spares included
    int preempted = 0;   // of `limit`, nodes Slurm would free by preempting work
};

struct BlockTake {
    BlockIndex block = kNoBlock;
    int count = 0;
};

// `nodes` nodes in whole segments of `segment` (1 for none). First a single
// block, best fit; else as few blocks as possible, largest first, with the
// last one again chosen by best fit. Best fit: the fewest nodes taken by
// preemption (so preemption frees one block rather than scattered nodes),
// then the least room left, then the fuller block (it keeps emptier ones
// whole), then the lowest index.
std::optional<std::vector<BlockTake>> choose_blocks(const std::vector<BlockRoom>& rooms, int nodes, int segment);

// Best fit's order for `need` nodes, asked elsewhere without building every
// room (engine.cpp, best_unheld_block): whether room a ranks before room b
// (of equal ranks, best fit keeps the first in block order), and the nodes a room would take
// by preemption, best fit's first criterion: among rooms that take none,
// larger rooms rank after smaller ones.
bool fits_better(const BlockRoom& a, const BlockRoom& b, int need);
int preempted_for(const BlockRoom& r, int need);

} // namespace nvlblock
