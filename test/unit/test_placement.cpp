// SPDX-License-Identifier: GPL-2.0-or-later
//
// Every placement rule of docs/placement.md, each with a case that fails if
// the rule breaks. Topologies are racks of 18 nodes gb0001...; rack01 holds
// node indices 0-17, rack02 18-35, and so on.
#include "placement/engine.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

namespace nvlblock {
namespace {

using test::all;
using test::nodes;
using test::range;
using test::run;
using test::set;

TEST(Placement, SixteenNodeJobTakesTheFirstSixteenNodesOfAnIdleRack) {
    Topology t = test::racks(4);
    Placement p = run(t, all(t), nodes(16));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes, range(0, 15));
}

TEST(Placement, SegmentJobOfTwoSlicesSpansTwoRacks) {
    Topology t = test::racks(4);
    Placement p = run(t, all(t), nodes(32, 16));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    std::vector<NodeIndex> want = range(0, 15);
    for (NodeIndex n : range(18, 33))
        want.push_back(n);
    EXPECT_EQ(p.nodes, want);
}

TEST(Placement, SegmentMustDivideTheNodeCount) {
    Topology t = test::racks(4);
    Placement p = run(t, all(t), nodes(5, 2));
    EXPECT_EQ(p.reason, Reason::kSegmentNotDivisor);
    EXPECT_EQ(explain(t, p),
              "the job's 5 nodes cannot be divided into segments of 2 (--segment must divide the node count)");
}

TEST(Placement, SegmentLargerThanTheSliceIsRejected) {
    Topology t = test::racks(2);
    Placement p = run(t, all(t), nodes(17, 17));
    EXPECT_EQ(p.reason, Reason::kSegmentTooLarge);
    EXPECT_EQ(explain(t, p), "--segment=17 is larger than the largest slice (16 nodes); segments never cross a slice");
}

TEST(Placement, SegmentsNeverCrossABlock) {
    // rack01 has 6 free ordinary nodes, rack02 has 4: three segments of 4 do
    // not fit (6 holds one, 4 holds one) although 10 nodes are free.
    Topology t = test::racks(2);
    auto s = all(t);
    set(s, range(0, 9), NodeState::kBusy);
    set(s, range(18, 29), NodeState::kBusy);
    Placement p = run(t, s, nodes(12, 4));
    EXPECT_FALSE(p.placed());
    Placement two = run(t, s, nodes(8, 4));
    ASSERT_TRUE(two.placed()) << explain(t, two);
    int in01 = 0, in02 = 0;
    for (NodeIndex n : two.nodes)
        (n < 18 ? in01 : in02)++;
    EXPECT_EQ(in01 % 4, 0);
    EXPECT_EQ(in02 % 4, 0);
}

TEST(Placement, SmallJobFillsThePartlyUsedBlockFirst) {
    Topology t = test::racks(3);
    auto s = all(t);
    set(s, range(18, 27), NodeState::kBusy); // rack02: 6 ordinary nodes left
    Placement p = run(t, s, nodes(4));
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.nodes, range(28, 31));
    // An 8-node job does not fit there and takes an idle rack.
    Placement q = run(t, s, nodes(8));
    ASSERT_TRUE(q.placed());
    EXPECT_EQ(q.nodes, range(0, 7));
}

TEST(Placement, BestFitChoosesTheTightestBlock) {
    Topology t = test::racks(3);
    auto s = all(t);
    set(s, range(0, 5), NodeState::kBusy);   // rack01: 10 left
    set(s, range(18, 29), NodeState::kBusy); // rack02: 4 left
    set(s, range(36, 38), NodeState::kBusy); // rack03: 13 left
    Placement p = run(t, s, nodes(9));
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.nodes.front(), 6u); // rack01 leaves 1, rack03 would leave 4
}

TEST(Placement, JobThatFitsASliceStaysInOneBlock) {
    // 12 ordinary nodes free on each of two racks: a 14-node job does not
    // split across them (24 would be enough); it would need a rack's spares.
    Topology t = test::racks(2);
    auto s = all(t);
    set(s, range(0, 3), NodeState::kBusy);
    set(s, range(18, 21), NodeState::kBusy);
    Placement p = run(t, s, nodes(14));
    EXPECT_FALSE(p.placed());
    EXPECT_EQ(p.reason, Reason::kSparesWithheld);
    EXPECT_EQ(p.blocks_if_spares, 2u);
    // With 6 busy per rack not even the spares would do.
    set(s, range(4, 5), NodeState::kBusy);
    set(s, range(22, 23), NodeState::kBusy);
    Placement q = run(t, s, nodes(14));
    EXPECT_EQ(q.reason, Reason::kNoBlockFits);
    EXPECT_EQ(explain(t, q), "no block has 14 healthy free nodes now (the most any block offers is 10)");
}

TEST(Placement, SparesAreWithheldFromNonPreemptibleWork) {
    Topology t = test::racks(1);
    auto s = all(t);
    set(s, range(0, 3), NodeState::kBusy); // 14 free, of which 2 are spares
    Placement p = run(t, s, nodes(14));
    EXPECT_EQ(p.reason, Reason::kSparesWithheld);
    EXPECT_EQ(explain(t, p),
              "no block has 14 healthy free non-spare nodes; 1 block would fit if their spares were used "
              "(spares are kept for in-place recovery)");
    EXPECT_EQ(p.blocks_if_spares, 1u);
    Placement q = run(t, s, nodes(12));
    ASSERT_TRUE(q.placed());
    EXPECT_EQ(q.nodes, range(4, 15));
}

TEST(Placement, SparesWithheldMessageCountsBlocks) {
    Topology t = test::racks(4);
    auto s = all(t);
    set(s, range(0, 1), NodeState::kBusy);
    set(s, range(18, 19), NodeState::kBusy);
    set(s, range(36, 37), NodeState::kBusy);
    set(s, range(54, 55), NodeState::kBusy);
    Placement p = run(t, s, nodes(16));
    EXPECT_EQ(p.reason, Reason::kSparesWithheld);
    EXPECT_EQ(explain(t, p),
              "no block has 16 healthy free non-spare nodes; 4 blocks would fit if their spares were used "
              "(spares are kept for in-place recovery)");
}

TEST(Placement, LargerThanASliceSpreadsOverFewestBlocks) {
    Topology t = test::racks(3);
    Placement p = run(t, all(t), nodes(20));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    std::vector<NodeIndex> want = range(0, 15);
    for (NodeIndex n : range(18, 21))
        want.push_back(n);
    EXPECT_EQ(p.nodes, want);
}

TEST(Placement, PreemptibleWorkBorrowsSparesWhereLendingIsOn) {
    Topology t = test::racks(1, 18, 16, 2, /*lending=*/true);
    auto s = all(t);
    set(s, range(0, 15), NodeState::kBusy);
    Request r = nodes(2);
    Placement ordinary = run(t, s, r);
    EXPECT_EQ(ordinary.reason, Reason::kSparesWithheld);
    r.preemptible = true;
    Placement lent = run(t, s, r);
    ASSERT_TRUE(lent.placed()) << explain(t, lent);
    EXPECT_EQ(lent.nodes, (std::vector<NodeIndex>{16, 17}));
}

TEST(Placement, LentWorkTakesSparesFromTheEndOfAnIdleBlock) {
    Topology t = test::racks(1, 18, 16, 2, true);
    Request r = nodes(2);
    r.preemptible = true;
    Placement p = run(t, all(t), r);
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.nodes, (std::vector<NodeIndex>{16, 17}));
    // An ordinary 16-node job still fits beside the lent spares.
    auto s = all(t);
    set(s, {16, 17}, NodeState::kLent);
    Placement q = run(t, s, nodes(16));
    ASSERT_TRUE(q.placed()) << explain(t, q);
    EXPECT_EQ(q.nodes, range(0, 15));
}

TEST(Placement, WithoutLendingPreemptibleWorkIsOrdinary) {
    Topology t = test::racks(1, 18, 16, 2, false);
    auto s = all(t);
    set(s, range(0, 15), NodeState::kBusy);
    Request r = nodes(2);
    r.preemptible = true;
    EXPECT_EQ(run(t, s, r).reason, Reason::kSparesWithheld);
}

TEST(Placement, DegradedBlockStillServesSmallerSegments) {
    Topology t = test::racks(1);
    auto s = all(t);
    set(s, {3, 9, 12}, NodeState::kDown); // 3 failed > 2 spares: 15 usable
    Placement big = run(t, s, nodes(16));
    EXPECT_FALSE(big.placed());
    EXPECT_EQ(big.reason, Reason::kTooLarge);
    Placement seg = run(t, s, nodes(8, 8));
    ASSERT_TRUE(seg.placed()) << explain(t, seg);
    EXPECT_EQ(seg.nodes.size(), 8u);
    for (NodeIndex n : seg.nodes)
        EXPECT_TRUE(n != 3 && n != 9 && n != 12);
    Placement fifteen = run(t, s, nodes(15));
    ASSERT_TRUE(fifteen.placed()) << explain(t, fifteen);
    EXPECT_EQ(fifteen.nodes.size(), 15u);
}

TEST(Placement, FailuresWithinTheSparesKeepTheSliceWhole) {
    Topology t = test::racks(1);
    auto s = all(t);
    set(s, {2, 7}, NodeState::kDown);
    Placement p = run(t, s, nodes(16));
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes.size(), 16u);
}

TEST(Placement, BlockFaultTakesTheWholeBlockOut) {
    Topology t = test::racks(2);
    auto s = all(t);
    set(s, range(0, 9), NodeState::kDown); // 10 of 18 >= half
    set(s, range(18, 35), NodeState::kBusy);
    Placement p = run(t, s, nodes(1));
    EXPECT_FALSE(p.placed());
    // Just below the fault fraction the block still serves small work.
    s[9] = NodeState::kFree;
    set(s, range(9, 9), NodeState::kFree);
    auto t2 = all(t);
    set(t2, range(0, 7), NodeState::kDown);
    set(t2, range(18, 35), NodeState::kBusy);
    Placement q = run(t, t2, nodes(1));
    ASSERT_TRUE(q.placed());
    EXPECT_EQ(q.nodes, (std::vector<NodeIndex>{8}));
}

TEST(Placement, ExclusiveTopoTakesOnlyBlocksWithoutOtherWork) {
    Topology t = test::racks(2);
    auto s = all(t);
    s[5] = NodeState::kBusy;
    Request r = nodes(4);
    r.exclusive_topo = true;
    Placement p = run(t, s, r);
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.nodes, range(18, 21));
    s[20] = NodeState::kBusy;
    Placement q = run(t, s, r);
    EXPECT_EQ(q.reason, Reason::kExclusiveNoBlock);
}

TEST(Placement, MinMaxTakesTheMostThatFits) {
    Topology t = test::racks(1);
    auto s = all(t);
    set(s, range(0, 5), NodeState::kBusy); // 10 ordinary nodes left
    Request r = nodes(4);
    r.max_nodes = 14;
    Placement p = run(t, s, r);
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.nodes, range(6, 15));
}

TEST(Placement, MinMaxWithSegmentUsesMultiplesOfTheSegment) {
    Topology t = test::racks(1);
    auto s = all(t);
    set(s, range(0, 4), NodeState::kBusy); // 11 ordinary nodes left
    Request r = nodes(4, 4);
    r.max_nodes = 16;
    Placement p = run(t, s, r);
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.nodes.size(), 8u);
}

TEST(Placement, RequiredNodesAreIncluded) {
    Topology t = test::racks(2);
    Request r = nodes(4);
    r.required = {20};
    Placement p = run(t, all(t), r);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes, (std::vector<NodeIndex>{18, 19, 20, 21}));
}

TEST(Placement, RequiredNodeThatFailedIsReported) {
    Topology t = test::racks(2);
    auto s = all(t);
    s[20] = NodeState::kDown;
    Request r = nodes(4);
    r.required = {20};
    Placement p = run(t, s, r);
    EXPECT_EQ(p.reason, Reason::kRequiredUnavailable);
    EXPECT_EQ(explain(t, p), "required node gb0021 is not available (failed)");
}

TEST(Placement, NodesOutsideEveryBlockAreLeftToPlainScheduling) {
    std::vector<std::string> universe;
    for (int i = 1; i <= 18; ++i) {
        char b[16];
        std::snprintf(b, sizeof b, "gb%04d", i);
        universe.push_back(b);
    }
    universe.push_back("cpu01");
    universe.push_back("cpu02");
    Topology t = test::yaml_topology("blocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n", &universe);
    ASSERT_EQ(t.node_count(), 20u);
    EXPECT_EQ(t.block_of(18), kNoBlock);
    std::vector<std::uint8_t> avail(20, 0);
    avail[18] = avail[19] = 1;
    Request r = nodes(2);
    r.available = avail;
    Placement p = run(t, all(t), r);
    EXPECT_EQ(p.reason, Reason::kNotInTopology);
}

TEST(Placement, OnlyAvailableNodesAreChosenAndFreeOnesFirst) {
    Topology t = test::racks(1);
    auto s = all(t);
    set(s, range(0, 3), NodeState::kBusy);
    std::vector<std::uint8_t> avail(t.node_count(), 1);
    avail[5] = 0; // e.g. another partition
    // Nodes 0-3 are busy but available (preemptable): taken only after free ones.
    Request r = nodes(14);
    r.available = avail;
    Placement p = run(t, s, r);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    // 13 free nodes (4, 6-17) first, then one of the preemptable busy ones.
    std::vector<NodeIndex> want = {0, 4};
    for (NodeIndex n : range(6, 17))
        want.push_back(n);
    EXPECT_EQ(p.nodes, want);
}

TEST(Placement, NodesHeldForARecoveryAreNotGivenAway) {
    Topology t = test::racks(2);
    auto s = all(t);
    set(s, range(18, 35), NodeState::kBusy); // rack02 full
    s[4] = NodeState::kDown;
    // Job 7 had rack01 nodes 0-15 and lost node 4: 15 prior nodes held + 1 more.
    RecoveryClaim c;
    c.job_id = 7;
    RecoveryNeed need;
    need.block = 0;
    need.need = 16;
    need.lost = 1;
    for (NodeIndex n : range(0, 15))
        if (n != 4)
            need.prior_healthy.push_back(n);
    c.blocks.push_back(need);
    Placement p = run(t, s, nodes(1), {c});
    EXPECT_FALSE(p.placed()) << "got node " << (p.nodes.empty() ? -1 : static_cast<int>(p.nodes[0]));
    // Once the hold is gone the node is free for anyone.
    Placement q = run(t, s, nodes(1));
    EXPECT_TRUE(q.placed());
}

TEST(Placement, DecisionsAreDeterministic) {
    Topology t = test::racks(8);
    auto s = all(t);
    for (NodeIndex n = 0; n < t.node_count(); n += 5)
        s[n] = NodeState::kBusy;
    Placement a = run(t, s, nodes(12));
    Placement b = run(t, s, nodes(12));
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(explain(t, a), explain(t, b));
}

TEST(Placement, TooLargeForTheTopology) {
    Topology t = test::racks(2);
    Placement p = run(t, all(t), nodes(40));
    EXPECT_EQ(p.reason, Reason::kTooLarge);
    EXPECT_EQ(explain(t, p), "the job needs 40 nodes; the healthy blocks can hold at most 32 for this kind of job");
}

TEST(Placement, InvalidCountsAreRejected) {
    Topology t = test::racks(1);
    Request r = nodes(4);
    r.max_nodes = 2;
    EXPECT_EQ(run(t, all(t), r).reason, Reason::kInvalidRequest);
}

} // namespace
} // namespace nvlblock
