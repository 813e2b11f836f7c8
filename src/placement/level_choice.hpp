// SPDX-License-Identifier: GPL-2.0-or-later
//
// Choosing where above the blocks a job may go: the group of the network
// hierarchy (src/model/hierarchy.hpp) that confines a job spanning blocks.
// Pure: it narrows the rooms the block choice (block_choice.hpp) then packs,
// or refuses with the facts that name the level (placement/refusal.hpp). Rules (docs/placement.md,
// rule 2):
//
// topology.conf BlockSizes (Slurm's topology/block, exactly): a job of n
// nodes (with --segment, each segment on its own) wants level
// ceil(log2(ceil(n / base))); it goes inside one aggregate of the lowest
// listed level at or above that (the whole cluster when none is), touching at
// most ceil(n / child size) aggregates of the highest listed level below it
// (its children). An aggregate qualifies when its fullest children that many
// hold n; among those the one with the fewest free nodes is taken; inside it
// the children are taken best fit (one that holds the rest, fewest free
// nodes) else largest first.
//
// nvlblock.yaml groups: a job that no single block can take now goes to a
// group of the lowest level whose largest group can hold it; among the groups
// of that level that can hold it now, the one with the fewest free nodes;
// inside it, as few children as possible. With `crossing: <duration>` a job
// that has waited that long may go to a higher level (at last, anywhere).
//
// A fallback restart (its own block could not take it back) prefers the
// groups of its previous blocks, then the nearest level.
#pragma once

#include "model/topology.hpp"
#include "placement/block_choice.hpp"
#include "placement/request.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

struct LevelQuery {
    int nodes = 0;                      // nodes of this count of the job
    int unit = 1;                       // placed in whole segments of this many (1: any)
    bool segmented = false;             // --segment was given
    std::span<const int> required_in;   // per block: --nodelist nodes there; empty: none
    std::int64_t waited = 0;            // seconds the job has waited (crossing)
    std::span<const BlockIndex> prefer; // blocks of its previous allocation (fallback restart)
};

struct LevelScope {
    enum class Verdict { kFree, kConfined, kRefused };
    Verdict verdict = Verdict::kFree;
    std::vector<BlockRoom> rooms; // kConfined: the rooms the job may use
    std::string group;            // kConfined: the chosen group; "" when it may span the cluster
    Reason reason = Reason::kNoGroupFits;
    LevelRefusal refusal;              // kRefused
    bool topology_unavailable = false; // kRefused: never satisfiable as asked
};

// `rooms`: what the block choice would see (blocks the request may not use
// are absent), in block order.
LevelScope confine_to_levels(const Topology& topo, const std::vector<BlockRoom>& rooms, const LevelQuery& q);

// Whether confine_to_levels may confine this count of the job (false: it
// answers kFree without reading the rooms).
bool levels_may_confine(const Topology& topo, const LevelQuery& q);

// A rung of the hierarchy's ladder (model/ladder.hpp) one of whose groups
// must offer this count of the job every node it takes, on at most
// `children` of the group's children (0: any): the rung that
// confine_to_levels confines it to or refuses it at, when it may not cross
// to a higher one (no crossing yet) and names no --nodelist nodes. nullopt
// where no rung is certain (levels do not confine it, or it may cross).
// For bounds that rule out a placement without asking (engine.hpp may_place).
struct HoldingRung {
    std::size_t rung = 0;
    long children = 0;
};
std::optional<HoldingRung> holding_rung(const Topology& topo, const LevelQuery& q);

} // namespace nvlblock
