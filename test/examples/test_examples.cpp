// SPDX-License-Identifier: GPL-2.0-or-later
//
// Every example in topology.conf.examples/ loads, in both of its forms,
// against the node names of its own slurm.conf fragment (read the way
// nvlblock-check reads slurm.conf), and has the shape its comment promises:
// block count, sizes, slices, spares, nodes outside every block.
#include "model/topology.hpp"
#include "readers/load_topology.hpp"
#include "slurm_conf.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace nvlblock {
namespace {

const std::string kDir = NVLBLOCK_EXAMPLES;

struct Shape {
    std::string name;
    std::size_t slurm_nodes;
    std::vector<int> sizes;  // per block, in file order (empty: see uniform)
    std::vector<int> slices; // nvlblock.yaml, per block
    std::vector<int> spares; // nvlblock.yaml, per block
    bool lending;
    SpareReserve reserve;                   // each says which, and why, in its header
    int conf_slice;                         // topology.conf: the base block size
    std::vector<std::uint32_t> block_sizes; // topology.conf BlockSizes=
};

std::vector<int> repeat(int value, int times) {
    return std::vector<int>(static_cast<std::size_t>(times), value);
}

std::vector<int> with_last(std::vector<int> v, int last) {
    v.back() = last;
    return v;
}

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> s = {
        {"gb200-nvl72-128racks",
         2304,
         repeat(18, 128),
         repeat(16, 128),
         repeat(2, 128),
         false,
         SpareReserve::kReclaim,
         18,
         {}},
        {"gb300-nvl72",
         576,
         repeat(18, 32),
         with_last(repeat(16, 32), 9),
         with_last(repeat(2, 32), 0),
         false,
         SpareReserve::kIdle,
         18,
         {}},
        {"partial-racks",
         65,
         {18, 18, 16, 13},
         {16, 16, 16, 12},
         {2, 2, 0, 1},
         false,
         SpareReserve::kReclaim,
         13,
         {13, 26, 52}},
        {"capacity-blocks",
         63,
         {18, 18, 9, 9, 9},
         {16, 16, 8, 8, 8},
         {2, 2, 1, 1, 1},
         true,
         SpareReserve::kIdle,
         9,
         {9, 18}},
        {"mixed-nvl72-hgx", 176, repeat(18, 8), repeat(16, 8), repeat(2, 8), true, SpareReserve::kIdle, 18, {}},
    };
    return s;
}

std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void PrintTo(const Shape& s, std::ostream* os) {
    *os << s.name;
}

class Example : public ::testing::TestWithParam<Shape> {
  protected:
    std::string dir() const { return kDir + "/" + GetParam().name; }
    std::vector<std::string> universe() const {
        const tool::SlurmConf conf = tool::read_slurm_conf(dir() + "/slurm-nodes.conf");
        for (const auto& p : conf.problems)
            ADD_FAILURE() << p.str();
        return conf.node_names();
    }
};

TEST_P(Example, SlurmFragmentDefinesTheNodes) {
    EXPECT_EQ(universe().size(), GetParam().slurm_nodes);
}

TEST_P(Example, YamlLoadsWithItsShape) {
    const Shape& s = GetParam();
    const auto nodes = universe();
    const Topology t = load_topology(dir() + "/nvlblock.yaml", &nodes);
    ASSERT_EQ(t.block_count(), s.sizes.size());
    std::size_t in_blocks = 0;
    for (std::size_t i = 0; i < t.block_count(); ++i) {
        const Block& b = t.blocks()[i];
        SCOPED_TRACE(b.name);
        EXPECT_EQ(b.size(), s.sizes[i]);
        EXPECT_EQ(b.settings.slice, s.slices[i]);
        EXPECT_EQ(b.settings.spares, s.spares[i]);
        EXPECT_EQ(b.settings.lending, s.lending);
        EXPECT_EQ(b.settings.reserve, s.reserve);
        EXPECT_LE(b.settings.slice + b.settings.spares, b.size());
        in_blocks += static_cast<std::size_t>(b.size());
    }
    EXPECT_EQ(t.nodes_in_blocks(), in_blocks);
    EXPECT_EQ(t.node_count(), s.slurm_nodes);
    EXPECT_TRUE(t.warnings().empty()) << t.warnings().front().str();
}

TEST_P(Example, TopologyConfLoadsAsStockBlocks) {
    const Shape& s = GetParam();
    const auto nodes = universe();
    const Topology t = load_topology(dir() + "/topology.conf", &nodes);
    EXPECT_EQ(t.format(), SourceFormat::kTopologyConf);
    ASSERT_EQ(t.block_count(), s.sizes.size());
    for (std::size_t i = 0; i < t.block_count(); ++i) {
        const Block& b = t.blocks()[i];
        SCOPED_TRACE(b.name);
        EXPECT_EQ(b.size(), s.sizes[i]);
        EXPECT_EQ(b.settings.slice, s.conf_slice); // slices of the base block size
        EXPECT_EQ(b.settings.spares, 0);
        EXPECT_FALSE(b.settings.lending);
    }
    EXPECT_EQ(t.block_sizes(), s.block_sizes);
    EXPECT_TRUE(t.warnings().empty()) << t.warnings().front().str();
}

// Both forms describe the same blocks: same names, same nodes.
TEST_P(Example, BothFormsHaveTheSameBlocks) {
    const auto nodes = universe();
    const Topology y = load_topology(dir() + "/nvlblock.yaml", &nodes);
    const Topology c = load_topology(dir() + "/topology.conf", &nodes);
    ASSERT_EQ(y.block_count(), c.block_count());
    for (std::size_t i = 0; i < y.block_count(); ++i) {
        EXPECT_EQ(y.blocks()[i].name, c.blocks()[i].name);
        EXPECT_EQ(y.blocks()[i].nodes, c.blocks()[i].nodes);
        EXPECT_EQ(y.blocks()[i].nodes_expr, c.blocks()[i].nodes_expr);
    }
}

// Each file opens with the comment block that says when to use it.
TEST_P(Example, EveryFileSaysWhenToUseIt) {
    for (const char* f : {"nvlblock.yaml", "topology.conf"}) {
        const std::string text = read(dir() + "/" + f);
        EXPECT_EQ(text.rfind("# ", 0), 0u) << f;
        EXPECT_NE(text.find("When to use"), std::string::npos) << f;
    }
    EXPECT_EQ(read(dir() + "/slurm-nodes.conf").rfind("# slurm.conf fragment", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(Examples, Example, ::testing::ValuesIn(shapes()),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                             std::string n = info.param.name;
                             for (auto& c : n)
                                 if (c == '-')
                                     c = '_';
                             return n;
                         });

// No example directory goes untested.
TEST(Examples, EveryDirectoryIsCovered) {
    std::set<std::string> dirs, covered;
    for (const auto& e : std::filesystem::directory_iterator(kDir))
        if (e.is_directory())
            dirs.insert(e.path().filename().string());
    for (const auto& s : shapes())
        covered.insert(s.name);
    EXPECT_EQ(dirs, covered);
}

TEST(Examples, Gb200RackNamesAndNodes) {
    const tool::SlurmConf conf = tool::read_slurm_conf(kDir + "/gb200-nvl72-128racks/slurm-nodes.conf");
    const auto nodes = conf.node_names();
    const Topology t = load_topology(kDir + "/gb200-nvl72-128racks/nvlblock.yaml", &nodes);
    EXPECT_EQ(t.blocks().front().name, "rack001");
    EXPECT_EQ(t.blocks().front().nodes_expr, "gb200-r001-n[01-18]");
    EXPECT_EQ(t.blocks().back().name, "rack128");
    EXPECT_EQ(t.blocks().back().nodes_expr, "gb200-r128-n[01-18]");
    EXPECT_EQ(t.nodes_in_blocks(), 2304u);
    // Reclaimed spares: Slurm's preemption (the fragment's partition_prio) says who may be moved.
    EXPECT_TRUE(t.policy().preemptible.empty());
    EXPECT_EQ(t.policy().recovery.wait_seconds, 300);
    EXPECT_EQ(t.policy().recovery.reclaim_budget_seconds, 3600);
    // 16 scalable units of 8 racks, crossing after 30 minutes.
    ASSERT_EQ(t.hierarchy().levels().size(), 1u);
    const auto& su = t.hierarchy().levels()[0];
    ASSERT_EQ(su.groups.size(), 16u);
    EXPECT_EQ(su.groups[15].name, "su16");
    EXPECT_EQ(su.groups[15].blocks.front(), 120);
    EXPECT_EQ(t.hierarchy().cross_after(), 1800);
}

TEST(Examples, MixedClusterLeavesTheServersOutsideEveryBlock) {
    const tool::SlurmConf conf = tool::read_slurm_conf(kDir + "/mixed-nvl72-hgx/slurm-nodes.conf");
    const auto nodes = conf.node_names();
    for (const char* f : {"nvlblock.yaml", "topology.conf"}) {
        const Topology t = load_topology(kDir + "/mixed-nvl72-hgx/" + f, &nodes);
        EXPECT_EQ(t.nodes_in_blocks(), 144u) << f;
        int outside = 0;
        for (NodeIndex n = 0; n < t.node_count(); ++n) {
            const bool server = t.node_name(n).rfind("hgx", 0) == 0;
            EXPECT_EQ(t.block_of(n) == kNoBlock, server) << t.node_name(n);
            outside += server;
        }
        EXPECT_EQ(outside, 32) << f;
    }
}

// Slurm's rule the examples document: without BlockSizes the first block sets
// the base size and a smaller block is refused.
TEST(Examples, PartialRacksNeedBlockSizesInTopologyConf) {
    std::string text = read(kDir + "/partial-racks/topology.conf");
    const auto pos = text.find("\nBlockSizes=");
    ASSERT_NE(pos, std::string::npos);
    text.erase(pos + 1, text.find('\n', pos + 1) - pos - 1);
    try {
        read_topology_spec_text(text, "topology.conf", SourceFormat::kTopologyConf);
        FAIL() << "a 16-node block after an 18-node one must be refused without BlockSizes";
    } catch (const ConfigError& e) {
        ASSERT_EQ(e.problems().size(), 2u);
        EXPECT_EQ(e.problems()[0].str(),
                  "topology.conf:17: block 'blk3' has 16 nodes, fewer than the base block size 18 (the size of "
                  "the first block; set BlockSizes= to allow smaller blocks)");
        EXPECT_EQ(e.problems()[1].str(),
                  "topology.conf:18: block 'blk4' has 13 nodes, fewer than the base block size 18 (the size of "
                  "the first block; set BlockSizes= to allow smaller blocks)");
    }
}

} // namespace
} // namespace nvlblock
