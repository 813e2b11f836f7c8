// SPDX-License-Identifier: GPL-2.0-or-later
//
// The blocks a recovering job had when its failure hit, by name and node
// names, so that a topology changed since (`scontrol reconfigure` with a new
// nvlblock.yaml, a node moved at run time) is noticed: a job waits for its
// block(s) only while each of them still exists with the same nodes; once one
// changed, its recovery ends with a logged fallback (recovery.hpp:
// Recovery::advance) and it is placed like any other job. Pure functions.
#pragma once

#include "model/topology.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// One block as it was: its name and its nodes' names, sorted.
struct HeldBlock {
    std::string name;
    std::vector<std::string> nodes;

    bool operator==(const HeldBlock&) const = default;
};

// The blocks of `nodes` in `topo` as they are now, in order of first appearance.
std::vector<HeldBlock> held_blocks(const Topology& topo, std::span<const NodeIndex> nodes);

// Whether every one of the blocks is as it was: asked on every decision that
// counts holds, so it copies nothing and finds each block through its first
// node (a block name is looked up among all blocks only when that fails).
// The same answer as !held_blocks_changed(...), which compares the same
// way and copies only to say what changed.
bool held_blocks_unchanged(const Topology& topo, std::span<const HeldBlock> held);

// How a held block differs from what `topo` has now: gone (`now` empty), or
// with other nodes (`now` as it is).
struct HeldBlockChange {
    HeldBlock held;
    std::optional<HeldBlock> now;
};

// The first of the blocks that is not as it was, or nothing when every one
// of them is. An empty `held` (a record saved before blocks were kept) is
// never changed.
std::optional<HeldBlockChange> held_blocks_changed(const Topology& topo, std::span<const HeldBlock> held);

} // namespace nvlblock
