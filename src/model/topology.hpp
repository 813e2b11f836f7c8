// SPDX-License-Identifier: GPL-2.0-or-later
//
// The topology model: nodes, blocks (NVLink domains) and their settings.
// Readers produce a TopologySpec (names and raw values with where they came
// from); build_topology() validates it and turns names into node indices.
// A Topology is immutable once built and is shared by the placement engine,
// the simulator and the tools.
#pragma once

#include "common/diagnostic.hpp"
#include "model/hierarchy.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvlblock {

using NodeIndex = std::uint32_t;
inline constexpr BlockIndex kNoBlock = -1;

// What a block's spares are while nothing has failed.
enum class SpareReserve {
    kIdle,    // kept free: withheld from ordinary work (preemptible work may borrow them where lending is on)
    kReclaim, // used like any other node; a job restarting in place reclaims them from the cheapest work there
};

// Per-block scheduling settings; cluster-wide defaults, overridable per block.
struct BlockSettings {
    int slice = 16;       // nodes per slice: the largest segment a block serves
    int spares = 2;       // nodes a job restarting in place may take back on its block
    bool lending = false; // idle spares may run preemptible work
    // Reclaim by default: spares then withhold nothing (every node runs work
    // as under topology/block) and Slurm's preemption decides what a restart
    // may move; idle spares cost their nodes whether or not anything fails,
    // which a site asks for (docs/admin.md 4.1, 4.2). The reader turns
    // `lending: true` without a `reserve` into idle: lending lends idle spares.
    SpareReserve reserve = SpareReserve::kReclaim;
};

// A set of jobs named the way Slurm sites already name them: by QOS,
// partition or account. `preemptible:` (work that may borrow spares where
// lending is on) and the recovery settings reclaim_from and never_reclaim
// are each one.
struct JobSelector {
    std::vector<std::string> qos;
    std::vector<std::string> partitions;
    std::vector<std::string> accounts;

    bool empty() const { return qos.empty() && partitions.empty() && accounts.empty(); }
    // A job is in the set when its QOS, its partition or its account is
    // listed (each may be empty: not known).
    bool matches(std::string_view job_qos, std::string_view job_partition, std::string_view job_account = {}) const {
        auto listed = [](const std::vector<std::string>& v, std::string_view s) {
            return !s.empty() && std::find(v.begin(), v.end(), s) != v.end();
        };
        return listed(qos, job_qos) || listed(partitions, job_partition) || listed(accounts, job_account);
    }
};

// How reclaiming (rule 3b) ranks the work it could requeue: what a victim
// loses, in node-seconds.
enum class ReclaimCost {
    kRunTime,        // its nodes x the time its current run has had
    kRunTimeAndWait, // the same plus its nodes x the time it waited in the queue for that run
};

// When a node that keeps failing under jobs becomes a lemon, the last
// choice for replacements and slices (recovery/lemons.hpp). Three failures
// in a week: a healthy node failing at random (independently, mean time
// between failures M) reaches three within a week with probability about
// (168 h / M)^3 / 6, under 1 in 1,000 even at M = 980 h (2% unavailability
// with 20 h repairs), while a node that fails every other day gets there in
// under a week. Two would flag about one healthy node in 75 at that rate.
struct LemonPolicy {
    int failures = 3; // failures under jobs within the window; 0: off
    std::int64_t window_seconds = 7 * 24 * 3600;
    bool operator==(const LemonPolicy&) const = default;
};

// What happens to a job whose block cannot take it back after a failure.
struct RecoveryPolicy {
    std::int64_t wait_seconds = 300; // hold the block this long, then place anywhere; 0: at once
    // How long after a requeued job's end a node that fails or drains still
    // counts as its failure (recovery/failure_watch.hpp); negative ("auto"):
    // Slurm's requeue delay, before which the job cannot start anyway.
    std::int64_t failure_window_seconds = -1;
    // `reserve: reclaim` (rule 3b): the work requeued for one restart stays
    // below the failed job's held nodes x this. An hour: with hourly
    // checkpoints a node failure already costs the failed job up to an hour
    // of its nodes' work, and reclaiming may cost others at most as much
    // again; restarting it elsewhere instead defers that work by its wait for
    // free nodes, which on a busy cluster is of the same order.
    std::int64_t reclaim_budget_seconds = 3600;
    // Who may lose nodes to a reclaim. By default only jobs Slurm's own
    // preemption lets the recovering job preempt (PreemptType, PreemptMode,
    // QOS Preempt= lists, PriorityTier, PreemptExemptTime); reclaim_from
    // names more work the site lets nvlblock requeue for an in-place
    // restart, never_reclaim work it never touches, whatever Slurm says.
    JobSelector reclaim_from;
    JobSelector never_reclaim;
    // A job nvlblock made room with is not chosen again for this long: its
    // new run would otherwise be the cheapest work on the rack at once.
    std::int64_t reclaim_cooldown_seconds = 3600;
    // Jobs requeued for the recoveries of one user's jobs in any 24 hours
    // (a user whose own jobs keep failing cannot keep moving others'
    // work), and in the whole cluster in any hour (0: one per 100 nodes,
    // at least 2). Each plan is carried out whole or not at all.
    int reclaim_per_user_per_day = 24;
    int reclaim_per_hour = 0;
    ReclaimCost reclaim_cost = ReclaimCost::kRunTimeAndWait;
    LemonPolicy lemon;
};

// Where slurmctld writes its status files, and how often.
struct StatusOutput {
    std::int64_t interval_seconds = 30;
    std::string json_path;       // empty: <StateSaveLocation>/nvlblock-status.json
    std::string prometheus_path; // empty: not written
};

// The Slurm release whose topology/block rules placement follows where
// releases differ (docs/placement.md), as major * 100 + minor: 2411 = 24.11.
// A parameter of reading a topology (readers/load_topology.hpp), kept in its
// ClusterPolicy: the plugin passes the release it was built for; tools and
// tests default to 24.11. No process-wide setting: the same answer for the
// same file and release, whoever read what before.
inline constexpr int kDefaultSlurmRelease = 2411;

struct ClusterPolicy {
    RecoveryPolicy recovery;
    int slurm_release = kDefaultSlurmRelease; // set by the reader from its parameter
    double block_fault_fraction = 0.5;        // share of a block failed at once that makes it a block fault
    JobSelector preemptible;
    StatusOutput status;
};

enum class SourceFormat { kYaml, kTopologyConf };

// What a reader found, before validation. Node names are as written.
struct BlockSpec {
    std::string name;
    std::string nodes_expr;
    std::vector<std::string> node_names;
    std::optional<int> slice, spares;
    std::optional<bool> lending;
    std::optional<SpareReserve> reserve;
    SourceLocation where;
};

struct TopologySpec {
    std::string source;              // path of the main file
    std::string included_as_written; // nvlblock.yaml's topology_conf, as written ("" if none)
    std::string included_path;       // ...and the path it was read from
    SourceFormat format = SourceFormat::kYaml;
    BlockSettings defaults;
    SourceLocation defaults_where;         // nvlblock.yaml's `defaults:`; line 0 where the file has none
    bool defaults_reserve_written = false; // `defaults:` names a reserve (else a block's follows its lending)
    ClusterPolicy policy;
    std::vector<std::uint32_t> block_sizes; // topology.conf BlockSizes, in nodes
    HierarchySpec hierarchy;                // levels above the blocks
    std::vector<BlockSpec> blocks;
    std::vector<Diagnostic> warnings; // accepted, but worth an operator's eye
};

struct Block {
    std::string name;
    std::string nodes_expr;       // compressed hostlist of its nodes
    std::vector<NodeIndex> nodes; // in the order written
    BlockSettings settings;
    SourceLocation where;
    // Whether nodes are first, first + 1, ... (as racks usually are): per-node
    // counts then run over a plain range of the state arrays.
    bool contiguous = false;
    NodeIndex first = 0;

    int size() const { return static_cast<int>(nodes.size()); }
    // Nodes ordinary (non-preemptible) work may use while the block is healthy.
    int ordinary_capacity() const { return size() - settings.spares; }
};

// A process-wide counter for Topology::serial (thread-safe).
std::uint64_t next_topology_serial();

class Topology {
  public:
    const std::string& source() const { return source_; }
    // The topology.conf an nvlblock.yaml takes its blocks from: as written
    // there and as read ("" when none).
    const std::string& included_as_written() const { return included_as_written_; }
    const std::string& included_path() const { return included_path_; }
    SourceFormat format() const { return format_; }
    const BlockSettings& defaults() const { return defaults_; }
    const ClusterPolicy& policy() const { return policy_; }
    const std::vector<std::uint32_t>& block_sizes() const { return block_sizes_; }
    const Hierarchy& hierarchy() const { return hierarchy_; }
    const std::vector<Diagnostic>& warnings() const { return warnings_; }

    std::size_t node_count() const { return node_names_.size(); }
    const std::string& node_name(NodeIndex n) const { return node_names_.at(n); }
    const std::vector<std::string>& node_names() const { return node_names_; }
    std::optional<NodeIndex> find_node(const std::string& name) const;

    std::size_t block_count() const { return blocks_.size(); }
    const Block& block(BlockIndex b) const { return blocks_.at(static_cast<std::size_t>(b)); }
    const std::vector<Block>& blocks() const { return blocks_; }
    std::optional<BlockIndex> find_block(const std::string& name) const;
    // kNoBlock for nodes outside every block (ordinary servers).
    BlockIndex block_of(NodeIndex n) const { return block_of_.at(n); }
    std::size_t nodes_in_blocks() const { return nodes_in_blocks_; }
    int largest_slice() const { return largest_slice_; }
    // This content's identity: a new number whenever a topology is built or
    // edited (copies share it), so that a question about it can be answered
    // once per topology (recovery/ledger.hpp, RecoveryRecord::blocks_same_in).
    // Never 0.
    std::uint64_t serial() const { return serial_; }
    // nvlblock.yaml groups: per rung of the hierarchy's ladder below the
    // cluster, the most ordinary capacity (size less spares) one group
    // holds in whole units of `unit` nodes, on blocks whose slice takes a
    // unit (rung 0: one block). What a multi-block decision asks of every
    // level (placement/level_choice.cpp, nominals): kept, not recounted over
    // the blocks per decision. Empty without groups.
    std::span<const long> group_holds(int unit) const {
        if (group_holds_.empty())
            return {};
        return group_holds_[static_cast<std::size_t>(std::clamp(unit, 1, static_cast<int>(group_holds_.size())) - 1)];
    }

  private:
    friend Topology build_topology(TopologySpec spec, const std::vector<std::string>* universe);
    friend class TopologyEditor; // core/topology_change.cpp: a node moved at run time

    std::string source_;
    std::string included_as_written_, included_path_;
    SourceFormat format_ = SourceFormat::kYaml;
    BlockSettings defaults_;
    ClusterPolicy policy_;
    std::vector<std::uint32_t> block_sizes_;
    Hierarchy hierarchy_;
    std::vector<Diagnostic> warnings_;
    std::vector<std::string> node_names_;
    std::unordered_map<std::string, NodeIndex> node_index_;
    std::vector<Block> blocks_;
    std::vector<BlockIndex> block_of_;
    std::size_t nodes_in_blocks_ = 0;
    int largest_slice_ = 0; // asked on every decision: kept, not recomputed
    std::uint64_t serial_ = next_topology_serial();
    // group_holds(unit) for units 1 to largest_slice_ + 1 (past every slice: nothing).
    std::vector<std::vector<long>> group_holds_;
    void count_group_holds();
};

// Validate a spec and index its nodes. With a universe (the node names of
// slurm.conf, in Slurm's own index order) node indices are Slurm's indices and
// every block node must be in it; without one, nodes are numbered in topology
// order (blocks as listed, nodes as written). Throws ConfigError listing every
// problem, each with its file and line.
Topology build_topology(TopologySpec spec, const std::vector<std::string>* universe = nullptr);

} // namespace nvlblock
