// SPDX-License-Identifier: GPL-2.0-or-later
#include "writers/topology_change_text.hpp"

#include <algorithm>

namespace nvlblock {
namespace {

using Refusal = TopologyChange::Refusal;

std::string known_blocks(const Topology& t) {
    std::string out;
    const std::size_t shown = std::min<std::size_t>(t.block_count(), 8);
    for (std::size_t i = 0; i < shown; ++i)
        out += (i ? ", " : "") + t.blocks()[i].name;
    if (t.block_count() > shown)
        out += ", ... (" + std::to_string(t.block_count()) + " in all)";
    return out.empty() ? std::string("none") : out;
}

std::string refusal_text(const Topology& t, const NodeAssignment& asked, const TopologyChange& c) {
    const std::string node = "node " + asked.node_name;
    const std::string block = c.block == kNoBlock ? std::string() : t.block(c.block).name;
    const std::string label = "block '" + block + "'";
    switch (c.refusal) {
    case Refusal::kNone:
        break;
    case Refusal::kNodeNotInTopology:
        return node + " (index " + std::to_string(asked.node) + ") is not in nvlblock's topology (" +
               std::to_string(t.node_count()) + " nodes): reconfigure first";
    case Refusal::kNoName:
        return "a node needs a name";
    case Refusal::kNameIsAnotherNode:
        return node + " is node " + std::to_string(c.count) + " in nvlblock's topology, not " +
               std::to_string(asked.node);
    case Refusal::kTakesABlockNodesPlace:
        return node + " takes the place of " + t.node_name(asked.node) + ", which is in block " + block +
               ": reconfigure first";
    case Refusal::kNoSuchBlock:
        return "there is no block '" + asked.block + "' in " + t.source() + " (blocks: " + known_blocks(t) +
               "); a new block is described in nvlblock.yaml and read at scontrol reconfigure";
    case Refusal::kSplitsJob:
        return "node " + t.node_name(asked.node) + " runs JobId=" + std::to_string(c.job_id) + ", which has " +
               std::to_string(c.count) + " more node" + (c.count == 1 ? "" : "s") + " in block " + block +
               ": moving it would split the job's block; apply it again once the job ended";
    case Refusal::kJobWaitsOnBlock:
        return "JobId=" + std::to_string(c.job_id) + " is waiting to restart in place on block " + block +
               " after a node failure: the block keeps its nodes until the job restarts or falls back "
               "(recovery.wait); apply it again then";
    case Refusal::kBlockEmptied:
        return label + " would have no nodes left";
    case Refusal::kBelowSlice:
        return label + " would have " + std::to_string(c.count) + " nodes, fewer than its slice of " +
               std::to_string(t.block(c.block).settings.slice);
    case Refusal::kBelowSliceAndSpares: {
        const BlockSettings& s = t.block(c.block).settings;
        return label + " would have " + std::to_string(c.count) + " nodes; its slice " + std::to_string(s.slice) +
               " plus " + std::to_string(s.spares) + " spares needs " + std::to_string(s.slice + s.spares);
    }
    }
    return "refused";
}

std::string changed_text(const Topology& t, const NodeAssignment& asked, const TopologyChange& c) {
    auto sized = [&](BlockIndex b) {
        return t.block(b).name + " (now " + std::to_string(t.block(b).size()) + " nodes)";
    };
    std::string out = "node " + asked.node_name;
    if (c.from != kNoBlock && c.to != kNoBlock)
        out += " moved from block " + sized(c.from) + " to block " + sized(c.to);
    else if (c.from != kNoBlock)
        out += " left block " + sized(c.from) + "; it is outside every block now";
    else if (c.to != kNoBlock)
        out += " joined block " + sized(c.to);
    else
        out += " is outside every block";
    return out;
}

} // namespace

std::string topology_change_text(const Topology& now, const NodeAssignment& asked, const TopologyChange& c) {
    switch (c.outcome) {
    case TopologyChange::Outcome::kRefused:
        return refusal_text(now, asked, c);
    case TopologyChange::Outcome::kChanged:
        return changed_text(now, asked, c);
    case TopologyChange::Outcome::kUnchanged:
        break;
    }
    return "node " + asked.node_name + " is in " +
           (c.from == kNoBlock ? std::string("no block") : now.block(c.from).name) + " already";
}

} // namespace nvlblock
