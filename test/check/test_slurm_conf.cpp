// SPDX-License-Identifier: GPL-2.0-or-later
//
// slurm.conf as nvlblock-check reads it: the node universe in definition
// order, read the way Slurm's parser reads the file.
#include "check_test_support.hpp"
#include "slurm_conf.hpp"

#include <gtest/gtest.h>

namespace nvlblock::check {
namespace {

using namespace tool;

using test::kData;

std::vector<std::string> messages(const SlurmConf& c) {
    std::vector<std::string> out;
    for (const auto& p : c.problems)
        out.push_back(p.str());
    return out;
}

TEST(SlurmConf, NodesInDefinitionOrderThroughIncludes) {
    const SlurmConf c = read_slurm_conf(kData + "/validate/slurm.conf");
    EXPECT_TRUE(c.problems.empty()) << messages(c).front();
    ASSERT_EQ(c.nodes.size(), 51u);
    EXPECT_EQ(c.nodes.front().name, "gb0001");
    EXPECT_EQ(c.nodes[48].name, "gb0049");
    EXPECT_EQ(c.nodes[49].name, "login01");
    EXPECT_EQ(c.nodes.back().name, "login02");
    // Where each node is defined: the included file, the continued line's first line.
    EXPECT_EQ(c.nodes.front().where.str(), kData + "/validate/nodes.conf:2");
    EXPECT_EQ(c.nodes[36].where.str(), kData + "/validate/nodes.conf:4");
    EXPECT_EQ(c.nodes.back().where.str(), kData + "/validate/slurm.conf:10");
    EXPECT_EQ(c.get("statesavelocation").value_or(""), "/var/spool/slurmctld");
    EXPECT_EQ(c.get("TOPOLOGYPLUGIN").value_or(""), "topology/nvlblock");
    EXPECT_FALSE(c.get("NodeName")); // node lines are not settings
}

TEST(SlurmConf, KeysInAnyCaseDefaultSkippedCommentsAndContinuations) {
    const SlurmConf c = read_slurm_conf_text("NODENAME=DEFAULT CPUs=4\n"
                                             "nodename=a[1-2] \\\n"
                                             "   CPUs=8 # a comment\n"
                                             "  NodeName=b1 Features=\"x y\"\n"
                                             "NodeName=c\\#1  # an escaped '#' is part of the name\n"
                                             "SlurmctldPort=6817 SlurmdPort=6818\n",
                                             "slurm.conf");
    EXPECT_TRUE(c.problems.empty()) << messages(c).front();
    EXPECT_EQ(c.node_names(), (std::vector<std::string>{"a1", "a2", "b1", "c#1"}));
    EXPECT_EQ(c.nodes[2].where.line, 4u);
    EXPECT_EQ(c.get("slurmdport").value_or(""), "6818"); // several settings on one line
}

TEST(SlurmConf, PartitionPreemptModeAndTheController) {
    const SlurmConf c = read_slurm_conf_text("SlurmctldHost=ctl01(10.0.0.1)\nSlurmctldHost=ctl02\n"
                                             "PartitionName=a Nodes=ALL\n"
                                             "PartitionName=DEFAULT PreemptMode=REQUEUE\n"
                                             "PartitionName=b Nodes=ALL\n"
                                             "PartitionName=c Nodes=ALL PreemptMode=CANCEL\n",
                                             "t.conf");
    ASSERT_EQ(c.partitions.size(), 3u);
    EXPECT_EQ(c.partitions[0].preempt_mode, "");        // before the DEFAULT line
    EXPECT_EQ(c.partitions[1].preempt_mode, "REQUEUE"); // from it
    EXPECT_EQ(c.partitions[2].preempt_mode, "CANCEL");  // its own
    // The primary controller, at its line.
    ASSERT_TRUE(c.setting("SlurmctldHost"));
    EXPECT_EQ(c.setting("slurmctldhost")->value, "ctl01(10.0.0.1)");
    EXPECT_EQ(c.setting("SlurmctldHost")->where.line, 1);
}

TEST(SlurmConf, IncludeIsRelativeToSlurmConfAndExpandsClusterName) {
    test::TempDir d;
    d.write("sub/nodes-nvl.conf", "NodeName=x[1-3]\n");
    // Slurm resolves Include against slurm.conf's directory, even from an included file.
    d.write("sub/more.conf", "Include sub/nodes-%c.conf\n");
    const std::string path = d.write("slurm.conf", "ClusterName=nvl\nInclude sub/more.conf\nNodeName=y\n");
    const SlurmConf c = read_slurm_conf(path);
    EXPECT_TRUE(c.problems.empty()) << messages(c).front();
    EXPECT_EQ(c.node_names(), (std::vector<std::string>{"x1", "x2", "x3", "y"}));
    EXPECT_EQ(c.nodes.front().where.str(), d.file("sub/nodes-nvl.conf") + ":1");
}

TEST(SlurmConf, EveryProblemWithItsLine) {
    const SlurmConf c = read_slurm_conf_text("NodeName=n[1-3]\n"
                                             "NodeName=n[3-4]\n"
                                             "NodeName=m[1-\n"
                                             "Include missing.conf\n"
                                             "Include conf.d/*.conf\n"
                                             "Include %c.conf\n"
                                             "garbage here\n",
                                             "slurm.conf", "/nonexistent");
    EXPECT_EQ(messages(c),
              (std::vector<std::string>{
                  "slurm.conf:2: node n3 is defined twice (first at slurm.conf:1); slurmctld stops with "
                  "\"Duplicated NodeName\"",
                  "slurm.conf:3: NodeName: bad hostlist 'm[1-': missing ']'",
                  "slurm.conf:4: Include missing.conf: cannot read the file: No such file or directory",
                  "slurm.conf:5: Include conf.d/*.conf: Slurm does not expand '*' in Include; it skips the line",
                  "slurm.conf:6: Include %c.conf: %c needs ClusterName= set before it",
                  "slurm.conf:7: cannot parse 'garbage': expected Key=Value",
              }));
    EXPECT_EQ(c.node_names(), (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
}

TEST(SlurmConf, UnreadableFileIsAProblemNotAnException) {
    const SlurmConf c = read_slurm_conf("/nonexistent/slurm.conf");
    ASSERT_EQ(c.problems.size(), 1u);
    EXPECT_EQ(c.problems[0].str(), "/nonexistent/slurm.conf: cannot read the file: No such file or directory");
}

TEST(SlurmConf, DefaultPathFollowsSlurmConf) {
    setenv("SLURM_CONF", "/etc/x/slurm.conf", 1);
    EXPECT_EQ(default_slurm_conf_path(), "/etc/x/slurm.conf");
    unsetenv("SLURM_CONF");
    EXPECT_EQ(default_slurm_conf_path(), "/etc/slurm/slurm.conf");
}

} // namespace
} // namespace nvlblock::check
