// SPDX-License-Identifier: GPL-2.0-or-later
//
// Slurm's topology.conf, block syntax (topology/block): BlockName=, Nodes=,
// BlockSizes=. Same lexical rules as Slurm's own parser: case-insensitive
// keys, '#' comments ("\#" escapes), a trailing odd run of '\' continues the
// line, "Include" of further files, one top-level key per line. Same validity
// rules as topology/block in Slurm 24.11, so a file Slurm accepts we accept
// and one it rejects we reject, with file:line and what is wrong.
#pragma once

#include "model/topology.hpp"

#include <string>

namespace nvlblock {

// Blocks read from topology.conf get `defaults` as their settings, except that
// the slice defaults to the base block size and spares to 0 (plain
// topology/block behaviour) unless the caller's defaults say otherwise.
// `slurm_release`: the release whose topology/block rules apply (topology.hpp).
TopologySpec read_topology_conf(const std::string& text, const std::string& label, const std::string& base_dir = ".",
                                int slurm_release = kDefaultSlurmRelease);

} // namespace nvlblock
