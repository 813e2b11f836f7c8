// SPDX-License-Identifier: GPL-2.0-or-later
//
// Crash-safe file replacement: write a temporary file beside the target,
// fsync it, rename it over the target, fsync the directory. A reader (or a
// slurmctld restarted after kill -9) sees the old file or the new one, never
// a mix. Used for saved state and for the status and metrics files.
#pragma once

#include <optional>
#include <string>

namespace nvlblock {

// Throws std::system_error naming the path and the failing step.
void write_file_atomically(const std::string& path, const std::string& contents, bool durable = true);

// nullopt when the file does not exist; throws std::system_error otherwise.
std::optional<std::string> read_file_if_exists(const std::string& path);

} // namespace nvlblock
