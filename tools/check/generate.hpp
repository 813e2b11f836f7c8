// SPDX-License-Identifier: GPL-2.0-or-later
//
// `nvlblock-check --generate REPORT...`: the per-node reports of
// `nvlblock-check --local --json` turned into a topology file, one block per
// NVLink domain (NVML cluster UUID + clique id).
//
// The naming rule, made so that adding racks never renames or moves a block:
//  * Nodes in a block are in hostname order ("natural": gb2 before gb10).
//  * Blocks are named PREFIX + a number zero-padded to WIDTH digits
//    (nvl0001, nvl0002, ...; default width 4, fixed, so the 1,000th rack does
//    not change the width of the names before it).
//  * Without --previous, blocks are numbered in the order of their first
//    (lowest) hostname.
//  * With --previous FILE (the topology file in use), every block of FILE keeps
//    its name and its position: a domain takes the name of the previous block
//    whose nodes it has. Domains with no previous block are new racks: they
//    are appended after all previous blocks, numbered on from the highest
//    PREFIX number in FILE, in the order of their first hostname. A previous
//    block none of whose nodes reported is kept as it was; a node that did not
//    report stays in its previous block.
// With su_racks N, every N consecutive blocks (in that order) form a
// scalable unit: nvlblock.yaml `hierarchy:` groups su01, su02, ..., or a
// BlockSizes level of N base blocks in topology.conf (N a power of two).
// Nodes whose GPUs have no NVLink fabric (8-GPU servers) or no GPU are left
// out of every block and listed in a comment.
#pragma once

#include "common/diagnostic.hpp"
#include "model/topology.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvlblock::check {

struct GenerateOptions {
    SourceFormat format = SourceFormat::kYaml;
    std::string prefix = "nvl";
    int width = 4;
    int slice = 16; // nvlblock.yaml defaults
    int spares = 2;
    std::string previous; // topology file whose block names and order to keep
    int su_racks = 0;     // group every N consecutive blocks into a scalable unit (0: no groups)
    // Whose topology/block rules --previous and the file written are read
    // by; nvlblock-check passes the site's (its --slurm-release).
    int slurm_release = kDefaultSlurmRelease;
};

struct GenerateResult {
    std::string text;               // the topology file, empty on errors
    std::vector<Diagnostic> errors; // "report: message"; nothing is written
    std::vector<Diagnostic> notes;  // worth a look, output still written
    std::size_t reports = 0, blocks = 0, nodes_in_blocks = 0, outside = 0;
};

// `inputs`: report files, or directories whose *.json files are read.
GenerateResult generate_topology(const std::vector<std::string>& inputs, const GenerateOptions& opts);

// "gb2" < "gb10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

// The `defaults:` of a written nvlblock.yaml (--generate, --from-topology-yaml):
// slice and spares, and where there are spares the reserve, written although
// it is the default, so that the file says what its spares cost.
std::string yaml_defaults(int slice, int spares);

} // namespace nvlblock::check
