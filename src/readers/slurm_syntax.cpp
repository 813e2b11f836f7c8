// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/slurm_syntax.hpp"

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

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
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
