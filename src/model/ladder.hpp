// SPDX-License-Identifier: GPL-2.0-or-later
//
// The ladder from the blocks to the whole cluster: the rungs a job that
// spans blocks climbs (placement/level_choice.hpp), lowest first: the blocks
// themselves, each level of the hierarchy (topology.conf: every level that
// BlockSizes lists; nvlblock.yaml: each named level), the whole cluster.
//
// Each rung's groups are laid out flat once, when the hierarchy is built,
// each with its children (the groups of the rung below inside it): a
// placement question then only adds what the request may take into them.
// Rebuilding the groups per question was half the simulator's time on a
// deep queue of multi-rack jobs (docs/performance.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace nvlblock {

using BlockIndex = std::int32_t;
class Hierarchy;

struct Rung {
    enum class Kind { kBlocks, kShift, kNamed, kCluster };
    Kind kind = Kind::kBlocks;
    int shift = 0; // kShift: groups of 2^shift blocks, aligned
    int level = 0; // kNamed: its index in Hierarchy::levels()

    // A group: its blocks are blocks[first_block, +block_count), ascending;
    // its children are children[first_child, +child_count), in order of
    // their first block.
    struct Group {
        int first_block = 0, block_count = 0;
        int first_child = 0, child_count = 0;
    };
    // A child: its blocks are child_blocks[first, +count), ascending.
    struct Child {
        int first = 0, count = 0;
    };
    std::vector<Group> groups; // in order of their first block
    std::vector<Child> children;
    std::vector<BlockIndex> blocks;       // by group
    std::vector<BlockIndex> child_blocks; // by child
    std::vector<int> group_at;            // per block: its group's index in `groups`
    std::vector<int> child_at;            // per block: its child's index in `children`

    std::span<const BlockIndex> blocks_of(const Group& g) const {
        return {blocks.data() + g.first_block, static_cast<std::size_t>(g.block_count)};
    }
    std::span<const BlockIndex> blocks_of(const Child& c) const {
        return {child_blocks.data() + c.first, static_cast<std::size_t>(c.count)};
    }
};

// The rungs of `h` over its `blocks` blocks, lowest first (none when `h` has no levels).
std::vector<Rung> build_ladder(const Hierarchy& h, std::size_t blocks);

} // namespace nvlblock
