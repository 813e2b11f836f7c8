// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/reclaim_history.hpp"

#include <algorithm>

namespace nvlblock {

void ReclaimHistory::record(ReclaimMove m, std::int64_t keep_seconds) {
    const std::int64_t horizon = m.at - std::max(keep_seconds, kDay);
    while (!moves_.empty() && moves_.front().at < horizon)
        moves_.pop_front();
    moves_.push_back(m);
}

bool ReclaimHistory::moved_since(std::uint32_t job, std::int64_t since) const {
    return std::any_of(moves_.begin(), moves_.end(),
                       [&](const ReclaimMove& m) { return m.victim == job && m.at >= since; });
}

std::size_t ReclaimHistory::moves_since(std::int64_t since) const {
    return static_cast<std::size_t>(
        std::count_if(moves_.begin(), moves_.end(), [&](const ReclaimMove& m) { return m.at >= since; }));
}

std::size_t ReclaimHistory::moves_for_user_since(std::uint32_t user, std::int64_t since) const {
    return static_cast<std::size_t>(std::count_if(
        moves_.begin(), moves_.end(), [&](const ReclaimMove& m) { return m.for_user == user && m.at >= since; }));
}

} // namespace nvlblock
