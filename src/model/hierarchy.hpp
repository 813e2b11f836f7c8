// SPDX-License-Identifier: GPL-2.0-or-later
//
// The network above the NVLink domain: blocks (racks) grouped into levels,
// e.g. racks into scalable units (SUs) under one set of leaf switches, SUs
// into spine pods. A job that spans racks is kept inside one group of the
// smallest level that can hold it (src/placement/level_choice.hpp).
//
// Two sources, one model:
//  - topology.conf's BlockSizes (also when nvlblock.yaml takes its blocks from
//    topology.conf): a level k is an aggregate of 2^k consecutive blocks in
//    file order, aligned; Slurm's topology/block semantics, exactly.
//  - nvlblock.yaml's `hierarchy:`: named groups of racks at named levels,
//    nested to any depth, of any size (partial SUs, 10-rack SUs).
#pragma once

#include "common/diagnostic.hpp"
#include "model/ladder.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvlblock {

// What a reader found (names as written), validated by build_hierarchy().
struct GroupSpec {
    std::string name;
    std::vector<std::string> members; // blocks, or groups of the level below
    SourceLocation where;
};

struct LevelSpec {
    std::string name;  // short, e.g. "su"
    std::string label; // for sentences, e.g. "scalable unit"; empty: the name
    std::vector<GroupSpec> groups;
    SourceLocation where;
};

struct HierarchySpec {
    std::vector<LevelSpec> levels;           // nvlblock.yaml, lowest level first
    std::optional<std::int64_t> cross_after; // seconds; none: strict (never cross a level)
    SourceLocation where;                    // of `hierarchy:`, for messages
    // topology.conf: the base block size (BlockSizes' first value, else the
    // first block's node count) and the listed levels as a bit mask (bit k:
    // 2^k base blocks). 0 when the blocks do not come from topology.conf.
    std::uint32_t base_nodes = 0;
    std::uint32_t level_mask = 0;
};

// Slurm's levels when topology.conf has no BlockSizes: 1x to 16x the base.
inline constexpr std::uint32_t kDefaultBlockLevelMask = 0x1f;
// BlockSizes may name at most 2^15 times the base size.
inline constexpr int kMaxBlockLevel = 15;

struct Group {
    std::string name;
    std::vector<BlockIndex> blocks; // ascending
    int parent = -1;                // index in the level above; -1 at the top level
    bool implicit = false;          // not written in the file: a block (or group) no group of this level names
    SourceLocation where;
};

struct HierarchyLevel {
    std::string name;
    std::string label;
    std::vector<Group> groups;
    std::vector<int> group_of; // per block: its group here
    int shift = -1;            // BlockSizes: groups of 2^shift blocks; -1 for nvlblock.yaml groups
};

class Hierarchy {
  public:
    enum class Kind { kNone, kBlockSizes, kGroups };

    Kind kind() const { return kind_; }
    bool empty() const { return kind_ == Kind::kNone; }
    // BlockSizes: a segment is placed on its own, as topology/block does;
    // nvlblock.yaml groups confine the whole job.
    bool per_segment() const { return kind_ == Kind::kBlockSizes; }
    std::uint32_t base_nodes() const { return base_nodes_; }
    std::uint32_t level_mask() const { return level_mask_; }
    // Whether BlockSizes lists level k (2^k base blocks).
    bool has_block_level(int k) const { return k >= 0 && k <= kMaxBlockLevel && (level_mask_ >> k) & 1u; }
    const std::optional<std::int64_t>& cross_after() const { return cross_after_; }

    // Levels above the blocks, lowest first. For BlockSizes: the listed
    // levels above the base, up to the first one that holds every block.
    const std::vector<HierarchyLevel>& levels() const { return levels_; }
    // "BlockSizes=4,8" or "su < pod", for messages.
    std::string describe() const;
    // The rungs from the blocks to the whole cluster, laid out (model/ladder.hpp); empty without levels.
    const std::vector<Rung>& ladder() const { return ladder_; }

  private:
    friend class HierarchyBuilder;
    friend Hierarchy build_hierarchy(const HierarchySpec& spec, const std::vector<std::string>& block_names,
                                     bool from_topology_conf, Diagnostics& problems);

    Kind kind_ = Kind::kNone;
    std::uint32_t base_nodes_ = 0;
    std::uint32_t level_mask_ = 0;
    std::optional<std::int64_t> cross_after_;
    std::vector<HierarchyLevel> levels_;
    std::vector<Rung> ladder_;
};

// Validates `spec` against the blocks (their names in index order) and
// builds the hierarchy; every problem goes to `problems` with its file and
// line. `from_topology_conf`: the blocks came from topology.conf syntax, so
// without nvlblock.yaml groups the BlockSizes levels apply.
Hierarchy build_hierarchy(const HierarchySpec& spec, const std::vector<std::string>& block_names,
                          bool from_topology_conf, Diagnostics& problems);

} // namespace nvlblock
