// SPDX-License-Identifier: GPL-2.0-or-later
//
// One entry point for every consumer (plugin, tools, simulator): read a file
// in either format, validate it and index it against slurm.conf's nodes.
#pragma once

#include "model/topology.hpp"

#include <string>
#include <vector>

namespace nvlblock {

// YAML if the name ends in .yaml/.yml, topology.conf syntax otherwise.
SourceFormat guess_format(const std::string& path);

std::string read_text_file(const std::string& path); // throws ConfigError{path: ...}

// "/etc/slurm/slurm.conf" -> "/etc/slurm", "/x" -> "/", "x" -> ".".
std::string dirname_of(const std::string& path);
// `name` as a file next to `dir`: itself when absolute, else "dir/name"
// ("/name" when dir is "/"). How every Include and companion file resolves.
std::string path_in(const std::string& dir, const std::string& name);

// `slurm_release`: the Slurm release whose topology/block rules apply where
// releases differ (topology.hpp); it is kept in the spec's ClusterPolicy.
TopologySpec read_topology_spec(const std::string& path, int slurm_release = kDefaultSlurmRelease);
TopologySpec read_topology_spec_text(const std::string& text, const std::string& label, SourceFormat format,
                                     const std::string& base_dir = ".", int slurm_release = kDefaultSlurmRelease);

// Read, validate and index; `universe` as for build_topology(). Throws ConfigError.
Topology load_topology(const std::string& path, const std::vector<std::string>* universe = nullptr,
                       int slurm_release = kDefaultSlurmRelease);

} // namespace nvlblock
