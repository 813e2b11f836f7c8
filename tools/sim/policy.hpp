// SPDX-License-Identifier: GPL-2.0-or-later
//
// The four policies compared, each expressed the way a site would deploy it:
// a topology file (YAML, built here in memory and read by the same reader as
// the plugin's) plus the simulator switches that stand for the rest of the
// site's Slurm configuration.
//
//   policy         slice           spares            lending  in-place recovery  preemption (default)
//   full-rack      nodes per rack  0                 off      off                off
//   block          --slice         0                 off      off                off
//   nvlblock       --slice         --spares, idle    off      on (ledger)        off
//   nvlblock+lend  --slice         --spares, idle    on       on (ledger)        on
//   recommended    --slice         --spares, reclaim off      on (ledger)        off
//   block-expedite --slice         0                 off      off                off
//   nvrx-16+2      nodes per rack  0 (in the job)    off      off                off
//
// The two peers a site would pick instead of nvlblock (docs/sim.md, "Peers"):
// `block-expedite` is block whose jobs ask for Slurm 25.11's expedited
// requeue (--requeue=expedite): a job killed by a node failure is eligible at
// once, at the head of the queue, and placed wherever block places it.
// `nvrx-16+2` keeps hot spares inside the job (NVRx ft_launcher
// --ft-segment=<slice>): a slice job takes whole racks (--segment=<nodes per
// rack>), runs on --slice nodes of each and keeps the rest as standbys that
// absorb failures in the job (in_job_spares.hpp). Its topology.conf is
// block's with BlockSizes=<nodes per rack>, the base block a whole-rack
// segment needs.
//
// `recommended` is the configuration docs/admin.md tells a site to start
// with: nothing is held back while nothing fails, and a job restarting in
// place reclaims its block's spares from the cheapest work there (rule 3b).
//
// Preemption stands for Slurm's preempt/qos with the `scavenger` QOS
// preemptible: by default it is part of the lending policy (the site lends
// spares to a QOS it can preempt); --preemption all turns it on for every
// policy (a site that preempts that QOS anyway), none for none.
//
// `block` stands for stock topology/block: its topology.conf, read by the same
// reader as the plugin's, with BlockSizes=<slice> (plus a level per
// --hierarchy level): best fit, nothing withheld, topology/block's level
// rules, and a requeued job goes wherever it fits. Every placement decision,
// for every policy, is made by nvlblock::Planner::place.
//
// --hierarchy: racks grouped into scalable units (and pods...) of so many
// racks each, in rack order. nvlblock policies get them as nvlblock.yaml
// groups (levels su, pod, level3...); block gets the same sizes as BlockSizes
// levels (so they must be powers of two).
//
// How jobs map onto nodes (the same demand in GPU-hours under every policy):
//   trace jobs  the literal request: `nodes` nodes for `duration` seconds, no --segment;
//   slice jobs  `slices` segments of the policy's slice (--segment=<slice>), running
//               duration * 16 / slice seconds: a full-rack slice (18 nodes, 72 GPUs)
//               does the same work as a 16-node slice in 8/9 of the time.
#pragma once

#include "sim_types.hpp"

#include "model/topology.hpp"

#include <optional>
#include <string>
#include <vector>

namespace nvlblock::sim {

enum class PolicyKind { kFullRack, kBlock, kNvlblock, kNvlblockLend, kRecommended, kBlockExpedite, kNvrx };

// Where jobs of the preemptible QOS can be preempted (by jobs that are not):
// only in policies that lend spares (default), in every policy, or nowhere.
enum class PreemptionMode { kLend, kAll, kNone };

struct ClusterShape {
    int racks = 128;
    int nodes_per_rack = 18;
    int slice = 16; // for block, nvlblock, nvlblock+lend
    int spares = 2; // for nvlblock, nvlblock+lend
    int gpus_per_node = 4;
    // the topology's recovery.wait (fallback to anywhere after it), the core's default unless set
    Seconds recovery_wait = nvlblock::RecoveryPolicy{}.wait_seconds;
    // recovery.reclaim_budget (recommended: work requeued per restart below held nodes x this)
    Seconds reclaim_budget = nvlblock::RecoveryPolicy{}.reclaim_budget_seconds;
    // recovery.failure_window (nvlblock policies): how long after a requeued
    // job's end a drain still opens its recovery; -1: auto (the requeue delay)
    Seconds failure_window = nvlblock::RecoveryPolicy{}.failure_window_seconds;
    // recovery.reclaim_from (recommended): the QOS of work the site lets a
    // reclaim requeue beyond what Slurm's preemption allows; empty: none
    std::vector<std::string> reclaim_from_qos;
    std::vector<int> hierarchy; // racks per group, lowest level first (e.g. {8}: SUs of 8 racks); empty: none
    Seconds crossing = -1;      // nvlblock policies: hierarchy.crossing after this wait; -1: strict

    std::size_t nodes() const { return static_cast<std::size_t>(racks) * static_cast<std::size_t>(nodes_per_rack); }
};

struct PolicyConfig {
    PolicyKind kind = PolicyKind::kNvlblock;
    std::string name;
    int slice = 16;
    int spares = 2;
    bool lending = false;
    bool reclaim = false;    // spares are reclaimed, not held idle (reserve: reclaim)
    bool recovery = false;   // call Planner::job_failed / job_started (in-place restarts)
    bool preemption = false; // non-preemptible jobs may preempt jobs of the preemptible QOS
    bool expedite = false;   // a job killed by a node failure is requeued expedited (Slurm 25.11)
    // nvrx: slice jobs take whole racks and keep this many standbys per rack
    // in the job (the rack's nodes beyond --slice); 0: no in-job spares.
    int standbys = 0;
    std::vector<std::string> preemptible_qos = {"scavenger"};
    std::string topology_text; // the policy's topology file
    nvlblock::SourceFormat topology_format = nvlblock::SourceFormat::kYaml;
    // For nvlblock.yaml files that take their blocks (and BlockSizes levels)
    // from a topology.conf beside them, as a site keeps its topology/block
    // file: its text. Empty when the file lists its own blocks.
    std::string included_conf;
};

const char* policy_name(PolicyKind k);
std::optional<PolicyKind> policy_from_name(const std::string& name);
// Parses "full-rack,block,nvlblock,nvlblock+lend,recommended,block-expedite,nvrx-16+2"; throws std::invalid_argument.
std::vector<PolicyKind> parse_policies(const std::string& list);

PolicyConfig make_policy(PolicyKind kind, const ClusterShape& shape, PreemptionMode preemption);
// The policy's topology file, as text: racks rack001..., nodes gb00001...
// With `include_conf` the blocks come from topology_conf() in a file
// "topology.conf" beside it (the --hierarchy groups, if any, are still listed).
std::string topology_yaml(const ClusterShape& shape, int slice, int spares, bool lending, bool reclaim = false,
                          bool include_conf = false);
// topology/block's topology.conf: BlockSizes=<slice> and one level per --hierarchy level.
// Throws std::invalid_argument when a level is not a power of two racks.
std::string topology_conf(const ClusterShape& shape, int slice);
// Writes the policy's topology file(s) into `dir`; returns the path to load.
std::string write_policy_files(const PolicyConfig& policy, const std::string& dir);
// Loads them with the readers the plugin uses (from a private temporary directory).
nvlblock::Topology build_policy_topology(const PolicyConfig& policy);

// A job as one policy requests it.
struct JobShape {
    std::uint32_t nodes = 1;
    std::uint32_t segment = 0;
    Seconds duration = 1; // run time at that node count
};
JobShape shape_for(const JobSpec& job, const PolicyConfig& policy);

// The time limit the scheduler plans with: twice the run time, rounded up to
// whole minutes (traces carry none; data/traces/README.md).
Seconds time_limit_for(Seconds duration);

// Which jobs are preemptible work: the topology's `preemptible:` selector
// (nvlblock policies, the plugin's own), else the policy's preemptible QOS
// (standing for Slurm's preempt/qos under topology/block). Either way the
// core's JobSelector::matches decides, as for the plugin.
nvlblock::JobSelector preemptible_selector(const PolicyConfig& policy, const nvlblock::Topology& topo);

} // namespace nvlblock::sim
