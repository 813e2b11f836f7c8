// SPDX-License-Identifier: GPL-2.0-or-later
//
// What a topology change at run time did, or why it was refused, as the
// sentence slurmctld logs and `scontrol update` shows
// (core/topology_change.hpp decides; this only words it).
#pragma once

#include "core/topology_change.hpp"

#include <string>

namespace nvlblock {

// `now`: the planner's topology after the change was asked for (the new one
// when it changed; otherwise the one it was refused or found unchanged
// against).
std::string topology_change_text(const Topology& now, const NodeAssignment& asked, const TopologyChange& c);

} // namespace nvlblock
