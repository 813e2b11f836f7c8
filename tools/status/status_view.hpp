// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-status: the JSON status file slurmctld writes (the schema in
// src/writers/status_schema.hpp, written by src/writers/status_report.cpp)
// read back and laid out as a table a person takes in at a glance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvlblock::status {

struct Block {
    std::string name, nodes, health, failed_nodes;
    std::int64_t size = 0, slice = 0, spares = 0, healthy = 0, failed = 0, busy = 0, lent = 0, free = 0;
    std::int64_t spares_free = 0, spares_used = 0, spares_lent = 0, held = 0, ordinary_free = 0, stranded = 0;
    bool lending = false;
};

struct Pending {
    std::int64_t job_id = 0, lost = 0, failed_at = 0, fallback_at = 0;
    std::string blocks;
    bool fallback = false;
};

struct Event {
    std::int64_t at = 0, job_id = 0, lost = 0, spares_used = 0, seconds = 0;
    std::string outcome, blocks;
};

// A node that failed under recovery.lemon.failures jobs within the window.
struct Lemon {
    std::string node, block;
    std::int64_t failures = 0, last_failure = 0;
    bool in_service = false;
};

struct Status {
    std::int64_t generated_at = 0;
    std::int64_t nodes = 0, nodes_in_blocks = 0, healthy = 0, failed = 0, busy = 0, lent = 0, free = 0;
    std::int64_t ordinary_free = 0, stranded = 0;
    double fragmentation = 0.0;
    std::int64_t failures = 0, in_place = 0, fallbacks = 0, abandoned = 0;
    std::vector<Pending> pending;
    std::vector<Event> recent;
    std::vector<Block> blocks;
    std::vector<Lemon> lemons; // absent in files written before lemons: none
};

// Throws nvlblock::ConfigError ("file:line: ...") for bad JSON and
// std::runtime_error ("file: member: ...") for a wrong shape or schema.
Status parse_status(const std::string& text, const std::string& label);
Status load_status(const std::string& path);

struct RenderOptions {
    std::int64_t now = 0;          // for the age of the file
    std::int64_t stale_after = 90; // seconds
    bool problems_only = false;    // only blocks that are not healthy or have failed/held nodes
    std::size_t recent = 5;        // recent recoveries shown
};

std::string render(const Status& s, const std::string& path, const RenderOptions& opts);
bool is_stale(const Status& s, const RenderOptions& opts);

// "42 s", "3m 05s", "2h 10m", "3d 4h"
std::string format_age(std::int64_t seconds);
// "2025-06-01 12:00:00 UTC"
std::string format_time(std::int64_t unix_seconds);

} // namespace nvlblock::status
