// SPDX-License-Identifier: GPL-2.0-or-later
//
// The lexical rules of Slurm's configuration files (slurm.conf,
// topology.conf), as Slurm's own parser applies them: '#' starts a comment
// unless escaped ("\#"), an odd run of trailing backslashes continues the
// line, "\x" stands for "x", keys are case-insensitive. Shared by the
// topology.conf reader and nvlblock-check's slurm.conf reader.
#pragma once

#include <string>
#include <vector>

namespace nvlblock::slurm_syntax {

struct LogicalLine {
    std::string text; // comments removed, continuations joined, escapes resolved
    unsigned line;    // first physical line, 1-based
};

std::vector<LogicalLine> logical_lines(const std::string& text);

bool is_space(char c);
std::string lower(std::string s);

} // namespace nvlblock::slurm_syntax
