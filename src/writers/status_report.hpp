// SPDX-License-Identifier: GPL-2.0-or-later
//
// What an operator sees: per block nodes, health, spares (free, used by
// failures, lent), work, held capacity and stranded nodes, plus recoveries.
// One report feeds `scontrol show topology`, the JSON status file and the
// Prometheus textfile, so the three always agree.
#pragma once

#include "core/planner.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

enum class BlockHealth { kHealthy, kDegraded, kDown };
const char* health_name(BlockHealth h);

struct BlockReport {
    std::string name;
    std::string nodes;
    int size = 0;
    int slice = 0;
    int spares = 0;
    bool lending = false;
    bool reclaim = false; // reserve: reclaim (spares run work until a recovery takes them back)
    BlockHealth health = BlockHealth::kHealthy;
    int healthy = 0;
    int failed = 0;
    int down = 0;
    int drained = 0;
    std::string failed_nodes; // hostlist, empty when none
    int busy = 0;
    int lent = 0;
    int free = 0;
    int spares_free = 0;   // idle spares ready for a recovery
    int spares_used = 0;   // spares standing in for failed nodes
    int spares_lent = 0;   // spares running preemptible work (reclaim: running any work, to be reclaimed)
    int held = 0;          // nodes held for jobs waiting to restart here
    int stranded = 0;      // free non-spare nodes short of a whole slice
    int ordinary_free = 0; // free nodes ordinary work may take now
    // Healthy nodes it lacks for a slice plus its spares (0: whole).
    int spare_deficit = 0;
    // Seconds it could not host a whole slice since slurmctld started
    // (core/health_clock.hpp).
    std::int64_t short_seconds = 0;
    int lemons = 0;          // its lemons (recovery/lemons.hpp), in service or not
    std::string lemon_nodes; // hostlist, empty when none
};

// A group of the hierarchy above the blocks (an SU, a pod, a BlockSizes
// aggregate): its blocks' figures summed.
struct GroupReport {
    std::string name;
    std::string level;  // the level's name ("su", or "2x" for a BlockSizes aggregate of 2 blocks)
    std::string blocks; // hostlist of its blocks
    int block_count = 0;
    int size = 0;
    int healthy = 0;
    int failed = 0;
    int busy = 0;
    int lent = 0;
    int free = 0;
    int ordinary_free = 0;
    int stranded = 0;
    int spares_free = 0;
    int held = 0;
    int degraded_blocks = 0; // degraded or down
};

struct ClusterReport {
    std::int64_t generated_at = 0;
    std::vector<BlockReport> blocks;
    std::vector<GroupReport> groups; // lowest level first; groups the file does not name are left out
    int nodes = 0;
    int nodes_in_blocks = 0;
    int healthy = 0;
    int failed = 0;
    int busy = 0;
    int lent = 0;
    int free = 0;
    int stranded = 0;
    int ordinary_free = 0;
    double fragmentation = 0.0; // stranded / ordinary free, 0 when nothing is free
    LedgerCounters counters;
    bool reclaims = false;           // some block has `reserve: reclaim`
    ReclaimPassTimes reclaim_passes; // Slurm's locks held by the reclaim passes (reported where `reclaims`)
    RecoveryPolicy recovery;         // its recovery settings (who may lose nodes, limits)
    int reclaim_per_hour = 0;        // reclaim_limits.per_hour for this cluster's size
    std::vector<RecoveryEvent> recent;
    struct Pending {
        std::uint32_t job_id;
        std::string blocks;
        std::uint32_t lost;
        std::int64_t failed_at;
        std::int64_t fallback_at;
        bool fallback;
    };
    std::vector<Pending> pending;
    // Nodes that failed under recovery.lemon.failures jobs within its window:
    // taken last for replacements and slices while in service.
    struct Lemon {
        std::string node;
        std::string block; // "" outside every block
        int failures = 0;  // within the window
        std::int64_t last_failure = 0;
        bool in_service = false; // healthy (not down or drained)
    };
    std::vector<Lemon> lemons;
};

ClusterReport make_report(const Planner& planner, std::span<const NodeState> states, std::int64_t now);

// "BlockName=rack01 Nodes=gb[0001-0018] BlockSize=18 Slice=16 ..." for scontrol.
std::string block_line(const BlockReport& b);
std::string summary_line(const ClusterReport& r);
// Who may lose nodes to a reclaim and the limits, as a sentence
// (nvlblock-check); slurm_preemption: Slurm's preemption settings as they
// read, "" when it is off.
std::string reclaim_policy_text(const RecoveryPolicy& p, int per_hour, const std::string& slurm_preemption);
// A JobSelector as "qos:a,partition:b,account:c", "(null)" when empty.
std::string selector_text(const JobSelector& s);
// "GroupName=su01 Level=su Blocks=rack[001-008] ..." for scontrol, after the summary line.
std::string group_line(const GroupReport& g);
// One line per pending and recent recovery (newest first, at most `recent`),
// for `scontrol show topology` after the summary line.
std::vector<std::string> recovery_lines(const ClusterReport& r, std::size_t recent = 5);
std::string report_json(const ClusterReport& r);
std::string report_prometheus(const ClusterReport& r);

} // namespace nvlblock
