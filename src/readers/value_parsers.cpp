// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/value_parsers.hpp"

#include "readers/slurm_syntax.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

namespace nvlblock {
namespace {

using slurm_syntax::lower;

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

} // namespace

int parse_int(const std::string& s, int min, int max) {
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
        throw ValueError("'" + s + "' is not a whole number");
    if (v < min || v > max)
        throw ValueError(std::to_string(v) + " is out of range (" + std::to_string(min) + " to " + std::to_string(max) +
                         ")");
    return v;
}

bool parse_bool(const std::string& s) {
    const std::string l = lower(s);
    if (l == "true" || l == "yes" || l == "on")
        return true;
    if (l == "false" || l == "no" || l == "off")
        return false;
    throw ValueError("'" + s + "' is not true or false");
}

std::int64_t parse_duration_seconds(const std::string& s) {
    if (s.empty())
        throw ValueError("empty duration");
    std::int64_t factor = 1;
    std::string digits = s;
    switch (std::tolower(static_cast<unsigned char>(s.back()))) {
    case 's':
        digits.pop_back();
        break;
    case 'm':
        factor = 60;
        digits.pop_back();
        break;
    case 'h':
        factor = 3600;
        digits.pop_back();
        break;
    case 'd':
        factor = 24 * 3600;
        digits.pop_back();
        break;
    default:
        break;
    }
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v < 0)
        throw ValueError("'" + s + "' is not a duration (seconds, or a number with s, m, h or d)");
    if (v > 10'000'000)
        throw ValueError("'" + s + "' is too long a duration");
    return v * factor;
}

double parse_fraction(const std::string& s) {
    std::string t = s;
    bool percent = !t.empty() && t.back() == '%';
    if (percent)
        t.pop_back();
    double v = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || end != t.data() + t.size())
        throw ValueError("'" + s + "' is not a fraction (e.g. 0.5 or 50%)");
    if (percent)
        v /= 100.0;
    if (!(v > 0.0 && v <= 1.0))
        throw ValueError("'" + s + "' must be above 0 and at most 1 (100%)");
    return v;
}

std::string parse_name(const std::string& s) {
    if (s.empty())
        throw ValueError("empty name");
    for (char c : s)
        if (std::isspace(static_cast<unsigned char>(c)) || c == '=' || c == ',' || c == '[' || c == ']')
            throw ValueError("'" + s + "' contains '" + std::string(1, c) +
                             "'; names may not contain blanks, '=', ',' or brackets");
    return s;
}

std::optional<std::string> closest_word(const std::string& word, const std::set<std::string>& allowed) {
    std::optional<std::string> best;
    std::size_t best_d = 3; // at most two edits away
    for (const auto& a : allowed) {
        std::size_t d = edit_distance(lower(word), lower(a));
        if (d < best_d) {
            best_d = d;
            best = a;
        }
    }
    return best;
}

std::string join(const std::set<std::string>& words, const char* sep) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty())
            out += sep;
        out += w;
    }
    return out;
}

} // namespace nvlblock
