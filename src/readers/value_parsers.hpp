// SPDX-License-Identifier: GPL-2.0-or-later
//
// Strict parsers for the scalar values of configuration files. They accept
// exactly what docs/config.md documents and say what was wrong otherwise
// ("'16x' is not a whole number"); the reader adds file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

namespace nvlblock {

class ValueError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

int parse_int(const std::string& s, int min, int max);
bool parse_bool(const std::string& s);                     // true/false, yes/no, on/off
std::int64_t parse_duration_seconds(const std::string& s); // 300, 300s, 5m, 1h
double parse_fraction(const std::string& s);               // 0.5 or 50%
std::string parse_name(const std::string& s);              // a block name: no blanks, '=', ',' or brackets

// The allowed word nearest to `word` by edit distance, if it is close enough
// to be a plausible typo.
std::optional<std::string> closest_word(const std::string& word, const std::set<std::string>& allowed);
std::string join(const std::set<std::string>& words, const char* sep = ", ");

} // namespace nvlblock
