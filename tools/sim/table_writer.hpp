// SPDX-License-Identifier: GPL-2.0-or-later
//
// The human summary: one column per policy, one row per metric.
#pragma once

#include "results.hpp"
#include "run_info.hpp"

#include <iosfwd>
#include <vector>

namespace nvlblock::sim {

void write_table(std::ostream& out, const RunInfo& run, const std::vector<PolicyResult>& results);

} // namespace nvlblock::sim
