// SPDX-License-Identifier: GPL-2.0-or-later
//
// tools/common: list splitting and the run-main wrapper every tool's main() is.
#include "cli.hpp"
#include "run_main.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

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
