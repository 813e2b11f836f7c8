// SPDX-License-Identifier: GPL-2.0-or-later
//
// --plot PREFIX: PNG charts drawn by gnuplot (Debian: gnuplot-nox, pngcairo
// terminal, falling back to png). Writes PREFIX.dat (the series, one column
// per policy) and PREFIX.gp (the script, kept so a figure can be restyled
// and redrawn with `gnuplot PREFIX.gp`), then runs gnuplot to make
//   PREFIX-utilization.png  utilization of healthy nodes over time, per policy
//   PREFIX-stranded.png     stranded healthy nodes over time, per policy
//   PREFIX-goodput.png      useful work / healthy capacity over time, per policy
#pragma once

#include "results.hpp"

#include <string>
#include <vector>

namespace nvlblock::sim {

// The gnuplot script for the data file `dat`, writing PNGs under `prefix`.
std::string gnuplot_script(const std::string& prefix, const std::string& dat, const std::string& title,
                           const std::vector<PolicyResult>& results);
// Writes the files and runs gnuplot; returns an error message, empty on success.
std::string write_plots(const std::string& prefix, const std::string& title, const std::vector<PolicyResult>& results);

} // namespace nvlblock::sim
