// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/held_blocks.hpp"

#include "model/hostlist.hpp"

#include <algorithm>

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

std::string describe(const std::vector<std::string>& nodes) {
    return std::to_string(nodes.size()) + " node" + (nodes.size() == 1 ? "" : "s") + " (" +
           (nodes.empty() ? std::string("-") : hostlist::compress(nodes)) + ")";
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

std::string held_blocks_changed(const Topology& topo, std::span<const HeldBlock> held) {
    for (const HeldBlock& h : held) {
        const auto b = topo.find_block(h.name);
        if (!b)
            return "block " + h.name + " no longer exists (it had " + describe(h.nodes) + ")";
        const HeldBlock now = held_of(topo, topo.block(*b));
        if (now.nodes != h.nodes)
            return "block " + h.name + " has " + describe(now.nodes) + " now, " + describe(h.nodes) +
                   " when the job failed";
    }
    return "";
}

std::string held_block_token(const HeldBlock& b) {
    return b.name + "=" + (b.nodes.empty() ? std::string("-") : hostlist::compress(b.nodes));
}

bool parse_held_block(const std::string& token, HeldBlock& out) {
    const auto eq = token.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= token.size())
        return false;
    out.name = token.substr(0, eq);
    const std::string expr = token.substr(eq + 1);
    out.nodes.clear();
    if (expr != "-") {
        try {
            out.nodes = hostlist::expand(expr);
        } catch (const std::exception&) {
            return false;
        }
    }
    std::sort(out.nodes.begin(), out.nodes.end());
    return true;
}

} // namespace nvlblock
