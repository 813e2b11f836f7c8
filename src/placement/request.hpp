// SPDX-License-Identifier: GPL-2.0-or-later
//
// A placement request and the engine's answer. Plain data, no Slurm types,
// no sentences: writers/explain.hpp words an answer for users.
#pragma once

#include "model/topology.hpp"
#include "placement/refusal.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// A job that lost nodes to a failure and is to restart on the same block(s):
// per block, the nodes it needs there and the healthy nodes it had there.
struct RecoveryNeed {
    BlockIndex block = kNoBlock;
    std::uint32_t need = 0;               // nodes the job had on this block
    std::uint32_t lost = 0;               // of which failed
    std::vector<NodeIndex> prior_healthy; // the others, preferred on restart
};

struct RecoveryClaim {
    std::uint32_t job_id = 0;
    std::int64_t deadline = 0; // after this the block is no longer held (fallback)
    std::vector<RecoveryNeed> blocks;

    std::uint32_t total_need() const {
        std::uint32_t n = 0;
        for (const auto& b : blocks)
            n += b.need;
        return n;
    }
};

struct Request {
    std::uint32_t job_id = 0;
    std::uint32_t min_nodes = 1;
    std::uint32_t max_nodes = 1; // -N min-max; equal to min_nodes otherwise
    std::uint32_t segment = 0;   // --segment; 0 when not given
    bool exclusive_topo = false; // --exclusive=topo
    bool preemptible = false;    // may run on lent spares
    std::int64_t time_limit = 0; // seconds; 0: none known
    // Per node, non-zero when this request may use the node now (Slurm's
    // node_map: partition, features, availability, preemption). Empty: every
    // node whose state is free.
    std::span<const std::uint8_t> available;
    std::vector<NodeIndex> required; // --nodelist
    MultiSegmentNodelist multi_segment_nodelist = MultiSegmentNodelist::kUnsupported;
    // Set when the job is restarting after a failure (see Planner, which
    // fills it from its ledger); the engine then places it in place.
    std::optional<RecoveryClaim> recovery;
    // Seconds the job has waited to start (a level may be crossed after
    // hierarchy.crossing), and, for a fallback restart, the blocks it had
    // (its own groups are preferred). Both set by the Planner.
    std::int64_t waited = 0;
    std::vector<BlockIndex> prefer_blocks;
};

enum class Reason {
    kPlaced,
    kNotInTopology,       // no block node is available: schedule without topology
    kInvalidRequest,      // e.g. min > max, zero nodes
    kSegmentNotDivisor,   // node count not a multiple of --segment
    kSegmentTooLarge,     // --segment larger than every block's slice
    kTooLarge,            // more nodes than the healthy topology has room for
    kRequiredUnavailable, // a --nodelist node cannot be used now
    kSparesWithheld,      // would fit if spares were used; they are kept for recovery
    kNoBlockFits,         // not enough free capacity now
    kExclusiveNoBlock,    // --exclusive=topo needs blocks with no other work
    kRecoveryWaiting,     // in-place restart: waiting for the job's own block
    kNoGroupFits,         // no group of the job's level (above the blocks) can take it now
};

const char* reason_name(Reason r);

struct Placement {
    Reason reason = Reason::kNoBlockFits;
    std::vector<NodeIndex> nodes;       // sorted; empty unless placed
    Refusal why;                        // refused: the facts (writers/explain.hpp says them)
    std::uint32_t blocks = 0;           // placed: the blocks it was placed on
    std::uint32_t blocks_if_spares = 0; // blocks that would fit if spares were used
    bool recovery_in_place = false;     // placed on the job's previous block(s)
    std::uint32_t spares_used = 0;      // for recovery: nodes beyond its prior healthy ones
    std::vector<Shortfall> shortfalls;  // recovery_waiting: the blocks that cannot take it back now
    // recovery_waiting, a job on several blocks: the nodes its own blocks lack
    // in all once whole segments are shifted between them (0 when a block is down).
    std::uint32_t own_blocks_short_by = 0;
    // Refused for good as asked (Slurm's ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE:
    // "Requested topology configuration is not available" at submission).
    bool topology_unavailable = false;
    std::string group; // placed: the group above the blocks it was confined to, if any

    bool placed() const { return reason == Reason::kPlaced; }
};

} // namespace nvlblock
