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
    int usable = 0;      // every node the request could use there, spares included: among blocks of
                         // equal room, the fuller one is the better fit (it keeps emptier blocks whole)
    // For Packing::kSlices:
    int slice_need = 0;   // free nodes a slice job needs there (its slice, plus spares where they are withheld)
    int reserve = 0;      // spares it keeps for in-place restarts
    bool guarded = false; // it runs work that would restart in place (or this request would)
    int preempted = 0;    // of `usable`, nodes Slurm would free by preemption
};

struct BlockTake {
    BlockIndex block = kNoBlock;
    int count = 0;
};

// `nodes` nodes in whole segments of `segment` (1 for none). First a single
// block, best fit (least room left, then lowest index); else as few blocks as
// possible, largest first, with the last one again chosen by best fit.
std::optional<std::vector<BlockTake>> choose_blocks(const std::vector<BlockRoom>& rooms, int nodes, int segment,
                                                    Packing packing = Packing::kBestFit);

} // namespace nvlblock
