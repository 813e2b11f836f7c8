// SPDX-License-Identifier: GPL-2.0-or-later
//
// Job traces in the project's CSV format (data/traces/README.md):
//   job_id,submit_s,nodes,gpus_per_node,duration_s,priority,user_vc
// Every row is a literal request (JobKind::kTrace): the same node count and
// run time under every policy. priority and user_vc are read but not used:
// the queue is ordered by submit time.
#pragma once

#include "sim_types.hpp"

#include <string>
#include <vector>

namespace nvlblock::sim {

struct TraceOptions {
    double time_scale = 1.0;    // submit times and durations are multiplied by this
    std::uint32_t max_jobs = 0; // 0: all rows
};

// Marks a share of the small jobs (at most `max_nodes` nodes) as submitted in
// the preemptible QOS, chosen by a random stream of `seed` and each job's
// position (the same jobs for every policy). Traces carry no QOS of ours.
void mark_preemptible(std::vector<JobSpec>& jobs, double share, std::uint32_t max_nodes, std::uint64_t seed);

// Rows sorted by submit time (stable: file order among equal times). Throws
// CsvError with "file:line: what is wrong".
std::vector<JobSpec> read_trace(const std::string& path, const TraceOptions& options = {});

} // namespace nvlblock::sim
