// SPDX-License-Identifier: GPL-2.0-or-later
//
// Hot spares inside the job, as NVIDIA's Resiliency Extension keeps them
// (ft_launcher --ft-segment=<active>, v0.6+; docs/sim.md, "Peers"): a slice
// job holds whole racks, works on `active` nodes of each and keeps the rest
// of each rack as standbys. Slurm runs it with --no-kill, so a failed node
// leaves the allocation (excise_node_from_job) and the job runs on. A failed
// standby only shrinks the rack's pool; a failed active node is replaced by a
// standby of the same rack (an NVLink domain serves a segment only from its
// own nodes) and the job restarts in the job, from its last checkpoint. When
// a rack is left with fewer than `active` healthy nodes the job cannot form
// its segments and exits: Slurm requeues it as any other failed job.
//
// This is the rule, as pure functions of the job's nodes; World applies it.
#pragma once

#include "model/topology.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace nvlblock::sim {

// The standbys of a job that starts on `nodes`: in each rack, its nodes
// beyond the first `active` in node order (which nodes is arbitrary: NVRx
// ranks them by its rendezvous, and any choice gives the same counts).
std::vector<nvlblock::NodeIndex> initial_standbys(const nvlblock::Topology& topo,
                                                  std::span<const nvlblock::NodeIndex> nodes, int active);

// What the failure of `failed` (nodes of the job) does to it.
struct InJobFailure {
    bool requeue = false;                      // a rack is left with fewer than `active` healthy nodes
    bool restart = false;                      // an active node failed: restart in the job
    std::vector<nvlblock::NodeIndex> promoted; // standbys that take failed active nodes' places
    std::size_t standbys_failed = 0;           // standbys that failed themselves
};
InJobFailure in_job_failure(const nvlblock::Topology& topo, std::span<const nvlblock::NodeIndex> nodes,
                            std::span<const nvlblock::NodeIndex> standbys, std::span<const nvlblock::NodeIndex> failed,
                            int active);

} // namespace nvlblock::sim
