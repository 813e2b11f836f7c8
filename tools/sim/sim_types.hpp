// SPDX-License-Identifier: GPL-2.0-or-later
//
// Plain data shared by the simulator's parts: simulated time, the jobs of a
// workload as submitted (before any policy maps them onto nodes).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace nvlblock::sim {

// Simulated time and durations, in whole seconds from the start of the trace.
using Seconds = std::int64_t;
inline constexpr Seconds kNever = std::numeric_limits<Seconds>::max() / 4;

// GPUs in one slice of the large-job mix (16 nodes of 4 GPUs): the unit in
// which slice jobs state their demand, whatever slice a policy carves.
inline constexpr std::uint32_t kNominalSliceNodes = 16;

enum class JobKind : std::uint8_t {
    kTrace, // a literal request: `nodes` nodes for `duration` seconds under every policy
    kSlice, // `slices` NVLink-domain segments of work; node count and run time depend on the policy
};

struct JobSpec {
    std::string name; // job_id column of the trace, or a generated name
    Seconds submit = 0;
    JobKind kind = JobKind::kTrace;
    std::uint32_t nodes = 1;  // kTrace: nodes requested
    std::uint32_t slices = 0; // kSlice: segments requested
    std::uint32_t gpus_per_node = 4;
    // kTrace: run time. kSlice: run time on 16-node (64-GPU) slices; a policy
    // with another slice size runs it for duration * 16 / slice (same GPU-hours).
    Seconds duration = 0;
    bool preemptible = false; // submitted in the preemptible QOS
    bool closed_loop = false; // submitted by the saturating generator (kept topped up)

    // GPUs the job asks for, independent of the policy: the size class of its wait.
    std::uint32_t nominal_gpus() const {
        return kind == JobKind::kSlice ? slices * kNominalSliceNodes * gpus_per_node : nodes * gpus_per_node;
    }
    const char* qos() const { return preemptible ? "scavenger" : "normal"; }
};

} // namespace nvlblock::sim
