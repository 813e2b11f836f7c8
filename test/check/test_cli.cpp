// SPDX-License-Identifier: GPL-2.0-or-later
//
// tools/common: list splitting and the run-main wrapper every tool's main() is.
#include "cli.hpp"
#include "run_main.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

using namespace nvlblock;

namespace {

std::vector<std::string> split(const std::string& s) {
    return cli::split_list(s);
}

int usage_error(int, char**) {
    throw cli::UsageError("bad option");
}
int failure(int, char**) {
    throw std::runtime_error("no such file");
}
int success(int argc, char**) {
    return argc;
}
int help_asked(int argc, char** argv) {
    return argc == 2 && std::string(argv[1]) == "--help" ? 0 : 3;
}

} // namespace

TEST(Cli, SplitListKeepsEmptyItems) {
    EXPECT_EQ(split("a,b"), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(split("a,,b,"), (std::vector<std::string>{"a", "", "b", ""}));
    EXPECT_EQ(split(""), (std::vector<std::string>{""}));
}

TEST(Cli, ArgsListIsEmptyWhenAbsentOrEmpty) {
    char tool[] = "tool", opt[] = "--policies=block,,nvlblock", empty[] = "--x=";
    char* argv[] = {tool, opt, empty};
    cli::Args args(3, argv, {"policies", "x"}, {});
    EXPECT_EQ(args.list("policies"), (std::vector<std::string>{"block", "", "nvlblock"}));
    EXPECT_TRUE(args.list("x").empty());
    EXPECT_TRUE(args.list("missing").empty());
}

TEST(Cli, RunMainTurnsExceptionsIntoExitStatus) {
    char tool[] = "tool";
    char* argv[] = {tool};
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli::run_main("nvlblock-x", usage_error, 1, argv), 2);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "nvlblock-x: bad option\n(try --help)\n");
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli::run_main("nvlblock-x", failure, 1, argv), 1);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "nvlblock-x: no such file\n");
    EXPECT_EQ(cli::run_main("nvlblock-x", success, 1, argv), 1);
}

TEST(Cli, RunMainAnswersVersionAndShortHelpAsSlurmsCommandsDo) {
    // One build per Slurm micro release: an admin asks a host's tools
    // which nvlblock and which Slurm they were built for.
    for (const char* flag : {"-V", "--version"}) {
        char tool[] = "tool";
        std::string f = flag;
        char* argv[] = {tool, f.data()};
        testing::internal::CaptureStdout();
        EXPECT_EQ(cli::run_main("nvlblock-x", failure, 2, argv), 0) << flag;
        const std::string out = testing::internal::GetCapturedStdout();
        EXPECT_EQ(out, cli::version_line("nvlblock-x") + "\n");
        EXPECT_EQ(out.rfind("nvlblock-x ", 0), 0u) << out;
        EXPECT_NE(out.find("(nvlblock, built "), std::string::npos) << out;
    }
    char tool[] = "tool", h[] = "-h";
    char* argv[] = {tool, h};
    EXPECT_EQ(cli::run_main("nvlblock-x", help_asked, 2, argv), 0);
}
