// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/slurm_syntax.hpp"

#include <algorithm>
#include <cctype>

namespace nvlblock::slurm_syntax {
namespace {

// '#' starts a comment unless preceded by an odd run of backslashes.
void strip_comment(std::string& s) {
    int backslashes = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '#' && backslashes % 2 == 0) {
            s.resize(i);
            return;
        }
        backslashes = s[i] == '\\' ? backslashes + 1 : 0;
    }
}

// An odd run of trailing backslashes (white space after it allowed) joins the
// next line; the backslash itself is removed.
bool strip_continuation(std::string& s) {
    std::size_t end = s.size();
    while (end > 0 && is_space(s[end - 1]))
        --end;
    std::size_t bs = 0;
    while (end > bs && s[end - 1 - bs] == '\\')
        ++bs;
    if (bs % 2 == 0)
        return false;
    s.resize(end - 1);
    return true;
}

// "\x" -> "x", after joining and removing comments; a lone trailing '\' goes.
std::string strip_escapes(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && ++i >= s.size())
            break;
        out += s[i];
    }
    return out;
}

} // namespace

bool is_space(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

bool only_space(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return is_space(c); });
}

std::string_view skip_space(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    return s;
}

std::string trim(std::string_view s) {
    s = skip_space(s);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return std::string(s);
}

PairScan next_pair(std::string_view& rest, KeyValue& kv, const PairRules& rules) {
    std::size_t i = 0;
    while (i < rest.size() && is_space(rest[i]))
        ++i;
    std::size_t k0 = i;
    while (i < rest.size() && rules.key_char(rest[i]))
        ++i;
    if (i == k0)
        return PairScan::kMalformed;
    std::size_t k1 = i;
    while (i < rest.size() && is_space(rest[i]))
        ++i;
    if (i >= rest.size() || rest[i] != '=')
        return PairScan::kMalformed;
    ++i;
    while (i < rest.size() && is_space(rest[i]))
        ++i;
    std::string value;
    if (i < rest.size() && rest[i] == '"') {
        std::size_t close = rest.find('"', i + 1);
        if (close == std::string_view::npos)
            return PairScan::kOpenQuote;
        value = std::string(rest.substr(i + 1, close - i - 1));
        i = close + 1;
        if (rules.separated && i < rest.size() && !is_space(rest[i]))
            return PairScan::kMalformed;
    } else {
        std::size_t v0 = i;
        while (i < rest.size() && !is_space(rest[i]))
            ++i;
        if (i == v0 && rules.value_required)
            return PairScan::kMalformed;
        value = std::string(rest.substr(v0, i - v0));
    }
    kv.key = std::string(rest.substr(k0, k1 - k0));
    kv.value = std::move(value);
    rest.remove_prefix(i);
    return PairScan::kPair;
}

std::optional<std::string_view> include_target(std::string_view line) {
    if (line.size() > 7 && lower(std::string(line.substr(0, 7))) == "include" && is_space(line[7]))
        return line.substr(8);
    return std::nullopt;
}

std::vector<LogicalLine> logical_lines(const std::string& text) {
    std::vector<LogicalLine> out;
    std::size_t pos = 0;
    unsigned physical = 0;
    while (pos < text.size()) {
        LogicalLine l{"", physical + 1};
        bool more = true;
        while (more && pos < text.size()) {
            std::size_t nl = text.find('\n', pos);
            std::string part = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
            pos = nl == std::string::npos ? text.size() : nl + 1;
            ++physical;
            if (!part.empty() && part.back() == '\r')
                part.pop_back();
            strip_comment(part);
            more = strip_continuation(part);
            l.text += part;
        }
        l.text = strip_escapes(l.text);
        out.push_back(std::move(l));
    }
    return out;
}

} // namespace nvlblock::slurm_syntax
