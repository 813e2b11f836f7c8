// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one translation from what Slurm says of a job to the question the
// engine answers. The plugin's shim reports Slurm's facts unshaped (the node
// counts topology_eval_t or the job's details carry, --segment, --nodelist,
// --exclusive=topo, the times); every rule that shapes them, including those
// that differ between Slurm releases, is here, once, so placement
// (nvlb_place) and reclaim (nvlb_plan_reclaim) ask the same question and the
// engine never looks at the release. Pure.
#pragma once

#include "placement/request.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace nvlblock {

struct SlurmJobFacts {
    std::uint32_t job_id = 0;
    std::uint32_t min_nodes = 1;
    std::uint32_t max_nodes = 0; // Slurm's upper bound; 0: min_nodes
    std::uint32_t req_nodes = 0; // the count Slurm asks for within them; 0: not given
    std::uint32_t segment_size = 0;
    bool whole_topology = false; // --exclusive=topo or ExclusiveTopo=YES
    bool preemptible = false;    // the topology's `preemptible:` selects the job
    // Per node, non-zero where Slurm lets the job run now; empty: every free node.
    std::span<const std::uint8_t> available;
    std::vector<NodeIndex> nodelist; // --nodelist, as node indices
    std::int64_t now = 0;
    std::int64_t eligible_since = 0; // begin time, else submit time; 0: not known
};

// `release` as 2411, 2505, 2511, 2605... `candidates` receives the narrowed
// availability when the release reads the --nodelist as the job's candidates;
// the returned request points into it, so it must outlive the request.
Request request_from_slurm(const SlurmJobFacts& facts, int release, std::size_t node_count,
                           std::vector<std::uint8_t>& candidates);

} // namespace nvlblock
