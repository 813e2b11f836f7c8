// SPDX-License-Identifier: GPL-2.0-or-later
//
// The JSON status file's schema, written by report_json()
// (writers/status_report.cpp) and read back by nvlblock-status
// (tools/status/status_view.cpp): its id and the name of every member, so
// writer and reader cannot drift apart. docs/status.md describes the file.
#pragma once

namespace nvlblock {

inline constexpr const char* kStatusSchema = "nvlblock-status/1";

namespace status_schema::key {
inline constexpr const char* abandoned = "abandoned";
inline constexpr const char* at = "at";
inline constexpr const char* block = "block";
inline constexpr const char* block_count = "block_count";
inline constexpr const char* blocks = "blocks";
inline constexpr const char* busy = "busy";
inline constexpr const char* by_path = "by_path";
inline constexpr const char* by_trigger = "by_trigger";
inline constexpr const char* cluster = "cluster";
inline constexpr const char* cpu_us_max = "cpu_us_max";
inline constexpr const char* cpu_us_total = "cpu_us_total";
inline constexpr const char* degraded_blocks = "degraded_blocks";
inline constexpr const char* down = "down";
inline constexpr const char* drained = "drained";
inline constexpr const char* failed = "failed";
inline constexpr const char* failed_at = "failed_at";
inline constexpr const char* failed_nodes = "failed_nodes";
inline constexpr const char* failures = "failures";
inline constexpr const char* fallback = "fallback";
inline constexpr const char* fallback_at = "fallback_at";
inline constexpr const char* fallbacks = "fallbacks";
inline constexpr const char* fragmentation = "fragmentation";
inline constexpr const char* free = "free";
inline constexpr const char* generated_at = "generated_at";
inline constexpr const char* groups = "groups";
inline constexpr const char* health = "health";
inline constexpr const char* healthy = "healthy";
inline constexpr const char* held = "held";
inline constexpr const char* in_place = "in_place";
inline constexpr const char* in_service = "in_service";
inline constexpr const char* job_id = "job_id";
inline constexpr const char* last_failure = "last_failure";
inline constexpr const char* lemons = "lemons";
inline constexpr const char* lending = "lending";
inline constexpr const char* lent = "lent";
inline constexpr const char* level = "level";
inline constexpr const char* lock_held_us_max = "lock_held_us_max";
inline constexpr const char* lock_held_us_total = "lock_held_us_total";
inline constexpr const char* lost = "lost";
inline constexpr const char* name = "name";
inline constexpr const char* node = "node";
inline constexpr const char* nodes = "nodes";
inline constexpr const char* nodes_in_blocks = "nodes_in_blocks";
inline constexpr const char* ordinary_free = "ordinary_free";
inline constexpr const char* outcome = "outcome";
inline constexpr const char* passes = "passes";
inline constexpr const char* pending = "pending";
inline constexpr const char* recent = "recent";
inline constexpr const char* reclaim_passes = "reclaim_passes";
inline constexpr const char* reclaimed_jobs = "reclaimed_jobs";
inline constexpr const char* reclaims = "reclaims";
inline constexpr const char* recoveries = "recoveries";
inline constexpr const char* reserve = "reserve";
inline constexpr const char* schema = "schema";
inline constexpr const char* seconds = "seconds";
inline constexpr const char* size = "size";
inline constexpr const char* slice = "slice";
inline constexpr const char* short_of_slice_seconds = "short_of_slice_seconds";
inline constexpr const char* spare_deficit = "spare_deficit";
inline constexpr const char* spares = "spares";
inline constexpr const char* spares_free = "spares_free";
inline constexpr const char* spares_lent = "spares_lent";
inline constexpr const char* spares_used = "spares_used";
inline constexpr const char* stranded = "stranded";
} // namespace status_schema::key

} // namespace nvlblock
