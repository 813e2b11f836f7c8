// SPDX-License-Identifier: GPL-2.0-or-later
//
// The engine decides, this writer explains: the sentences users read about
// a placement (the pending reason Slurm shows, the plugin's and the
// simulator's log lines), made from the facts the engine returns
// (placement/refusal.hpp). It reads only the model and those facts, so the
// recovery code can use it too (its fallback log names the same shortfall).
#pragma once

#include "model/topology.hpp"
#include "placement/request.hpp"

#include <string>

namespace nvlblock {

// Why `p` was refused, or where it went, as one sentence:
// "no block has 14 healthy free nodes now (the most any block offers is 10)",
// "placed on 2 blocks in su1", "restart in place: 15 prior nodes + 1 spare".
std::string explain(const Topology& topo, const Placement& p);

// Why one block cannot take a job back now:
// "rack02 has room for 15 of the 16 nodes it needs (3 failed, 2 spares)",
// "rack02 is down (block fault: 18 of 18 nodes failed)".
std::string describe_shortfall(const Topology& topo, const Shortfall& s);

// Why no group of the job's level can take it (part of explain()).
std::string describe_level_refusal(const Topology& topo, const LevelRefusal& r);

} // namespace nvlblock
