// SPDX-License-Identifier: GPL-2.0-or-later
#include "units.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace nvlblock::sim {

double parse_number(const std::string& text, const std::string& what) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || !std::isfinite(v) || v < 0)
        throw ParseError(what + ": '" + text + "' is not a non-negative number");
    return v;
}

double parse_duration(const std::string& text, char default_unit, const std::string& what) {
    if (text.empty())
        throw ParseError(what + ": empty duration");
    std::string number = text;
    char unit = default_unit;
    const char last = text.back();
    if (last == 's' || last == 'm' || last == 'h' || last == 'd') {
        unit = last;
        number = text.substr(0, text.size() - 1);
    }
    char* end = nullptr;
    const double v = std::strtod(number.c_str(), &end);
    if (number.empty() || *end || !std::isfinite(v) || v < 0)
        throw ParseError(what + ": '" + text + "' is not a duration (a number with an optional unit s, m, h or d)");
    switch (unit) {
    case 'm':
        return v * 60.0;
    case 'h':
        return v * 3600.0;
    case 'd':
        return v * 86400.0;
    default:
        return v;
    }
}

Seconds parse_seconds(const std::string& text, char default_unit, const std::string& what) {
    const double v = parse_duration(text, default_unit, what);
    if (v > 1e15)
        throw ParseError(what + ": '" + text + "' is too long");
    return static_cast<Seconds>(std::llround(v));
}

std::string format_duration(double s) {
    char buf[32];
    if (s >= 86400 * 999.5) // whole days: %.3g would write 1.1e+03d
        std::snprintf(buf, sizeof buf, "%.0fd", s / 86400);
    else if (s >= 86400 * 2)
        std::snprintf(buf, sizeof buf, "%.3gd", s / 86400);
    else if (s >= 3600)
        std::snprintf(buf, sizeof buf, "%.3gh", s / 3600);
    else if (s >= 60)
        std::snprintf(buf, sizeof buf, "%.3gm", s / 60);
    else
        std::snprintf(buf, sizeof buf, "%.0fs", s);
    return buf;
}

} // namespace nvlblock::sim
