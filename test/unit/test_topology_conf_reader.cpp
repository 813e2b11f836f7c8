// SPDX-License-Identifier: GPL-2.0-or-later
//
// topology.conf in topology/block syntax: Slurm's lexical rules (keys in any
// case, comments, escapes, continuation lines, quotes, Include) and Slurm
// 24.11's validity rules for BlockSizes and block sizes
// (src/plugins/topology/block/block_record.c), so that a file Slurm accepts
// is accepted and one it rejects is rejected, with file:line and the reason.
#include "readers/load_topology.hpp"
#include "readers/topology_conf_reader.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nvlblock {
namespace {

using test::conf_topology;
using test::TempDir;

ConfigError conf_error(const std::string& text, const std::vector<std::string>* universe = nullptr) {
    try {
        conf_topology(text, universe);
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for:\n" << text;
    return ConfigError({"", 0}, "");
}

std::string conf_message(const std::string& text, const std::vector<std::string>* universe = nullptr) {
    return conf_error(text, universe).what();
}

// gb01..gbNN
std::vector<std::string> nodes_up_to(int last) {
    std::vector<std::string> v;
    for (int i = 1; i <= last; ++i)
        v.push_back((i < 10 ? "gb0" : "gb") + std::to_string(i));
    return v;
}

TEST(TopologyConf, TwoRacksWithDefaults) {
    const Topology t = conf_topology("BlockName=rack01 Nodes=gb[01-18]\nBlockName=rack02 Nodes=gb[19-36]\n");
    EXPECT_EQ(t.format(), SourceFormat::kTopologyConf);
    EXPECT_EQ(t.source(), "topology.conf");
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.node_count(), 36u);
    EXPECT_TRUE(t.block_sizes().empty());
    EXPECT_TRUE(t.warnings().empty());
    // Plain topology/block: slices of the base size, no spares, no lending.
    EXPECT_EQ(t.defaults().slice, 18);
    EXPECT_EQ(t.defaults().spares, 0);
    EXPECT_FALSE(t.defaults().lending);
    for (const Block& b : t.blocks()) {
        EXPECT_EQ(b.size(), 18);
        EXPECT_EQ(b.settings.slice, 18);
        EXPECT_EQ(b.settings.spares, 0);
        EXPECT_FALSE(b.settings.lending);
    }
    EXPECT_EQ(t.block(1).name, "rack02");
    EXPECT_EQ(t.block(1).nodes_expr, "gb[19-36]");
    EXPECT_EQ(t.block(1).where.str(), "topology.conf:2");
}

TEST(TopologyConf, KeysInAnyCase) {
    const Topology t = conf_topology("blockname=r1 NODES=gb[01-18]\nBLOCKNAME=r2 nodes=gb[19-36]\nblocksizes=18\n");
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).name, "r1");
    EXPECT_EQ(t.block(1).size(), 18);
    EXPECT_EQ(t.block_sizes(), std::vector<std::uint32_t>{18});
}

TEST(TopologyConf, CommentsAndBlankLines) {
    const Topology t = conf_topology("# topology for two racks\n"
                                     "\n"
                                     "   \n"
                                     "BlockName=r1 Nodes=gb[01-18] # the first rack\n"
                                     "#BlockName=r2 Nodes=gb[19-36]\n"
                                     "   BlockName=r3 Nodes=gb[37-54]   \n");
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).where.line, 4u);
    EXPECT_EQ(t.block(1).name, "r3");
    EXPECT_EQ(t.block(1).where.line, 6u);
}

TEST(TopologyConf, EscapedHashIsNotAComment) {
    const Topology t = conf_topology("BlockName=r\\#1 Nodes=gb[01-18]\n");
    EXPECT_EQ(t.block(0).name, "r#1");
    // An escaped backslash before '#' does not escape it: "r\\" (a name of
    // "r\"), then a comment that swallows Nodes=.
    EXPECT_EQ(conf_message("BlockName=r\\\\#1 Nodes=gb[01-18]\n"), "topology.conf:1: block 'r\\' has no Nodes=");
}

TEST(TopologyConf, ContinuationLines) {
    const Topology t = conf_topology("BlockName=r1 \\\n"
                                     "    Nodes=gb[01-18]\n"
                                     "BlockName=r2 Nodes=gb[19-27],\\\n"
                                     "gb[28-36]\n");
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).size(), 18);
    EXPECT_EQ(t.block(0).where.line, 1u);
    EXPECT_EQ(t.block(1).nodes_expr, "gb[19-36]");
    EXPECT_EQ(t.block(1).size(), 18);
    EXPECT_EQ(t.block(1).where.line, 3u);
}

TEST(TopologyConf, ContinuationWithTrailingBlanksAndCrLf) {
    const Topology t = conf_topology("BlockName=r1 \\  \r\nNodes=gb[01-18]\r\nBlockName=r2 Nodes=gb[19-36]\r\n");
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).size(), 18);
    EXPECT_EQ(t.block(1).where.line, 3u);
}

TEST(TopologyConf, QuotedValues) {
    const Topology t = conf_topology("BlockName=\"r1\" Nodes=\"gb[01-16],gb[17-18]\"\nBlockSizes=\"18,36\"\n");
    EXPECT_EQ(t.block(0).name, "r1");
    EXPECT_EQ(t.block(0).nodes_expr, "gb[01-18]");
    EXPECT_EQ(t.block_sizes(), (std::vector<std::uint32_t>{18, 36}));
}

TEST(TopologyConf, EmptyFileOnlyWarns) {
    const Topology t = conf_topology("# nothing yet\n");
    EXPECT_EQ(t.block_count(), 0u);
    ASSERT_EQ(t.warnings().size(), 1u);
    EXPECT_EQ(t.warnings()[0].str(), "topology.conf: no blocks configured; every node is scheduled without topology");
}

// ---- Include -----------------------------------------------------------------

TEST(TopologyConfInclude, RelativeInclude) {
    TempDir dir;
    dir.write("racks.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    const std::string main = dir.write("topology.conf", "Include racks.conf\nBlockName=r2 Nodes=gb[19-36]\n");
    const Topology t = load_topology(main);
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).name, "r1");
    EXPECT_EQ(t.block(0).where.str(), dir.path() + "/racks.conf:1");
    EXPECT_EQ(t.block(1).where.str(), main + ":2");
}

TEST(TopologyConfInclude, KeywordInAnyCaseAndNested) {
    TempDir dir;
    std::filesystem::create_directory(dir.path() + "/sub");
    dir.write("sub/inner.conf", "BlockName=r1 Nodes=gb[01-18]\n");
    dir.write("sub/outer.conf", "include inner.conf\n"); // relative to sub/, where outer.conf is
    const Topology t =
        load_topology(dir.write("topology.conf", "INCLUDE sub/outer.conf\nBlockName=r2 Nodes=gb[19-36]\n"));
    ASSERT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.block(0).where.str(), dir.path() + "/sub/inner.conf:1");
}

TEST(TopologyConfInclude, ErrorInIncludedFileNamesThatFile) {
    TempDir dir;
    dir.write("part.conf", "BlockName=r1 Nodes=gb[01-18]\nBadKey=1\n");
    try {
        load_topology(dir.write("topology.conf", "Include part.conf\nBlockName=r2 Nodes=gb[19-36]\n"));
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        ASSERT_EQ(e.problems().size(), 1u) << e.what();
        EXPECT_EQ(std::string(e.what()),
                  dir.path() + "/part.conf:2: unknown key 'BadKey' (known: BlockName, BlockSizes, Nodes)");
    }
}

TEST(TopologyConfInclude, MissingFile) {
    TempDir dir;
    const std::string main = dir.write("topology.conf", "BlockName=r1 Nodes=gb[01-18]\nInclude nothere.conf\n");
    try {
        load_topology(main);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        EXPECT_EQ(std::string(e.what()),
                  main + ":2: Include nothere.conf: cannot read the file: No such file or directory");
    }
}

TEST(TopologyConfInclude, CycleIsBounded) {
    TempDir dir;
    const std::string self = dir.write("self.conf", "Include self.conf\n");
    try {
        load_topology(self);
        FAIL() << "no error";
    } catch (const ConfigError& e) {
        ASSERT_EQ(e.problems().size(), 1u);
        EXPECT_EQ(std::string(e.what()), self + ":1: Include nested more than 10 deep");
    }
}

// ---- BlockSizes and block sizes, as Slurm 24.11 topology/block -------------------------

TEST(TopologyConfBlockSizes, BaseAndPowersOfTwo) {
    const Topology t =
        conf_topology("BlockSizes=18,36,72\nBlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-36]\n");
    EXPECT_EQ(t.block_sizes(), (std::vector<std::uint32_t>{18, 36, 72}));
    EXPECT_EQ(t.block(0).settings.slice, 18);
    EXPECT_EQ(t.defaults().slice, 18);
}

TEST(TopologyConfBlockSizes, HighestLevelIs2To15) {
    const Topology t = conf_topology("BlockSizes=1,32768\nBlockName=r1 Nodes=gb[01-18]\n");
    EXPECT_EQ(t.block_sizes(), (std::vector<std::uint32_t>{1, 32768}));
    EXPECT_EQ(t.block(0).settings.slice, 1);
    EXPECT_EQ(conf_message("BlockSizes=1,65536\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '65536': more than 2^15 times the base size");
    EXPECT_EQ(conf_message("BlockSizes=18,1179648\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '1179648': more than 2^15 times the base size");
}

TEST(TopologyConfBlockSizes, NotAPowerOfTwoOfTheBase) {
    EXPECT_EQ(conf_message("BlockSizes=18,54\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '54': each size must be the base size 18 "
              "times a power of two");
    EXPECT_EQ(conf_message("BlockSizes=18,27\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '27': each size must be the base size 18 "
              "times a power of two");
    // A later size below the base is not a multiple of it.
    EXPECT_EQ(conf_message("BlockSizes=16,13\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '13': each size must be the base size 16 "
              "times a power of two");
}

TEST(TopologyConfBlockSizes, SameSizeTwiceIsLevelZero) {
    EXPECT_EQ(conf_topology("BlockSizes=18,18\nBlockName=r1 Nodes=gb[01-18]\n").block_sizes(),
              (std::vector<std::uint32_t>{18, 18}));
}

TEST(TopologyConfBlockSizes, ZeroOrNotANumber) {
    EXPECT_EQ(conf_message("BlockSizes=0\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '0': sizes are positive node counts");
    EXPECT_EQ(conf_message("BlockSizes=abc\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value 'abc': sizes are positive node counts");
    EXPECT_EQ(conf_message("BlockSizes=18,0\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '0': sizes are positive node counts");
    EXPECT_EQ(conf_message("BlockSizes=-18\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '-18': sizes are positive node counts");
    EXPECT_EQ(conf_message("BlockSizes=,\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: invalid BlockSizes value '': sizes are positive node counts");
}

TEST(TopologyConfBlockSizes, EmptyItemsAreSkippedAsSlurmDoes) {
    // Slurm splits BlockSizes with strtok_r(), which skips empty items.
    EXPECT_EQ(conf_topology("BlockSizes=18,,36\nBlockName=r1 Nodes=gb[01-18]\n").block_sizes(),
              (std::vector<std::uint32_t>{18, 36}));
    EXPECT_EQ(conf_topology("BlockSizes=18,36,\nBlockName=r1 Nodes=gb[01-18]\n").block_sizes(),
              (std::vector<std::uint32_t>{18, 36}));
    EXPECT_EQ(conf_topology("BlockSizes=,18\nBlockName=r1 Nodes=gb[01-18]\n").block_sizes(),
              (std::vector<std::uint32_t>{18}));
}

TEST(TopologyConfBlockSizes, LastBlockSizesLineWins) {
    const Topology t = conf_topology("BlockSizes=18\nBlockSizes=36\nBlockName=r1 Nodes=gb[01-36]\n");
    EXPECT_EQ(t.block_sizes(), std::vector<std::uint32_t>{36});
    EXPECT_EQ(t.block(0).settings.slice, 36);
}

TEST(TopologyConfBlockSizes, WithoutBlockSizesTheFirstBlockIsTheBase) {
    // 13 then 16: base 13, both accepted.
    const Topology t = conf_topology("BlockName=r1 Nodes=gb[01-13]\nBlockName=r2 Nodes=gb[14-29]\n");
    EXPECT_EQ(t.defaults().slice, 13);
    EXPECT_EQ(t.block(1).size(), 16);
    EXPECT_EQ(t.block(1).settings.slice, 13);
    // 16 then 13: base 16, the 13-node block is rejected.
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-16]\nBlockName=r2 Nodes=gb[17-29]\n"),
              "topology.conf:2: block 'r2' has 13 nodes, fewer than the base block size 16 (the "
              "size of the first "
              "block; set BlockSizes= to allow smaller blocks)");
}

TEST(TopologyConfBlockSizes, SmallBaseAllowsPartialRacks) {
    // 16 + 13 nodes with BlockSizes=13: every block has at least the base size.
    const Topology t = conf_topology("BlockSizes=13\nBlockName=r1 Nodes=gb[01-16]\nBlockName=r2 Nodes=gb[17-29]\n");
    EXPECT_EQ(t.block_sizes(), std::vector<std::uint32_t>{13});
    EXPECT_EQ(t.block(0).size(), 16);
    EXPECT_EQ(t.block(0).settings.slice, 13);
    EXPECT_EQ(t.block(1).size(), 13);
    EXPECT_EQ(t.block(1).settings.slice, 13);
    // Partial racks of 8 and 9 under BlockSizes=8.
    const Topology p = conf_topology("BlockSizes=8\nBlockName=a Nodes=n[01-08]\nBlockName=b Nodes=n[09-17]\n"
                                     "BlockName=c Nodes=n[18-35]\n");
    EXPECT_EQ(p.block(1).size(), 9);
    EXPECT_EQ(p.block(2).settings.slice, 8);
}

TEST(TopologyConfBlockSizes, BlockSmallerThanTheBase) {
    EXPECT_EQ(conf_message("BlockSizes=16\nBlockName=r1 Nodes=gb[01-16]\nBlockName=r2 Nodes=gb[17-29]\n"),
              "topology.conf:3: block 'r2' has 13 nodes, fewer than the base block size 16 (BlockSizes)");
    EXPECT_EQ(conf_message("BlockSizes=18,36\nBlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-26]\n"),
              "topology.conf:3: block 'r2' has 8 nodes, fewer than the base block size 18 (BlockSizes)");
}

TEST(TopologyConfBlockSizes, EighteenNodeRacksWithSlurmsUsualSizes) {
    const Topology t = conf_topology("BlockSizes=18,36\nBlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-36]\n"
                                     "BlockName=r3 Nodes=gb[37-54]\n");
    EXPECT_EQ(t.block_count(), 3u);
    EXPECT_EQ(t.nodes_in_blocks(), 54u);
}

// ---- Other errors -----------------------------------------------------------------

TEST(TopologyConfErrors, UnknownKey) {
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-18]\nFoo=bar\n"),
              "topology.conf:2: unknown key 'Foo' (known: BlockName, BlockSizes, Nodes)");
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-18] Foo=1\n"),
              "topology.conf:1: unknown key 'Foo' in BlockName=r1 (known: Nodes)");
}

TEST(TopologyConfErrors, TreeSyntax) {
    EXPECT_EQ(conf_message("SwitchName=s1 Nodes=gb[01-18]\n"),
              "topology.conf:1: unknown key 'SwitchName': that is topology/tree syntax; nvlblock "
              "reads the block "
              "syntax (BlockName=, BlockSizes=)");
    EXPECT_EQ(conf_message("switchname=s1 Switches=s[2-3]\n"),
              "topology.conf:1: unknown key 'SwitchName': that is topology/tree syntax; nvlblock "
              "reads the block "
              "syntax (BlockName=, BlockSizes=)");
}

TEST(TopologyConfErrors, Unparsable) {
    EXPECT_EQ(conf_message("garbage line\n"), "topology.conf:1: cannot parse 'garbage line': expected Key=Value");
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-18] junk\n"),
              "topology.conf:1: cannot parse 'junk' in BlockName=r1");
    EXPECT_EQ(conf_message("BlockSizes=18 36\nBlockName=r1 Nodes=gb[01-18]\n"),
              "topology.conf:1: unexpected text after BlockSizes: '36'");
}

TEST(TopologyConfErrors, BlockWithoutNodes) {
    EXPECT_EQ(conf_message("BlockName=r1\n"), "topology.conf:1: block 'r1' has no Nodes=");
}

TEST(TopologyConfErrors, BadHostlist) {
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-18\n"),
              "topology.conf:1: block 'r1': bad hostlist 'gb[01-18': missing ']'");
}

TEST(TopologyConfErrors, DuplicateBlockNames) {
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-18]\nBlockName=r1 Nodes=gb[19-36]\n"),
              "topology.conf:2: block 'r1' is defined twice (first at topology.conf:1)");
}

TEST(TopologyConfErrors, NodeInTwoBlocks) {
    const ConfigError e = conf_error("BlockSizes=4\nBlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[18-35]\n");
    ASSERT_EQ(e.problems().size(), 1u) << e.what();
    EXPECT_STREQ(e.what(), "topology.conf:3: node gb18 is in block 'r2' and in block 'r1' (topology.conf:2)");
}

TEST(TopologyConfErrors, SeveralProblemsAtOnce) {
    const ConfigError e = conf_error("BlockName=r1 Nodes=gb[01-18]\nFoo=1\nBlockName=r2\nSwitchName=s1\n");
    ASSERT_EQ(e.problems().size(), 3u) << e.what();
    EXPECT_EQ(e.problems()[0].where.line, 2u);
    EXPECT_EQ(e.problems()[1].str(), "topology.conf:3: block 'r2' has no Nodes=");
    EXPECT_EQ(e.problems()[2].where.line, 4u);
}

// ---- Against slurm.conf ----------------------------------------------------------

TEST(TopologyConfUniverse, NodeNotInSlurmConfOnlyWarns) {
    const auto universe = nodes_up_to(36);
    // Slurm 24.11 warns about such nodes and leaves them out.
    const Topology t =
        conf_topology("BlockSizes=18\nBlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-37]\n", &universe);
    ASSERT_EQ(t.warnings().size(), 1u);
    EXPECT_EQ(t.warnings()[0].str(), "topology.conf:3: node gb37 of block 'r2' is not in slurm.conf; ignored");
    EXPECT_EQ(t.block(1).size(), 18);
    EXPECT_EQ(t.block(1).nodes_expr, "gb[19-36]");
    EXPECT_EQ(t.node_count(), 36u);
    EXPECT_FALSE(t.find_node("gb37").has_value());
}

TEST(TopologyConfUniverse, IndicesAreSlurmsOrder) {
    std::vector<std::string> universe = {"login"};
    for (const auto& n : nodes_up_to(18))
        universe.push_back(n);
    const Topology t = conf_topology("BlockName=r1 Nodes=gb[01-18]\n", &universe);
    EXPECT_EQ(t.node_count(), 19u);
    EXPECT_EQ(t.block(0).nodes.front(), 1u);
    EXPECT_EQ(t.block_of(0), kNoBlock);
    EXPECT_EQ(t.nodes_in_blocks(), 18u);
}

TEST(TopologyConfUniverse, BlockWithNoKnownNode) {
    const auto universe = nodes_up_to(18);
    EXPECT_EQ(conf_message("BlockName=r1 Nodes=gb[01-18]\nBlockName=r2 Nodes=gb[19-36]\n", &universe),
              "topology.conf:2: block 'r2' has no node that is in slurm.conf");
}

} // namespace
} // namespace nvlblock
