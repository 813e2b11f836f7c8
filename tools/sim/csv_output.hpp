// SPDX-License-Identifier: GPL-2.0-or-later
//
// --csv: the time series, one row per policy and bucket (long format):
//   policy,t_start_s,t_end_s,healthy_nodes,busy_nodes,busy_preemptible_nodes,
//   idle_nodes,stranded_nodes,useful_nodes,pending_jobs,running_jobs,utilization,goodput
// Node and job columns are means over the bucket; utilization = busy /
// healthy and goodput = useful / healthy within the bucket.
#pragma once

#include "results.hpp"

#include <iosfwd>
#include <vector>

namespace nvlblock::sim {

void write_series_csv(std::ostream& out, const std::vector<PolicyResult>& results);

} // namespace nvlblock::sim
