// SPDX-License-Identifier: GPL-2.0-or-later
//
// `nvlblock-check [TOPOLOGY]`: a topology file (nvlblock.yaml or topology.conf)
// checked against slurm.conf's nodes exactly as slurmctld will load it, plus
// the advice the plugin itself has no place to print. Every finding is one
// line "file:line: message"; warnings and notes say so after the location.
#pragma once

#include "model/topology.hpp"
#include "slurm_conf.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvlblock::check {

enum class Severity { kError, kWarning, kNote };

struct Finding {
    Severity severity = Severity::kError;
    Diagnostic diag;

    // "file:line: message", "file:line: warning: message [name]",
    // "file:line: note: message"
    std::string str() const;
};

struct CheckOptions {
    int max_block_size = 18;                  // warn above this (an NVL72 rack has 18 compute trays); 0: no limit
    int slurm_release = kDefaultSlurmRelease; // whose topology/block rules apply (2505: 25.05)
};

struct CheckResult {
    std::vector<Finding> findings;
    std::optional<Topology> topology; // set when the file loads
    std::size_t slurm_nodes = 0;
    int accepted = 0; // warnings the site accepted by name (now notes)

    int count(Severity s) const;
    // The last line: "OK: ..." or the number of errors; with `strict`,
    // warnings fail the check and the line says "FAILED with --strict: ...".
    std::string summary(const std::string& topology_path, bool strict = false) const;
};

CheckResult check_topology(const std::string& topology_path, const tool::SlurmConf& conf,
                           const CheckOptions& opts = {});

// Warnings whose name (common/warning_names.hpp) is in `names` become notes
// saying they were accepted, so --strict fails only on the others.
void accept_warnings(CheckResult& r, const std::vector<std::string>& names);

// The file slurmctld would read: nvlblock.yaml beside slurm.conf if it
// exists, else topology.conf beside it (the plugin's own rule).
std::string default_topology_path(const std::string& slurm_conf_path);

} // namespace nvlblock::check
