// SPDX-License-Identifier: GPL-2.0-or-later
//
// The peers a site would choose instead of nvlblock, on scenarios worked out
// by hand (2 racks of 18, rack001 = nodes 0-17, slice 16, FIFO, checkpoints
// every 300 s, requeue delay 10 s):
//  - nvrx-16+2: a 1-slice job takes all 18 nodes of rack001 and works on 16
//    (nodes 0-15; 16 and 17 are its standbys). A failed active node is
//    replaced by a standby and the job restarts in the job after
//    --in-job-restart; a failed standby costs nothing but the standby; when
//    a rack has no standby left the job requeues as under block.
//  - block-expedite: block, and a job killed by a node failure is eligible
//    at once and first in the queue (Slurm 25.11's expedited requeue).
#include "in_job_spares.hpp"
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

using test::job;
using test::slice_job;

SimOptions nvrx_options() {
    SimOptions o = test::two_racks();
    o.in_job_restart = 60;
    return o;
}

const WaitStats& by_class(const std::vector<WaitStats>& stats, const std::string& cls) {
    for (const WaitStats& s : stats)
        if (s.size_class == cls)
            return s;
    throw std::runtime_error("no class " + cls);
}

TEST(Peers, NvrxTakesWholeRacksAndWorksOnTheSliceOfEach) {
    const PolicyConfig p = make_policy(PolicyKind::kNvrx, test::two_racks().shape, PreemptionMode::kLend);
    EXPECT_EQ(p.slice, 18);
    EXPECT_EQ(p.standbys, 2);
    const JobShape s = shape_for(slice_job("S", 0, 2, 1200), p);
    EXPECT_EQ(s.nodes, 36u);
    EXPECT_EQ(s.segment, 18u);
    EXPECT_EQ(s.duration, 1200); // the 16 active nodes per rack do the work of a 16-node slice
}

TEST(Peers, StandbysAreEachRacksNodesBeyondTheActiveOnes) {
    SimOptions o = test::two_racks();
    const World w(o, make_policy(PolicyKind::kNvrx, o.shape, o.preemption));
    std::vector<NodeIndex> nodes;
    for (NodeIndex n = 0; n < 36; ++n)
        nodes.push_back(n);
    EXPECT_EQ(initial_standbys(w.topology(), nodes, 16), (std::vector<NodeIndex>{16, 17, 34, 35}));
    // An active node of rack001 fails: standby 16 takes its place.
    InJobFailure f =
        in_job_failure(w.topology(), nodes, std::vector<NodeIndex>{16, 17, 34, 35}, std::vector<NodeIndex>{5}, 16);
    EXPECT_FALSE(f.requeue);
    EXPECT_TRUE(f.restart);
    EXPECT_EQ(f.promoted, (std::vector<NodeIndex>{16}));
    // Three nodes of one rack at once (two standbys): the rack cannot form its segment.
    f = in_job_failure(w.topology(), nodes, std::vector<NodeIndex>{16, 17, 34, 35}, std::vector<NodeIndex>{1, 2, 3},
                       16);
    EXPECT_TRUE(f.requeue);
}

TEST(Peers, AnActiveNodesFailureIsAbsorbedInTheJob) {
    const PolicyResult r = test::run(nvrx_options(), PolicyKind::kNvrx, {slice_job("S", 0, 1, 1200)}, {{5, 400, 1400}});
    EXPECT_EQ(r.in_job_restarts, 1u);
    EXPECT_EQ(r.standbys_used, 1u);
    EXPECT_EQ(r.failure_requeues, 0u); // Slurm never requeued it
    EXPECT_EQ(r.restarts, 1u);
    EXPECT_EQ(r.restarts_in_place, 1u);
    EXPECT_DOUBLE_EQ(r.restart_delay.max, 60);
    // Back to its checkpoint at 300 (16 working nodes, 100 s), then 60 s of
    // restart on its 16 working nodes; 900 s of work left from 460: done at
    // 1360. Its standbys (2 to 400, then 1) are busy and do no work.
    EXPECT_NEAR(r.lost_failure_gpu_hours, (16 * 100 + 16 * 60) * 4.0 / 3600, 1e-9);
    EXPECT_NEAR(r.standby_gpu_hours, (2 * 400 + 1 * 960) * 4.0 / 3600, 1e-9);
    EXPECT_DOUBLE_EQ(by_class(r.responses, "gpus_33_64").max, 1360);
    EXPECT_EQ(r.jobs_completed, 1u);
}

TEST(Peers, AFailedStandbyCostsOnlyTheStandby) {
    const PolicyResult r =
        test::run(nvrx_options(), PolicyKind::kNvrx, {slice_job("S", 0, 1, 1200)}, {{17, 400, 1400}});
    EXPECT_EQ(r.in_job_restarts, 0u);
    EXPECT_EQ(r.standbys_used, 1u);
    EXPECT_EQ(r.restarts, 0u);
    EXPECT_DOUBLE_EQ(r.lost_failure_gpu_hours, 0);
    EXPECT_DOUBLE_EQ(by_class(r.responses, "gpus_33_64").max, 1200);
}

TEST(Peers, ARackWithoutStandbysLeftRequeuesTheJob) {
    const PolicyResult r = test::run(nvrx_options(), PolicyKind::kNvrx, {slice_job("S", 0, 1, 1200)},
                                     {{5, 400, 1900}, {6, 500, 1900}, {7, 600, 1900}});
    EXPECT_EQ(r.in_job_restarts, 2u);
    EXPECT_EQ(r.standbys_used, 2u);
    EXPECT_EQ(r.failure_requeues, 1u); // the third failure: rack001 has 15 healthy nodes
    EXPECT_EQ(r.restarts, 3u);
    EXPECT_EQ(r.restarts_in_place, 2u); // the requeued run goes to rack002
    EXPECT_EQ(r.jobs_completed, 1u);
}

TEST(Peers, TraceJobsHaveNoInJobSpares) {
    const PolicyResult r = test::run(nvrx_options(), PolicyKind::kNvrx, {job("T", 0, 16, 1200)}, {{5, 400, 1400}});
    EXPECT_EQ(r.in_job_restarts, 0u);
    EXPECT_EQ(r.failure_requeues, 1u);
}

// A (16 nodes) on rack001 and B on rack002; W (16 nodes) submitted at 100
// waits. Node 5 fails at 400: under block, W is eligible and A is not (its
// requeue delay), so W takes rack001's 17 healthy nodes; an expedited A is
// eligible at once, first, and takes them back.
std::vector<JobSpec> expedite_jobs() {
    return {job("A", 0, 16, 1200), job("B", 0, 16, 2000), job("W", 100, 16, 600)};
}

TEST(Peers, AnExpeditedRequeueIsEligibleAtOnce) {
    const SimOptions o = test::two_racks();
    const PolicyResult block = test::run(o, PolicyKind::kBlock, expedite_jobs(), {{5, 400, 5000}});
    const PolicyResult fast = test::run(o, PolicyKind::kBlockExpedite, expedite_jobs(), {{5, 400, 5000}});
    EXPECT_GT(block.restart_delay.max, 500); // after W (back on rack001 then, by chance)
    EXPECT_EQ(fast.restarts_in_place, 1u);
    EXPECT_DOUBLE_EQ(fast.restart_delay.max, 0);
}

TEST(Peers, AnExpeditedRequeueGoesFirstInTheQueue) {
    // Without a requeue delay, and with Slurm's order (a requeued job queues
    // by its requeue time), only priority decides between A and W.
    SimOptions o = test::two_racks();
    o.requeue_delay = 0;
    o.requeue_order = RequeueOrder::kRequeue;
    const PolicyResult block = test::run(o, PolicyKind::kBlock, expedite_jobs(), {{5, 400, 5000}});
    const PolicyResult fast = test::run(o, PolicyKind::kBlockExpedite, expedite_jobs(), {{5, 400, 5000}});
    EXPECT_GT(block.restart_delay.max, 500);
    EXPECT_DOUBLE_EQ(fast.restart_delay.max, 0);
    EXPECT_GT(test::waits(fast, "gpus_33_64").max, test::waits(block, "gpus_33_64").max); // W waits instead
}

TEST(Peers, BoundedSlowdownPerClass) {
    // J3 (5 s) waits for J1 until 1000: response 1005, bounded by 10 s of run.
    const PolicyResult r = test::run(test::two_racks(), PolicyKind::kBlock,
                                     {job("J1", 0, 16, 1000), job("J2", 0, 16, 1500), job("J3", 0, 16, 5)});
    const WaitStats& s = by_class(r.slowdowns, "gpus_33_64");
    EXPECT_EQ(s.count, 3u);
    EXPECT_DOUBLE_EQ(s.max, 100.5);
    EXPECT_DOUBLE_EQ(s.p50, 1);
}

// The lending scenario of test_reclaim.cpp: J4 (preemptible, on a lent
// spare) is preempted once for J1's restart in place and loses 230 s.
TEST(Peers, PreemptionVictimsAreCounted) {
    SimOptions o = test::two_racks();
    o.victims.grace_time = 120;
    const std::vector<JobSpec> jobs = test::lending_jobs();
    const PolicyResult r = test::run(o, PolicyKind::kNvlblockLend, jobs, {{5, 400, 1400}});
    EXPECT_EQ(r.preempted_jobs, 1u);
    EXPECT_EQ(r.most_preemptions_one_job, 1u);
    EXPECT_NEAR(r.lost_preempted_node_hours, 230.0 / 3600, 1e-12);
    EXPECT_EQ(r.preempted_extra_response.count, 1u);
    EXPECT_GE(r.preempted_extra_response.max, 230); // at least the work it does again
}

} // namespace
} // namespace nvlblock::sim
