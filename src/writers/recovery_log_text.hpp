// SPDX-License-Identifier: GPL-2.0-or-later
//
// The operator's log lines of recovery ("nvlblock: recovery JobId=... lost 1
// of 16 nodes ..."): recovery/ decides and keeps notes of what it did
// (recovery/recovery_note.hpp); this only words them, against the topology
// each was made on.
#pragma once

#include "core/planner.hpp"
#include "model/topology.hpp"
#include "recovery/recovery_note.hpp"

#include <string>
#include <vector>

namespace nvlblock {

// The blocks a recovery claims, comma-separated ("rack01,rack02").
std::string claim_blocks(const Topology& topo, const RecoveryClaim& claim);

// One note's line, "nvlblock: recovery " included.
std::string recovery_log_line(const Topology& topo, const RecoveryNote& note);

// The lines of what Planner::take_log handed over, oldest first, each note
// worded against its batch's topology.
std::vector<std::string> recovery_log_lines(const std::vector<Planner::LogBatch>& batches);

// What a held block is now against what it was ("block rack01 has 17 nodes
// (gb[0001-0017]) now, 18 nodes (gb[0001-0018]) when the job failed").
std::string held_block_change_text(const HeldBlockChange& change);

// Why nothing was reclaimed, as plan and refusal facts say
// ("JobId=7: nothing reclaimed: recovery.reclaim_limits.per_hour reached").
std::string reclaim_refusal_text(std::uint32_t job_id, const ReclaimRefusal& r);

} // namespace nvlblock
