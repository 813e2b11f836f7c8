// SPDX-License-Identifier: GPL-2.0-or-later
//
// Just enough of slurm.conf for the tools: the node universe (NodeName= lines,
// in Slurm's definition order) and scalar settings such as StateSaveLocation.
// The file is read the way Slurm's parse_config.c reads it: '#' comments
// (unless escaped with a backslash), lines continued by a trailing backslash,
// case-insensitive keys, "Include FILE" (relative to slurm.conf's directory,
// %c expanding to ClusterName), NodeName=DEFAULT and PartitionName=DEFAULT
// lines skipped.
#pragma once

#include "common/diagnostic.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nvlblock::tool {

struct SlurmNode {
    std::string name;
    SourceLocation where; // the NodeName= line that defines it
};

// A PartitionName= line, for what nvlblock-check says about partitions.
struct SlurmPartition {
    std::string name;
    std::string topology; // Topology= (Slurm 25.05+: a topology.yaml topology), empty if none
    SourceLocation where;
    std::string preempt_mode; // PreemptMode= (its own, or a PartitionName=DEFAULT line's), empty if none
};

struct SlurmSetting {
    std::string value;
    SourceLocation where;
};

struct SlurmConf {
    std::string path;
    std::vector<SlurmNode> nodes;                 // definition order, no duplicates
    std::vector<SlurmPartition> partitions;       // definition order, DEFAULT lines left out
    std::map<std::string, SlurmSetting> settings; // lower-cased key -> last value
    std::vector<Diagnostic> problems;             // errors Slurm would reject, file:line

    std::vector<std::string> node_names() const;
    std::optional<std::string> get(const std::string& key) const; // key in any case
    const SlurmSetting* setting(const std::string& key) const;
};

// Never throws for the file's content: every problem lands in `problems`
// (an unreadable main file too, as "path: cannot read the file: ...").
SlurmConf read_slurm_conf(const std::string& path);
SlurmConf read_slurm_conf_text(const std::string& text, const std::string& label, const std::string& conf_dir = ".");

// $SLURM_CONF, else /etc/slurm/slurm.conf.
std::string default_slurm_conf_path();

} // namespace nvlblock::tool
