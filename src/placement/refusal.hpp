// SPDX-License-Identifier: GPL-2.0-or-later
//
// Why the engine said no, as facts: which check refused and the numbers and
// names it saw. The engine decides and records these; writers/explain.hpp
// turns them into the sentences users read (pending reasons, log lines), so
// no English is written in src/placement and nothing parses a sentence back.
#pragma once

#include "model/topology.hpp"

#include <cstdint>
#include <string>

namespace nvlblock {

// What a --nodelist means for a job of more than one segment, as the
// release's topology/block reads it (core/slurm_request.hpp decides; a list
// that names the candidates never reaches the engine as `required`).
enum class MultiSegmentNodelist : std::uint8_t {
    kUnsupported,       // before 25.11: refused
    kMustNameEveryNode, // 25.11 and later: a list shorter than the job is refused
};

// Why an in-place restart cannot happen now, for one of the job's blocks.
struct Shortfall {
    BlockIndex block = kNoBlock;
    std::uint32_t need = 0;   // nodes the job needs there
    std::uint32_t room = 0;   // nodes it may take there now
    bool block_down = false;  // a block fault: nothing will be placed there
    std::uint32_t size = 0;   // the block's nodes
    std::uint32_t failed = 0; // of which failed now
    std::uint32_t spares = 0; // its configured spares
    std::uint32_t lent = 0;   // nodes lent to preemptible work there
};

// One rung of the hierarchy as a refusal names it: the blocks, aggregated
// blocks of 2^shift base blocks (topology.conf BlockSizes), a level of
// nvlblock.yaml (its index in Hierarchy::levels()), the whole cluster.
struct LevelRef {
    enum class Kind : std::uint8_t { kBlocks, kShift, kNamed, kCluster };
    Kind kind = Kind::kBlocks;
    int shift = 0; // kShift
    int level = 0; // kNamed
};

// Why no group of the job's level can take it (Reason::kNoGroupFits or, for
// kRequiredSpread, a request that can never be met).
struct LevelRefusal {
    enum class Kind : std::uint8_t {
        kRequiredSplit,  // the --nodelist nodes are in different groups of `rung`
        kRequiredSpread, // they are in `spread` children, more than `limit`
        kRequiredNoRoom, // with them, no group of `rung` can take `nodes` now
        kNoGroup,        // no group of `rung` can take `nodes` now (the closest: `closest`, `reach`)
        kLargerThanAll,  // `rung` is the cluster: larger than every level; the `limit` best children reach `reach`
    };
    Kind kind = Kind::kNoGroup;
    LevelRef rung, child;         // the level looked at and the one below it
    bool child_is_lowest = false; // kLargerThanAll: the only level below the cluster is `child`
    long nodes = 0;               // nodes of this count of the job
    long unit = 1;                // in whole segments of this many (1: any)
    long limit = 0;               // at most this many children (0: any)
    long spread = 0;              // kRequiredSpread: children holding required nodes
    long reach = 0;               // the most the best group (or children) hold for it now
    std::string closest;          // kNoGroup: the group with the most room, "" when none has any
    bool may_cross_later = false; // hierarchy.crossing is set and not reached yet
    std::int64_t cross_after = 0; // ...after this many seconds of waiting
    std::int64_t waited = 0;      // seconds waited so far
};

// The facts of one refusal. `kind` says which check refused; the comment of
// each names the fields it sets.
struct Refusal {
    enum class Kind : std::uint8_t {
        kNone,                // placed
        kNodeCount,           // min_nodes, max_nodes: not a valid -N
        kMapSize,             // the availability map does not match the topology
        kRequiredOutOfRange,  // a --nodelist index beyond the topology
        kRequiredOutside,     // every --nodelist node is outside the blocks
        kNodelistMixed,       // --nodelist inside and outside blocks
        kNoBlockNode,         // no block node is available to the job
        kSegmentNotDivisor,   // min_nodes, max_nodes, segment
        kSegmentTooLarge,     // segment, offered (the largest slice)
        kRequiredUnavailable, // node, node_failed
        kNodelistSegments,    // nodelist: --nodelist with more than one segment
        kLevel,               // level
        kExclusive,           // min_nodes, segment: --exclusive=topo finds no free block
        kTooLarge,            // min_nodes, segment, offered (the most the healthy blocks hold)
        kOneBlockNoRoom,      // unit, offered (the most any block offers now)
        kOneBlockSpares,      // unit; Placement::blocks_if_spares
        kSparesWithheld,      // min_nodes, segment; Placement::blocks_if_spares
        kNoRoom,              // min_nodes, segment, offered (usable nodes in whole segments)
        kRecoveryWaiting,     // Placement::shortfalls (the first names the block)
    };
    Kind kind = Kind::kNone;
    std::uint32_t min_nodes = 0, max_nodes = 0, segment = 0;
    int unit = 0;
    long offered = 0;
    NodeIndex node = 0;
    bool node_failed = false;
    MultiSegmentNodelist nodelist = MultiSegmentNodelist::kUnsupported;
    LevelRefusal level;
};

} // namespace nvlblock
