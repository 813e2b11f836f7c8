// SPDX-License-Identifier: GPL-2.0-or-later
//
// --json: one object per policy under "policies", with the run's inputs
// under "run". Names are stable and documented in docs/sim.md. Wall-clock
// figures go under "performance" only with --timing, so that the same seed
// gives byte-identical files.
#pragma once

#include "results.hpp"
#include "run_info.hpp"

#include <string>
#include <vector>

namespace nvlblock::sim {

std::string results_json(const RunInfo& run, const std::vector<PolicyResult>& results, bool timing);

} // namespace nvlblock::sim
