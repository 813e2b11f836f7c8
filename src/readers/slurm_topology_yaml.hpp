// SPDX-License-Identifier: GPL-2.0-or-later
//
// Slurm's topology.yaml format (Slurm 25.05 and later): a list of named
// topologies, each of one plugin type (block, flat, tree, ring, torus3d).
// Slurm reads only its built-in types from it, so topology/nvlblock cannot be
// named there; nvlblock.yaml takes a block topology's blocks from such a file
// kept under another name (`topology_yaml:`, `topology_name:`), which a site's
// generator keeps writing. The block stanzas mean what they mean to
// topology/block: block_topology_conf() transcribes one into Slurm's block
// syntax for the topology.conf reader, which applies topology/block's rules,
// and maps every problem back to the YAML's own lines.
#pragma once

#include "common/diagnostic.hpp"
#include "model/topology.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace nvlblock {

struct SlurmTopologyYaml {
    struct Block {
        std::string name;
        std::string nodes; // hostlist expression, as written
        SourceLocation where;
    };
    struct Topology {
        std::string name;
        bool cluster_default = false;
        std::string type; // block, flat, tree, ring or torus3d
        SourceLocation where;
        std::vector<std::uint32_t> block_sizes; // block only
        SourceLocation block_sizes_where;
        std::vector<Block> blocks; // block only
    };
    std::string path;
    std::vector<Topology> topologies; // file order
    std::vector<Diagnostic> warnings; // accepted, but worth reading (unknown keys)

    // The topology of partitions without Topology=: the first with
    // cluster_default: true, else the first one (Slurm's rule). Null if none.
    const Topology* cluster_default() const;
    const Topology* find(const std::string& name) const;
};

// Throws ConfigError with every problem, file:line.
SlurmTopologyYaml read_slurm_topology_yaml(const std::string& text, const std::string& label);

// The names of the file's block topologies, "a, b", or "none".
std::string block_topology_names(const SlurmTopologyYaml& yaml);

// Which block topology nvlblock takes: `wanted` if named, else the cluster
// default if it is a block topology, else the only block topology. Throws
// ConfigError (file:line) when there is none to take; `notes` receives why
// the choice was made where the file does not say (its default is not a
// block topology).
const SlurmTopologyYaml::Topology& choose_block_topology(const SlurmTopologyYaml& yaml, const std::string& wanted,
                                                         std::vector<Diagnostic>& notes);

// The blocks and BlockSizes of a block topology read with topology/block's
// rules (the topology.conf reader), every problem and warning at the YAML's
// line. Throws ConfigError.
TopologySpec block_topology_spec(const SlurmTopologyYaml& yaml, const SlurmTopologyYaml::Topology& t,
                                 int slurm_release = kDefaultSlurmRelease);

} // namespace nvlblock
