// SPDX-License-Identifier: GPL-2.0-or-later
//
// The outermost frame of every nvlblock tool: runs the tool and turns an
// escaping exception into one line on stderr and an exit status, so no tool
// ends in std::terminate and all of them report errors the same way.
#pragma once

#include <string>

namespace nvlblock::cli {

// Returns run(argc, argv); a cli::UsageError prints "TOOL: message" and
// "(try --help)" and returns 2, any other std::exception prints
// "TOOL: message" and returns 1. As Slurm's commands: -V or --version as
// the only argument prints version_line(tool) and returns 0; -h is --help.
int run_main(const char* tool, int (*run)(int, char**), int argc, char** argv);

// "nvlblock-check 0.1.0 (nvlblock, built for Slurm 24.11.5)", or "(nvlblock,
// built without the Slurm plugins)".
std::string version_line(const char* tool);

// The Slurm release this build's plugins were built for ("24.11.5"), or ""
// for a build without them.
std::string built_for_slurm();

} // namespace nvlblock::cli
