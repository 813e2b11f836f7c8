// SPDX-License-Identifier: GPL-2.0-or-later
//
// In-place recovery through the Planner, as the plugin drives it: a job loses
// nodes, is requeued, and is placed back on its block with exactly as many
// spares as it lost; the fallback when its block cannot take it; holds;
// lending; block faults; repair.
#include "core/planner.hpp"
#include "recovery_log.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"
#include "writers/status_report.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace nvlblock {
namespace {

using test::all;
using test::job;
using test::range;
using test::set;

constexpr std::uint32_t kJob = 42;
using test::kRack02First16;

bool contains_all(const std::vector<NodeIndex>& hay, const std::vector<NodeIndex>& needles) {
    return std::all_of(needles.begin(), needles.end(),
                       [&](NodeIndex n) { return std::find(hay.begin(), hay.end(), n) != hay.end(); });
}

std::vector<NodeIndex> without(std::vector<NodeIndex> v, const std::vector<NodeIndex>& drop) {
    std::erase_if(v, [&](NodeIndex n) { return std::find(drop.begin(), drop.end(), n) != drop.end(); });
    return v;
}

// rack01 full of other work, rack02 runs kJob on its first 16 nodes, rack03
// and rack04 idle: the situation of the plugin's recovery test.
struct RecoveryTest : ::testing::Test {
    Topology topo = test::racks(4, 18, 16, 2, false, "recovery:\n  wait: 60\n");
    Planner planner{topo};
    std::vector<NodeState> s = all(topo);

    void SetUp() override {
        set(s, range(0, 17), NodeState::kBusy);
        set(s, kRack02First16, NodeState::kBusy);
    }
    // The failure as the epilog reports it: nodes down, job's nodes released.
    void fail(const std::vector<NodeIndex>& failed, std::int64_t now = 1000) {
        planner.job_failed(kJob, kRack02First16, failed, now);
        set(s, kRack02First16, NodeState::kFree);
        set(s, failed, NodeState::kDown);
    }
};

TEST_F(RecoveryTest, OneFailureRestartsOnTheSameRackWithOneSpare) {
    fail({20});
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_EQ(p.spares_used, 1u);
    EXPECT_TRUE(contains_all(p.nodes, without(kRack02First16, {20})));
    EXPECT_EQ(p.nodes.size(), 16u);
    for (NodeIndex n : p.nodes)
        EXPECT_EQ(topo.block_of(n), 1) << n;
    EXPECT_EQ(explain(topo, p), "restart in place: 15 prior nodes + 1 spare");
}

TEST_F(RecoveryTest, TwoFailuresUseBothSpares) {
    fail({20, 25});
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.spares_used, 2u);
    std::vector<NodeIndex> want = without(kRack02First16, {20, 25});
    want.push_back(34);
    want.push_back(35);
    std::sort(want.begin(), want.end());
    EXPECT_EQ(p.nodes, want);
}

TEST_F(RecoveryTest, ThirdFailureWaitsThenFallsBackElsewhere) {
    fail({20, 25, 30});
    Placement wait = planner.place(s, job(kJob, 16), 1011);
    EXPECT_EQ(wait.reason, Reason::kRecoveryWaiting);
    EXPECT_EQ(explain(topo, wait),
              "in-place restart after a node failure: waiting for its block; rack02 has room for 15 of "
              "the 16 nodes it needs (3 failed, 2 spares)");
    test::log_lines(planner);
    // Time moves only through advance(): past its wait, a placement question
    // alone still keeps it waiting (and changes nothing)...
    EXPECT_EQ(planner.place(s, job(kJob, 16), 1061).reason, Reason::kRecoveryWaiting);
    EXPECT_TRUE(test::log_lines(planner).empty());
    EXPECT_FALSE(planner.ledger().find(kJob)->fallback);
    // ...advance() ends its wait (60 s), and it is placed like any other job.
    EXPECT_EQ(planner.advance(s, 1059), 0u); // not quite yet
    EXPECT_EQ(planner.advance(s, 1060), 1u);
    Placement p = planner.place(s, job(kJob, 16), 1061);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_FALSE(p.recovery_in_place);
    EXPECT_EQ(p.nodes, range(36, 51)); // rack03
    auto log = test::log_lines(planner);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0],
              "nvlblock: recovery JobId=42 fallback after 60 s: rack02 has room for 15 of the 16 nodes it needs "
              "(3 failed, 2 spares); placing it anywhere (had rack02)");
    planner.job_started(kJob, p.nodes, 1062);
    EXPECT_EQ(planner.ledger().counters().elsewhere, 1u);
}

TEST_F(RecoveryTest, NothingElseTakesTheHeldNodesWhileTheJobWaits) {
    fail({20});
    // rack03 and rack04 are busy too: the only free nodes are on rack02.
    set(s, range(36, 71), NodeState::kBusy);
    Placement other = planner.place(s, job(7, 1), 1005);
    EXPECT_FALSE(other.placed()) << "took node " << (other.nodes.empty() ? -1 : static_cast<int>(other.nodes[0]));
    Placement lent = planner.place(s, job(8, 2), 1005);
    EXPECT_FALSE(lent.placed());
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.spares_used, 1u);
}

// Slurm's could-it-ever-run question (every node offered, the failed one
// too) is answered without the holds: a "no" there rejects the submission or
// holds the job for good, and the hold ends within recovery.wait. Asked with
// the nodes Slurm can use now, the hold still keeps the job off rack02.
TEST_F(RecoveryTest, HoldsDoNotAnswerWhetherAJobCouldEverRun) {
    fail({20});
    const std::vector<std::uint8_t> every_node(s.size(), 1);
    Request whole = job(7, 64); // 16 on each rack: rack02's held nodes included
    whole.available = every_node;
    Placement ever = planner.place(s, whole, 1005);
    ASSERT_TRUE(ever.placed()) << explain(topo, ever);
    EXPECT_EQ(ever.blocks, 4u);
    std::vector<std::uint8_t> usable_now = every_node;
    usable_now[20] = 0; // the failed node is not offered: Slurm asks to start it now
    whole.available = usable_now;
    Placement now = planner.place(s, whole, 1005);
    EXPECT_FALSE(now.placed());
    EXPECT_EQ(now.reason, Reason::kNoBlockFits) << explain(topo, now);
}

TEST_F(RecoveryTest, HoldLastsAtLeastTheRequeueDelayEvenWithoutAWait) {
    Topology t = test::racks(2, 18, 16, 2, false, "recovery:\n  wait: 0\n");
    Planner pl(t);
    pl.set_slurm_requeue_delay(11); // cred_expire + 1; held 30 s more (a scheduling pass)
    auto st = all(t);
    set(st, range(18, 35), NodeState::kBusy);
    pl.job_failed(kJob, range(0, 15), std::vector<NodeIndex>{3}, 1000);
    st[3] = NodeState::kDown;
    EXPECT_FALSE(pl.place(st, job(9, 1), 1040).placed()); // held during the requeue delay
    EXPECT_TRUE(pl.place(st, job(9, 1), 1041).placed());  // released after it
}

TEST_F(RecoveryTest, ZeroWaitFallsBackAtOnceWhenTheBlockCannotTakeIt) {
    Topology t = test::racks(2, 18, 16, 2, false, "recovery:\n  wait: 0\n");
    Planner pl(t);
    auto st = all(t);
    pl.job_failed(kJob, range(0, 15), std::vector<NodeIndex>{1, 2, 3}, 1000);
    set(st, {1, 2, 3}, NodeState::kDown);
    EXPECT_EQ(pl.advance(st, 1000), 1u);
    Placement p = pl.place(st, job(kJob, 16), 1000);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes, range(18, 33));
}

TEST_F(RecoveryTest, LentSparesArePreemptedForTheRecovery) {
    Topology t = test::racks(1, 18, 16, 2, /*lending=*/true);
    Planner pl(t);
    auto st = all(t);
    set(st, range(0, 15), NodeState::kBusy);
    set(st, {16, 17}, NodeState::kLent);
    pl.job_failed(kJob, range(0, 15), std::vector<NodeIndex>{4}, 1000);
    set(st, range(0, 15), NodeState::kFree);
    st[4] = NodeState::kDown;
    // Without preemption the lent nodes are not available: it waits.
    std::vector<std::uint8_t> avail(t.node_count(), 0);
    for (NodeIndex n : range(0, 15))
        avail[n] = n != 4;
    Request r = job(kJob, 16);
    r.available = avail;
    EXPECT_EQ(pl.place(st, r, 1011).reason, Reason::kRecoveryWaiting);
    // When Slurm offers the lent nodes (preemption), it takes exactly one.
    avail[16] = avail[17] = 1;
    r.available = avail;
    Placement p = pl.place(st, r, 1012);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.spares_used, 1u);
    std::vector<NodeIndex> want = without(range(0, 16), {4});
    EXPECT_EQ(p.nodes, want);
}

TEST_F(RecoveryTest, WithoutARecoveryLentWorkKeepsItsNodes) {
    Topology t = test::racks(1, 18, 16, 2, true);
    Planner pl(t);
    auto st = all(t);
    set(st, range(0, 15), NodeState::kBusy);
    set(st, {16, 17}, NodeState::kLent);
    // Even when Slurm offers the lent nodes through preemption, ordinary work
    // does not take spares: the block's ordinary capacity is in use.
    std::vector<std::uint8_t> avail(t.node_count(), 0);
    avail[16] = avail[17] = 1;
    Request r = job(9, 2);
    r.available = avail;
    Placement p = pl.place(st, r, 1000);
    EXPECT_FALSE(p.placed()) << explain(t, p);
}

TEST_F(RecoveryTest, BlockFaultSendsItsJobsElsewhereWithoutEatingSpares) {
    fail(range(18, 35));                     // the whole of rack02
    set(s, range(36, 51), NodeState::kBusy); // rack03: only its spares free
    // Down as a whole: its wait ends at the next advance(), long before recovery.wait.
    EXPECT_EQ(planner.place(s, job(kJob, 16), 1001).reason, Reason::kRecoveryWaiting);
    EXPECT_EQ(planner.advance(s, 1001), 1u);
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.nodes, range(54, 69)); // rack04, not rack03's spares
    auto log = test::log_lines(planner);
    ASSERT_EQ(log.size(), 2u);
    EXPECT_NE(log[1].find("rack02 is down (block fault: 18 of 18 nodes failed)"), std::string::npos) << log[1];
    // With rack04 busy too it waits instead of taking rack03's spares.
    Planner pl2(topo);
    auto s2 = s;
    set(s2, range(54, 71), NodeState::kBusy);
    pl2.job_failed(kJob, kRack02First16, range(18, 35), 1000);
    pl2.advance(s2, 1001);
    Placement q = pl2.place(s2, job(kJob, 16), 1011);
    EXPECT_FALSE(q.placed());
    EXPECT_EQ(q.reason, Reason::kNoBlockFits);
}

TEST_F(RecoveryTest, InPlaceStartClosesTheRecord) {
    fail({20});
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed());
    test::log_lines(planner);
    planner.job_started(kJob, p.nodes, 1012);
    EXPECT_EQ(planner.ledger().find(kJob), nullptr);
    EXPECT_EQ(planner.ledger().counters().in_place, 1u);
    auto log = test::log_lines(planner);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0],
              "nvlblock: recovery JobId=42 restarted in place on rack02: 15 prior nodes + 1 spares (gb0035) 12 s "
              "after the failure");
    // scontrol show topology lists it after the summary line.
    auto lines = recovery_lines(make_report(planner, s, 1013));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].substr(0, lines[0].find(" At=")),
              "Recovery JobId=42 Outcome=in_place Blocks=rack02 Lost=1 SparesUsed=1 Seconds=12");
}

TEST_F(RecoveryTest, PendingRecoveryIsListed) {
    fail({20});
    auto lines = recovery_lines(make_report(planner, s, 1005));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].substr(0, lines[0].find(" FailedAt=")), "RecoveryPending JobId=42 Blocks=rack02 Lost=1");
    EXPECT_NE(lines[0].find(" Fallback=no"), std::string::npos) << lines[0];
}

TEST_F(RecoveryTest, RepairedNodeRefillsTheSparePool) {
    fail({20});
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed());
    set(s, p.nodes, NodeState::kBusy);
    planner.job_started(kJob, p.nodes, 1012);
    ClusterReport before = make_report(planner, s, 1013);
    EXPECT_EQ(before.blocks[1].spares_free, 1);
    EXPECT_EQ(before.blocks[1].spares_used, 1);
    s[20] = NodeState::kFree; // scontrol update state=resume
    ClusterReport after = make_report(planner, s, 1100);
    EXPECT_EQ(after.blocks[1].spares_free, 2);
    EXPECT_EQ(after.blocks[1].spares_used, 0);
    // ...and the next failure is served in place again.
    const std::vector<NodeIndex> running = p.nodes;
    planner.job_failed(kJob, running, std::vector<NodeIndex>{30}, 2000);
    set(s, running, NodeState::kFree);
    s[30] = NodeState::kDown;
    Placement q = planner.place(s, job(kJob, 16), 2011);
    ASSERT_TRUE(q.placed()) << explain(topo, q);
    EXPECT_TRUE(q.recovery_in_place);
    EXPECT_EQ(q.spares_used, 1u);
}

TEST_F(RecoveryTest, SegmentJobOnTwoRacksRecoversOnBoth) {
    Planner pl(topo);
    auto st = all(topo);
    std::vector<NodeIndex> had = range(0, 15);
    for (NodeIndex n : range(18, 33))
        had.push_back(n);
    pl.job_failed(kJob, had, std::vector<NodeIndex>{5}, 1000);
    st[5] = NodeState::kDown;
    set(st, range(36, 71), NodeState::kBusy);
    Placement p = pl.place(st, job(kJob, 32, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.spares_used, 1u);
    int in01 = 0, in02 = 0;
    for (NodeIndex n : p.nodes)
        (n < 18 ? in01 : in02)++;
    EXPECT_EQ(in01, 16);
    EXPECT_EQ(in02, 16);
}

TEST_F(RecoveryTest, JobLeavingTheQueueReleasesItsHold) {
    fail({20});
    planner.job_gone(kJob, 1005);
    EXPECT_EQ(planner.ledger().counters().abandoned, 1u);
    set(s, range(36, 71), NodeState::kBusy);
    EXPECT_TRUE(planner.place(s, job(7, 1), 1006).placed());
}

} // namespace
} // namespace nvlblock
