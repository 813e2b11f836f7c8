// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/segments.hpp"

#include <algorithm>
#include <map>

namespace nvlblock {

std::vector<std::vector<NodeIndex>> segments_of(const Topology& topo, std::span<const NodeIndex> nodes,
                                                std::uint32_t segment_size) {
    std::vector<NodeIndex> sorted(nodes.begin(), nodes.end());
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::map<BlockIndex, std::vector<NodeIndex>> by_block;
    std::vector<NodeIndex> outside;
    for (NodeIndex n : sorted) {
        const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
        (b == kNoBlock ? outside : by_block[b]).push_back(n);
    }
    std::vector<std::vector<NodeIndex>> out;
    for (const auto& [block, here] : by_block) {
        const std::size_t run = segment_size ? segment_size : here.size();
        for (std::size_t i = 0; i < here.size(); i += run)
            out.emplace_back(here.begin() + static_cast<std::ptrdiff_t>(i),
                             here.begin() + static_cast<std::ptrdiff_t>(std::min(here.size(), i + run)));
    }
    if (!outside.empty())
        out.push_back(std::move(outside));
    return out;
}

} // namespace nvlblock
