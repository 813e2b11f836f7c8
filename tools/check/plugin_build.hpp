// SPDX-License-Identifier: GPL-2.0-or-later
//
// `nvlblock-check --plugins`: which Slurm release the installed nvlblock
// plugins were built for, against the Slurm release that runs here. Slurm
// loads a plugin only into the exact release it was built for
// (src/common/plugin.c compares plugin_version), so a Slurm upgraded without
// rebuilding nvlblock stops slurmctld at its next start. Each plugin carries
// the line "nvlblock-build: nvlblock=V slurm=R" (plugin/common/slurm_bridge.c).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nvlblock::check {

inline constexpr const char* kPluginBuildMarker = "nvlblock-build: ";
inline constexpr const char* kPluginFiles[] = {"topology_nvlblock.so", "prep_nvlblock.so"};

struct PluginBuild {
    std::string nvlblock; // "0.1.0"
    std::string slurm;    // "24.11.5"
};

// The build line in a plugin file's bytes, if any.
std::optional<PluginBuild> find_plugin_build(std::string_view bytes);

// "slurm 24.11.5" (what `slurmctld -V` and the client commands print) -> "24.11.5".
std::optional<std::string> slurm_release_of(std::string_view version_output);

// "25.05.8" -> 2505, as the core numbers releases (model/topology.hpp
// kDefaultSlurmRelease): the generation whose topology/block rules apply.
std::optional<int> slurm_generation_of(std::string_view release);

enum class PluginState { kMatches, kOtherRelease, kMissing, kUnmarked };

struct PluginFinding {
    std::string file; // "topology_nvlblock.so"
    std::string path;
    PluginState state = PluginState::kMissing;
    PluginBuild build; // when marked
};

// Each of kPluginFiles in `dir`, against `release`.
std::vector<PluginFinding> check_plugin_builds(const std::string& dir, const std::string& release);

} // namespace nvlblock::check
