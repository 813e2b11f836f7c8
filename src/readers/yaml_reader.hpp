// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock's own topology file (nvlblock.yaml), parsed with libyaml. The
// schema is documented in docs/config.md; every key is checked, and unknown
// keys are errors with a "did you mean" hint, because a typo in "spares"
// silently giving the default would cost a rack its recovery capacity.
#pragma once

#include "model/topology.hpp"

#include <string>

namespace nvlblock {

// Parse YAML text. `label` names the file in diagnostics; `base_dir` resolves a
// relative `topology_conf:` include. Throws ConfigError.
// `slurm_release`: the release whose topology/block rules apply (topology.hpp),
// also to the topology.conf or topology.yaml it includes.
TopologySpec read_yaml_topology(const std::string& text, const std::string& label, const std::string& base_dir = ".",
                                int slurm_release = kDefaultSlurmRelease);

} // namespace nvlblock
