// SPDX-License-Identifier: GPL-2.0-or-later
//
// Rule 3b (docs/placement.md): spares reclaimed from running work. Nothing is
// withheld on a `reserve: reclaim` block; a job that lost nodes there gets them
// back from work on its block that may lose them (Slurm's preemption says
// which, or the site's recovery.reclaim_from), cheapest first, within the
// block's spares and the budget (on any of its own blocks for a job on
// several), and falls back at once when that cannot make room. Also rule 5's
// shift between a multi-block job's own blocks, and best fit's tie-breaks
// (rule 1). Who may be moved, exact fits, heterogeneous jobs, the cooldown and
// the limits: test_reclaim_rules.cpp.
#include "core/planner.hpp"
#include "recovery/reclaim.hpp"
#include "recovery_log.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"
#include "writers/recovery_log_text.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace nvlblock {
namespace {

using test::all;
using test::job;
using test::range;
using test::set;

constexpr std::uint32_t kJob = 42;

// Work Slurm's preemption lets a recovering job preempt (PreemptMode=REQUEUE).
RunningJob preemptable(std::uint32_t id, std::vector<NodeIndex> nodes, std::int64_t started) {
    RunningJob j;
    j.job_id = id;
    j.nodes = std::move(nodes);
    j.started = started;
    j.qos = "low";
    j.slurm_may_preempt = true;
    j.preempt_mode = PreemptMode::kRequeue;
    return j;
}

const Reclaimer kOwner = reclaimer_of_user(1000);

std::vector<std::uint32_t> ids(const Reclaim& r) {
    std::vector<std::uint32_t> out;
    for (const ReclaimVictim& v : r.victims)
        out.push_back(v.job_id);
    return out;
}

std::optional<Reclaim> plan_for(const Planner& p, const std::vector<NodeState>& s, const Request& r,
                                const std::vector<RunningJob>& running, std::int64_t now) {
    return p.plan_reclaim(s, r, kOwner, running, now).plan;
}
using test::kRack02First16;

Topology reclaim_racks(int racks, const std::string& extra = "") {
    return test::racks(racks, 18, 16, 2, false,
                       "  reserve: reclaim\nrecovery:\n  wait: 300\n  reclaim_budget: 300\n" + extra);
}

// rack02 runs kJob on its first 16 nodes and two 1-node jobs on its spares:
// job 7 since t=0, job 8 since t=900 (the younger one).
struct ReclaimTest : ::testing::Test {
    Topology topo = reclaim_racks(3);
    Planner planner{topo};
    std::vector<NodeState> s = all(topo);
    std::vector<RunningJob> running = {preemptable(7, {34}, 0), preemptable(8, {35}, 900)};

    void SetUp() override {
        planner.set_slurm_requeue_delay(11);    // held 11 + 30 s
        set(s, range(0, 17), NodeState::kBusy); // rack01 full of other work
        set(s, {34, 35}, NodeState::kBusy);
    }
    void fail(std::vector<NodeIndex> failed, std::int64_t now = 1000) {
        planner.job_failed(kJob, kRack02First16, failed, now);
        set(s, kRack02First16, NodeState::kFree);
        set(s, failed, NodeState::kDown);
    }
};

TEST_F(ReclaimTest, NothingIsWithheldFromOrdinaryWork) {
    Planner fresh(topo);
    std::vector<NodeState> idle = all(topo);
    set(idle, kRack02First16, NodeState::kBusy);
    // rack02's last two nodes go to an ordinary 2-node job: best fit, spares and all.
    Placement p = fresh.place(idle, job(9, 2), 0);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.nodes, (std::vector<NodeIndex>{34, 35}));
    // And an 18-node job takes a whole idle rack; with idle spares it could not.
    p = fresh.place(idle, job(10, 18), 0);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.nodes, range(0, 17));
}

TEST_F(ReclaimTest, TheYoungestJobOnTheBlockIsRequeuedForOneLostNode) {
    fail({20});
    const Placement waiting = planner.place(s, job(kJob, 16), 1011);
    ASSERT_EQ(waiting.reason, Reason::kRecoveryWaiting) << explain(topo, waiting);
    ASSERT_EQ(waiting.shortfalls.size(), 1u);
    EXPECT_EQ(waiting.shortfalls[0].block, 1);
    EXPECT_EQ(waiting.shortfalls[0].need, 16u);
    EXPECT_EQ(waiting.shortfalls[0].room, 15u);

    auto plan = plan_for(planner, s, job(kJob, 16), running, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{8});
    EXPECT_EQ(plan->nodes, 1u);
    EXPECT_EQ(plan->lost_node_seconds, 101);        // 1 node x (1001 - 900) s
    EXPECT_EQ(plan->budget_node_seconds, 15 * 300); // held nodes x recovery.wait
    planner.reclaim_started(kJob, *plan, kOwner, 1001, 1001);
    EXPECT_EQ(test::log_lines(planner).back(),
              "nvlblock: recovery JobId=42 reclaiming 1 spare node on rack02: preempting JobId=8 (Slurm's "
              "preemption) (101 node-seconds of run time lost, budget 4500)");
    // No second round while the first one's node is released.
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 16), running, 1010));

    // The caller requeued job 8: its node is free, and the job restarts in place.
    set(s, {35}, NodeState::kFree);
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_EQ(p.spares_used, 1u);
    EXPECT_EQ(explain(topo, p), "restart in place: 15 prior nodes + 1 spare");
}

TEST_F(ReclaimTest, TheCoreNamesWhoCouldUseAReclaimBeforeJobsAreWalked) {
    using Ids = std::vector<std::uint32_t>;
    EXPECT_EQ(planner.recovery().reclaim_candidates(topo, 1000), Ids{});
    fail({20});
    EXPECT_EQ(planner.recovery().reclaim_candidates(topo, 1001), Ids{kJob});
    auto plan = plan_for(planner, s, job(kJob, 16), running, 1001);
    ASSERT_TRUE(plan);
    planner.reclaim_started(kJob, *plan, kOwner, 1001, 1001);
    // Its round releases nodes: nobody to plan for, no job walked.
    EXPECT_EQ(planner.recovery().reclaim_candidates(topo, 1010), Ids{});
    // Idle spares: never a reclaim.
    const Topology idle = test::racks(3, 18, 16, 2);
    Planner other{idle};
    other.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20}, 1000);
    EXPECT_EQ(other.recovery().reclaim_candidates(idle, 1001), Ids{});
}

TEST_F(ReclaimTest, OnlyNodesAMoveFreesCount) {
    // Jobs 8 and 9 share gb0036 (OverSubscribe): moving either frees
    // nothing. Job 7, older (dearer), alone on gb0035, is the one that frees
    // the node the restart lacks (issue 36: before, job 9 was requeued and
    // the restart still could not fit).
    fail({20});
    const std::vector<RunningJob> shared = {preemptable(7, {34}, 0), preemptable(8, {35}, 900),
                                            preemptable(9, {35}, 950)};
    auto plan = plan_for(planner, s, job(kJob, 16), shared, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{7});
    // Alone on gb0036, job 9 is again the cheapest.
    const std::vector<RunningJob> alone = {preemptable(7, {34}, 0), preemptable(9, {35}, 950)};
    plan = plan_for(planner, s, job(kJob, 16), alone, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{9});
}

TEST_F(ReclaimTest, NothingIsReclaimedForAHeldJob) {
    // RequeueExitHold or scontrol requeuehold: priority 0 until released.
    fail({20});
    Reclaimer held = kOwner;
    held.held = true;
    const ReclaimDecision d = planner.plan_reclaim(s, job(kJob, 16), held, running, 1001);
    EXPECT_FALSE(d.plan);
    EXPECT_EQ(d.refusal.reason, ReclaimRefusalReason::kHeld);
    EXPECT_EQ(reclaim_refusal_text(kJob, d.refusal),
              "JobId=42: nothing reclaimed: it is held (priority 0) and cannot start until it is released");
    EXPECT_TRUE(plan_for(planner, s, job(kJob, 16), running, 1001)); // released: it may
}

TEST_F(ReclaimTest, SlurmsOfferOfBusyNodesIsNotTakenInPlace) {
    // Slurm's node_map for the held job offers rack02's two busy spares (it
    // could preempt the jobs there) and an idle rack. In place, the job takes
    // no busy node: it waits for the reclaim round to free one (rule 3b).
    fail({20});
    std::vector<std::uint8_t> offered(topo.node_count(), 1);
    offered[20] = 0; // the failed node
    Request r = job(kJob, 16);
    r.available = offered;
    const Placement waiting = planner.place(s, r, 1011);
    ASSERT_EQ(waiting.reason, Reason::kRecoveryWaiting) << explain(topo, waiting);
    ASSERT_EQ(waiting.shortfalls.size(), 1u);
    EXPECT_EQ(waiting.shortfalls[0].room, 15u);
    // An ordinary job is offered the same nodes: Slurm's preemption is
    // Slurm's to decide there, as under topology/block.
    Request other = job(9, 2);
    other.available = offered;
    const Placement p = planner.place(s, other, 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    // Once reclaimed (its node freed), the held job restarts in place.
    set(s, {35}, NodeState::kFree);
    const Placement back = planner.place(s, r, 1012);
    ASSERT_TRUE(back.placed()) << explain(topo, back);
    EXPECT_TRUE(back.recovery_in_place);
    EXPECT_EQ(std::count(back.nodes.begin(), back.nodes.end(), 35), 1);
    EXPECT_EQ(std::count(back.nodes.begin(), back.nodes.end(), 34), 0);
}

TEST_F(ReclaimTest, ItsOwnNodesStillFinishingStayOfferedInPlace) {
    // Right after the requeue its healthy nodes still run its epilog (busy)
    // when Slurm asks whether it could ever run, offering every node.
    fail({20});
    set(s, kRack02First16, NodeState::kBusy);
    set(s, {20}, NodeState::kDown);
    std::vector<std::uint8_t> offered(topo.node_count(), 1);
    Request r = job(kJob, 16);
    r.available = offered;
    const Placement p = planner.place(s, r, 1001);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
}

TEST_F(ReclaimTest, PreemptibleWorkGoesFirstAndCostsNothing) {
    running[0].preemptible = true; // the older job, in the preemptible QOS
    fail({20});
    auto plan = plan_for(planner, s, job(kJob, 16), running, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{7});
    EXPECT_EQ(plan->lost_node_seconds, 0);
}

TEST_F(ReclaimTest, JobsThatCannotBeRequeuedOrAreExemptAreNeverChosen) {
    running[1].requeueable = false;
    running[0].exempt = true;
    fail({20});
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 16), running, 1001));
    running[0].exempt = false;
    auto plan = plan_for(planner, s, job(kJob, 16), running, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{7});
}

TEST_F(ReclaimTest, NoMoreThanTheBudget) {
    // Both small jobs have run for hours: 1 node x 5,000 s > 15 x 300.
    running = {preemptable(7, {34}, -5000), preemptable(8, {35}, -4500)};
    fail({20});
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 16), running, 1001));
}

TEST_F(ReclaimTest, NoMoreThanTheBlocksSpares) {
    // Three failed nodes: three would have to be reclaimed, the block has 2 spares.
    set(s, {34, 35}, NodeState::kBusy);
    fail({20, 21, 22});
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 16), running, 1001));
}

TEST_F(ReclaimTest, ItsOwnNodesStillFinishingAreNotMissing) {
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20}, 1000);
    set(s, {20}, NodeState::kDown); // the other 15 are still completing (busy)
    auto plan = plan_for(planner, s, job(kJob, 16), running, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{8});
}

TEST_F(ReclaimTest, WithoutRoomTheJobFallsBackAfterTheRequeueDelayNotTheRecoveryWait) {
    running.clear(); // nothing there may be requeued
    fail({20});
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 16), running, 1001));
    // Held until the requeue delay (41 s) is over, not recovery.wait (300 s)...
    planner.advance(s, 1040);
    Placement p = planner.place(s, job(kJob, 16), 1040);
    EXPECT_EQ(p.reason, Reason::kRecoveryWaiting);
    // ...then placed like any other job: rack03 is idle.
    EXPECT_EQ(planner.advance(s, 1041), 1u);
    p = planner.place(s, job(kJob, 16), 1041);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_FALSE(p.recovery_in_place);
    EXPECT_EQ(p.nodes, range(36, 51));
}

// A 20-node job had all of rack01 and two nodes of rack02, where other work
// fills the rest: job 7 on 14 nodes since t=0, job 8 on one since t=900 and
// job 9 on one since t=950. It loses a node of rack01.
struct ReclaimOnOwnBlocks : ::testing::Test {
    Topology topo = reclaim_racks(3);
    Planner planner{topo};
    std::vector<NodeState> s = all(topo);
    std::vector<NodeIndex> had = range(0, 19);
    std::vector<RunningJob> running = {preemptable(7, range(20, 33), 0), preemptable(8, {34}, 900),
                                       preemptable(9, {35}, 950)};

    void SetUp() override {
        planner.set_slurm_requeue_delay(11);
        set(s, range(20, 35), NodeState::kBusy);
        planner.job_failed(kJob, had, std::vector<NodeIndex>{3}, 1000);
        set(s, {3}, NodeState::kDown);
    }
};

TEST_F(ReclaimOnOwnBlocks, ARackTheJobFilledItselfGetsItsNodeBackOnItsOtherRack) {
    const Placement waiting = planner.place(s, job(kJob, 20), 1011);
    ASSERT_EQ(waiting.reason, Reason::kRecoveryWaiting) << explain(topo, waiting);
    EXPECT_EQ(waiting.own_blocks_short_by, 1u);
    // Nothing runs on rack01 but the job: the youngest job on rack02 goes.
    auto plan = plan_for(planner, s, job(kJob, 20), running, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{9});
    EXPECT_EQ(plan->nodes, 1u);
    EXPECT_EQ(plan->lost_node_seconds, 51);
    EXPECT_EQ(plan->budget_node_seconds, 19 * 300);
    planner.reclaim_started(kJob, *plan, kOwner, 1001, 1001);
    set(s, {35}, NodeState::kFree); // Slurm requeued job 9
    const Placement p = planner.place(s, job(kJob, 20), 1012);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place); // 17 on rack01, 3 on rack02: its own NVLink domains
    EXPECT_EQ(p.spares_used, 1u);
    std::vector<NodeIndex> want;
    for (NodeIndex n : range(0, 19))
        if (n != 3)
            want.push_back(n);
    want.push_back(35);
    EXPECT_EQ(p.nodes, want);
}

TEST_F(ReclaimOnOwnBlocks, NeverMoreThanTheSparesOfTheRacksThatLostNodes) {
    // Three nodes of rack01 lost: more than its two spares.
    Planner fresh(topo);
    fresh.set_slurm_requeue_delay(11);
    fresh.job_failed(kJob, had, std::vector<NodeIndex>{3, 4, 5}, 1000);
    set(s, {4, 5}, NodeState::kDown);
    EXPECT_FALSE(plan_for(fresh, s, job(kJob, 20), running, 1001));
}

TEST(ReclaimOnOwnBlocksWithSegments, SegmentsDoNotMoveForOneNode) {
    // Two segments of 10, one per rack. rack01 lost a node and its other work
    // may not be requeued; freeing one node on rack02 would not let a whole
    // segment move there, so nothing is requeued.
    Topology topo = reclaim_racks(3);
    Planner planner(topo);
    planner.set_slurm_requeue_delay(11);
    std::vector<NodeState> s = all(topo);
    std::vector<NodeIndex> had = range(0, 9);
    for (NodeIndex n : range(18, 27))
        had.push_back(n);
    set(s, range(10, 17), NodeState::kBusy);
    set(s, range(28, 35), NodeState::kBusy);
    std::vector<RunningJob> running = {preemptable(5, range(10, 17), 0), preemptable(9, range(28, 35), 950)};
    running[0].requeueable = false;
    planner.job_failed(kJob, had, std::vector<NodeIndex>{3}, 1000);
    set(s, {3}, NodeState::kDown);
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 20, 10), running, 1001));
    // Without --segment the same job gets its node on rack02.
    Planner plain(topo);
    plain.set_slurm_requeue_delay(11);
    plain.job_failed(kJob, had, std::vector<NodeIndex>{3}, 1000);
    auto plan = plan_for(plain, s, job(kJob, 20), running, 1001);
    ASSERT_TRUE(plan);
    EXPECT_EQ(ids(*plan), std::vector<std::uint32_t>{9});
}

TEST(ReclaimIdle, BlocksWithIdleSparesAreNeverReclaimed) {
    Topology topo = test::racks(3);
    Planner planner(topo);
    std::vector<NodeState> s = all(topo);
    set(s, range(0, 17), NodeState::kBusy);
    set(s, {34, 35}, NodeState::kDown); // its spares used up by earlier failures
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20}, 1000);
    set(s, {20}, NodeState::kDown);
    std::vector<RunningJob> running;
    EXPECT_FALSE(plan_for(planner, s, job(kJob, 16), running, 1001));
}

TEST(ShiftWithinOwnBlocks, AJobOnTwoRacksShiftsANodeToTheRackWithRoom) {
    // A 30-node job on all of rack01 and 12 nodes of rack02 loses a node of
    // rack01: rack01 cannot give back 18, rack02 has 6 more free nodes.
    Topology topo = test::racks(3, 18, 16, 2, false, "recovery:\n  wait: 300\n");
    Planner planner(topo);
    std::vector<NodeState> s = all(topo);
    std::vector<NodeIndex> had = range(0, 29);
    planner.job_failed(kJob, had, std::vector<NodeIndex>{3}, 1000);
    set(s, {3}, NodeState::kDown);
    Placement p = planner.place(s, job(kJob, 30), 1011);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_EQ(p.spares_used, 1u);
    std::vector<NodeIndex> want;
    for (NodeIndex n : range(0, 30))
        if (n != 3)
            want.push_back(n);
    EXPECT_EQ(p.nodes, want); // 17 on rack01, 13 on rack02
}

TEST(ShiftWithinOwnBlocks, SegmentsMoveWhole) {
    // Two segments of 8 on rack01 and rack02; rack01 loses 3 nodes and has
    // only 7 usable (the rest busy): a whole segment cannot move to rack02
    // (8 + 8 > 10 usable there), so the job waits.
    Topology topo = test::racks(3, 18, 16, 2, false, "recovery:\n  wait: 300\n");
    Planner planner(topo);
    std::vector<NodeState> s = all(topo);
    std::vector<NodeIndex> had = range(0, 7);
    for (NodeIndex n : range(18, 25))
        had.push_back(n);
    planner.job_failed(kJob, had, std::vector<NodeIndex>{0, 1, 2}, 1000);
    set(s, {0, 1, 2}, NodeState::kDown);
    set(s, range(8, 15), NodeState::kBusy);
    set(s, range(26, 33), NodeState::kBusy);
    Placement p = planner.place(s, job(kJob, 16, 8), 1011);
    EXPECT_EQ(p.reason, Reason::kRecoveryWaiting) << explain(topo, p);
    // With rack02 idle but for the job's own segment, the segment moves there.
    set(s, range(26, 33), NodeState::kFree);
    p = planner.place(s, job(kJob, 16, 8), 1012);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    for (NodeIndex n : p.nodes)
        EXPECT_EQ(topo.block_of(n), 1) << n;
}

TEST(BestFitTies, TheFullerBlockWinsAmongEqualRoom) {
    // Idle spares: rack01 is idle, rack02 has 16 usable of 18 (2 lent); both
    // offer 16 to ordinary work. The partly used rack is the better fit (not
    // the lower index): it keeps rack01 whole.
    Topology topo = test::racks(2, 18, 16, 2, true);
    std::vector<NodeState> s = all(topo);
    set(s, {34, 35}, NodeState::kLent);
    Snapshot snap(topo, s, {});
    Placement p = place(snap, job(9, 16));
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.nodes, range(18, 33));
}

TEST(BestFitTies, PreemptionFreesOneBlockRatherThanScatteredNodes) {
    // A 4-node job that may preempt: rack01 offers 4 free nodes + 1 by
    // preemption, rack02 2 free + 2 by preemption. Fewest preempted first.
    Topology topo = test::racks(2, 8, 4, 0, false);
    std::vector<NodeState> s = all(topo, NodeState::kBusy);
    std::vector<std::uint8_t> avail(topo.node_count(), 0);
    for (NodeIndex n : {0u, 1u, 2u, 3u})
        s[n] = NodeState::kFree, avail[n] = 1;
    avail[4] = 1;
    for (NodeIndex n : {8u, 9u})
        s[n] = NodeState::kFree, avail[n] = 1;
    avail[10] = avail[11] = 1;
    Snapshot snap(topo, s, {});
    Request r = job(9, 4);
    r.available = avail;
    Placement p = place(snap, r);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.nodes, range(0, 3));
}

TEST(ReserveSetting, TheReclaimBudgetIsAnHourUnlessSet) {
    const std::string blocks = "blocks:\n  - name: a\n    nodes: n[1-18]\n";
    EXPECT_EQ(test::yaml_topology(blocks).policy().recovery.reclaim_budget_seconds, 3600);
    const Topology t = test::yaml_topology("recovery:\n  wait: 5m\n  reclaim_budget: 2h\n" + blocks);
    EXPECT_EQ(t.policy().recovery.reclaim_budget_seconds, 7200);
    EXPECT_EQ(t.policy().recovery.wait_seconds, 300);
    try {
        test::yaml_topology("recovery:\n  reclaim_budget: soon\n" + blocks);
        FAIL() << "accepted reclaim_budget: soon";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.first().str().rfind("test.yaml:2: recovery.reclaim_budget: ", 0), 0u) << e.first().str();
    }
}

TEST(ReserveSetting, ReadFromDefaultsAndPerBlock) {
    Topology t = test::yaml_topology("defaults:\n  reserve: reclaim\nblocks:\n"
                                     "  - name: a\n    nodes: n[1-18]\n"
                                     "  - name: b\n    nodes: n[19-36]\n    reserve: idle\n");
    EXPECT_EQ(t.block(0).settings.reserve, SpareReserve::kReclaim);
    EXPECT_EQ(t.block(1).settings.reserve, SpareReserve::kIdle);
    try {
        test::yaml_topology("defaults:\n  reserve: lend\nblocks:\n  - name: a\n    nodes: n[1-18]\n");
        FAIL() << "accepted reserve: lend";
    } catch (const ConfigError& e) {
        EXPECT_EQ(e.first().str(), "test.yaml:2: defaults.reserve: expected idle or reclaim, got 'lend'");
    }
}

} // namespace
} // namespace nvlblock
