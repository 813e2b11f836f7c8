// SPDX-License-Identifier: GPL-2.0-or-later
//
// The lexical rules of Slurm's configuration files (slurm.conf,
// topology.conf), as Slurm's own parser applies them: '#' starts a comment
// unless escaped ("\#"), an odd run of trailing backslashes continues the
// line, "\x" stands for "x", keys are case-insensitive, values are words or
// "quoted text", "Include FILE" pulls in another file. Shared by the
// topology.conf reader and the tools' slurm.conf reader (tools/common).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvlblock::slurm_syntax {

// Include files may include others; this bounds a cycle.
inline constexpr int kMaxIncludeDepth = 10;

struct LogicalLine {
    std::string text; // comments removed, continuations joined, escapes resolved
    unsigned line;    // first physical line, 1-based
};

std::vector<LogicalLine> logical_lines(const std::string& text);

bool is_space(char c);
bool only_space(std::string_view s);
std::string_view skip_space(std::string_view s); // leading white space removed
std::string trim(std::string_view s);            // white space removed at both ends
std::string lower(std::string s);

struct KeyValue {
    std::string key;
    std::string value;
};

// How strictly a reader takes a Key=Value pair.
struct PairRules {
    bool (*key_char)(char); // the characters a key is made of
    bool value_required;    // "Key=" with nothing after it is malformed
    bool separated;         // a "quoted value" must be followed by white space or the end
};

enum class PairScan {
    kPair,      // `kv` holds the pair and `rest` is past it
    kMalformed, // no Key=Value at the front of `rest`
    kOpenQuote, // Key="... without the closing quote
};

// One `Key=Value` or `Key="quoted value"` (white space allowed around '=')
// from the front of `rest`, after its leading white space. Only a kPair
// advances `rest`.
PairScan next_pair(std::string_view& rest, KeyValue& kv, const PairRules& rules);

// For a line that starts with "Include" (any case) and white space: what
// follows that first white-space character, else nothing.
std::optional<std::string_view> include_target(std::string_view line);

} // namespace nvlblock::slurm_syntax
