// SPDX-License-Identifier: GPL-2.0-or-later
//
// The Slurm lexical helpers both configuration readers share: the pair
// scanner under each reader's rules, Include detection and path resolution.
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"

#include <gtest/gtest.h>

#include <cctype>

using namespace nvlblock;
using namespace nvlblock::slurm_syntax;

namespace {

bool word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
bool any_key_char(char c) {
    return c != '=' && !is_space(c);
}
constexpr PairRules kStrict{word_char, true, true};
constexpr PairRules kLoose{any_key_char, false, false};

} // namespace

TEST(SlurmSyntax, PairAdvancesPastValueAndQuotes) {
    std::string_view rest = "  Name = \"a b\" Nodes=x[1-2]";
    KeyValue kv;
    ASSERT_EQ(next_pair(rest, kv, kStrict), PairScan::kPair);
    EXPECT_EQ(kv.key, "Name");
    EXPECT_EQ(kv.value, "a b");
    EXPECT_EQ(rest, " Nodes=x[1-2]");
    ASSERT_EQ(next_pair(rest, kv, kStrict), PairScan::kPair);
    EXPECT_EQ(kv.key, "Nodes");
    EXPECT_EQ(kv.value, "x[1-2]");
    EXPECT_TRUE(rest.empty());
}

TEST(SlurmSyntax, RulesDecideWhatIsMalformed) {
    KeyValue kv;
    std::string_view empty_value = "Key= ";
    EXPECT_EQ(next_pair(empty_value, kv, kStrict), PairScan::kMalformed);
    EXPECT_EQ(empty_value, "Key= "); // only a pair advances
    EXPECT_EQ(next_pair(empty_value, kv, kLoose), PairScan::kPair);
    EXPECT_EQ(kv.value, "");

    std::string_view glued = "A=\"x\"B=y";
    EXPECT_EQ(next_pair(glued, kv, kStrict), PairScan::kMalformed);
    ASSERT_EQ(next_pair(glued, kv, kLoose), PairScan::kPair);
    EXPECT_EQ(glued, "B=y");

    std::string_view dash = "Block-Name=r1";
    EXPECT_EQ(next_pair(dash, kv, kStrict), PairScan::kMalformed);
    ASSERT_EQ(next_pair(dash, kv, kLoose), PairScan::kPair);
    EXPECT_EQ(kv.key, "Block-Name");

    std::string_view open = "Key=\"no end";
    EXPECT_EQ(next_pair(open, kv, kLoose), PairScan::kOpenQuote);
    std::string_view no_equals = "Key value";
    EXPECT_EQ(next_pair(no_equals, kv, kLoose), PairScan::kMalformed);
}

TEST(SlurmSyntax, IncludeTarget) {
    EXPECT_EQ(include_target("Include extra.conf").value_or("?"), "extra.conf");
    EXPECT_EQ(include_target("INCLUDE\t a b").value_or("?"), " a b");
    EXPECT_EQ(include_target("include ").value_or("?"), "");
    EXPECT_FALSE(include_target("include"));
    EXPECT_FALSE(include_target("Includes=x"));
    EXPECT_FALSE(include_target("IncludeX y"));
}

TEST(SlurmSyntax, SpaceHelpers) {
    EXPECT_TRUE(only_space(" \t\r"));
    EXPECT_FALSE(only_space(" x "));
    EXPECT_EQ(skip_space("  a b "), "a b ");
    EXPECT_EQ(trim("  a b \t"), "a b");
    EXPECT_EQ(lower("NodeName"), "nodename");
}

TEST(SlurmSyntax, PathsResolveAgainstTheDirectory) {
    EXPECT_EQ(dirname_of("/etc/slurm/slurm.conf"), "/etc/slurm");
    EXPECT_EQ(dirname_of("/slurm.conf"), "/");
    EXPECT_EQ(dirname_of("slurm.conf"), ".");
    EXPECT_EQ(path_in("/etc/slurm", "topology.conf"), "/etc/slurm/topology.conf");
    EXPECT_EQ(path_in("/etc/slurm", "/abs/t.conf"), "/abs/t.conf");
    EXPECT_EQ(path_in("/", "t.conf"), "/t.conf");
    EXPECT_EQ(path_in(".", "t.conf"), "./t.conf");
}
