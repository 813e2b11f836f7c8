// SPDX-License-Identifier: GPL-2.0-or-later
//
// Slurm's topology.yaml (Slurm 25.05 and later). While that file exists
// beside slurm.conf, Slurm reads its topologies instead of TopologyPlugin= and
// topology.conf, and it knows only its built-in plugin types (block, flat,
// tree, ring, torus3d): a cluster with a topology.yaml never runs
// topology/nvlblock. `nvlblock-check --from-topology-yaml` reads the file and
// turns one of its block topologies into a topology.conf (Slurm's own block
// syntax, which nvlblock reads with topology/block's rules) and an
// nvlblock.yaml that takes its blocks from there; what cannot be carried over
// (tree, flat, ring and torus3d topologies, other block topologies, partitions
// that named a topology) is reported.
#pragma once

#include "readers/slurm_topology_yaml.hpp"
#include "slurm_conf.hpp"
#include "validate.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nvlblock::check {

using nvlblock::read_slurm_topology_yaml;
using nvlblock::SlurmTopologyYaml;

struct ConversionOptions {
    std::string topology;             // convert this topology; empty: see convert_topology_yaml
    std::string partition;            // convert the topology this partition of slurm.conf uses
    std::optional<int> slice, spares; // nvlblock.yaml defaults to write (none: topology/block behaviour)
    std::string topology_conf_name = "topology.conf"; // how nvlblock.yaml refers to it
    // Whose topology/block rules the files written are judged by (a block
    // smaller than the base size: an error before 25.05); nvlblock-check
    // passes the site's (its --slurm-release).
    int slurm_release = nvlblock::kDefaultSlurmRelease;
};

struct Conversion {
    std::string topology;      // the topology converted
    std::string topology_conf; // the texts to write; empty when an error is among findings
    std::string nvlblock_yaml;
    std::size_t blocks = 0, nodes = 0;
    std::vector<Finding> findings;

    bool ok() const;
};

// Which topology: opts.topology, else the one opts.partition uses, else the
// cluster default if it is a block topology, else the only block topology.
// `conf` (may be null) gives the nodes the blocks must name, the partitions
// that named topologies and TopologyPlugin=. The written files are loaded
// back with the readers slurmctld uses before they are returned.
Conversion convert_topology_yaml(const SlurmTopologyYaml& yaml, const ConversionOptions& opts,
                                 const tool::SlurmConf* conf);

} // namespace nvlblock::check
