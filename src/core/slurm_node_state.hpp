// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one mapping from what slurmctld says of a node to what the engine
// knows of it (placement/node_state.hpp). The shim reports facts as Slurm
// keeps them, from slurmctld's node bitmaps, or, before those exist, from
// the node record read the way Slurm derives the bitmaps from it; this
// decides what the facts mean to nvlblock. Pure.
#pragma once

#include "placement/node_state.hpp"

namespace nvlblock {

// What slurmctld says of one node, as bits (the C ABI's NVLB_NODE_FACT_*).
enum SlurmNodeFact : unsigned {
    kNodeUp = 1u << 0,           // in up_node_bitmap: registered and not DOWN
    kNodeAvail = 1u << 1,        // in avail_node_bitmap: not drained, draining, failing nor silent
    kNodeIdle = 1u << 2,         // in idle_node_bitmap: no job on it
    kNodeCompleting = 1u << 3,   // in cg_node_bitmap: a job's epilog still runs
    kNodeFuture = 1u << 4,       // FUTURE: configured, not yet there
    kNodePoweredDown = 1u << 5,  // powered down or powering down
    kNodeUnregistered = 1u << 6, // not up, nor said failed: not registered since slurmctld started
    kNodeLent = 1u << 7,         // runs only preemptible work (the topology's `preemptible:`)
};

// A node that has not registered yet is busy, not failed: after a restart of
// slurmctld a rack whose job was just requeued would otherwise look wholly
// failed for a moment and its waiting job fall back. A node that is not up
// otherwise is down; up but unavailable is drained (drain, fail, not
// responding); up with a job or an epilog is busy, or lent if only
// preemptible work runs there.
NodeState node_state_from_slurm(unsigned facts);

} // namespace nvlblock
