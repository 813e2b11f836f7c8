// SPDX-License-Identifier: GPL-2.0-or-later
//
// A progress bar on stderr for long runs: one bar for all policies (they may
// run in parallel), redrawn at most ten times a second. Off when stderr is
// not a terminal or with --quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace nvlblock::sim {

class ProgressBar {
  public:
    ProgressBar(bool enabled, std::size_t parts);
    ~ProgressBar();
    // Part `i` is `fraction` (0..1) done.
    void update(std::size_t part, double fraction);
    void finish();

  private:
    void draw(bool force);
    bool enabled_;
    std::vector<double> done_;
    std::mutex mutex_;
    std::chrono::steady_clock::time_point start_, last_;
    bool drawn_ = false;
};

} // namespace nvlblock::sim
