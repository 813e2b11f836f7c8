// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/availability_counts.hpp"

#include <algorithm>
#include <cstring>

namespace nvlblock {
namespace {

constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;

std::uint64_t load8(const void* p) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
}

// Bit 7 of each byte set where that byte is not zero (any byte value).
std::uint64_t nonzero(std::uint64_t x) { return (((x & kLow7) + kLow7) | x) & kHigh; }

// Bytes whose bit 7 is set, counted (each byte of m is 0x80 or 0).
int count_marked(std::uint64_t m) { return static_cast<int>(((m >> 7) * kOnes) >> 56); }

void count_one(AvailabilityCounts& c, NodeState s, std::uint8_t avail) {
    const bool a = avail != 0;
    const bool usable = a && is_healthy(s);
    c.available += usable;
    c.preempted += usable && s != NodeState::kFree;
    c.lent_unavailable += !a && s == NodeState::kLent;
}

} // namespace

AvailabilityCounts count_available(const Block& block, std::span<const NodeState> states,
                                   std::span<const std::uint8_t> available) {
    AvailabilityCounts c;
    if (!block.contiguous) {
        for (NodeIndex n : block.nodes)
            count_one(c, states[n], available[n]);
        return c;
    }
    const std::size_t first = block.first, end = first + block.nodes.size();
    // NodeState is one byte; states are read eight at a time as bytes. A
    // block's last word may reach into the next block (racks of 18 nodes:
    // 8 + 8 + 2): its extra bytes are masked off, as long as the arrays
    // hold eight bytes from there.
    const auto* st = reinterpret_cast<const unsigned char*>(states.data());
    const std::size_t limit = std::min(states.size(), available.size());
    std::size_t i = first;
    for (; i < end && i + 8 <= limit; i += 8) {
        const std::size_t len = std::min<std::size_t>(8, end - i);
        const std::uint64_t keep = len == 8 ? ~0ULL : (1ULL << (8 * len)) - 1;
        const std::uint64_t s = load8(st + i) & keep;
        if (s & ~(kOnes * 7)) { // a value outside 0-7: count these one by one
            for (std::size_t k = i; k < i + len; ++k)
                count_one(c, states[k], available[k]);
            continue;
        }
        static_assert(static_cast<int>(NodeState::kFree) == 0 && static_cast<int>(NodeState::kLent) == 2 &&
                          static_cast<int>(NodeState::kDown) == 3 && static_cast<int>(NodeState::kDrained) == 4,
                      "the word arithmetic below reads these values");
        const std::uint64_t avail = nonzero(load8(available.data() + i) & keep);
        // Healthy: 0-2; adding 0x7d sets bit 7 from 3 up (values are below 8, so no carry).
        const std::uint64_t unhealthy = ((s + kOnes * 0x7d) & kHigh);
        // States 5-7 are not node states; is_healthy() counts them healthy.
        const std::uint64_t beyond = ((s + kOnes * 0x7b) & kHigh);
        const std::uint64_t healthy = (~unhealthy | beyond) & kHigh;
        const std::uint64_t usable = avail & healthy;
        // Masked-off bytes read as state 0 and not available: never lent, never usable.
        const std::uint64_t lent = ~nonzero(s ^ (kOnes * 2)) & kHigh;
        c.available += count_marked(usable);
        c.preempted += count_marked(usable & nonzero(s));
        c.lent_unavailable += count_marked(~avail & lent & kHigh);
    }
    for (; i < end; ++i)
        count_one(c, states[i], available[i]);
    return c;
}

} // namespace nvlblock
