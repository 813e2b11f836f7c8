// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-check --plugins: the build line in a plugin's bytes, the Slurm
// release from `slurmctld -V`, and each plugin file of a directory judged.
#include "plugin_build.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace nvlblock::check;

namespace {

std::string bytes_with(const std::string& line) {
    return std::string("\x7f"
                       "ELF\0\0junk",
                       10) +
           line + std::string("\0more\0", 6);
}

} // namespace

TEST(PluginBuild, FoundInTheFilesBytes) {
    const auto b = find_plugin_build(bytes_with("nvlblock-build: nvlblock=0.1.0 slurm=24.11.5"));
    ASSERT_TRUE(b);
    EXPECT_EQ(b->nvlblock, "0.1.0");
    EXPECT_EQ(b->slurm, "24.11.5");
    EXPECT_FALSE(find_plugin_build(bytes_with("nothing of ours")));
    EXPECT_FALSE(find_plugin_build(bytes_with("nvlblock-build: nvlblock=0.1.0")));
}

TEST(PluginBuild, SlurmReleaseFromVersionOutput) {
    EXPECT_EQ(slurm_release_of("slurm 24.11.5\n"), "24.11.5");
    EXPECT_EQ(slurm_release_of("slurm 24.11.5-4+deb13u1\n"), "24.11.5");
    EXPECT_EQ(slurm_release_of("slurm 26.11.0-0rc1\n"), "26.11.0-0rc1"); // a snapshot is not the release
    EXPECT_EQ(slurm_release_of("slurm 26.11.0-0pre2 (x)\n"), "26.11.0-0pre2");
    EXPECT_FALSE(slurm_release_of("slurm-wlm 22\n"));
    EXPECT_FALSE(slurm_release_of(""));
    EXPECT_FALSE(slurm_release_of("slurm 24.11\n"));
}

TEST(PluginBuild, EachPluginOfADirectoryJudged) {
    char tmpl[] = "/tmp/nvlb-plugins-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    std::ofstream(dir + "/topology_nvlblock.so", std::ios::binary)
        << bytes_with("nvlblock-build: nvlblock=0.1.0 slurm=24.11.5");
    auto found = check_plugin_builds(dir, "24.11.5");
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].state, PluginState::kMatches);
    EXPECT_EQ(found[1].file, "prep_nvlblock.so");
    EXPECT_EQ(found[1].state, PluginState::kMissing);
    std::ofstream(dir + "/prep_nvlblock.so", std::ios::binary) << bytes_with("an older build");
    found = check_plugin_builds(dir, "24.11.6");
    EXPECT_EQ(found[0].state, PluginState::kOtherRelease);
    EXPECT_EQ(found[0].build.slurm, "24.11.5");
    EXPECT_EQ(found[1].state, PluginState::kUnmarked);
    std::remove((dir + "/topology_nvlblock.so").c_str());
    std::remove((dir + "/prep_nvlblock.so").c_str());
    std::remove(dir.c_str());
}
