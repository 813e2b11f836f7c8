// SPDX-License-Identifier: GPL-2.0-or-later
//
// Reclaims for in-place restarts (rule 3b) as Slurm would carry them out
// (and the grace time of Slurm's own preemption), on
// one scenario worked out by hand: 2 racks of 18 (rack001 = nodes 0-17),
// FIFO, checkpoints every 300 s, requeue delay 10 s, the recommended policy.
//   R  16 nodes, 1200 s, at 0: rack001, nodes 0-15
//   V1, V2  1 node, 1500 s, at 0: the rest of rack001, nodes 16 and 17
// Node 5 fails at 400. R loses the work since its checkpoint at 300 and
// waits for rack001 until 410 (the requeue delay); it lacks one node there.
// Taking V1 (the lower id of two equal costs) lets it restart in place at
// 410 on 15 of its nodes plus node 16; without a victim it falls back and
// restarts on rack002. Whether V1 may be taken is the core's victim_status:
// Slurm's preemption (the preemptible QOS, where the policy models it) or
// the site's recovery.reclaim_from.
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

using test::job;

struct Outcome {
    PolicyResult r;
    Seconds restart_delay = -1;
};

Outcome run_scenario(const SimOptions& o, bool victims_preemptible) {
    std::vector<JobSpec> jobs = {job("R", 0, 16, 1200), job("V1", 0, 1, 1500, victims_preemptible),
                                 job("V2", 0, 1, 1500, victims_preemptible)};
    Outcome out;
    out.r = test::run(o, PolicyKind::kRecommended, std::move(jobs), {{5, 400, 1400}});
    out.restart_delay = out.r.multi_node_restarts ? static_cast<Seconds>(out.r.multi_node_restart_delay.max) : -1;
    return out;
}

TEST(Reclaim, APreemptibleVictimIsTakenOnlyWhereSlurmPreemptionIsModelled) {
    SimOptions o = test::two_racks();
    o.preemption = PreemptionMode::kLend; // recommended lends nothing: no preemption
    const Outcome none = run_scenario(o, true);
    EXPECT_EQ(none.r.reclaims, 0u);
    EXPECT_EQ(none.r.multi_node_in_place, 0u); // fell back to rack002
    o.preemption = PreemptionMode::kAll;
    const Outcome taken = run_scenario(o, true);
    EXPECT_EQ(taken.r.reclaims, 1u);
    EXPECT_EQ(taken.r.multi_node_in_place, 1u);
    EXPECT_EQ(taken.restart_delay, 10);
}

TEST(Reclaim, AnOrdinaryJobIsTakenOnlyWhenReclaimFromNamesItsQos) {
    SimOptions o = test::two_racks();
    o.preemption = PreemptionMode::kAll; // preempts the scavenger QOS only
    EXPECT_EQ(run_scenario(o, false).r.reclaims, 0u);
    o.shape.reclaim_from_qos = {"scavenger"};
    EXPECT_EQ(run_scenario(o, false).r.reclaims, 0u);
    o.shape.reclaim_from_qos = {"normal"};
    const Outcome taken = run_scenario(o, false);
    EXPECT_EQ(taken.r.reclaims, 1u);
    EXPECT_EQ(taken.r.multi_node_in_place, 1u);
    // V1 loses its one node from its checkpoint at 300 to 410.
    EXPECT_DOUBLE_EQ(taken.r.lost_reclaim_node_hours, 110.0 / 3600);
    EXPECT_EQ(taken.r.most_moves_one_job, 1u);
    EXPECT_DOUBLE_EQ(taken.r.moved_per_1000_jobs(), 1000.0 / 3);
}

TEST(Reclaim, AJobThatMayNotBeRequeuedIsNeverAVictim) {
    SimOptions o = test::two_racks();
    o.shape.reclaim_from_qos = {"normal"};
    o.victims.requeueable_share = 0;
    const Outcome r = run_scenario(o, false);
    EXPECT_EQ(r.r.reclaims, 0u);
    EXPECT_EQ(r.r.multi_node_in_place, 0u);
}

TEST(Reclaim, TheGraceTimeDelaysTheRestartByThatMuch) {
    SimOptions o = test::two_racks();
    o.shape.reclaim_from_qos = {"normal"};
    const Outcome at_once = run_scenario(o, false);
    o.victims.grace_time = 120;
    const Outcome graced = run_scenario(o, false);
    EXPECT_EQ(graced.r.multi_node_in_place, 1u);
    EXPECT_EQ(graced.restart_delay, at_once.restart_delay + 120);
    EXPECT_EQ(graced.r.reclaims, 1u); // V1 keeps its node, then goes; nothing else is taken
    EXPECT_EQ(graced.r.reclaim_requeues, 1u);
    // V1 ran on to 530: 230 s since its checkpoint at 300 are lost.
    EXPECT_DOUBLE_EQ(graced.r.lost_reclaim_node_hours, 230.0 / 3600);
    EXPECT_EQ(graced.r.victims_checkpointed, 0u);
    // R: 900 s left after its checkpoint at 300, restarted at 530, done at 1430.
    EXPECT_EQ(test::waits(graced.r, "all").count, 3u); // every job started
    bool found = false;
    for (const WaitStats& s : graced.r.responses)
        if (s.size_class == "gpus_33_64") {
            EXPECT_EQ(s.count, 1u);
            EXPECT_DOUBLE_EQ(s.max, 1430);
            found = true;
        }
    EXPECT_TRUE(found);
}

TEST(Reclaim, AVictimThatCheckpointsOnTheSignalLosesNoWork) {
    SimOptions o = test::two_racks();
    o.shape.reclaim_from_qos = {"normal"};
    o.victims.grace_time = 120;
    o.victims.checkpoint_on_signal = 1;
    const Outcome r = run_scenario(o, false);
    EXPECT_EQ(r.r.reclaim_requeues, 1u);
    EXPECT_EQ(r.r.victims_checkpointed, 1u);
    EXPECT_DOUBLE_EQ(r.r.checkpointed_share(), 1.0);
    EXPECT_DOUBLE_EQ(r.r.lost_reclaim_node_hours, 0);
    // A write longer than the grace time is no checkpoint: the work since 300 is lost.
    o.victims.checkpoint_write = 121;
    const Outcome slow = run_scenario(o, false);
    EXPECT_EQ(slow.r.victims_checkpointed, 0u);
    EXPECT_DOUBLE_EQ(slow.r.lost_reclaim_node_hours, 230.0 / 3600);
    // Without a grace time there is no time to write one.
    o.victims.grace_time = 0;
    o.victims.checkpoint_write = 0;
    EXPECT_EQ(run_scenario(o, false).r.victims_checkpointed, 0u);
}

// Slurm's own preemption has the same grace time: the scenario of
// test_scenarios.cpp's lending test (nvlblock+lend; J3, J4 preemptible on
// rack001's spares) with J1 restarting in place by preempting J4 at 410. With
// 120 s of grace J4 keeps its node to 530 (losing 530 - 300 s) and J1 waits
// for it, placed again when it goes.
TEST(Reclaim, APreemptingJobWaitsOutItsVictimsGraceTime) {
    SimOptions o = test::two_racks();
    o.victims.grace_time = 120;
    const std::vector<JobSpec> jobs = test::lending_jobs();
    const PolicyResult r = test::run(o, PolicyKind::kNvlblockLend, jobs, {{5, 400, 1400}});
    EXPECT_EQ(r.preemptions, 1u);
    EXPECT_EQ(r.multi_node_in_place, 1u);
    EXPECT_DOUBLE_EQ(r.multi_node_restart_delay.max, 130);
    EXPECT_NEAR(r.lost_preemption_gpu_hours, 230 * 4.0 / 3600, 1e-9);
    EXPECT_EQ(r.reclaims, 0u); // Slurm's preemption, not a reclaim
}

TEST(Reclaim, VictimTraitsAreDrawnPerJobNameAndShare) {
    VictimModel m;
    m.seed = 7;
    m.checkpoint_on_signal = 0.25;
    m.requeueable_share = 1;
    int checkpointing = 0;
    for (int i = 0; i < 4000; ++i) {
        const VictimTraits t = draw_victim_traits(m, "job" + std::to_string(i));
        checkpointing += t.checkpoints_on_signal;
        EXPECT_TRUE(t.requeueable);
        EXPECT_EQ(t.checkpoints_on_signal, draw_victim_traits(m, "job" + std::to_string(i)).checkpoints_on_signal);
    }
    EXPECT_NEAR(checkpointing / 4000.0, 0.25, 0.03);
    m.requeueable_share = 0;
    EXPECT_FALSE(draw_victim_traits(m, "job1").requeueable);
}

} // namespace
} // namespace nvlblock::sim
