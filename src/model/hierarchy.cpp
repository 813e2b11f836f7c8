// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/hierarchy.hpp"

#include "model/hostlist.hpp"

#include <algorithm>
#include <map>

namespace nvlblock {

std::string Hierarchy::describe() const {
    std::string s;
    if (kind_ == Kind::kBlockSizes) {
        s = "BlockSizes=";
        bool first = true;
        for (int k = 0; k <= kMaxBlockLevel; ++k)
            if (has_block_level(k)) {
                s += (first ? "" : ",") + std::to_string(static_cast<std::uint64_t>(base_nodes_) << k);
                first = false;
            }
        return s;
    }
    for (const auto& l : levels_)
        s += (s.empty() ? "" : " < ") + l.name;
    return s;
}

class HierarchyBuilder {
  public:
    HierarchyBuilder(const std::vector<std::string>& blocks, Diagnostics& problems)
        : block_names_(blocks), problems_(problems) {
        for (std::size_t i = 0; i < blocks.size(); ++i)
            block_index_.emplace(blocks[i], static_cast<BlockIndex>(i));
    }

    Hierarchy block_sizes(const HierarchySpec& spec) {
        Hierarchy h;
        h.kind_ = Hierarchy::Kind::kBlockSizes;
        h.base_nodes_ = spec.base_nodes;
        h.level_mask_ = spec.level_mask ? spec.level_mask : kDefaultBlockLevelMask;
        h.level_mask_ |= 1u; // the base size is always a level
        h.cross_after_ = spec.cross_after;
        const std::size_t count = block_names_.size();
        for (int k = 1; k <= kMaxBlockLevel && count > 1; ++k) {
            if (!h.has_block_level(k))
                continue;
            const std::size_t per = std::size_t{1} << k;
            HierarchyLevel level;
            level.shift = k;
            level.name = std::to_string(per) + "x";
            level.label = "aggregated block of " + std::to_string(static_cast<std::uint64_t>(h.base_nodes_) << k) +
                          " nodes (" + std::to_string(per) + " blocks)";
            level.group_of.resize(count);
            for (std::size_t first = 0; first < count; first += per) {
                Group g;
                std::vector<std::string> names;
                for (std::size_t b = first; b < std::min(count, first + per); ++b) {
                    g.blocks.push_back(static_cast<BlockIndex>(b));
                    names.push_back(block_names_[b]);
                    level.group_of[b] = static_cast<int>(level.groups.size());
                }
                g.name = hostlist::compress(names);
                level.groups.push_back(std::move(g));
            }
            h.levels_.push_back(std::move(level));
            if (per >= count)
                break; // higher levels hold the whole cluster too
        }
        link_parents(h);
        return h;
    }

    Hierarchy groups(const HierarchySpec& spec) {
        Hierarchy h;
        h.kind_ = Hierarchy::Kind::kGroups;
        h.cross_after_ = spec.cross_after;
        std::map<std::string, SourceLocation> level_names, group_names;
        for (std::size_t li = 0; li < spec.levels.size(); ++li) {
            const LevelSpec& ls = spec.levels[li];
            if (!level_names.emplace(ls.name, ls.where).second)
                problems_.add(ls.where,
                              "level '" + ls.name + "' is listed twice (first at " + level_names[ls.name].str() + ")");
            HierarchyLevel level;
            level.name = ls.name;
            level.label = ls.label.empty() ? ls.name : ls.label;
            level.group_of.assign(block_names_.size(), -1);
            const HierarchyLevel* below = li ? &h.levels_.back() : nullptr;
            for (const GroupSpec& gs : ls.groups) {
                const std::string label = "group '" + gs.name + "' (level " + ls.name + ")";
                if (block_index_.count(gs.name))
                    problems_.add(gs.where, label + " has the name of a block; group and block names must differ");
                else if (!group_names.emplace(gs.name, gs.where).second)
                    problems_.add(gs.where,
                                  label + ": the name is used twice (first at " + group_names[gs.name].str() + ")");
                if (gs.members.empty()) {
                    problems_.add(gs.where, label + " has no members");
                    continue;
                }
                Group g;
                g.name = gs.name;
                g.where = gs.where;
                const int index = static_cast<int>(level.groups.size());
                for (const std::string& m : gs.members) {
                    bool known = false;
                    std::vector<BlockIndex> blocks = member_blocks(m, below, known);
                    if (!known) {
                        problems_.add(gs.where, label + ": unknown " +
                                                    (below ? "block or " + below->name + " group '" : "block '") + m +
                                                    "'");
                        continue;
                    }
                    for (BlockIndex b : blocks) {
                        int& owner = level.group_of[static_cast<std::size_t>(b)];
                        if (owner == index) {
                            problems_.add(gs.where, label + " lists block '" + block_names_[b] + "' twice");
                        } else if (owner >= 0) {
                            problems_.add(gs.where, "block '" + block_names_[b] + "' is in group '" + gs.name +
                                                        "' and in group '" + level.groups[owner].name + "' (" +
                                                        level.groups[owner].where.str() +
                                                        "); a block is in at most one group of a level");
                        } else {
                            owner = index;
                            g.blocks.push_back(b);
                        }
                    }
                }
                std::sort(g.blocks.begin(), g.blocks.end());
                level.groups.push_back(std::move(g));
            }
            if (below)
                check_nesting(*below, level, ls);
            add_implicit(level, below);
            h.levels_.push_back(std::move(level));
        }
        link_parents(h);
        return h;
    }

  private:
    // A member name: a block, or (above the lowest level) a group of the level below.
    // `known`: the name is a block or such a group (whose own problems were reported).
    std::vector<BlockIndex> member_blocks(const std::string& name, const HierarchyLevel* below, bool& known) const {
        known = true;
        auto b = block_index_.find(name);
        if (b != block_index_.end())
            return {b->second};
        if (below)
            for (const Group& g : below->groups)
                if (!g.implicit && g.name == name)
                    return g.blocks;
        known = false;
        return {};
    }

    // Every group of the level below lies wholly inside one group here (or in none).
    void check_nesting(const HierarchyLevel& below, const HierarchyLevel& level, const LevelSpec& ls) {
        for (const Group& child : below.groups) {
            if (child.blocks.empty())
                continue; // reported already
            const int first = level.group_of[static_cast<std::size_t>(child.blocks.front())];
            for (BlockIndex b : child.blocks) {
                const int here = level.group_of[static_cast<std::size_t>(b)];
                if (here == first)
                    continue;
                const Group& cut = level.groups[static_cast<std::size_t>(here >= 0 ? here : first)];
                problems_.add(cut.where, "group '" + cut.name + "' (level " + ls.name + ") holds part of " +
                                             below.name + " group '" + child.name + "' but not all of it: " +
                                             "groups of a level must nest inside the level above");
                break;
            }
        }
    }

    // Blocks no group of this level names form groups of their own: a single
    // block at the lowest level, the whole group of the level below above it.
    static void add_implicit(HierarchyLevel& level, const HierarchyLevel* below) {
        auto implicit = [&](std::string name, std::vector<BlockIndex> blocks) {
            Group g;
            g.name = std::move(name);
            g.blocks = std::move(blocks);
            g.implicit = true;
            for (BlockIndex b : g.blocks)
                level.group_of[static_cast<std::size_t>(b)] = static_cast<int>(level.groups.size());
            level.groups.push_back(std::move(g));
        };
        if (!below) {
            for (std::size_t b = 0; b < level.group_of.size(); ++b)
                if (level.group_of[b] < 0)
                    implicit("", {static_cast<BlockIndex>(b)});
            return;
        }
        for (const Group& child : below->groups)
            if (!child.blocks.empty() && level.group_of[static_cast<std::size_t>(child.blocks.front())] < 0)
                implicit(child.name, child.blocks);
    }

    void link_parents(Hierarchy& h) const {
        for (std::size_t li = 0; li + 1 < h.levels_.size(); ++li) {
            const HierarchyLevel& up = h.levels_[li + 1];
            for (Group& g : h.levels_[li].groups)
                if (!g.blocks.empty())
                    g.parent = up.group_of[static_cast<std::size_t>(g.blocks.front())];
        }
        // Implicit single-block groups are named after their block.
        for (HierarchyLevel& l : h.levels_)
            for (Group& g : l.groups)
                if (g.implicit && g.name.empty() && !g.blocks.empty())
                    g.name = block_names_[static_cast<std::size_t>(g.blocks.front())];
    }

    const std::vector<std::string>& block_names_;
    Diagnostics& problems_;
    std::map<std::string, BlockIndex> block_index_;
};

Hierarchy build_hierarchy(const HierarchySpec& spec, const std::vector<std::string>& block_names,
                          bool from_topology_conf, Diagnostics& problems) {
    HierarchyBuilder builder(block_names, problems);
    Hierarchy h;
    if (!spec.levels.empty())
        h = builder.groups(spec);
    else if (from_topology_conf && spec.base_nodes > 0 && !block_names.empty())
        h = builder.block_sizes(spec);
    else if (spec.cross_after)
        problems.add(spec.where, "hierarchy.crossing is set but there are no levels: list hierarchy.levels, "
                                 "or take the blocks from topology.conf (topology_conf:) to use its BlockSizes");
    h.ladder_ = build_ladder(h, block_names.size());
    return h;
}

} // namespace nvlblock
