// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/held_blocks.hpp"

#include <algorithm>
#include <optional>

namespace nvlblock {
namespace {

HeldBlock held_of(const Topology& topo, const Block& b) {
    HeldBlock h;
    h.name = b.name;
    h.nodes.reserve(b.nodes.size());
    for (NodeIndex n : b.nodes)
        h.nodes.push_back(topo.node_name(n));
    std::sort(h.nodes.begin(), h.nodes.end());
    return h;
}

} // namespace

std::vector<HeldBlock> held_blocks(const Topology& topo, std::span<const NodeIndex> nodes) {
    std::vector<HeldBlock> out;
    std::vector<BlockIndex> seen;
    for (NodeIndex n : nodes) {
        const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
        if (b == kNoBlock || std::find(seen.begin(), seen.end(), b) != seen.end())
            continue;
        seen.push_back(b);
        out.push_back(held_of(topo, topo.block(b)));
    }
    return out;
}

namespace {

// The block named h.name in `topo`: through the block of h's first node when
// that is it (a hash lookup), else by name among all blocks.
std::optional<BlockIndex> block_named(const Topology& topo, const HeldBlock& h) {
    if (!h.nodes.empty())
        if (const auto n = topo.find_node(h.nodes.front()))
            if (const BlockIndex b = topo.block_of(*n); b != kNoBlock && topo.block(b).name == h.name)
                return b;
    return topo.find_block(h.name);
}

// Block b has exactly the nodes `sorted` names (sorted, each once).
bool same_nodes(const Topology& topo, const Block& b, const std::vector<std::string>& sorted) {
    if (b.nodes.size() != sorted.size())
        return false;
    return std::all_of(b.nodes.begin(), b.nodes.end(), [&](NodeIndex n) {
        return std::binary_search(sorted.begin(), sorted.end(), topo.node_name(n));
    });
}

} // namespace

bool held_blocks_unchanged(const Topology& topo, std::span<const HeldBlock> held) {
    return std::all_of(held.begin(), held.end(), [&](const HeldBlock& h) {
        const auto b = block_named(topo, h);
        return b && same_nodes(topo, topo.block(*b), h.nodes);
    });
}

std::optional<HeldBlockChange> held_blocks_changed(const Topology& topo, std::span<const HeldBlock> held) {
    for (const HeldBlock& h : held) {
        const auto b = block_named(topo, h);
        if (!b)
            return HeldBlockChange{h, std::nullopt};
        if (const Block& now = topo.block(*b); !same_nodes(topo, now, h.nodes))
            return HeldBlockChange{h, held_of(topo, now)};
    }
    return std::nullopt;
}

} // namespace nvlblock
