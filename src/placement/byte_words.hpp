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

// Calls f(i) for every byte of each eight-byte word in which `now` differs
// from `had`, or (`now2` given) `now2` from `had2`; the bytes after the last
// whole chunk one by one. Every byte that differs is among them (f compares):
// a change scan that costs a few instructions per 64 bytes that did not
// change, and skips the words that did not within a chunk that did (a job's
// start or end changes a few runs of nodes, not every byte of 64).
template <class F>
void for_each_in_differing_words(const unsigned char* now, const unsigned char* had, const unsigned char* now2,
                                 const unsigned char* had2, std::size_t n, F&& f) {
    auto word_differs = [&](std::size_t k) {
        return load8(now + k) != load8(had + k) || (now2 && load8(now2 + k) != load8(had2 + k));
    };
    std::size_t i = 0;
    for (; i + kChunk <= n; i += kChunk) {
        if (!chunk_differs(now + i, had + i) && !(now2 && chunk_differs(now2 + i, had2 + i)))
            continue;
        for (std::size_t k = i; k < i + kChunk; k += 8)
            if (word_differs(k))
                for (std::size_t j = k; j < k + 8; ++j)
                    f(j);
    }
    for (; i < n; ++i)
        f(i);
}

} // namespace nvlblock::byte_words
