// SPDX-License-Identifier: GPL-2.0-or-later
//
// Topology changes at run time (Slurm 25.05+: `scontrol update NodeName=X
// Topology=<topology>:<block>`, dynamic nodes, and every node Slurm re-applies
// from its saved node state at start-up): which change is allowed, and the
// topology it makes. One pure function over the topology, the jobs running on
// the node and the open recoveries; the Slurm plugin only translates Slurm's
// call and prints the answer (docs/placement.md, "Topology changes at run
// time").
//
// The rule:
// - A node may go into a block nvlblock already knows (by name), out of every
//   block, or back to the block nvlblock's file gives it. A block that is not
//   in the topology is refused: a new block, with its slice and spares, is
//   described in nvlblock.yaml and read at `scontrol reconfigure` (reading a
//   file there would be file I/O under slurmctld's locks).
// - Re-applying the node's current block changes nothing (generators
//   re-apply their whole assignment; Slurm's own topology/block drops the node
//   then, SchedMD/slurm PR #225).
// - Refused while it would break a job's block: the node runs a job that has
//   other nodes in the node's block (moving it would split that job across
//   blocks), or the node's block or its new block is one a job is waiting to
//   restart in place on after a node failure (the block keeps its nodes until
//   the job restarts or falls back, so the restart finds the block it had).
// - Refused when a block would be left without nodes, or smaller than its
//   slice plus its spares (the same checks as nvlblock.yaml's).
// - A node that leaves a block leaves its spare count: the block's spares
//   stay a count over the nodes it has now, nothing of the node is kept.
// - `restoring` (Slurm re-applying its saved node topology at start-up or
//   reconfigure, after nvlblock read its file): the job rules are skipped,
//   since jobs were placed, and recoveries recorded, under those very
//   assignments; an unknown block or a failed check is still refused (the
//   plugin logs it and keeps the file's block rather than stop slurmctld).
#pragma once

#include "model/topology.hpp"
#include "recovery/ledger.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// What Slurm asks for one node.
struct NodeAssignment {
    enum class Target {
        kBlock,      // into `block`
        kNone,       // out of every block (an empty unit)
        kConfigured, // back to the block of nvlblock's file (no unit: Slurm cleared the node's topology)
    };
    NodeIndex node = 0;
    std::string node_name; // Slurm's name for it (a dynamic node may be new in its slot)
    Target target = Target::kBlock;
    std::string block;
};

// A job running on the node: all of its nodes.
struct JobNodes {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes;
};

struct TopologyChange {
    enum class Outcome { kUnchanged, kChanged, kRefused };
    // Why a change was refused; writers/topology_change_text.hpp words it.
    enum class Refusal : std::uint8_t {
        kNone,
        kNodeNotInTopology,     // the node's index is past the topology's nodes
        kNoName,                // Slurm gave the node no name
        kNameIsAnotherNode,     // the name is node `count` of the topology
        kTakesABlockNodesPlace, // a new name in a slot whose node is in `block`
        kNoSuchBlock,           // the block asked for is not in the topology
        kSplitsJob,             // the node runs `job_id`, which has `count` more nodes in `block`
        kJobWaitsOnBlock,       // `job_id` waits to restart in place on `block`
        kBlockEmptied,          // `block` would have no nodes left
        kBelowSlice,            // `block` would have `count` nodes, fewer than its slice
        kBelowSliceAndSpares,   // `block` would have `count` nodes, fewer than its slice plus spares
    };
    Outcome outcome = Outcome::kUnchanged;
    Refusal refusal = Refusal::kNone;
    // The node's block before and after (kChanged; kUnchanged: where it is).
    BlockIndex from = kNoBlock, to = kNoBlock;
    BlockIndex block = kNoBlock; // the block a refusal is about
    std::uint32_t job_id = 0;
    std::size_t count = 0;
    std::optional<Topology> topology; // kChanged: the topology to use from now on
};

// `configured`: the topology as nvlblock's file gives it (for kConfigured).
// `running`: the jobs running on the node. `ledger`: the open recoveries.
TopologyChange change_node_block(const Topology& current, const Topology& configured, const NodeAssignment& asked,
                                 std::span<const JobNodes> running, const Ledger& ledger, bool restoring);

} // namespace nvlblock
