// SPDX-License-Identifier: GPL-2.0-or-later
#include "csv_output.hpp"

#include <cstdio>
#include <ostream>

namespace nvlblock::sim {

void write_series_csv(std::ostream& out, const std::vector<PolicyResult>& results) {
    out << "policy,t_start_s,t_end_s,healthy_nodes,busy_nodes,busy_preemptible_nodes,idle_nodes,stranded_nodes,"
           "useful_nodes,pending_jobs,running_jobs,utilization,goodput\n";
    char buf[512];
    for (const PolicyResult& r : results)
        for (const SeriesPoint& p : r.series) {
            const double util = p.healthy > 0 ? p.busy / p.healthy : 0.0;
            const double good = p.healthy > 0 ? p.useful / p.healthy : 0.0;
            std::snprintf(buf, sizeof buf, "%s,%lld,%lld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.5f\n",
                          r.policy.name.c_str(), static_cast<long long>(p.start), static_cast<long long>(p.end),
                          p.healthy, p.busy, p.busy_preemptible, p.healthy - p.busy, p.stranded, p.useful, p.pending,
                          p.running, util, good);
            out << buf;
        }
}

} // namespace nvlblock::sim
