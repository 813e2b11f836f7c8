// SPDX-License-Identifier: GPL-2.0-or-later
//
// Every metric on tiny scenarios worked out by hand: 2 racks of 18 nodes
// (rack001 = nodes 0-17, rack002 = 18-35), 4 GPUs per node, window [0, 2000),
// checkpoints every 300 s, requeue delay 10 s, recovery wait 300 s.
//
// Jobs of the main scenario (trace jobs: literal node counts):
//   J1 16 nodes, 900 s, at 0      J2 16 nodes, 1800 s, at 0     J3 1 node, 500 s, at 0
//   J4 4 nodes, 300 s, at 100     J5 2 nodes, 400 s, at 200
// Node 5 (one of J1's) fails at 400 and is repaired at 1400.
//
// Healthy node-seconds, every policy: 36 * 2000 - 1000 (node 5 down 400-1400) = 71,000.
// J1 loses the work since its checkpoint at 300: 16 nodes * 100 s = 1,600 node-s
// and has 900 - 300 = 600 s left. GPU-hours = node-seconds * 4 / 3600.
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

using test::job;
using test::waits;

constexpr double kGpuH = 4.0 / 3600.0;

std::vector<JobSpec> five_jobs() {
    return {job("J1", 0, 16, 900), job("J2", 0, 16, 1800), job("J3", 0, 1, 500), job("J4", 100, 4, 300),
            job("J5", 200, 2, 400)};
}
std::vector<FailureInterval> node5_fails() {
    return {{5, 400, 1400}};
}

TEST(Scenario, NvlblockFifoRestartsInPlaceAndWithholdsSpares) {
    // t=0    J1 -> rack001 (0-15), J2 -> rack002 (18-33). J3 (1 node) cannot start:
    //        each rack has 2 free nodes, both spares (ordinary room 18-2-16 = 0).
    //        FIFO: J4 and J5 wait behind J3.
    // t=400  node 5 fails: J1 is requeued (eligible at 410); the ledger holds its
    //        15 healthy nodes + 1 spare until 700. J3 still cannot start
    //        (rack001 room 18-2-16 held = 0).
    // t=410  J1 restarts in place: its 15 prior nodes + spare 16; ends 410+600 = 1010.
    // t=1010 J1 ends: J3 (wait 1010), J4 (wait 910), J5 (wait 810) start on rack001.
    //        J4 ends 1310, J5 1410, J3 1510, J2 1800.
    // busy: J1 16*400 + 16*600 + J2 16*1800 + J3 500 + J4 4*300 + J5 2*400 = 47,300
    // stranded (free healthy nodes while an eligible job waits):
    //   [0,400) 4 free (16,17,34,35) = 1,600; [400,410) 35-16 = 19 -> 190;
    //   [410,1010) 35-32 = 3 -> 1,800; total 3,590 over 2,000 s = 1.795; waiting 1,010 s.
    const PolicyResult r = test::run(test::two_racks(), PolicyKind::kNvlblock, five_jobs(), node5_fails());
    EXPECT_NEAR(r.healthy_gpu_hours, 71000 * kGpuH, 1e-9);
    EXPECT_NEAR(r.busy_gpu_hours, 47300 * kGpuH, 1e-9);
    EXPECT_NEAR(r.lost_failure_gpu_hours, 1600 * kGpuH, 1e-9);
    EXPECT_NEAR(r.lost_preemption_gpu_hours, 0, 1e-9);
    EXPECT_NEAR(r.useful_gpu_hours, 45700 * kGpuH, 1e-9); // 50.78 GPU-h
    EXPECT_NEAR(r.utilization, 47300.0 / 71000, 1e-12);   // 66.6%
    EXPECT_NEAR(r.goodput, 45700.0 / 71000, 1e-12);       // 64.4%
    EXPECT_NEAR(r.capacity_gpu_hours, 36 * 2000 * kGpuH, 1e-9);
    EXPECT_NEAR(r.healthy_nodes_mean, 35.5, 1e-12);
    EXPECT_NEAR(r.stranded_nodes_mean, 3590.0 / 2000, 1e-12);
    EXPECT_NEAR(r.waiting_time_fraction, 1010.0 / 2000, 1e-12);
    // Waits {0, 0, 1010, 910, 810}: sorted 0 0 810 910 1010; nearest rank p50 = 3rd, p95/p99 = 5th.
    const WaitStats& all = waits(r, "all");
    EXPECT_EQ(all.count, 5u);
    EXPECT_DOUBLE_EQ(all.mean, 546);
    EXPECT_DOUBLE_EQ(all.p50, 810);
    EXPECT_DOUBLE_EQ(all.p95, 1010);
    EXPECT_DOUBLE_EQ(all.p99, 1010);
    EXPECT_DOUBLE_EQ(waits(r, "gpus_1_4").p50, 1010); // J3: 4 GPUs
    EXPECT_DOUBLE_EQ(waits(r, "gpus_5_32").p50, 810); // J5 (8 GPUs) and J4 (16 GPUs)
    EXPECT_DOUBLE_EQ(waits(r, "gpus_5_32").p95, 910);
    EXPECT_DOUBLE_EQ(waits(r, "gpus_33_64").p99, 0); // J1, J2: 64 GPUs
    EXPECT_EQ(r.failure_requeues, 1u);
    EXPECT_EQ(r.restarts, 1u);
    EXPECT_EQ(r.restarts_in_place, 1u);
    EXPECT_DOUBLE_EQ(r.restart_delay.p50, 10);
    EXPECT_TRUE(r.ledger);
    EXPECT_EQ(r.ledger_in_place, 1u);
    EXPECT_EQ(r.ledger_elsewhere, 0u);
    EXPECT_EQ(r.preemptions, 0u);
    EXPECT_EQ(r.node_failures, 1u);
    EXPECT_EQ(r.node_repairs, 1u);
    EXPECT_EQ(r.jobs_completed, 5u);
    EXPECT_EQ(r.jobs_unstarted, 0u);
    EXPECT_NEAR(r.completed_gpu_hours, (16 * 900 + 16 * 1800 + 500 + 1200 + 800) * kGpuH, 1e-9);
    // Time series, buckets of 500 s: [0,500) busy 32*400 + 16*10 + 32*90 = 15,840 -> 31.68.
    ASSERT_EQ(r.series.size(), 4u);
    EXPECT_NEAR(r.series[0].busy, 15840.0 / 500, 1e-12);
    EXPECT_NEAR(r.series[0].useful, (15840.0 - 1600) / 500, 1e-12);
    EXPECT_NEAR(r.series[0].stranded, (4.0 * 400 + 19 * 10 + 3 * 90) / 500, 1e-12);
}

TEST(Scenario, BlockFifoFillsTheExtraNodesAndRestartsWhereverItFits) {
    // No spares: J3 takes node 16 (best fit: rack001 has 2 left, rack002 2, lower index).
    // t=100  J4 (4 nodes) fits no rack (2 and 2 free): FIFO blocks it and J5.
    // t=400  node 5 fails, J1 requeued (eligible 410). rack001 now has 16 free:
    //        J4 -> rack001 (wait 300, ends 700), J5 -> rack002's 34,35 (best fit,
    //        wait 200, ends 800).
    // t=410  J1 needs 16: rack001 offers 18-1-5 = 12, rack002 0: waits.
    // t=700  J4 ends: J1 restarts on rack001 (restart delay 300), ends 1300.
    // busy is the same work, 47,300 node-s; lost 1,600.
    // stranded: [100,400) 36-33 = 3 -> 900; [410,500) 35-23 = 12 -> 1,080;
    //   [500,700) 35-22 = 13 -> 2,600 (J3 ended at 500); total 4,580; waiting 300 + 290 s.
    const PolicyResult r = test::run(test::two_racks(), PolicyKind::kBlock, five_jobs(), node5_fails());
    EXPECT_NEAR(r.busy_gpu_hours, 47300 * kGpuH, 1e-9);
    EXPECT_NEAR(r.useful_gpu_hours, 45700 * kGpuH, 1e-9);
    EXPECT_NEAR(r.stranded_nodes_mean, 4580.0 / 2000, 1e-12);
    EXPECT_NEAR(r.waiting_time_fraction, 590.0 / 2000, 1e-12);
    // Waits {0, 0, 0, 300, 200}: mean 100, p50 0, p95 300.
    const WaitStats& all = waits(r, "all");
    EXPECT_DOUBLE_EQ(all.mean, 100);
    EXPECT_DOUBLE_EQ(all.p50, 0);
    EXPECT_DOUBLE_EQ(all.p95, 300);
    EXPECT_DOUBLE_EQ(waits(r, "gpus_5_32").p50, 200);
    EXPECT_EQ(r.restarts, 1u);
    EXPECT_EQ(r.restarts_in_place, 1u); // back on rack001, by chance: nothing held it
    EXPECT_DOUBLE_EQ(r.restart_delay.p50, 300);
    EXPECT_FALSE(r.ledger);
    // full-rack (18-node slices, no spares) decides the same for these trace jobs of <= 16 nodes.
    const PolicyResult f = test::run(test::two_racks(), PolicyKind::kFullRack, five_jobs(), node5_fails());
    EXPECT_DOUBLE_EQ(f.stranded_nodes_mean, r.stranded_nodes_mean);
    EXPECT_DOUBLE_EQ(f.useful_gpu_hours, r.useful_gpu_hours);
}

TEST(Scenario, EasyBackfillStartsAShortJobWithoutDelayingTheHead) {
    // block, EASY. t=100: J4 is the head. t=200: J5 fits now (rack002's 34,35).
    // Reservation for J4: running jobs by expected end (start + 2x run time, whole
    // minutes): J3 1,020, J1 1,800, J2 3,600; with J3 gone J4 does not fit, with
    // J1 gone too it does: shadow 1,800. J5 is expected to end at 200 + 840 =
    // 1,040 <= 1,800, so it starts at 200 (wait 0) instead of 400.
    // stranded: [100,200) 3 -> 300; [200,400) 1 -> 200; [410,500) 12, [500,600) 13,
    //   [600,700) 15 (J5 ended at 600) -> 1,080 + 1,300 + 1,500; total 4,380.
    const PolicyResult r = test::run(test::two_racks(QueueMode::kEasy), PolicyKind::kBlock, five_jobs(), node5_fails());
    const WaitStats& all = waits(r, "all");
    EXPECT_DOUBLE_EQ(all.mean, 60); // {0, 0, 0, 300, 0}
    EXPECT_DOUBLE_EQ(all.p95, 300);
    EXPECT_NEAR(r.stranded_nodes_mean, 4380.0 / 2000, 1e-12);
    EXPECT_NEAR(r.waiting_time_fraction, 590.0 / 2000, 1e-12);
    EXPECT_NEAR(r.useful_gpu_hours, 45700 * kGpuH, 1e-9);
    EXPECT_GE(r.reservations, 1u);
}

TEST(Scenario, LendingRunsPreemptibleWorkOnSparesAndPreemptsItForARecovery) {
    // nvlblock+lend, FIFO. J3, J4: 1 node, 1,200 s, preemptible, at 0; J5: 1 node, 100 s, at 50.
    // t=0    J1 rack001 0-15, J2 rack002 18-33; J3 and J4 borrow rack001's spares
    //        (best fit; lent work takes spares from the end: 17, then 16).
    // t=50   J5 (ordinary) cannot have spares, lent or not: waits.
    // t=400  node 5 fails; J1 requeued, its block held.
    // t=410  J1 restarts in place on its 15 nodes + spare 16, preempting J4
    //        (J4 loses 410 - 300 = 110 s; 900 s left; eligible at 420).
    // t=420  J4 borrows rack002's spare 35; ends 1,320.
    // t=1010 J1 ends, J5 starts (wait 960), ends 1,110. J3 ends 1,200.
    // busy: J1 16,000 + J2 28,800 + J3 1,200 + J4 410 + 900 + J5 100 = 47,410
    //   (preemptible: 1,200 + 1,310 = 2,510); lost 1,600 + 110; useful 45,700.
    // stranded: [50,400) 2 -> 700; [400,410) 35-18 = 17 -> 170; [410,420) 2 -> 20;
    //   [420,1010) 1 -> 590; total 1,480; waiting 960 s.
    const std::vector<JobSpec> jobs = test::lending_jobs();
    const PolicyResult r = test::run(test::two_racks(), PolicyKind::kNvlblockLend, jobs, node5_fails());
    EXPECT_NEAR(r.busy_gpu_hours, 47410 * kGpuH, 1e-9);
    EXPECT_NEAR(r.busy_preemptible_gpu_hours, 2510 * kGpuH, 1e-9);
    EXPECT_NEAR(r.lost_failure_gpu_hours, 1600 * kGpuH, 1e-9);
    EXPECT_NEAR(r.lost_preemption_gpu_hours, 110 * kGpuH, 1e-9);
    EXPECT_NEAR(r.useful_gpu_hours, 45700 * kGpuH, 1e-9);
    EXPECT_NEAR(r.goodput, 45700.0 / 71000, 1e-12);
    EXPECT_NEAR(r.stranded_nodes_mean, 1480.0 / 2000, 1e-12);
    EXPECT_NEAR(r.waiting_time_fraction, 960.0 / 2000, 1e-12);
    EXPECT_DOUBLE_EQ(waits(r, "all").p95, 960);
    EXPECT_DOUBLE_EQ(waits(r, "gpus_1_4").p50, 0); // J3 0, J4 0, J5 960
    EXPECT_EQ(r.preemptions, 1u);
    EXPECT_EQ(r.restarts, 1u); // failure restarts only; J4's requeue was a preemption
    EXPECT_EQ(r.restarts_in_place, 1u);
    EXPECT_EQ(r.ledger_in_place, 1u);
    EXPECT_EQ(r.jobs_completed, 5u);
    // Without lending (nvlblock) J3 and J4 wait for ordinary room like J5, and nothing is preempted.
    const PolicyResult n = test::run(test::two_racks(), PolicyKind::kNvlblock, jobs, node5_fails());
    EXPECT_GT(waits(n, "gpus_1_4").p50, 0);
    EXPECT_EQ(n.preemptions, 0u);
}

TEST(Scenario, SliceJobsTakeFullRacksUnderFullRackForTheSameWork) {
    // One 1-slice job of 1,800 s (on 16 nodes): full-rack runs it on 18 nodes for
    // 1,600 s; both are 28,800 node-seconds of work.
    std::vector<JobSpec> jobs{test::slice_job("S", 0, 1, 1800)};
    const PolicyResult f = test::run(test::two_racks(), PolicyKind::kFullRack, jobs);
    const PolicyResult n = test::run(test::two_racks(), PolicyKind::kNvlblock, jobs);
    EXPECT_NEAR(f.useful_gpu_hours, 28800 * kGpuH, 1e-9);
    EXPECT_NEAR(n.useful_gpu_hours, 28800 * kGpuH, 1e-9);
    EXPECT_NEAR(f.completed_gpu_hours, n.completed_gpu_hours, 1e-9);
    EXPECT_NEAR(f.busy_nodes_mean, 18.0 * 1600 / 2000, 1e-12);
    EXPECT_NEAR(n.busy_nodes_mean, 16.0 * 1800 / 2000, 1e-12);
    EXPECT_DOUBLE_EQ(waits(f, "gpus_33_64").count, 1);
}

TEST(Scenario, AJobLargerThanTheClusterIsRejectedNotQueuedForever) {
    std::vector<JobSpec> jobs{job("huge", 0, 40, 100), job("ok", 0, 1, 100)};
    const PolicyResult r = test::run(test::two_racks(), PolicyKind::kBlock, jobs);
    EXPECT_EQ(r.jobs_rejected, 1u);
    EXPECT_EQ(r.jobs_completed, 1u);
}

TEST(Scenario, ARequeuedJobQueuesByItsRequeueTimeUnlessAskedToKeepItsPlace) {
    // block, FIFO, the cluster full from t=0: J1 rack001 0-15, J2 rack002 18-33,
    // A node 16, F1 node 17 (ends 200), F2 34, F3 35. C (1 node) waits from 50.
    // t=100 node 16 fails: A is requeued (eligible 110); nothing is free until
    // F1 ends at 200, then one node (17) for A or C, the other at 500.
    //   --requeue-order submit:  A (submitted 0) before C (50): A restarts at 200
    //                            (delay 100), C starts at 500 (wait 450).
    //   --requeue-order requeue (default): C (50) before A (requeued 100), as
    //                            Slurm orders them: C at 200 (wait 150), A at 500 (delay 400).
    const std::vector<JobSpec> jobs{job("J1", 0, 16, 1000), job("J2", 0, 16, 1000), job("A", 0, 1, 300),
                                    job("F1", 0, 1, 200),   job("F2", 0, 1, 1000),  job("F3", 0, 1, 1000),
                                    job("C", 50, 1, 300)};
    const std::vector<FailureInterval> fail{{16, 100, 1900}};
    SimOptions o = test::two_racks();
    EXPECT_EQ(SimOptions{}.requeue_order, RequeueOrder::kRequeue); // the simulator's default
    o.requeue_order = RequeueOrder::kSubmit;
    const PolicyResult keep = test::run(o, PolicyKind::kBlock, jobs, fail);
    EXPECT_DOUBLE_EQ(waits(keep, "all").max, 450);
    EXPECT_DOUBLE_EQ(keep.restart_delay.p50, 100);
    o.requeue_order = RequeueOrder::kRequeue;
    const PolicyResult back = test::run(o, PolicyKind::kBlock, jobs, fail);
    EXPECT_DOUBLE_EQ(waits(back, "all").max, 150);
    EXPECT_DOUBLE_EQ(back.restart_delay.p50, 400);
    EXPECT_EQ(back.restarts, 1u);
    EXPECT_NEAR(back.busy_gpu_hours, keep.busy_gpu_hours, 1e-9);
}

} // namespace
} // namespace nvlblock::sim
