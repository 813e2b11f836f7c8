// SPDX-License-Identifier: GPL-2.0-or-later
#include "trace_reader.hpp"

#include "csv.hpp"
#include "rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace nvlblock::sim {
namespace {

long long whole(const CsvReader& r, const std::string& v, const char* column, long long min) {
    char* end = nullptr;
    const long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || x < min)
        r.fail(std::string(column) + " '" + v + "' is not a whole number >= " + std::to_string(min));
    return x;
}

} // namespace

std::vector<JobSpec> read_trace(const std::string& path, const TraceOptions& options) {
    CsvReader r(path);
    const std::size_t c_id = r.column("job_id"), c_submit = r.column("submit_s"), c_nodes = r.column("nodes"),
                      c_gpn = r.column("gpus_per_node"), c_dur = r.column("duration_s");
    std::vector<JobSpec> jobs;
    std::vector<std::string> f;
    while (r.next(f)) {
        JobSpec j;
        j.kind = JobKind::kTrace;
        j.name = f[c_id].empty() ? "row" + std::to_string(r.line()) : f[c_id];
        const long long submit = whole(r, f[c_submit], "submit_s", 0);
        j.nodes = static_cast<std::uint32_t>(whole(r, f[c_nodes], "nodes", 1));
        j.gpus_per_node = static_cast<std::uint32_t>(whole(r, f[c_gpn], "gpus_per_node", 1));
        const long long dur = whole(r, f[c_dur], "duration_s", 1);
        j.submit = static_cast<Seconds>(std::llround(static_cast<double>(submit) * options.time_scale));
        j.duration =
            std::max<Seconds>(1, static_cast<Seconds>(std::llround(static_cast<double>(dur) * options.time_scale)));
        jobs.push_back(std::move(j));
        if (options.max_jobs && jobs.size() >= options.max_jobs)
            break;
    }
    std::stable_sort(jobs.begin(), jobs.end(), [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; });
    return jobs;
}

void mark_preemptible(std::vector<JobSpec>& jobs, double share, std::uint32_t max_nodes, std::uint64_t seed) {
    constexpr std::uint64_t kPreemptible = 0x50524545; // "PREE"
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        Rng r(stream_seed(seed, kPreemptible, i));
        jobs[i].preemptible = jobs[i].nodes <= max_nodes && r.uniform() < share;
    }
}

} // namespace nvlblock::sim
