// SPDX-License-Identifier: GPL-2.0-or-later
//
// The blocks an update of a kept copy touched (tally_cache.cpp,
// room_index.cpp): each block once, in the order found, so that only those
// are recounted.
#pragma once

#include "model/topology.hpp"

#include <vector>

namespace nvlblock {

class TouchedBlocks {
  public:
    // Sized for `topo`'s blocks; nothing touched.
    void size_for(const Topology& topo) {
        seen_.assign(topo.block_count(), 0);
        list_.clear();
    }
    // Node n changed: its block (if any) is touched.
    void touch(const Topology& topo, NodeIndex n) {
        const BlockIndex b = topo.block_of(n);
        if (b != kNoBlock && !seen_[static_cast<std::size_t>(b)]) {
            seen_[static_cast<std::size_t>(b)] = 1;
            list_.push_back(b);
        }
    }
    const std::vector<BlockIndex>& list() const { return list_; }
    bool empty() const { return list_.empty(); }
    // Nothing touched again (the blocks found are recounted).
    void clear() {
        for (BlockIndex b : list_)
            seen_[static_cast<std::size_t>(b)] = 0;
        list_.clear();
    }

  private:
    std::vector<BlockIndex> list_;
    std::vector<char> seen_; // bytes, not bits: asked for every changed node
};

} // namespace nvlblock
