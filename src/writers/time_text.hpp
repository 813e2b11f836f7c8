// SPDX-License-Identifier: GPL-2.0-or-later
//
// Unix seconds as text for people: the FailedAt= of `scontrol show topology`
// (slurmctld's local time, as Slurm prints its own times) and the times
// nvlblock-status shows (local too, ISO 8601 as Slurm's).
#pragma once

#include <cstdint>
#include <string>

namespace nvlblock {

enum class TimeZone { kLocal, kUtc };

// strftime(3) `format` of `unix_seconds` in `zone`; empty if longer than 63 characters.
std::string time_text(std::int64_t unix_seconds, const char* format, TimeZone zone);

} // namespace nvlblock
