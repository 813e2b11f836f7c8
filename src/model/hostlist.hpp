// SPDX-License-Identifier: GPL-2.0-or-later
//
// Slurm hostlist expressions: "gb[0001-0018]", "gb[001-016,018]",
// "a[1-2],b7", "rack[1-2]-n[01-18]" (several brackets expand as a product).
// Our own implementation, written so the core needs no Slurm library.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nvlblock::hostlist {

// The expression is not a valid hostlist; what() says what is wrong and where.
class HostlistError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// Largest expansion we accept: far above any real cluster, low enough that a
// typo such as "n[1-99999999]" is an error rather than an out-of-memory.
// The long fuzzing runs lower it (test/fuzz/run, FUZZ_MAX_HOSTS): near 2^20
// names an input costs seconds under ASan, and the fuzzer would spend its
// time expanding instead of exploring the parsers.
#ifndef NVLBLOCK_MAX_HOSTS
#define NVLBLOCK_MAX_HOSTS (1u << 20)
#endif
inline constexpr std::size_t kMaxHosts = NVLBLOCK_MAX_HOSTS;

// Expand into host names, in the order written. Duplicates are kept (callers
// report them with context). Throws HostlistError.
std::vector<std::string> expand(std::string_view expr);

// The shortest ranged form of names in their given order, e.g.
// {gb01, gb02, gb03, gb07} -> "gb[01-03,07]". Consecutive names with the same
// prefix, suffix and digit width are merged; order is preserved.
std::string compress(const std::vector<std::string>& names);

} // namespace nvlblock::hostlist
