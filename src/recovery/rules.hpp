// SPDX-License-Identifier: GPL-2.0-or-later
//
// The rules of in-place recovery (docs/placement.md rules 3b, 5, 6 and 7), as
// pure functions. Whoever must decide one of these questions (the Slurm
// plugins through the C ABI, the simulator, the Planner) asks here; nothing
// else in the tree answers them:
//   (which failures count, and which requeues are recoveries, are
//   job_end.hpp's: they read the event Slurm reports at a job's end)
//   - whether a failed job earns a hold on its block(s);
//   - the clock: how long Slurm keeps a requeued job from starting, how long
//     its nodes are held, when it stops waiting for its block;
//   - block faults (a whole block down);
//   - what a job needs back per block, with repaired nodes counted as its own;
//   - whether a restart was in place.
// The state that moves with time (records, fallbacks) is recovery.hpp's.
#pragma once

#include "model/topology.hpp"
#include "placement/block_fault.hpp"
#include "placement/node_state.hpp"
#include "placement/request.hpp"
#include "placement/snapshot.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

struct RecoveryRecord;

// ---- Hold or not -----------------------------------------------------------------

// A job earns a hold on its block(s) when it lost block nodes and had at
// least two of them: a single-node job needs no NVLink domain, and holding
// spares for it would only take them from the multi-node jobs they exist for.
// `nodes` and `failed`: its block nodes and the failed ones among them.
bool earns_hold(std::span<const NodeIndex> nodes, std::span<const NodeIndex> failed);

// ---- The clock -------------------------------------------------------------------

// Seconds a scheduling pass may take to reach a requeued job once Slurm lets
// it run again: the failed job's nodes stay held this much longer than
// Slurm's own requeue delay (KillWait + cred_expire + 1).
inline constexpr std::int64_t kRequeueSchedulingSlack = 30;

// How long a failed job's nodes are held at least: Slurm's requeue delay
// (seconds after the job's end before it lets the job start: its nodes
// complete for up to KillWait, then cred_expire + 1) plus the scheduling slack.
std::int64_t hold_delay(std::int64_t slurm_requeue_delay);

// How long the job waits for its block before it is placed anywhere: the
// topology's recovery.wait; but a job whose blocks all reclaim their spares
// (rule 3b) waits only for the hold delay, since holding its nodes idle
// longer is the cost reclaiming exists to avoid.
std::int64_t wait_after_failure(const Topology& topo, std::span<const NodeIndex> nodes, std::int64_t hold_delay);

// Whether the record's nodes are held at `now`.
bool holds_at(const RecoveryRecord& r, std::int64_t now);
// Whether the job's wait for its block is over at `now` (a block fault ends
// it too: see any_block_down).
bool wait_over(const RecoveryRecord& r, std::int64_t now);

// ---- Needs, repair, in place --------------------------------------------------

// What the job needs back, per block: its nodes there, of which its own
// healthy ones (prior nodes, and failed nodes repaired since: a repaired
// node goes back to its job, rule 6) and the rest it must take from spares.
// `states`: the nodes' states now (a prior node that has failed since the
// requeue is lost too), or empty to count the record's failed nodes as
// still failed.
RecoveryClaim claim_for(const Topology& topo, const RecoveryRecord& r, std::span<const NodeState> states);
// Adds one of the job's nodes to a claim, under its block: lost, or its own
// to come back to.
void claim_node(const Topology& topo, RecoveryClaim& claim, NodeIndex n, bool lost);

// How many nodes the blocks of `had` (a recovering job's nodes when its
// failure hit: its claim's blocks, and its need, one per node) are short of
// its need: it counts every node of them that could be offered (with a map,
// an offered one; without, one neither failed nor running ordinary work),
// more than a restart in place can take, so while it is short the restart
// cannot be placed. Each node freed raises the count by at most one. Asks
// nothing of the claim, which costs allocations per node. (The simulator's
// speed only: Planner::bound_shortfall.)
long in_place_shortfall(const Topology& topo, std::span<const NodeIndex> had, std::span<const NodeState> states,
                        std::span<const std::uint8_t> available);

// Whether any of the claim's blocks is down as a whole (rule 7): its job
// goes elsewhere at once.
bool any_block_down(const Snapshot& snap, const RecoveryClaim& claim);

// A restart is in place when the job runs again on the same number of nodes,
// all on blocks it had (its own NVLink domains; which nodes there may differ).
bool restarted_in_place(const Topology& topo, std::span<const NodeIndex> before, std::span<const NodeIndex> after);

} // namespace nvlblock
