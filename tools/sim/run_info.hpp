// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a run was: the inputs every report repeats so that a result file
// says how to reproduce it.
#pragma once

#include "world.hpp"

#include <string>

namespace nvlblock::sim {

struct RunInfo {
    std::string command;  // the command line
    std::string workload; // description
    std::string trace;    // --trace argument
    std::string failures; // description
    std::string failures_arg;
    std::uint64_t seed = 1;
    SimOptions options;
    double wall_seconds = 0; // all policies, as run (in parallel where threads > 1)
    int threads = 1;
};

const char* queue_name(QueueMode q);
const char* preemption_name(PreemptionMode p);

} // namespace nvlblock::sim
