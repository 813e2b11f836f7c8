// SPDX-License-Identifier: GPL-2.0-or-later
//
// A small deterministic random number generator (splitmix64) with the two
// draws the simulator needs. Written out rather than taken from <random> so
// that a seed gives the same numbers with every compiler and library: the
// standard distributions are not specified bit for bit.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace nvlblock::sim {

class Rng {
  public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1), 53 bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Exponential with the given mean.
    double exponential(double mean) { return -mean * std::log1p(-uniform()); }
    // Uniform integer in [lo, hi].
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return lo + next() % (hi - lo + 1); }

  private:
    std::uint64_t state_;
};

// A seed for an independent stream: (seed, stream kind, index) -> seed.
inline std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t kind, std::uint64_t index) {
    Rng r(seed ^ (kind * 0xd6e8feb86659fd93ULL));
    r.next();
    Rng s(r.next() ^ (index * 0x9e3779b97f4a7c15ULL + 0x632be59bd9b4e019ULL));
    s.next();
    return s.next();
}

// FNV-1a: a stable index for a job name (std::hash differs between libraries).
inline std::uint64_t name_index(const std::string& name) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : name) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return h;
}

} // namespace nvlblock::sim
