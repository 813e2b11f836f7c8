// SPDX-License-Identifier: GPL-2.0-or-later
#include "progress.hpp"

#include <algorithm>
#include <cstdio>

namespace nvlblock::sim {

ProgressBar::ProgressBar(bool enabled, std::size_t parts)
    : enabled_(enabled), done_(parts, 0.0), start_(std::chrono::steady_clock::now()), last_(start_) {}

ProgressBar::~ProgressBar() {
    finish();
}

void ProgressBar::update(std::size_t part, double fraction) {
    if (!enabled_)
        return;
    std::lock_guard lock(mutex_);
    done_[part] = std::clamp(fraction, 0.0, 1.0);
    draw(false);
}

void ProgressBar::draw(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100))
        return;
    last_ = now;
    double sum = 0;
    for (double d : done_)
        sum += d;
    const double f = done_.empty() ? 1.0 : sum / static_cast<double>(done_.size());
    const int width = 40, filled = static_cast<int>(f * width);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(width, '.');
    const double secs = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr, "\r[%s] %5.1f%%  %.1f s", bar.c_str(), 100 * f, secs);
    std::fflush(stderr);
    drawn_ = true;
}

void ProgressBar::finish() {
    if (!enabled_ || !drawn_)
        return;
    std::lock_guard lock(mutex_);
    std::fprintf(stderr, "\r%*s\r", 60, "");
    std::fflush(stderr);
    drawn_ = false;
}

} // namespace nvlblock::sim
