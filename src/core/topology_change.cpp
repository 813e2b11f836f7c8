// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/topology_change.hpp"

#include "model/node_names.hpp"

#include <algorithm>

namespace nvlblock {

namespace {

TopologyChange refused(TopologyChange::Refusal why, BlockIndex block = kNoBlock, std::size_t count = 0,
                       std::uint32_t job_id = 0) {
    TopologyChange c;
    c.outcome = TopologyChange::Outcome::kRefused;
    c.refusal = why;
    c.block = block;
    c.count = count;
    c.job_id = job_id;
    return c;
}

} // namespace

// The one place a built topology is edited: a copy with one node moved.
class TopologyEditor {
  public:
    // `t` with node n out of block `from` and into block `to` (either may be
    // kNoBlock) and named `name`; `problem` stays kNone or says why it
    // cannot be (a refusal naming the block).
    static Topology moved(const Topology& t, NodeIndex n, BlockIndex from, BlockIndex to, const std::string& name,
                          TopologyChange& problem) {
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
            if (b != kNoBlock && problem.refusal == TopologyChange::Refusal::kNone)
                problem = refresh(out, b);
        out.count_group_holds(); // a block's size changed: what its groups hold too
        out.serial_ = next_topology_serial();
        return out;
    }

  private:
    // A changed block's derived fields, and nvlblock.yaml's checks on it.
    static TopologyChange refresh(Topology& t, BlockIndex index) {
        using Refusal = TopologyChange::Refusal;
        Block& b = t.blocks_[static_cast<std::size_t>(index)];
        if (b.nodes.empty())
            return refused(Refusal::kBlockEmptied, index);
        b.nodes_expr = hostlist_of(t, b.nodes); // the block's nodes as its expression (model/node_names.hpp)
        b.first = b.nodes.front();
        b.contiguous = true;
        for (std::size_t i = 0; i < b.nodes.size() && b.contiguous; ++i)
            b.contiguous = b.nodes[i] == b.first + static_cast<NodeIndex>(i);
        const BlockSettings& s = b.settings;
        if (s.slice > b.size())
            return refused(Refusal::kBelowSlice, index, b.size());
        if (s.slice + s.spares > b.size())
            return refused(Refusal::kBelowSliceAndSpares, index, b.size());
        return {};
    }
};

namespace {

// The first job that forbids moving node n from `from` to `to`: one
// running there with more nodes in `from`, or one waiting to restart in
// place on either block. kNone when none.
TopologyChange job_conflict(const Topology& t, NodeIndex n, BlockIndex from, BlockIndex to,
                            std::span<const JobNodes> running, const Ledger& ledger) {
    using Refusal = TopologyChange::Refusal;
    if (from != kNoBlock)
        for (const JobNodes& j : running) {
            const auto mates = std::count_if(j.nodes.begin(), j.nodes.end(), [&](NodeIndex m) {
                return m != n && m < t.node_count() && t.block_of(m) == from;
            });
            if (mates > 0)
                return refused(Refusal::kSplitsJob, from, static_cast<std::size_t>(mates), j.job_id);
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
                return refused(Refusal::kJobWaitsOnBlock, b, 0, id);
    }
    return {};
}

// The block Slurm asks the node into, or why it cannot be named: kNoBlock
// for none (out of every block, or a node nvlblock's file leaves out).
TopologyChange target_of(const Topology& current, const Topology& configured, const NodeAssignment& asked) {
    TopologyChange c;
    switch (asked.target) {
    case NodeAssignment::Target::kBlock:
        if (auto b = current.find_block(asked.block))
            c.to = *b;
        else
            return refused(TopologyChange::Refusal::kNoSuchBlock);
        break;
    case NodeAssignment::Target::kNone:
        break;
    case NodeAssignment::Target::kConfigured:
        if (auto n = configured.find_node(asked.node_name); n && configured.block_of(*n) != kNoBlock)
            if (auto b = current.find_block(configured.block(configured.block_of(*n)).name))
                c.to = *b;
        break;
    }
    return c;
}

} // namespace

TopologyChange change_node_block(const Topology& current, const Topology& configured, const NodeAssignment& asked,
                                 std::span<const JobNodes> running, const Ledger& ledger, bool restoring) {
    using Refusal = TopologyChange::Refusal;
    const NodeIndex n = asked.node;
    if (n >= current.node_count())
        return refused(Refusal::kNodeNotInTopology);
    if (asked.node_name.empty())
        return refused(Refusal::kNoName);
    if (auto other = current.find_node(asked.node_name); other && *other != n)
        return refused(Refusal::kNameIsAnotherNode, kNoBlock, *other);
    const bool renamed = current.node_name(n) != asked.node_name;
    const BlockIndex from = renamed ? kNoBlock : current.block_of(n);
    if (renamed && current.block_of(n) != kNoBlock)
        return refused(Refusal::kTakesABlockNodesPlace, current.block_of(n));

    TopologyChange c = target_of(current, configured, asked);
    if (c.outcome == TopologyChange::Outcome::kRefused)
        return c;
    c.from = from;
    if (c.to == from && !renamed)
        return c; // kUnchanged: it is there already
    if (!restoring)
        if (TopologyChange why = job_conflict(current, n, from, c.to, running, ledger); why.refusal != Refusal::kNone)
            return why;

    TopologyChange problem;
    Topology next = TopologyEditor::moved(current, n, from, c.to, asked.node_name, problem);
    if (problem.refusal != Refusal::kNone)
        return problem;
    c.outcome = TopologyChange::Outcome::kChanged;
    c.topology = std::move(next);
    return c;
}

} // namespace nvlblock
