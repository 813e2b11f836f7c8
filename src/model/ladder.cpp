// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/ladder.hpp"

#include "model/hierarchy.hpp"

#include <algorithm>
#include <numeric>

namespace nvlblock {
namespace {

// Block b's group on rung r, by any id that tells the groups apart.
int group_id(const Rung& r, const Hierarchy& h, BlockIndex b) {
    switch (r.kind) {
    case Rung::Kind::kBlocks:
        return b;
    case Rung::Kind::kShift:
        return b >> r.shift;
    case Rung::Kind::kNamed:
        // +1: a block no group holds (never, once implicit groups are added) is a group of its own kind, not an index.
        return h.levels()[static_cast<std::size_t>(r.level)].group_of[static_cast<std::size_t>(b)] + 1;
    case Rung::Kind::kCluster:
        break;
    }
    return 0;
}

// Spans laid end to end: items (each a span of a Rung's block array, `first`
// and `count` its fields) in order, each holding the blocks `item_of` gives
// it, ascending. A counting sort: linear in the blocks.
template <class Item>
void lay_end_to_end(std::vector<Item>& items, int Item::*first, int Item::*count, const std::vector<int>& item_of,
                    std::vector<BlockIndex>& out) {
    for (int i : item_of)
        ++(items[static_cast<std::size_t>(i)].*count);
    int at = 0;
    for (Item& item : items) {
        item.*first = at;
        at += item.*count;
        item.*count = 0;
    }
    out.resize(item_of.size());
    for (std::size_t b = 0; b < item_of.size(); ++b) {
        Item& item = items[static_cast<std::size_t>(item_of[b])];
        out[static_cast<std::size_t>(item.*first + (item.*count)++)] = static_cast<BlockIndex>(b);
    }
}

// Each block's group on `r` (its `ids`), the groups numbered in order of
// their first block, and each group's blocks, ascending.
void lay_out_groups(Rung& r, const std::vector<int>& ids) {
    std::vector<int> slot(static_cast<std::size_t>(*std::max_element(ids.begin(), ids.end())) + 1, -1);
    r.group_at.resize(ids.size());
    for (std::size_t b = 0; b < ids.size(); ++b) {
        int& s = slot[static_cast<std::size_t>(ids[b])];
        if (s < 0) {
            s = static_cast<int>(r.groups.size());
            r.groups.emplace_back();
        }
        r.group_at[b] = s;
    }
    lay_end_to_end(r.groups, &Rung::Group::first_block, &Rung::Group::block_count, r.group_at, r.blocks);
}

// Each group's children: the groups of the rung below (`below`: their ids
// per block) inside it, in order of their first block, and their blocks.
void lay_out_children(Rung& r, const std::vector<int>& below) {
    std::vector<int> slot(static_cast<std::size_t>(*std::max_element(below.begin(), below.end())) + 1, -1);
    std::vector<int> child_id; // by child: its id below, to clear its slot after its group
    r.child_at.resize(below.size());
    for (Rung::Group& g : r.groups) {
        g.first_child = static_cast<int>(r.children.size());
        for (BlockIndex b : r.blocks_of(g)) {
            const int id = below[static_cast<std::size_t>(b)];
            int& s = slot[static_cast<std::size_t>(id)];
            if (s < 0) {
                s = static_cast<int>(r.children.size());
                r.children.emplace_back();
                child_id.push_back(id);
            }
            r.child_at[static_cast<std::size_t>(b)] = s;
        }
        g.child_count = static_cast<int>(r.children.size()) - g.first_child;
        for (int c = g.first_child; c < g.first_child + g.child_count; ++c)
            slot[static_cast<std::size_t>(child_id[static_cast<std::size_t>(c)])] = -1;
    }
    lay_end_to_end(r.children, &Rung::Child::first, &Rung::Child::count, r.child_at, r.child_blocks);
}

} // namespace

std::vector<Rung> build_ladder(const Hierarchy& h, std::size_t blocks) {
    std::vector<Rung> rungs;
    if (h.empty() || blocks == 0)
        return rungs;
    rungs.emplace_back(); // the blocks
    if (h.kind() == Hierarchy::Kind::kBlockSizes) {
        for (int k = 1; k <= kMaxBlockLevel; ++k)
            if (h.has_block_level(k)) {
                Rung& r = rungs.emplace_back();
                r.kind = Rung::Kind::kShift;
                r.shift = k;
            }
    } else {
        for (std::size_t l = 0; l < h.levels().size(); ++l) {
            Rung& r = rungs.emplace_back();
            r.kind = Rung::Kind::kNamed;
            r.level = static_cast<int>(l);
        }
    }
    rungs.emplace_back().kind = Rung::Kind::kCluster;
    // The blocks' children are the blocks themselves; each rung's, the groups of the one below.
    std::vector<int> below(blocks), ids(blocks);
    std::iota(below.begin(), below.end(), 0);
    for (Rung& r : rungs) {
        for (std::size_t b = 0; b < blocks; ++b)
            ids[b] = group_id(r, h, static_cast<BlockIndex>(b));
        lay_out_groups(r, ids);
        lay_out_children(r, below);
        below.swap(ids);
    }
    return rungs;
}

} // namespace nvlblock
