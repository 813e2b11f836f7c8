// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/availability_counts.hpp"

#include "placement/byte_words.hpp"

#include <algorithm>
#include <cstring>

namespace nvlblock {
namespace {

using byte_words::kHigh;
using byte_words::kLow7;
using byte_words::kOnes;
using byte_words::load8;
using byte_words::nonzero;

// Bytes whose bit 7 is set, counted (each byte of m is 0x80 or 0).
int count_marked(std::uint64_t m) {
    return static_cast<int>(((m >> 7) * kOnes) >> 56);
}

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
        static_assert(static_cast<int>(NodeState::kFree) == 0 && static_cast<int>(NodeState::kBusy) == 1 &&
                          static_cast<int>(NodeState::kLent) == 2 && static_cast<int>(NodeState::kDown) == 3 &&
                          static_cast<int>(NodeState::kDrained) == 4,
                      "the word arithmetic below reads these values");
        // Every byte a node state (0-4; adding 0x7b sets bit 7 from 5 up)?
        // Else count these nodes one by one.
        if ((s | (s + kOnes * 0x7b)) & kHigh) {
            for (std::size_t k = i; k < i + len; ++k)
                count_one(c, states[k], available[k]);
            continue;
        }
        // Masked-off bytes read as free and not available: never counted.
        const std::uint64_t avail = nonzero(load8(available.data() + i) & keep); // bit 7
        const std::uint64_t failed = (s + kOnes * 0x7d) & kHigh;                 // 3-4: bit 7
        const std::uint64_t not_free = (s + kLow7) & kHigh;                      // 1-4: bit 7
        const std::uint64_t usable = avail & ~failed;                            // bit 7
        // Lent (2 = 0b010): bit 1 set, bit 0 clear (bit 2 is then clear too).
        const std::uint64_t lent = s & ~(s << 1) & (kOnes * 2); // bit 1
        c.available += count_marked(usable);
        c.preempted += count_marked(usable & not_free);
        c.lent_unavailable += count_marked((lent & ~(avail >> 6)) << 6);
    }
    for (; i < end; ++i)
        count_one(c, states[i], available[i]);
    return c;
}

} // namespace nvlblock
