// SPDX-License-Identifier: GPL-2.0-or-later
//
// Nodes and blocks by name, in the forms Slurm and nvlblock's files use:
// a node list as a host list expression, block names in a comma list.
// Names, not sentences: the saved state, log lines and reports all use them.
#pragma once

#include "model/topology.hpp"

#include <span>
#include <string>
#include <vector>

namespace nvlblock {

// A node list as a host list expression ("gb[0019-0021]"); "-" when empty.
std::string hostlist_of(const Topology& topo, std::span<const NodeIndex> nodes);
// The names of the blocks of `nodes`, each once, in order of first appearance.
std::vector<std::string> block_names(const Topology& topo, std::span<const NodeIndex> nodes);
// Names comma-separated ("rack01,rack02"); "-" when none.
std::string comma_list(const std::vector<std::string>& names);
// Blocks as a host list of their names ("rack[01-08]"): the name of a
// group nvlblock.yaml does not name.
std::string block_hostlist(const Topology& topo, std::span<const BlockIndex> blocks);
// comma_list(block_names(topo, nodes)).
std::string blocks_of(const Topology& topo, std::span<const NodeIndex> nodes);

} // namespace nvlblock
