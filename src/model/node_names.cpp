// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/node_names.hpp"

#include "model/hostlist.hpp"

#include <set>

namespace nvlblock {

std::string hostlist_of(const Topology& topo, std::span<const NodeIndex> nodes) {
    std::vector<std::string> names;
    names.reserve(nodes.size());
    for (NodeIndex n : nodes)
        names.push_back(topo.node_name(n));
    return names.empty() ? "-" : hostlist::compress(names);
}

std::vector<std::string> block_names(const Topology& topo, std::span<const NodeIndex> nodes) {
    std::vector<std::string> out;
    std::set<BlockIndex> seen;
    for (NodeIndex n : nodes) {
        const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
        if (b != kNoBlock && seen.insert(b).second)
            out.push_back(topo.block(b).name);
    }
    return out;
}

std::string comma_list(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names)
        out += (out.empty() ? "" : ",") + n;
    return out.empty() ? "-" : out;
}

std::string block_hostlist(const Topology& topo, std::span<const BlockIndex> blocks) {
    std::vector<std::string> names;
    names.reserve(blocks.size());
    for (BlockIndex b : blocks)
        names.push_back(topo.block(b).name);
    return hostlist::compress(names);
}

std::string blocks_of(const Topology& topo, std::span<const NodeIndex> nodes) {
    return comma_list(block_names(topo, nodes));
}

} // namespace nvlblock
