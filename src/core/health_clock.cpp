// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/health_clock.hpp"

namespace nvlblock {

bool short_of_a_slice(const Block& block, const BlockTally& tally) {
    return tally.fault || tally.size - tally.failed < block.settings.slice;
}

void HealthClock::observe(const Topology& topo, const Tallies& tallies, std::int64_t now) {
    const std::size_t n = topo.block_count();
    if (short_seconds_.size() != n || tallies.size() != n)
        reset();
    short_seconds_.resize(n, 0);
    was_short_.resize(n, false);
    for (std::size_t b = 0; b < n && b < tallies.size(); ++b) {
        if (last_ >= 0 && now > last_ && was_short_[b])
            short_seconds_[b] += now - last_;
        was_short_[b] = short_of_a_slice(topo.block(static_cast<BlockIndex>(b)), tallies[b]);
    }
    if (now > last_)
        last_ = now;
}

std::int64_t HealthClock::short_seconds(BlockIndex b) const {
    return b >= 0 && static_cast<std::size_t>(b) < short_seconds_.size() ? short_seconds_[static_cast<std::size_t>(b)]
                                                                         : 0;
}

void HealthClock::reset() {
    short_seconds_.clear();
    was_short_.clear();
    last_ = -1;
}

} // namespace nvlblock
