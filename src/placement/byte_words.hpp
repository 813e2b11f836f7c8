// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Eight node bytes at a time: the word tests the hot scans over node-sized
// byte arrays share (the tally cache's and the room index's change scans,
// availability counting, the offered-failed-node check). Speed only: each
// answers exactly what the byte-by-byte loop it replaces answers.

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nvlblock::byte_words {

constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL;
constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;

// Bytes compared per step of a change scan: eight words, a few
// instructions per 64 nodes while nothing changed.
constexpr std::size_t kChunk = 64;

inline std::uint64_t load8(const void* p) {
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
}

// Bit 7 of each byte set where that byte is not zero (any byte value: the
// addition never carries out of a byte's low seven bits).
inline std::uint64_t nonzero(std::uint64_t x) {
    return (((x & kLow7) + kLow7) | x) & kHigh;
}

// Whether kChunk bytes from a and b differ anywhere.
inline bool chunk_differs(const unsigned char* a, const unsigned char* b) {
    std::uint64_t diff = 0;
    for (std::size_t k = 0; k < kChunk; k += 8)
        diff |= load8(a + k) ^ load8(b + k);
    return diff != 0;
}

} // namespace nvlblock::byte_words
