// SPDX-License-Identifier: GPL-2.0-or-later
//
// The recovery log as the operator reads it, for tests: the notes taken from
// a planner or a ledger, worded by writers/recovery_log_text.hpp.
#pragma once

#include "core/planner.hpp"
#include "writers/recovery_log_text.hpp"

#include <string>
#include <vector>

namespace nvlblock::test {

inline std::vector<std::string> log_lines(Planner& p) {
    return recovery_log_lines(p.take_log());
}

// The ledger's notes, all made on `topo`.
inline std::vector<std::string> log_lines(Ledger& ledger, const Topology& topo) {
    std::vector<std::string> out;
    for (const RecoveryNote& n : ledger.take_notes())
        out.push_back(recovery_log_line(topo, n));
    return out;
}

} // namespace nvlblock::test
