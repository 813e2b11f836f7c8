// SPDX-License-Identifier: GPL-2.0-or-later
//
// Crash-safe, symlink-safe file replacement for what slurmctld writes (saved
// state, the status and metrics files): write a temporary file beside the
// target, fsync it, rename it over the target, fsync the directory. A reader
// (or a slurmctld restarted after kill -9) sees the old file or the new one,
// never a mix.
//
// slurmctld often runs as root and the status and metrics files may live in
// a directory others can write (a node_exporter textfile folder, a shared
// spool). So the temporary file gets an unpredictable name and is created
// exclusively without following symlinks (O_CREAT|O_EXCL|O_NOFOLLOW) in the
// target's own directory, opened once; the rename replaces whatever entry
// the target name holds (a planted symlink is replaced, never followed); the
// mode is set on the open file, whatever the daemon's umask; and a directory
// that anyone may write without the sticky bit is refused, since there
// anyone could swap the files under us.
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>

namespace nvlblock {

// Modes: saved state is the daemon's alone; reports are for everyone.
inline constexpr mode_t kPrivateFileMode = 0600;
inline constexpr mode_t kReportFileMode = 0644;

// Throws std::system_error naming the path and the failing step; EPERM when
// the directory is writable by others without the sticky bit.
void write_file_atomically(const std::string& path, const std::string& contents, mode_t mode, bool durable = true);

// Why a directory is unsafe to write into, or "" when it is safe: writable by
// others without the sticky bit. Throws std::system_error if it cannot be read.
std::string unsafe_directory_reason(const std::string& dir);

// nullopt when the file does not exist; throws std::system_error otherwise,
// also when the path is a symbolic link or not a regular file (a FIFO or a
// device would block or never end).
std::optional<std::string> read_file_if_exists(const std::string& path);

} // namespace nvlblock
