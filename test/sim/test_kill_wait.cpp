// SPDX-License-Identifier: GPL-2.0-or-later
//
// Slurm's KillWait (--kill-wait): a killed job's healthy nodes complete (busy,
// no job's) for the kill wait before they are free; a job that ends by itself
// frees them at once. On 2 racks of 18 (sim_test_support.hpp), with a kill
// wait of 30 s.
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

using nvlblock::NodeIndex;
using nvlblock::NodeState;
using test::slice_job;

SimOptions with_kill_wait(Seconds s) {
    SimOptions o = test::two_racks();
    o.victims.kill_wait = s;
    return o;
}

// Whether the queue holds the end of a completion at `at` (popping it all).
bool completion_end_queued(EventQueue& q, Seconds at) {
    bool found = false;
    while (!q.empty()) {
        const Event e = q.pop();
        found = found || (e.kind == EventKind::kCompletionEnd && e.at == at);
    }
    return found;
}

// A 1-slice job under `w`'s policy, submitted and started at 0.
std::uint32_t started_slice(World& w, Seconds duration) {
    const std::uint32_t i = w.submit(slice_job("S", 0, 1, duration), 0);
    const nvlblock::Placement p = w.attempt(w.job(i), 0);
    EXPECT_TRUE(p.placed());
    EXPECT_TRUE(w.start(i, p, 0));
    return i;
}

// A 1-slice job under block starts at 0; the first of its nodes fails at 400
// and the job is killed: its 15 other nodes complete to 430, then are free.
TEST(KillWait, AFailedJobsSurvivingNodesAreBusyForTheKillWait) {
    const SimOptions o = with_kill_wait(30);
    World w(o, make_policy(PolicyKind::kBlock, o.shape, o.preemption));
    const std::uint32_t i = started_slice(w, 1200);
    const std::vector<NodeIndex> nodes = w.job(i).nodes;
    ASSERT_EQ(nodes.size(), 16u);
    w.cluster().cause_down(nodes[0]);
    w.kill(i, 400, LossCause::kFailure, {nodes[0]});
    const ClusterState& c = w.cluster();
    EXPECT_EQ(c.state(nodes[0]), NodeState::kDown);
    EXPECT_EQ(c.completing_until(nodes[0]), -1); // down, not completing
    for (std::size_t k = 1; k < nodes.size(); ++k) {
        EXPECT_EQ(c.state(nodes[k]), NodeState::kBusy);
        EXPECT_LT(c.job_on(nodes[k]), 0);
        EXPECT_EQ(c.completing_until(nodes[k]), 430);
        EXPECT_EQ(w.cluster().free_map()[nodes[k]], 0);
        EXPECT_EQ(w.cluster().preemptor_map()[nodes[k]], 0);
    }
    EXPECT_EQ(c.busy_count(), 0);
    EXPECT_EQ(c.completing_count(), 15);
    EXPECT_EQ(c.free_count(), 36 - 1 - 15);
    EXPECT_TRUE(completion_end_queued(w.events(), 430));
    const std::uint64_t epoch = w.epoch();
    w.completion_over(429); // not yet
    EXPECT_EQ(c.free_count(), 20);
    EXPECT_EQ(w.epoch(), epoch);
    w.completion_over(430);
    EXPECT_EQ(c.free_count(), 35);
    EXPECT_EQ(c.completing_count(), 0);
    EXPECT_GT(w.epoch(), epoch); // refused jobs are tried again
    for (std::size_t k = 1; k < nodes.size(); ++k)
        EXPECT_EQ(c.state(nodes[k]), NodeState::kFree);
}

// Node 1 completes a kill to 130, fails at 110, is repaired and allocated
// again at 115, and killed again at 120: the end of the first completion
// (130) frees nodes 0 and 2 but not node 1, which completes to 150. Node 2
// fails while completing and stays down.
TEST(KillWait, AStaleCompletionFreesNoNodeFailedOrKilledAgainSince) {
    const SimOptions o = with_kill_wait(30);
    World w(o, make_policy(PolicyKind::kBlock, o.shape, o.preemption));
    ClusterState& c = w.cluster();
    c.allocate({0, 1, 2, 3}, 0, true, NodeState::kBusy);
    c.complete({0, 1, 2, 3}, 130);
    EXPECT_EQ(c.busy_preemptible_count(), 0);
    c.cause_down(1);
    c.cause_down(3);
    EXPECT_EQ(c.completing_count(), 2);
    c.cause_up(1);
    EXPECT_EQ(c.state(1), NodeState::kFree);
    c.allocate({1}, 1, false, NodeState::kBusy);
    c.complete({1}, 150);
    EXPECT_EQ(c.completion_over(130), 2); // nodes 0 and 2
    EXPECT_EQ(c.state(0), NodeState::kFree);
    EXPECT_EQ(c.state(2), NodeState::kFree);
    EXPECT_EQ(c.state(1), NodeState::kBusy);
    EXPECT_EQ(c.completing_until(1), 150);
    EXPECT_EQ(c.state(3), NodeState::kDown);
    EXPECT_EQ(c.free_count(), 36 - 1 - 1);
    EXPECT_EQ(c.completion_over(150), 1);
    EXPECT_EQ(c.state(1), NodeState::kFree);
    EXPECT_EQ(c.completing_count(), 0);
    EXPECT_EQ(c.busy_count(), 0);
    EXPECT_EQ(c.free_count(), 35);
    EXPECT_EQ(c.free_map()[1], 1);
}

// The lending scenario (test_scenarios.cpp) with node 5 failing at 400: J1's
// own 15 nodes complete to 430, and Slurm requeues it only then: it may start
// from 440 (the requeue delay after its completion). It then restarts in place
// by preempting J4 on spare 16 and waits for J4's node to complete too, to 470
// (without a kill wait it restarts at 410). J4 loses its work since its
// checkpoint at 300.
TEST(KillWait, APreemptorWaitsForItsVictimsNodesToComplete) {
    const std::vector<JobSpec> jobs = test::lending_jobs();
    const PolicyResult at_once = test::run(with_kill_wait(0), PolicyKind::kNvlblockLend, jobs, {{5, 400, 1400}});
    EXPECT_DOUBLE_EQ(at_once.multi_node_restart_delay.max, 10);
    const PolicyResult r = test::run(with_kill_wait(30), PolicyKind::kNvlblockLend, jobs, {{5, 400, 1400}});
    EXPECT_EQ(r.preemptions, 1u);
    EXPECT_EQ(r.multi_node_in_place, 1u);
    EXPECT_DOUBLE_EQ(r.multi_node_restart_delay.max, 70);
    EXPECT_NEAR(r.lost_preemption_gpu_hours, 140 * 4.0 / 3600, 1e-9);
    EXPECT_EQ(r.jobs_completed, 5u);
}

// test_reclaim.cpp's scenario (the recommended policy; R on rack001 fails at
// 400; recovery.reclaim_from normal): R's own nodes complete to 430 and it may
// start from 440 (the requeue delay after that); V1 on node 16 is reclaimed
// for R then and its node completes to 470, the time the core is told it is
// released by; R restarts in place then. Its nodes are held that long because
// the core's requeue delay counts the kill wait too (the plugin passes
// KillWait + cred_expire + 1): held for the requeue delay alone (to 440 plus
// the scheduling slack), R would lose them. Without a kill wait it restarts at
// 410.
TEST(KillWait, AReclaimsVictimsReleaseTheirNodesAfterTheKillWait) {
    SimOptions o = with_kill_wait(30);
    o.shape.reclaim_from_qos = {"normal"};
    const std::vector<JobSpec> jobs = {test::job("R", 0, 16, 1200), test::job("V1", 0, 1, 1500),
                                       test::job("V2", 0, 1, 1500)};
    std::vector<Seconds> released_by;
    SimHooks hooks;
    hooks.on_reclaim_started = [&](std::uint32_t, const nvlblock::Reclaim&, const nvlblock::Reclaimer&, Seconds by,
                                   Seconds now) { released_by.push_back(by - now); };
    const PolicyResult r = test::run(o, PolicyKind::kRecommended, jobs, {{5, 400, 1400}}, hooks);
    EXPECT_EQ(r.reclaims, 1u);
    EXPECT_EQ(r.multi_node_in_place, 1u);
    EXPECT_EQ(released_by, std::vector<Seconds>{30});
    EXPECT_DOUBLE_EQ(r.multi_node_restart_delay.max, 70);
}

// Under block with preemption, P (preemptible, submitted first) runs on the
// one node the fillers (to 1500) leave; N preempts it at 10 and waits for its node to
// complete, to 40. P is requeued only then, and may start from 50 (the
// requeue delay after its completion): N gets the node at 40. Were P eligible
// from 20 (the delay counted from the kill), it would take the node at 40,
// being ahead of N in the queue, and be preempted again every 30 s until the
// fillers end (a run with no end for fillers that never do).
TEST(KillWait, AVictimIsRequeuedOnlyOnceItsNodesCompleted) {
    SimOptions o = with_kill_wait(30);
    o.preemption = PreemptionMode::kAll;
    const std::vector<JobSpec> jobs = {test::job("P", 0, 1, 1000, true), test::job("F1", 0, 16, 1500),
                                       test::job("F2", 0, 16, 1500),     test::job("F3", 0, 1, 1500),
                                       test::job("F4", 0, 1, 1500),      test::job("F5", 0, 1, 1500),
                                       test::job("N", 10, 1, 100)};
    const PolicyResult r = test::run(o, PolicyKind::kBlock, jobs);
    EXPECT_EQ(r.preemptions, 1u);
    EXPECT_EQ(r.most_preemptions_one_job, 1u);
    EXPECT_EQ(r.jobs_completed, 7u);
    EXPECT_DOUBLE_EQ(test::waits(r, "gpus_1_4").max, 30); // N: submitted at 10, started at 40
}

// A job that ends by itself frees its nodes at once, kill wait or not.
TEST(KillWait, AJobThatEndsFreesItsNodesAtOnce) {
    const SimOptions o = with_kill_wait(30);
    World w(o, make_policy(PolicyKind::kBlock, o.shape, o.preemption));
    const std::uint32_t i = started_slice(w, 100);
    w.finish(i, 100);
    EXPECT_EQ(w.cluster().free_count(), 36);
    EXPECT_EQ(w.cluster().completing_count(), 0);
}

} // namespace
} // namespace nvlblock::sim
