// SPDX-License-Identifier: GPL-2.0-or-later
//
// The network above the blocks (docs/placement.md, rule 2): topology.conf's
// BlockSizes levels as Slurm's topology/block applies them, and nvlblock.yaml
// groups. Racks here hold 4 nodes: rack r (1-based) is node indices
// 4(r-1) .. 4r-1, gb0001-gb0004 for rack01.
#include "core/planner.hpp"
#include "placement/engine.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

#include <cstdio>

namespace nvlblock {
namespace {

using test::all;
using test::nodes;
using test::range;
using test::run;
using test::set;

std::string rack_lines(int racks, int per_rack = 4) {
    std::string s;
    for (int r = 1; r <= racks; ++r) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "BlockName=rack%02d Nodes=gb[%04d-%04d]\n", r, (r - 1) * per_rack + 1,
                      r * per_rack);
        s += buf;
    }
    return s;
}

// topology.conf with `racks` racks of 4 and the given BlockSizes ("" for none).
Topology conf(int racks, const std::string& block_sizes) {
    return test::conf_topology(rack_lines(racks) + (block_sizes.empty() ? "" : "BlockSizes=" + block_sizes + "\n"));
}

// nvlblock.yaml: racks of 4, slice 4, no spares, and a hierarchy.
Topology groups(int racks, const std::string& hierarchy) {
    std::string y = "defaults:\n  slice: 4\n  spares: 0\nblocks:\n";
    for (int r = 1; r <= racks; ++r) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  - name: rack%02d\n    nodes: gb[%04d-%04d]\n", r, (r - 1) * 4 + 1, r * 4);
        y += buf;
    }
    return test::yaml_topology(y + "hierarchy:\n" + hierarchy);
}

std::vector<NodeIndex> rack(int r) {
    return range(static_cast<NodeIndex>((r - 1) * 4), static_cast<NodeIndex>(r * 4 - 1));
}

// The racks (1-based) a placement touches.
std::vector<int> racks_of(const Placement& p) {
    std::vector<int> out;
    for (NodeIndex n : p.nodes) {
        const int r = static_cast<int>(n / 4) + 1;
        if (out.empty() || out.back() != r)
            out.push_back(r);
    }
    return out;
}

// --- the model -------------------------------------------------------------

TEST(Levels, BlockSizesListTheLevelsAboveTheBase) {
    Topology t = conf(8, "4,8,32");
    const Hierarchy& h = t.hierarchy();
    ASSERT_EQ(h.kind(), Hierarchy::Kind::kBlockSizes);
    EXPECT_EQ(h.base_nodes(), 4u);
    EXPECT_EQ(h.level_mask(), 0b1011u);
    EXPECT_EQ(h.describe(), "BlockSizes=4,8,32");
    ASSERT_EQ(h.levels().size(), 2u); // 2x and 8x (8x holds all 8 racks)
    EXPECT_EQ(h.levels()[0].groups.size(), 4u);
    EXPECT_EQ(h.levels()[0].groups[1].name, "rack[03-04]");
    EXPECT_EQ(h.levels()[0].groups[1].parent, 0);
    EXPECT_EQ(h.levels()[1].groups[0].name, "rack[01-08]");
}

TEST(Levels, WithoutBlockSizesSlurmUsesOneToSixteenTimesTheBase) {
    Topology t = conf(8, "");
    EXPECT_EQ(t.hierarchy().base_nodes(), 4u); // the first block's size
    EXPECT_EQ(t.hierarchy().level_mask(), kDefaultBlockLevelMask);
    EXPECT_EQ(t.hierarchy().describe(), "BlockSizes=4,8,16,32,64");
}

TEST(Levels, PartialLastAggregate) {
    Topology t = conf(5, "4,8");
    const auto& g = t.hierarchy().levels()[0].groups;
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[2].name, "rack05");
    EXPECT_EQ(g[2].blocks, std::vector<BlockIndex>{4});
}

TEST(Levels, PlainYamlHasNoHierarchy) {
    EXPECT_TRUE(test::racks(4).hierarchy().empty());
}

TEST(Levels, YamlTakingBlocksFromTopologyConfKeepsItsLevels) {
    test::TempDir dir;
    dir.write("topology.conf", rack_lines(4) + "BlockSizes=4,8\n");
    const std::string yaml =
        dir.write("nvlblock.yaml", "topology_conf: topology.conf\ndefaults:\n  slice: 4\n  spares: 0\n");
    Topology t = load_topology(yaml);
    EXPECT_EQ(t.hierarchy().kind(), Hierarchy::Kind::kBlockSizes);
    EXPECT_EQ(t.hierarchy().describe(), "BlockSizes=4,8");
}

TEST(Levels, YamlGroupsNestAndNameTheLevels) {
    Topology t = groups(6, "  crossing: 10m\n  levels:\n"
                           "    - name: su\n      label: scalable unit\n      groups:\n"
                           "        su1: rack[01-02]\n        su2: [rack03, rack04]\n"
                           "    - name: pod\n      groups:\n        pod1: su[1-2]\n");
    const Hierarchy& h = t.hierarchy();
    ASSERT_EQ(h.kind(), Hierarchy::Kind::kGroups);
    EXPECT_EQ(h.cross_after(), 600);
    ASSERT_EQ(h.levels().size(), 2u);
    const auto& su = h.levels()[0];
    EXPECT_EQ(su.label, "scalable unit");
    // rack05 and rack06 are in no SU: each is a group of its own.
    ASSERT_EQ(su.groups.size(), 4u);
    EXPECT_EQ(su.groups[1].blocks, (std::vector<BlockIndex>{2, 3}));
    EXPECT_TRUE(su.groups[2].implicit);
    EXPECT_EQ(su.groups[2].name, "rack05");
    EXPECT_EQ(su.groups[1].parent, 0);
    EXPECT_EQ(h.levels()[1].groups[0].blocks, (std::vector<BlockIndex>{0, 1, 2, 3}));
    EXPECT_EQ(h.describe(), "su < pod");
}

// Block b's group on rung r, by definition (model/ladder.hpp).
int defined_group(const Hierarchy& h, const Rung& r, BlockIndex b) {
    switch (r.kind) {
    case Rung::Kind::kBlocks:
        return b;
    case Rung::Kind::kShift:
        return b >> r.shift;
    case Rung::Kind::kNamed:
        return h.levels()[static_cast<std::size_t>(r.level)].group_of[static_cast<std::size_t>(b)];
    case Rung::Kind::kCluster:
        break;
    }
    return 0;
}

// Every rung's layout against the definition: a group is the blocks that
// share a group there, ascending, groups in order of their first block; its
// children the groups of the rung below among them, likewise.
void expect_ladder_as_defined(const Topology& t) {
    const Hierarchy& h = t.hierarchy();
    const std::vector<Rung>& ladder = h.ladder();
    const auto blocks = static_cast<BlockIndex>(t.block_count());
    for (std::size_t i = 0; i < ladder.size(); ++i) {
        const Rung& r = ladder[i];
        auto below = [&](BlockIndex b) { return i == 0 ? b : defined_group(h, ladder[i - 1], b); };
        std::vector<BlockIndex> firsts, seen;
        for (BlockIndex b = 0; b < blocks; ++b) {
            const Rung::Group& g = r.groups[static_cast<std::size_t>(r.group_at[static_cast<std::size_t>(b)])];
            std::vector<BlockIndex> same;
            for (BlockIndex o = 0; o < blocks; ++o)
                if (defined_group(h, r, o) == defined_group(h, r, b))
                    same.push_back(o);
            const auto span = r.blocks_of(g);
            EXPECT_EQ(std::vector<BlockIndex>(span.begin(), span.end()), same) << "rung " << i << " block " << b;
            if (same.front() == b)
                firsts.push_back(b);
            const int child = r.child_at[static_cast<std::size_t>(b)];
            ASSERT_GE(child, g.first_child);
            ASSERT_LT(child, g.first_child + g.child_count);
            std::vector<BlockIndex> kin;
            for (BlockIndex o : same)
                if (below(o) == below(b))
                    kin.push_back(o);
            const auto cs = r.blocks_of(r.children[static_cast<std::size_t>(child)]);
            EXPECT_EQ(std::vector<BlockIndex>(cs.begin(), cs.end()), kin) << "rung " << i << " block " << b;
        }
        ASSERT_EQ(r.groups.size(), firsts.size()) << "rung " << i;
        for (std::size_t g = 0; g < r.groups.size(); ++g) {
            EXPECT_EQ(r.blocks[static_cast<std::size_t>(r.groups[g].first_block)], firsts[g]) << "rung " << i;
            BlockIndex last = -1; // children in order of their first block
            for (int c = r.groups[g].first_child; c < r.groups[g].first_child + r.groups[g].child_count; ++c) {
                const BlockIndex first = r.blocks_of(r.children[static_cast<std::size_t>(c)]).front();
                EXPECT_GT(first, last) << "rung " << i;
                last = first;
            }
        }
    }
}

TEST(Levels, TheLadderLaysOutEachRungAsItsGroupsDefineIt) {
    Topology sizes = conf(8, "4,8,32");
    ASSERT_EQ(sizes.hierarchy().ladder().size(), 4u); // blocks, 2x, 8x, the cluster
    EXPECT_EQ(sizes.hierarchy().ladder()[2].shift, 3);
    expect_ladder_as_defined(sizes);
    expect_ladder_as_defined(conf(5, "4,8"));
    expect_ladder_as_defined(conf(11, ""));
    // Groups that interleave the blocks, and racks in no group.
    Topology named = groups(7, "  levels:\n"
                               "    - name: su\n      groups:\n"
                               "        su1: [rack01, rack04]\n        su2: [rack02, rack03, rack06]\n"
                               "    - name: pod\n      groups:\n        pod1: [su2, rack05]\n");
    const std::vector<Rung>& ladder = named.hierarchy().ladder();
    ASSERT_EQ(ladder.size(), 4u); // blocks, su, pod, the cluster
    const Rung& pod = ladder[2];
    const Rung::Group& pod1 = pod.groups[static_cast<std::size_t>(pod.group_at[1])];
    const auto pod1_blocks = pod.blocks_of(pod1);
    EXPECT_EQ(std::vector<BlockIndex>(pod1_blocks.begin(), pod1_blocks.end()), (std::vector<BlockIndex>{1, 2, 4, 5}));
    EXPECT_EQ(pod1.child_count, 2); // su2, rack05
    expect_ladder_as_defined(named);
    EXPECT_TRUE(test::racks(4).hierarchy().ladder().empty());
}

std::string group_error(const std::string& hierarchy) {
    try {
        groups(6, hierarchy);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(Levels, GroupErrorsNameFileAndLine) {
    const std::string head = "  levels:\n    - name: su\n      groups:\n";
    // The blocks take lines 1-16; hierarchy: is line 17.
    EXPECT_EQ(group_error(head + "        su1: rack[01-02]\n        su2: rack[02-03]\n"),
              "test.yaml:22: block 'rack02' is in group 'su2' and in group 'su1' (test.yaml:21); "
              "a block is in at most one group of a level");
    EXPECT_EQ(group_error(head + "        su1: rack[01-02,09]\n"),
              "test.yaml:21: group 'su1' (level su): unknown block 'rack09'");
    EXPECT_EQ(group_error(head + "        rack01: rack[01-02]\n"),
              "test.yaml:21: group 'rack01' (level su) has the name of a block; group and block names must differ");
    EXPECT_EQ(group_error(head + "        su1: rack[01-02]\n        su2: rack[03-04]\n"
                                 "    - name: pod\n      groups:\n        pod1: [su1, rack03]\n"),
              "test.yaml:25: group 'pod1' (level pod) holds part of su group 'su2' but not all of it: "
              "groups of a level must nest inside the level above");
    EXPECT_EQ(group_error("  crossing: sometimes\n" + head + "        su1: rack[01-02]\n"),
              "test.yaml:18: hierarchy.crossing: 'sometimes' is neither 'strict' nor a duration "
              "('sometimes' is not a duration (seconds, or a number with s, m, h or d))");
}

// --- BlockSizes: topology/block's rules -------------------------------------

TEST(Levels, AlignedAggregateOnlyAsTopologyBlock) {
    // design.md section 6, measured on a real slurmctld: 4 racks, BlockSizes=4,8,
    // one busy node in rack01 and one in rack04. Racks 02 and 03 are free
    // but not an aligned pair: -N8 waits.
    Topology t = conf(4, "4,8");
    auto s = all(t);
    s[0] = NodeState::kBusy;
    s[15] = NodeState::kBusy;
    Placement p = run(t, s, nodes(8));
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    EXPECT_FALSE(p.topology_unavailable);
    EXPECT_EQ(explain(t, p), "no aggregated block of 8 nodes (2 blocks) can take 8 nodes now in at most 2 blocks; "
                             "the closest is rack[01-02] with 7 usable (BlockSizes=4,8)");
    s[0] = NodeState::kFree;
    p = run(t, s, nodes(8));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(racks_of(p), (std::vector<int>{1, 2}));
    EXPECT_EQ(p.group, "rack[01-02]");
}

TEST(Levels, AmongAggregatesTheOneWithFewestFreeNodes) {
    Topology t = conf(4, "4,8");
    auto s = all(t);
    s[12] = NodeState::kBusy; // pair rack[03-04] has 7 free, rack[01-02] 8: -N6 goes to the tighter pair
    Placement p = run(t, s, nodes(6));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.group, "rack[03-04]");
    EXPECT_EQ(racks_of(p), (std::vector<int>{3, 4}));
}

TEST(Levels, LargerThanEveryLevelSpansTheLargestLevelsAsTopologyBlockDoes) {
    // Measured on Slurm 24.11.5: BlockSizes=4,8 on 4 racks runs -N16 (no
    // refusal beyond the largest level) ...
    Topology t = conf(4, "4,8");
    Placement p = run(t, all(t), nodes(16));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes.size(), 16u);
    // ... and on 8 racks with 5 free nodes in every pair, -N12 waits (at
    // most 2 pairs) while -N10 runs on two pairs.
    Topology t8 = conf(8, "4,8");
    auto s = all(t8);
    for (int r : {1, 3, 5, 7})
        set(s, range(static_cast<NodeIndex>((r - 1) * 4), static_cast<NodeIndex>((r - 1) * 4 + 2)), NodeState::kBusy);
    p = run(t8, s, nodes(12));
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    EXPECT_EQ(explain(t, p),
              "the job is larger than every level; no 2 aggregated blocks of 8 nodes (2 blocks) together "
              "have 12 nodes free now (the most is 10) (BlockSizes=4,8)");
    p = run(t8, s, nodes(10));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(racks_of(p), (std::vector<int>{1, 2, 3, 4}));
}

TEST(Levels, DefaultLevelsWithoutBlockSizes) {
    // Levels 1x-16x: -N8 wants an aligned pair; -N12 an aligned quad.
    Topology t = conf(8, "");
    auto s = all(t);
    s[0] = NodeState::kBusy;  // rack01
    s[15] = NodeState::kBusy; // rack04
    Placement p = run(t, s, nodes(8));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.group, "rack[05-06]");
    // With every pair short of a node -N8 waits, though racks 02+03 and
    // 06+07 are free.
    s[16] = NodeState::kBusy; // rack05
    s[31] = NodeState::kBusy; // rack08
    p = run(t, s, nodes(8));
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    // -N12: an aggregate of 4 racks, at most 3 racks (pairs of the level below: 2).
    p = run(t, all(t), nodes(12));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.group, "rack[01-04]");
}

TEST(Levels, SegmentsArePlacedOneByOneAsTopologyBlockDoes) {
    // Each segment of 4 goes in one block, wherever: racks 02 and 03 serve
    // although they are not an aligned pair.
    Topology t = conf(4, "4,8");
    auto s = all(t);
    s[0] = NodeState::kBusy;
    s[15] = NodeState::kBusy;
    Placement p = run(t, s, nodes(8, 4));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(racks_of(p), (std::vector<int>{2, 3}));
}

TEST(Levels, SubmissionRefusalsMatchTopologyBlock) {
    Topology t = conf(4, "4,8");
    Placement p = run(t, all(t), nodes(8, 8)); // a segment larger than the base block
    EXPECT_EQ(p.reason, Reason::kSegmentTooLarge);
    EXPECT_TRUE(p.topology_unavailable);
    p = run(t, all(t), nodes(6, 4)); // a segment that does not divide the job
    EXPECT_EQ(p.reason, Reason::kSegmentNotDivisor);
    EXPECT_TRUE(p.topology_unavailable);
    Request r = nodes(4, 2); // --nodelist with two segments
    r.required = range(0, 3);
    p = run(t, all(t), r);
    EXPECT_TRUE(p.topology_unavailable) << explain(t, p);
    // Required nodes in 3 racks of an -N12 job (at most 2 pairs): never.
    Topology t8 = conf(8, "4,8");
    r = nodes(12);
    r.required = {0, 8, 16};
    p = run(t8, r.required.empty() ? all(t8) : all(t8), r);
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    EXPECT_TRUE(p.topology_unavailable);
    // No required node in a block: not a topology refusal (they just wait).
    p = run(t, all(t), nodes(8));
    EXPECT_FALSE(p.topology_unavailable);
}

TEST(Levels, RequiredNodesChooseTheAggregate) {
    Topology t = conf(4, "4,8");
    Request r = nodes(6);
    r.required = {12}; // rack04
    Placement p = run(t, all(t), r);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.group, "rack[03-04]");
    r.required = {0, 12}; // racks 01 and 04: no aggregate of 8 holds both
    p = run(t, all(t), r);
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    EXPECT_FALSE(p.topology_unavailable);
}

// The placement rules that differ between releases are the translation's
// (test_slurm_request.cpp); the reader's is here.
// The release is the reader's parameter, kept in the topology's policy: no
// process-wide setting to restore, so no test can leak it into another.
TEST(Levels, From2505ABlockSmallerThanTheBaseIsAccepted) {
    const std::string text = "BlockName=a Nodes=n[1-4]\nBlockName=b Nodes=n[5-7]\n";
    auto read = [&](int release) {
        return build_topology(
            read_topology_spec_text(text, "topology.conf", SourceFormat::kTopologyConf, ".", release));
    };
    EXPECT_EQ(read(2505).policy().slurm_release, 2505);
    EXPECT_THROW(read(2411), ConfigError);
    EXPECT_THROW(test::conf_topology(text), ConfigError); // the default is 24.11
}

// --- nvlblock.yaml groups ----------------------------------------------------

const std::string kTwoSus = "  levels:\n    - name: su\n      label: scalable unit\n      groups:\n"
                            "        su1: rack[01-03]\n        su2: rack[04-06]\n";

TEST(Levels, MultiRackJobGoesToTheSmallestGroupThatHoldsIt) {
    Topology t = groups(6, kTwoSus);
    auto s = all(t);
    set(s, rack(1), NodeState::kBusy); // su1 has 8 free, su2 12
    Placement p = run(t, s, nodes(8));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.group, "su1"); // best fit: the fuller SU
    EXPECT_EQ(racks_of(p), (std::vector<int>{2, 3}));
    // 10 nodes: only su2 can take them.
    p = run(t, s, nodes(10));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.group, "su2");
}

TEST(Levels, StrictGroupsWaitAndSayWhy) {
    Topology t = groups(6, kTwoSus);
    auto s = all(t);
    set(s, rack(1), NodeState::kBusy);
    set(s, rack(4), NodeState::kBusy);
    // 10 free nodes in all, 8 per SU: a 10-node job waits.
    Placement p = run(t, s, nodes(10));
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    EXPECT_EQ(explain(t, p), "no scalable unit can take 10 nodes now; the closest is su1 with 8 usable");
}

TEST(Levels, CrossingAfterTheWait) {
    Topology t = groups(6, "  crossing: 30m\n" + kTwoSus);
    auto s = all(t);
    set(s, rack(1), NodeState::kBusy);
    set(s, rack(4), NodeState::kBusy);
    Request r = nodes(10);
    r.waited = 600;
    Placement p = run(t, s, r);
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    EXPECT_EQ(explain(t, p), "no scalable unit can take 10 nodes now; the closest is su1 with 8 usable; "
                             "it may cross to a larger level after waiting 1800 s (waited 600 s)");
    r.waited = 1800;
    p = run(t, s, r);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes.size(), 10u);
}

TEST(Levels, SegmentedJobsStayInOneGroup) {
    Topology t = groups(6, kTwoSus);
    auto s = all(t);
    set(s, rack(2), NodeState::kBusy);
    set(s, rack(3), NodeState::kBusy);
    set(s, rack(6), NodeState::kBusy);
    // Two segments of 4: su1 has one free rack, su2 two: su2.
    Placement p = run(t, s, nodes(8, 4));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(racks_of(p), (std::vector<int>{4, 5}));
    // Three segments: no SU can take them, though 3 racks are free.
    p = run(t, s, nodes(12, 4));
    EXPECT_EQ(p.reason, Reason::kNoGroupFits);
    // One segment fits a block: no group needed.
    p = run(t, s, nodes(4, 4));
    EXPECT_TRUE(p.placed());
}

TEST(Levels, JobLargerThanEveryGroupSpansAsFewAsPossible) {
    Topology t = groups(6, kTwoSus);
    Placement p = run(t, all(t), nodes(16));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes.size(), 16u);
}

TEST(Levels, RequiredNodesInTwoGroupsGoUpALevel) {
    Topology t = groups(6, kTwoSus);
    Request r = nodes(8);
    r.required = {0, 12}; // rack01 (su1) and rack04 (su2)
    Placement p = run(t, all(t), r);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes.size(), 8u);
}

TEST(Levels, FallbackRestartPrefersItsOwnGroup) {
    Topology t = groups(6, kTwoSus);
    Planner pl(t);
    // A 6-node job on racks 04-05 (su2) loses a node; its racks cannot take it back at once.
    std::vector<NodeIndex> had = {12, 13, 14, 15, 16, 17};
    pl.job_failed(100, had, std::vector<NodeIndex>{13}, 1000);
    auto s = all(t);
    s[13] = NodeState::kDown;
    set(s, range(16, 19), NodeState::kBusy); // rack05 taken meanwhile
    set(s, rack(1), NodeState::kBusy);       // su1: 8 free (best fit), su2: 7 free (rack04 3 + rack06 4)
    Request r = nodes(6);
    EXPECT_EQ(pl.advance(s, 1000 + 3600), 1u); // long past the recovery wait: fallback
    Placement p = pl.place(s, r, 1000 + 3600);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_FALSE(p.recovery_in_place);
    EXPECT_EQ(p.group, "su2") << "its own SU, though su1 fits better";
}

} // namespace
} // namespace nvlblock
