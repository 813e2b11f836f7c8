// SPDX-License-Identifier: GPL-2.0-or-later
//
// Durations on the command line and in failure models: a number with an
// optional unit, s, m, h or d ("980h", "30m", "3600"). A bare number is in
// the unit the caller names.
#pragma once

#include "sim_types.hpp"

#include <stdexcept>
#include <string>

namespace nvlblock::sim {

class ParseError : public std::invalid_argument {
  public:
    using std::invalid_argument::invalid_argument;
};

// Seconds, as a real number. Throws ParseError naming `what`.
double parse_duration(const std::string& text, char default_unit, const std::string& what);
// Whole seconds, rounded to the nearest second.
Seconds parse_seconds(const std::string& text, char default_unit, const std::string& what);
// A non-negative real number. Throws ParseError naming `what`.
double parse_number(const std::string& text, const std::string& what);

// "12h", "3.5d", "45s": a short human form of a duration.
std::string format_duration(double seconds);

} // namespace nvlblock::sim
