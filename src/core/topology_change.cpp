// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/topology_change.hpp"

#include "model/hostlist.hpp"
#include "recovery/rules.hpp"

#include <algorithm>

namespace nvlblock {

// The one place a built topology is edited: a copy with one node moved.
class TopologyEditor {
  public:
    // `t` with node n out of block `from` and into block `to` (either may be
    // kNoBlock) and named `name`; "" in `problem` or why it cannot be.
    static Topology moved(const Topology& t, NodeIndex n, BlockIndex from, BlockIndex to, const std::string& name,
                          std::string& problem) {
        Topology out = t;
        if (out.node_names_[n] != name) { // a dynamic node new in its slot
            if (auto it = out.node_index_.find(out.node_names_[n]); it != out.node_index_.end() && it->second == n)
                out.node_index_.erase(it);
            out.node_names_[n] = name;
            out.node_index_[name] = n;
        }
        if (from != kNoBlock) {
            std::vector<NodeIndex>& v = out.blocks_[static_cast<std::size_t>(from)].nodes;
            v.erase(std::remove(v.begin(), v.end(), n), v.end());
            out.block_of_[n] = kNoBlock;
            --out.nodes_in_blocks_;
        }
        if (to != kNoBlock) {
            std::vector<NodeIndex>& v = out.blocks_[static_cast<std::size_t>(to)].nodes;
            v.insert(std::upper_bound(v.begin(), v.end(), n), n);
            out.block_of_[n] = to;
            ++out.nodes_in_blocks_;
        }
        for (BlockIndex b : {from, to})
            if (b != kNoBlock && problem.empty())
                problem = refresh(out, out.blocks_[static_cast<std::size_t>(b)]);
        return out;
    }

  private:
    // A changed block's derived fields, and nvlblock.yaml's checks on it.
    static std::string refresh(const Topology& t, Block& b) {
        const std::string label = "block '" + b.name + "'";
        if (b.nodes.empty())
            return label + " would have no nodes left";
        std::vector<std::string> names;
        for (NodeIndex n : b.nodes)
            names.push_back(t.node_names_[n]);
        b.nodes_expr = hostlist::compress(names);
        b.first = b.nodes.front();
        b.contiguous = true;
        for (std::size_t i = 0; i < b.nodes.size() && b.contiguous; ++i)
            b.contiguous = b.nodes[i] == b.first + static_cast<NodeIndex>(i);
        const BlockSettings& s = b.settings;
        if (s.slice > b.size())
            return label + " would have " + std::to_string(b.size()) + " nodes, fewer than its slice of " +
                   std::to_string(s.slice);
        if (s.slice + s.spares > b.size())
            return label + " would have " + std::to_string(b.size()) + " nodes; its slice " + std::to_string(s.slice) +
                   " plus " + std::to_string(s.spares) + " spares needs " + std::to_string(s.slice + s.spares);
        return "";
    }
};

namespace {

std::string block_label(const Topology& t, BlockIndex b) {
    return b == kNoBlock ? std::string("no block") : t.block(b).name;
}

std::string known_blocks(const Topology& t) {
    std::string out;
    const std::size_t shown = std::min<std::size_t>(t.block_count(), 8);
    for (std::size_t i = 0; i < shown; ++i)
        out += (i ? ", " : "") + t.blocks()[i].name;
    if (t.block_count() > shown)
        out += ", ... (" + std::to_string(t.block_count()) + " in all)";
    return out.empty() ? std::string("none") : out;
}

TopologyChange refused(std::string why) {
    TopologyChange c;
    c.outcome = TopologyChange::Outcome::kRefused;
    c.message = std::move(why);
    return c;
}

// The first reason a job forbids moving node n from `from` to `to`, or "".
std::string job_conflict(const Topology& t, NodeIndex n, BlockIndex from, BlockIndex to,
                         std::span<const JobNodes> running, const Ledger& ledger) {
    const std::string node = t.node_name(n);
    if (from != kNoBlock)
        for (const JobNodes& j : running) {
            const auto mates = std::count_if(j.nodes.begin(), j.nodes.end(), [&](NodeIndex m) {
                return m != n && m < t.node_count() && t.block_of(m) == from;
            });
            if (mates > 0)
                return "node " + node + " runs JobId=" + std::to_string(j.job_id) + ", which has " +
                       std::to_string(mates) + " more node" + (mates == 1 ? "" : "s") + " in block " +
                       t.block(from).name +
                       ": moving it would split the job's block; apply it again once the job ended";
        }
    for (const auto& [id, r] : ledger.records()) {
        if (r.fallback)
            continue;
        std::vector<BlockIndex> its;
        for (NodeIndex m : r.nodes)
            if (m < t.node_count() && t.block_of(m) != kNoBlock)
                its.push_back(t.block_of(m));
        for (BlockIndex b : {from, to})
            if (b != kNoBlock && std::find(its.begin(), its.end(), b) != its.end())
                return "JobId=" + std::to_string(id) + " is waiting to restart in place on block " + t.block(b).name +
                       " after a node failure: the block keeps its nodes until the job restarts or falls back "
                       "(recovery.wait); apply it again then";
    }
    return "";
}

} // namespace

TopologyChange change_node_block(const Topology& current, const Topology& configured, const NodeAssignment& asked,
                                 std::span<const JobNodes> running, const Ledger& ledger, bool restoring) {
    const NodeIndex n = asked.node;
    if (n >= current.node_count())
        return refused("node " + asked.node_name + " (index " + std::to_string(n) +
                       ") is not in nvlblock's topology (" + std::to_string(current.node_count()) +
                       " nodes): reconfigure first");
    if (asked.node_name.empty())
        return refused("a node needs a name");
    if (auto other = current.find_node(asked.node_name); other && *other != n)
        return refused("node " + asked.node_name + " is node " + std::to_string(*other) +
                       " in nvlblock's topology, not " + std::to_string(n));
    const bool renamed = current.node_name(n) != asked.node_name;
    const BlockIndex from = renamed ? kNoBlock : current.block_of(n);
    if (renamed && current.block_of(n) != kNoBlock)
        return refused("node " + asked.node_name + " takes the place of " + current.node_name(n) +
                       ", which is in block " + current.block(current.block_of(n)).name + ": reconfigure first");

    BlockIndex to = kNoBlock;
    switch (asked.target) {
    case NodeAssignment::Target::kBlock: {
        auto b = current.find_block(asked.block);
        if (!b)
            return refused("there is no block '" + asked.block + "' in " + current.source() +
                           " (blocks: " + known_blocks(current) +
                           "); a new block is described in nvlblock.yaml and read at scontrol reconfigure");
        to = *b;
        break;
    }
    case NodeAssignment::Target::kNone:
        break;
    case NodeAssignment::Target::kConfigured:
        if (auto c = configured.find_node(asked.node_name); c && configured.block_of(*c) != kNoBlock)
            if (auto b = current.find_block(configured.block(configured.block_of(*c)).name))
                to = *b;
        break;
    }

    if (to == from && !renamed) {
        TopologyChange same;
        same.message = "node " + asked.node_name + " is in " + block_label(current, from) + " already";
        return same;
    }
    if (!restoring)
        if (std::string why = job_conflict(current, n, from, to, running, ledger); !why.empty())
            return refused(why);

    std::string problem;
    Topology next = TopologyEditor::moved(current, n, from, to, asked.node_name, problem);
    if (!problem.empty())
        return refused(problem);
    TopologyChange c;
    c.outcome = TopologyChange::Outcome::kChanged;
    auto sized = [&](BlockIndex b) {
        return next.block(b).name + " (now " + std::to_string(next.block(b).size()) + " nodes)";
    };
    c.message = "node " + asked.node_name;
    if (from != kNoBlock && to != kNoBlock)
        c.message += " moved from block " + sized(from) + " to block " + sized(to);
    else if (from != kNoBlock)
        c.message += " left block " + sized(from) + "; it is outside every block now";
    else if (to != kNoBlock)
        c.message += " joined block " + sized(to);
    else
        c.message += " is outside every block";
    c.topology = std::move(next);
    return c;
}

} // namespace nvlblock
