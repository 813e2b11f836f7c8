// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// How long slurmctld's nvlblock thread held Slurm's job, node and partition
// write locks for its reclaim passes (plugin/topology/status_thread.c times
// each; docs/performance.md "The reclaim pass"): a fact about this process,
// reported (status JSON, Prometheus), never saved, never used to decide.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace nvlblock {

struct ReclaimPassTimes {
    std::uint64_t passes = 0;     // passes that took the locks
    std::uint64_t recoveries = 0; // open recoveries those passes looked at, in all
    std::uint64_t held_us_total = 0;
    std::uint64_t held_us_max = 0; // the longest single pass
    // CPU time the holding thread used meanwhile: the pass's own work. On a
    // loaded host the wall-clock hold is longer by the time it waited for a
    // CPU (the locks are held all the same, so both are reported).
    std::uint64_t cpu_us_total = 0;
    std::uint64_t cpu_us_max = 0;

    void note(std::int64_t held_us, std::int64_t cpu_us, std::size_t recoveries_looked_at) {
        const auto us = static_cast<std::uint64_t>(std::max<std::int64_t>(0, held_us));
        const auto cpu = static_cast<std::uint64_t>(std::max<std::int64_t>(0, cpu_us));
        ++passes;
        recoveries += recoveries_looked_at;
        held_us_total += us;
        held_us_max = std::max(held_us_max, us);
        cpu_us_total += cpu;
        cpu_us_max = std::max(cpu_us_max, cpu);
    }
};

} // namespace nvlblock
