// SPDX-License-Identifier: GPL-2.0-or-later
//
// Whether slurm.conf wires what the topology asks of Slurm (issue 37 item 2):
// the plugins loaded (TopologyPlugin=, PrEpPlugins=), failed jobs requeued
// (JobRequeue=, RequeueExit=), preemption that frees nodes where spares are
// reclaimed or lent, and every partition the topology's selectors name
// defined. nvlblock decides where; whether a job is requeued or preempted is
// Slurm's configuration, so a setup where Slurm never lets nvlblock act is
// said before it runs. Each finding is at the slurm.conf line to change, or
// at the file where the setting is missing.
#pragma once

#include "model/topology.hpp"
#include "slurm_conf.hpp"
#include "validate.hpp"

#include <string>
#include <vector>

namespace nvlblock::check {

// Whether Slurm's preemption can free a job's nodes: a preempt plugin
// (PreemptType not unset or preempt/none), a PreemptMode that is not OFF,
// and one that requeues or cancels (SUSPEND and GANG keep the nodes) in
// slurm.conf or in one of its partitions. `why` says which settings decided.
bool slurm_preemption_frees_nodes(const tool::SlurmConf& conf, std::string& why);

// A file without a controller (SlurmctldHost=, or the older ControlMachine=)
// is a fragment, as the examples' slurm-nodes.conf: its nodes are checked,
// while its wiring is the site's whole slurm.conf's, so none is judged.
bool judges_wiring(const tool::SlurmConf& conf);

std::vector<Finding> wiring_findings(const Topology& t, const tool::SlurmConf& conf);

} // namespace nvlblock::check
