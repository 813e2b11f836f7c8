// SPDX-License-Identifier: GPL-2.0-or-later
//
// The name of each kind of warning a configuration can draw, core and
// nvlblock-check alike: printed after the warning ("[lending-with-reclaim]")
// and given to `nvlblock-check --accept NAME` by a site that has read it and
// keeps its configuration, so `--strict` can still fail on any other. Names
// are part of the interface: never reuse one for another meaning.
#pragma once

#include <array>
#include <string_view>

namespace nvlblock::warning_name {

// Readers and the topology model (src/).
inline constexpr const char* kLendingWithReclaim = "lending-with-reclaim";
inline constexpr const char* kNodeNotInSlurmConf = "node-not-in-slurm-conf";
inline constexpr const char* kUnknownKey = "unknown-key"; // Slurm's topology.yaml
inline constexpr const char* kTopologyChoice = "topology-choice";
inline constexpr const char* kNoBlocks = "no-blocks";
// nvlblock-check's judgement of the whole setup (tools/check).
inline constexpr const char* kTopologyPlugin = "topology-plugin";
inline constexpr const char* kPrepPlugin = "prep-plugin";
inline constexpr const char* kJobRequeue = "job-requeue";
inline constexpr const char* kReclaimMovesNothing = "reclaim-moves-nothing";
inline constexpr const char* kLendingFreesNothing = "lending-frees-nothing";
inline constexpr const char* kSelectsNothing = "selects-nothing";
inline constexpr const char* kBlockSize = "block-size";
inline constexpr const char* kPartitionTopology = "partition-topology";

inline constexpr std::array<const char*, 13> kAll = {
    kLendingWithReclaim, kNodeNotInSlurmConf, kUnknownKey,       kTopologyChoice,      kNoBlocks,
    kTopologyPlugin,     kPrepPlugin,         kJobRequeue,       kReclaimMovesNothing, kLendingFreesNothing,
    kSelectsNothing,     kBlockSize,          kPartitionTopology};

inline bool known(std::string_view name) {
    for (const char* n : kAll)
        if (name == n)
            return true;
    return false;
}

} // namespace nvlblock::warning_name
