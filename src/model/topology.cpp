// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/topology.hpp"
#include "common/warning_names.hpp"

#include "model/hostlist.hpp"

#include <algorithm>
#include <atomic>
#include <map>

namespace nvlblock {

std::optional<NodeIndex> Topology::find_node(const std::string& name) const {
    auto it = node_index_.find(name);
    if (it == node_index_.end())
        return std::nullopt;
    return it->second;
}

std::optional<BlockIndex> Topology::find_block(const std::string& name) const {
    for (std::size_t i = 0; i < blocks_.size(); ++i)
        if (blocks_[i].name == name)
            return static_cast<BlockIndex>(i);
    return std::nullopt;
}

namespace {

// Whether a block's spares are idle or reclaimed: its own `reserve`, else the
// one `defaults:` names, else idle where it lends (lending lends idle spares:
// a file asking for it asks for them) and the default, reclaim, otherwise.
SpareReserve reserve_of(const BlockSpec& bs, const TopologySpec& spec, bool lending) {
    if (bs.reserve)
        return *bs.reserve;
    if (spec.defaults_reserve_written)
        return spec.defaults.reserve;
    return lending ? SpareReserve::kIdle : BlockSettings{}.reserve;
}

// A block's settings: its own where given, else the file's defaults.
Block block_from_spec(const BlockSpec& bs, const TopologySpec& spec) {
    const BlockSettings& defaults = spec.defaults;
    Block b;
    b.name = bs.name;
    b.where = bs.where;
    b.settings.slice = bs.slice.value_or(defaults.slice);
    b.settings.spares = bs.spares.value_or(defaults.spares);
    b.settings.lending = bs.lending.value_or(defaults.lending);
    b.settings.reserve = reserve_of(bs, spec, b.settings.lending);
    return b;
}

// `lending: true` where the spares are reclaimed lends nothing (every node
// already runs any work): the block does not lend, and a warning says so,
// once at `defaults:` where every such block took both from there.
class LendingWithoutIdleSpares {
  public:
    void check(Block& b, const BlockSpec& bs) {
        if (!b.settings.lending || b.settings.reserve != SpareReserve::kReclaim)
            return;
        b.settings.lending = false;
        (bs.lending || bs.reserve ? own_ : inherited_).push_back({bs.where, b.name});
    }
    void report(const TopologySpec& spec, std::vector<Diagnostic>& warnings) const {
        const std::string what = "lending: true has no effect with reserve: reclaim (every node runs any work "
                                 "already; lending lends idle spares): drop it, or set reserve: idle";
        for (const auto& [where, name] : own_)
            warnings.push_back({where, "block '" + name + "': " + what, warning_name::kLendingWithReclaim});
        if (inherited_.empty())
            return;
        std::vector<std::string> names;
        for (const auto& [where, name] : inherited_)
            names.push_back(name);
        warnings.push_back({spec.defaults_where,
                            "defaults: " + what + " (blocks taking both from here: " + hostlist::compress(names) + ")",
                            warning_name::kLendingWithReclaim});
    }

  private:
    std::vector<std::pair<SourceLocation, std::string>> own_, inherited_;
};

// Settings problems of blocks that take the values at fault from
// `defaults:`. Where every block taking those values fails, the defaults are
// what to change: one error at their line names the blocks (a slice too
// large for 128 racks is one error, not 128). Where only some fail, those
// blocks are the odd ones (a partial rack): each is said at its own line.
class InheritedProblems {
  public:
    enum Values { kSlice, kSliceAndSpares };
    // A block that takes `values` from the defaults, and its problem with them if any.
    void take(Values values) { ++taking_[values]; }
    void add(Values values, const std::string& problem, const std::string& block, Diagnostic own) {
        Failing& f = failing_[{values, problem}];
        f.blocks.push_back(block);
        f.own.push_back(std::move(own));
    }
    void report(const SourceLocation& defaults_where, Diagnostics& problems) const {
        for (const auto& [key, f] : failing_) {
            if (f.blocks.size() < taking_[key.first]) {
                for (const Diagnostic& d : f.own)
                    problems.add(d.where, d.message);
                continue;
            }
            problems.add(defaults_where, "defaults: " + key.second +
                                             " (blocks taking it from here: " + hostlist::compress(f.blocks) + ")");
        }
    }

  private:
    struct Failing {
        std::vector<std::string> blocks;
        std::vector<Diagnostic> own; // each block's own error, if said at the block
    };
    std::size_t taking_[2] = {0, 0};
    std::map<std::pair<Values, std::string>, Failing> failing_;
};

// Slice and spares must fit the block's nodes. A problem with values the
// block takes from nvlblock.yaml's defaults goes to `inherited`, one with a
// value the block sets itself is said at the block.
void check_settings(const Block& b, const BlockSpec& bs, bool defaults_written, InheritedProblems& inherited,
                    Diagnostics& problems) {
    const int size = b.size();
    const BlockSettings& s = b.settings;
    const std::string label = "block '" + b.name + "'";
    const std::string slice = std::to_string(s.slice), sized = std::to_string(size) + " nodes";
    const bool slice_inherited = defaults_written && !bs.slice, both_inherited = slice_inherited && !bs.spares;
    if (slice_inherited)
        inherited.take(InheritedProblems::kSlice);
    if (both_inherited)
        inherited.take(InheritedProblems::kSliceAndSpares);
    if (s.slice < 1) {
        problems.add(bs.where, label + ": slice must be at least 1 (got " + slice + ")");
    } else if (s.slice > size) {
        Diagnostic own{bs.where, label + ": slice " + slice + " is larger than the block (" + sized + ")"};
        if (slice_inherited)
            inherited.add(InheritedProblems::kSlice, "slice " + slice + " is larger than a block of " + sized, b.name,
                          std::move(own));
        else
            problems.add(own.where, own.message);
    } else if (s.spares >= 0 && s.slice + s.spares > size) {
        const std::string needs = "slice " + slice + " plus " + std::to_string(s.spares) + " spares needs " +
                                  std::to_string(s.slice + s.spares) + " nodes";
        Diagnostic own{bs.where, label + ": " + needs + "; the block has " + std::to_string(size)};
        if (both_inherited)
            inherited.add(InheritedProblems::kSliceAndSpares, needs + "; a block of " + sized + " has fewer", b.name,
                          std::move(own));
        else
            problems.add(own.where, own.message);
    }
    if (s.spares < 0)
        problems.add(bs.where, label + ": spares must be 0 or more (got " + std::to_string(s.spares) + ")");
}

// Per node its block; per block its first node and whether its nodes are
// consecutive indices (the engine's fast paths); the largest slice.
void index_blocks(std::vector<Block>& blocks, std::size_t node_count, std::vector<BlockIndex>& block_of,
                  int& largest_slice) {
    block_of.assign(node_count, kNoBlock);
    for (std::size_t bi = 0; bi < blocks.size(); ++bi) {
        Block& b = blocks[bi];
        for (NodeIndex n : b.nodes)
            block_of[n] = static_cast<BlockIndex>(bi);
        b.first = b.nodes.empty() ? 0 : b.nodes.front();
        b.contiguous = true;
        for (std::size_t i = 0; i < b.nodes.size() && b.contiguous; ++i)
            b.contiguous = b.nodes[i] == b.first + static_cast<NodeIndex>(i);
        largest_slice = std::max(largest_slice, b.settings.slice);
    }
}

// A node joins one block only: a second listing is a problem (here or in
// another block). Whether `idx` now belongs to block `bi`.
bool claim_node(std::unordered_map<NodeIndex, std::size_t>& owner, NodeIndex idx, std::size_t bi,
                const std::vector<BlockSpec>& blocks, const std::string& name, Diagnostics& problems) {
    auto [o, fresh] = owner.emplace(idx, bi);
    if (fresh)
        return true;
    const BlockSpec& bs = blocks[bi];
    const BlockSpec& first = blocks[o->second];
    if (o->second == bi)
        problems.add(bs.where, "node " + name + " is listed twice in block '" + bs.name + "'");
    else
        problems.add(bs.where, "node " + name + " is in block '" + bs.name + "' and in block '" + first.name + "' (" +
                                   first.where.str() + ")");
    return false;
}

// The names of `nodes`, as a host list expression.
std::string nodes_expr_of(const std::vector<NodeIndex>& nodes, const std::vector<std::string>& node_names) {
    std::vector<std::string> names;
    names.reserve(nodes.size());
    for (NodeIndex n : nodes)
        names.push_back(node_names[n]);
    return hostlist::compress(names);
}

// The blocks' names, in order: the hierarchy's groups name blocks.
std::vector<std::string> names_of(const std::vector<Block>& blocks) {
    std::vector<std::string> names;
    names.reserve(blocks.size());
    for (const Block& b : blocks)
        names.push_back(b.name);
    return names;
}

} // namespace

Topology build_topology(TopologySpec spec, const std::vector<std::string>* universe) {
    Diagnostics problems;
    Topology t;
    t.source_ = spec.source;
    t.included_as_written_ = spec.included_as_written;
    t.included_path_ = spec.included_path;
    t.format_ = spec.format;
    t.defaults_ = spec.defaults;
    t.policy_ = spec.policy;
    t.block_sizes_ = spec.block_sizes;
    t.warnings_ = spec.warnings;

    if (universe) {
        t.node_names_ = *universe;
        for (NodeIndex i = 0; i < t.node_names_.size(); ++i)
            t.node_index_.emplace(t.node_names_[i], i);
    }
    // Index every block node: by the universe if given, else in topology order.
    std::unordered_map<std::string, std::size_t> block_by_name;
    std::unordered_map<NodeIndex, std::size_t> owner; // node -> block position in spec
    InheritedProblems inherited;
    LendingWithoutIdleSpares lending;
    for (std::size_t bi = 0; bi < spec.blocks.size(); ++bi) {
        BlockSpec& bs = spec.blocks[bi];
        auto [prev, inserted] = block_by_name.emplace(bs.name, bi);
        if (!inserted) {
            problems.add(bs.where, "block '" + bs.name + "' is defined twice (first at " +
                                       spec.blocks[prev->second].where.str() + ")");
            continue;
        }
        Block b = block_from_spec(bs, spec);
        lending.check(b, bs);
        for (const auto& name : bs.node_names) {
            NodeIndex idx;
            auto it = t.node_index_.find(name);
            if (it != t.node_index_.end()) {
                idx = it->second;
            } else if (universe) {
                if (spec.format == SourceFormat::kTopologyConf) {
                    // Slurm 24.11 only warns about these and leaves them out.
                    t.warnings_.push_back({bs.where,
                                           "node " + name + " of block '" + bs.name + "' is not in slurm.conf; ignored",
                                           warning_name::kNodeNotInSlurmConf});
                } else {
                    problems.add(bs.where, "node " + name + " of block '" + bs.name + "' is not in slurm.conf");
                }
                continue;
            } else {
                idx = static_cast<NodeIndex>(t.node_names_.size());
                t.node_names_.push_back(name);
                t.node_index_.emplace(name, idx);
            }
            if (claim_node(owner, idx, bi, spec.blocks, name, problems))
                b.nodes.push_back(idx);
        }
        if (b.nodes.empty()) {
            if (bs.node_names.empty())
                problems.add(bs.where, "block '" + b.name + "' has no nodes");
            else if (spec.format == SourceFormat::kTopologyConf)
                problems.add(bs.where, "block '" + b.name + "' has no node that is in slurm.conf");
            t.blocks_.push_back(std::move(b));
            continue;
        }
        b.nodes_expr = nodes_expr_of(b.nodes, t.node_names_);
        check_settings(b, bs, spec.defaults_where.line > 0, inherited, problems);
        t.blocks_.push_back(std::move(b));
    }
    inherited.report(spec.defaults_where, problems);
    lending.report(spec, t.warnings_);
    if (spec.policy.block_fault_fraction <= 0.0 || spec.policy.block_fault_fraction > 1.0)
        problems.add({spec.source, 0}, "block fault fraction must be in (0, 1]");
    if (problems.empty())
        t.hierarchy_ = build_hierarchy(spec.hierarchy, names_of(t.blocks_), spec.hierarchy.base_nodes > 0, problems);
    problems.throw_if_any();

    index_blocks(t.blocks_, t.node_names_.size(), t.block_of_, t.largest_slice_);
    t.nodes_in_blocks_ = owner.size();
    t.count_group_holds();
    return t; // with its own serial (Topology's member initializer)
}

std::uint64_t next_topology_serial() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

void Topology::count_group_holds() {
    group_holds_.clear();
    const std::vector<Rung>& rungs = hierarchy_.ladder();
    if (hierarchy_.kind() != Hierarchy::Kind::kGroups || rungs.empty())
        return;
    for (int unit = 1; unit <= largest_slice_ + 1; ++unit) {
        // What a block holds in whole units (none where its slice takes no unit).
        auto block_holds = [&](const Block& b) -> long {
            if (unit > b.settings.slice)
                return 0;
            const long room = std::max(0, b.ordinary_capacity());
            return unit > 1 ? room / unit * unit : room;
        };
        std::vector<long>& holds = group_holds_.emplace_back(rungs.size() - 1, 0);
        for (const Block& b : blocks_)
            holds[0] = std::max(holds[0], block_holds(b));
        for (std::size_t r = 1; r + 1 < rungs.size(); ++r)
            for (const Group& g : hierarchy_.levels()[static_cast<std::size_t>(rungs[r].level)].groups) {
                long held = 0;
                for (BlockIndex b : g.blocks)
                    held += block_holds(blocks_[static_cast<std::size_t>(b)]);
                holds[r] = std::max(holds[r], held);
            }
    }
}

} // namespace nvlblock
