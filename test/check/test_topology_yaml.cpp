// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-check and Slurm's topology.yaml: reading real files (the example
// of topology.yaml(5), Slurm's own unit test and test_150 topologies, a
// Slinky-style config map), choosing the block topology, converting it into
// topology.conf + nvlblock.yaml that load as slurmctld loads them, reporting
// what is not carried over, refusing bad files with file:line; and the check
// of a slurm.conf with a topology.yaml beside it.
#include "check_test_support.hpp"
#include "readers/load_topology.hpp"
#include "topology_yaml.hpp"

#include <gtest/gtest.h>

namespace nvlblock::check {
namespace {

using namespace tool;

using test::read_file;
using test::Result;
using test::run;
using test::TempDir;

const std::string kBin = CHECK_BIN;
const std::string kDir = test::kData + "/topology_yaml";

SlurmTopologyYaml load(const std::string& name) {
    return read_slurm_topology_yaml(read_file(kDir + "/" + name), name);
}

std::vector<std::string> messages(const Conversion& c, Severity s) {
    std::vector<std::string> out;
    for (const auto& f : c.findings)
        if (f.severity == s)
            out.push_back(f.str());
    return out;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
    for (const auto& l : lines)
        if (l.find(needle) != std::string::npos)
            return true;
    return false;
}

// The converted files, written side by side and loaded as slurmctld would.
Topology load_converted(const Conversion& c, const TempDir& dir) {
    dir.write("topology.conf", c.topology_conf);
    return load_topology(dir.write("nvlblock.yaml", c.nvlblock_yaml));
}

TEST(TopologyYaml, ReadsTheManPageExampleWithEveryType) {
    const auto y = load("slurm_man_26_05.yaml");
    ASSERT_EQ(y.topologies.size(), 6u);
    std::vector<std::string> types;
    for (const auto& t : y.topologies)
        types.push_back(t.name + ":" + t.type);
    EXPECT_EQ(types, (std::vector<std::string>{"topo1:tree", "topo2:block", "topo3:flat", "topo3a:flat", "topo4:ring",
                                               "topo5:torus3d"}));
    EXPECT_EQ(y.cluster_default()->name, "topo1");
    const auto& b = y.topologies[1];
    EXPECT_EQ(b.block_sizes, (std::vector<std::uint32_t>{4, 16}));
    ASSERT_EQ(b.blocks.size(), 4u);
    EXPECT_EQ(b.blocks[3].name, "b4");
    EXPECT_EQ(b.blocks[3].nodes, "node[13-16]");
    EXPECT_EQ(b.blocks[3].where.line, 27u);
    EXPECT_TRUE(y.warnings.empty());
}

TEST(TopologyYaml, ConvertsTheOnlyBlockTopologyWhenTheDefaultIsATree) {
    const auto c = convert_topology_yaml(load("slurm_man_26_05.yaml"), {}, nullptr);
    ASSERT_TRUE(c.ok()) << ::testing::PrintToString(messages(c, Severity::kError));
    EXPECT_EQ(c.topology, "topo2");
    EXPECT_EQ(c.blocks, 4u);
    EXPECT_EQ(c.nodes, 16u);
    EXPECT_NE(c.topology_conf.find("BlockName=b1 Nodes=node[01-04]\n"), std::string::npos);
    EXPECT_NE(c.topology_conf.find("BlockSizes=4,16\n"), std::string::npos);
    const auto notes = messages(c, Severity::kNote);
    EXPECT_TRUE(any_contains(notes, "the cluster default is 'topo1' (tree); taking the only block topology"));
    for (const std::string t :
         {"'topo1' (tree)", "'topo3' (flat)", "'topo3a' (flat)", "'topo4' (ring)", "'topo5' (torus3d)"})
        EXPECT_TRUE(any_contains(notes, t + " is not carried over")) << t;
    EXPECT_TRUE(any_contains(notes, "slurm_man_26_05.yaml: note: move slurm_man_26_05.yaml away"));

    // As topology/block placed: slices of the base size 4, no spares, levels 4 and 16.
    TempDir dir;
    const Topology t = load_converted(c, dir);
    ASSERT_EQ(t.blocks().size(), 4u);
    EXPECT_EQ(t.blocks()[0].settings.slice, 4);
    EXPECT_EQ(t.blocks()[0].settings.spares, 0);
    EXPECT_EQ(c.nvlblock_yaml.find("reserve:"), std::string::npos) << c.nvlblock_yaml; // no spares: none said
    EXPECT_EQ(t.block_sizes(), (std::vector<std::uint32_t>{4, 16}));
}

TEST(TopologyYaml, ReadsSlurmsUnitTestFileWithUnindentedListsAndCapitalisedBooleans) {
    const auto y = load("slurm_unit_test.yaml");
    ASSERT_EQ(y.topologies.size(), 3u);
    EXPECT_EQ(y.cluster_default()->name, "topo3");
    EXPECT_FALSE(y.topologies[1].cluster_default);
    const auto c = convert_topology_yaml(y, {}, nullptr);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.topology, "topo2");
    EXPECT_EQ(c.blocks, 4u);
}

TEST(TopologyYaml, ConvertsTheTest150TopologyWithFlowStyle) {
    const auto c = convert_topology_yaml(load("slurm_test_150.yaml"), {}, nullptr);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c.topology, "default");
    EXPECT_EQ(c.topology_conf.substr(c.topology_conf.find("BlockName")),
              "BlockName=b1 Nodes=node[1-4]\nBlockName=b2 Nodes=node[5-8]\nBlockSizes=4,8\n");
    // Only the file itself to move away: nothing else is left behind.
    EXPECT_EQ(messages(c, Severity::kNote).size(), 1u);
}

TEST(TopologyYaml, SlinkyStyleFileAgainstItsSlurmConf) {
    const SlurmConf conf = read_slurm_conf(kDir + "/slinky_slurm.conf");
    ASSERT_TRUE(conf.problems.empty());
    ASSERT_EQ(conf.partitions.size(), 2u);
    EXPECT_EQ(conf.partitions[1].topology, "nvl72");

    ConversionOptions by_partition;
    by_partition.partition = "gpu";
    const auto c = convert_topology_yaml(load("slinky.yaml"), by_partition, &conf);
    ASSERT_TRUE(c.ok()) << ::testing::PrintToString(messages(c, Severity::kError));
    EXPECT_EQ(c.topology, "nvl72");
    EXPECT_EQ(c.nodes, 52u);
    const auto warnings = messages(c, Severity::kWarning);
    EXPECT_TRUE(any_contains(warnings, "slinky_slurm.conf:9: warning: partition gpu names Topology=nvl72: remove it"));
    const auto notes = messages(c, Severity::kNote);
    EXPECT_TRUE(any_contains(notes, "topology 'cpu' (flat), used by partition cpu, is not carried over"));
    EXPECT_TRUE(any_contains(notes, "slinky_slurm.conf:3: note: set TopologyPlugin=topology/nvlblock"));

    // With spares: the partial rack a02 (16 trays) cannot hold 16 + 2.
    ConversionOptions spares = by_partition;
    spares.spares = 2;
    const auto bad = convert_topology_yaml(load("slinky.yaml"), spares, &conf);
    EXPECT_FALSE(bad.ok());
    EXPECT_TRUE(any_contains(messages(bad, Severity::kError), "block 'a02': slice 16 plus 2 spares needs 18 nodes"));
    EXPECT_TRUE(bad.nvlblock_yaml.empty());
    spares.slice = 14;
    const auto good = convert_topology_yaml(load("slinky.yaml"), spares, &conf);
    ASSERT_TRUE(good.ok());
    TempDir dir;
    const Topology t = load_converted(good, dir);
    EXPECT_EQ(t.blocks()[1].settings.slice, 14);
    EXPECT_EQ(t.blocks()[1].settings.spares, 2);
    // The reserve is written although it is the default: the file says what its spares cost.
    EXPECT_NE(good.nvlblock_yaml.find("  spares: 2\n  reserve: reclaim"), std::string::npos) << good.nvlblock_yaml;
    EXPECT_EQ(t.blocks()[1].settings.reserve, SpareReserve::kReclaim);
}

TEST(TopologyYaml, NodesMissingFromSlurmConfAreErrors) {
    TempDir dir;
    const SlurmConf conf =
        read_slurm_conf(dir.write("slurm.conf", "NodeName=node[1-6] CPUs=4\nPartitionName=p Nodes=ALL\n"));
    const auto c = convert_topology_yaml(load("slurm_test_150.yaml"), {}, &conf);
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(any_contains(messages(c, Severity::kError), "node7"));
}

TEST(TopologyYaml, ChoosingATopology) {
    const std::string two = "- topology: a\n  block:\n    blocks:\n      - {block: x, nodes: 'n[1-2]'}\n"
                            "- topology: b\n  block:\n    blocks:\n      - {block: y, nodes: 'n[3-4]'}\n"
                            "- topology: c\n  cluster_default: yes\n  tree:\n    switches: []\n";
    const auto y = read_slurm_topology_yaml(two, "t.yaml");
    auto c = convert_topology_yaml(y, {}, nullptr);
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(any_contains(messages(c, Severity::kError), "several block topologies (a, b)"));
    ConversionOptions o;
    o.topology = "b";
    c = convert_topology_yaml(y, o, nullptr);
    ASSERT_TRUE(c.ok());
    EXPECT_NE(c.topology_conf.find("BlockName=y Nodes=n[3-4]"), std::string::npos);
    o.topology = "c";
    EXPECT_TRUE(any_contains(messages(convert_topology_yaml(y, o, nullptr), Severity::kError),
                             "t.yaml:9: topology 'c' (tree) is not a block topology"));
    o.topology = "nope";
    EXPECT_TRUE(any_contains(messages(convert_topology_yaml(y, o, nullptr), Severity::kError),
                             "no topology 'nope' in the file (block topologies: a, b)"));
}

// A block smaller than the first, without block_sizes: Slurm 24.11 refuses
// to start with it, 25.05 takes it as a base block with fewer nodes. The
// conversion loads its files back by the site's release's rules.
TEST(TopologyYaml, ASmallerBlockIsJudgedByTheSitesRelease) {
    const auto y = read_slurm_topology_yaml("- topology: racks\n  cluster_default: true\n  block:\n    blocks:\n"
                                            "      - {block: r1, nodes: 'n[01-18]'}\n"
                                            "      - {block: r2, nodes: 'n[19-31]'}\n",
                                            "t.yaml");
    ConversionOptions o;
    o.slurm_release = 2411;
    const Conversion old = convert_topology_yaml(y, o, nullptr);
    EXPECT_FALSE(old.ok());
    EXPECT_TRUE(any_contains(messages(old, Severity::kError), "fewer than the base block size 18"))
        << testing::PrintToString(messages(old, Severity::kError));
    o.slurm_release = 2505;
    const Conversion now = convert_topology_yaml(y, o, nullptr);
    EXPECT_TRUE(now.ok()) << testing::PrintToString(messages(now, Severity::kError));
    EXPECT_NE(now.topology_conf.find("BlockName=r2 Nodes=n[19-31]"), std::string::npos);
}

std::string problems_of(const std::string& text) {
    try {
        read_slurm_topology_yaml(text, "t.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

TEST(TopologyYaml, BadFilesNameTheLine) {
    EXPECT_EQ(problems_of(""), "t.yaml:1: the file is empty; expected a list of topologies ('- topology: NAME')");
    EXPECT_EQ(problems_of("topology: a\nblock: {}\n"),
              "t.yaml:1: expected a list of topologies at the top, found a mapping (each entry '- topology: NAME' "
              "and one of block, flat, ring, torus3d, tree)");
    EXPECT_EQ(problems_of("- topology: a\n  block: [1]\n"), "t.yaml:2: block must be a mapping, found a list");
    EXPECT_EQ(problems_of("- topology: a\n  block:\n    blocks: b1\n"),
              "t.yaml:3: blocks must be a list, found a value");
    EXPECT_EQ(problems_of("- topology: a\n  flat: true\n  tree:\n    switches: []\n"),
              "t.yaml:4: 'tree' and 'flat' exclude each other: a topology has one type");
    EXPECT_EQ(problems_of("- topology: a\n  cluster_default: maybe\n  flat: true\n"),
              "t.yaml:2: cluster_default: 'maybe' is not true or false");
    EXPECT_EQ(problems_of("- topology: a\n  block:\n    block_sizes: [4, x]\n    blocks: []\n"),
              "t.yaml:3: block_sizes: 'x' is not a whole number");
    EXPECT_EQ(problems_of("- topology: a\n  block:\n    blocks:\n      - block: b1\n"),
              "t.yaml:4: block 'b1' has no 'nodes:'");
    EXPECT_EQ(problems_of("- topology: a\n  flat: true\n- topology: a\n  flat: true\n"),
              "t.yaml:3: topology 'a' is defined twice");
    EXPECT_EQ(problems_of("- cluster_default: true\n"),
              "t.yaml:1: a topology without 'topology: NAME'\nt.yaml:1: topology '' has no type: one of block, flat, "
              "ring, torus3d, tree");
    EXPECT_NE(problems_of("- topology: [a\n").find("t.yaml:"), std::string::npos);
    // Unknown keys are accepted (Slurm's parser passes them by) but reported.
    const auto y = read_slurm_topology_yaml("- topology: a\n  colour: red\n  flat: true\n", "t.yaml");
    ASSERT_EQ(y.warnings.size(), 1u);
    EXPECT_EQ(y.warnings[0].str(), "t.yaml:2: unknown key 'colour' in a topology; ignored");
}

TEST(TopologyYaml, BadHostlistIsAnErrorAtItsBlock) {
    const auto y = read_slurm_topology_yaml("- topology: a\n  block:\n    blocks:\n      - block: b1\n"
                                            "        nodes: n[3-1]\n",
                                            "t.yaml");
    const auto c = convert_topology_yaml(y, {}, nullptr);
    EXPECT_FALSE(c.ok());
    EXPECT_TRUE(any_contains(messages(c, Severity::kError), "t.yaml:4: nodes: "));
}

// The command an operator runs, with slurm.conf beside topology.yaml: the
// plain check refuses that directory, the conversion writes both files and
// keeps existing ones unless --force.
TEST(TopologyYaml, CommandLine) {
    TempDir dir;
    dir.write("slurm.conf", read_file(kDir + "/slinky_slurm.conf"));
    dir.write("topology.yaml", read_file(kDir + "/slinky.yaml"));
    dir.write("topology.conf", "BlockName=old Nodes=gb200-a01-[00-17]\n");

    Result r = run(kBin + " --slurm-conf slurm.conf topology.conf", dir.path());
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.err.find("topology.yaml: Slurm 25.05 and later read this file and ignore TopologyPlugin= and "
                         "topology.conf, so topology/nvlblock would not run"),
              std::string::npos)
        << r.err;

    r = run(kBin + " --from-topology-yaml topology.yaml --slurm-conf slurm.conf --output-dir .", dir.path());
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.out.find("./topology.conf: exists; nothing written (--force replaces it)"), std::string::npos) << r.out;
    r = run(kBin + " --from-topology-yaml topology.yaml --slurm-conf slurm.conf --output-dir . --force "
                   "--slice 14 --spares 2",
            dir.path());
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("nvlblock-check: topology 'nvl72' of topology.yaml: 3 blocks, 52 nodes; wrote "
                         "./topology.conf and ./nvlblock.yaml"),
              std::string::npos)
        << r.out;
    EXPECT_NE(read_file(dir.file("topology.conf")).find("BlockName=a02 Nodes=gb200-a02-[00-07,10-17]"),
              std::string::npos);

    // Done as the findings say (topology.yaml moved away, TopologyPlugin= set,
    // the partition's Topology= removed), the written files pass the check.
    std::filesystem::rename(dir.file("topology.yaml"), dir.file("topology.yaml.orig"));
    std::string conf = read_file(dir.file("slurm.conf"));
    conf.replace(conf.find("topology/block"), 14, "topology/nvlblock");
    conf.replace(conf.find(" Topology=nvl72"), 15, "");
    dir.write("slurm.conf", conf);
    r = run(kBin + " --slurm-conf slurm.conf", dir.path());
    EXPECT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("nvlblock.yaml: OK: 3 blocks (2 x 18, 1 x 16 nodes)"), std::string::npos) << r.out;

    // Printed, not written: the files on stdout, the findings on stderr.
    r = run(kBin + " --from-topology-yaml topology.yaml.orig --slurm-conf slurm.conf", dir.path());
    EXPECT_EQ(r.rc, 0);
    EXPECT_EQ(r.out.rfind("==> topology.conf <==\n", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("\n==> nvlblock.yaml <==\n"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("taking the only block topology, 'nvl72'"), std::string::npos) << r.err;
    EXPECT_EQ(run(kBin + " --from-topology-yaml x.yaml --generate", dir.path()).rc, 2);
    EXPECT_EQ(run(kBin + " --output-dir .", dir.path()).rc, 2);
}

} // namespace
} // namespace nvlblock::check
