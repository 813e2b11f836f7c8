// SPDX-License-Identifier: GPL-2.0-or-later
//
// The checkpoint assumptions a site sets (--checkpoint-share,
// --checkpoint-restore), on a scenario worked out by hand: under block on 2
// racks of 18 (checkpoints every 300 s, requeue delay 10 s), a 1-slice job of
// 1,200 s starts at 0; node 5 under it fails at 400. It is requeued and runs
// again at 410 on healthy nodes: from its checkpoint at 300 (900 s left), or
// from the start if it writes none, after loading its checkpoint if that
// takes time.
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

using test::slice_job;

Seconds response(const SimOptions& o) {
    const PolicyResult r = test::run(o, PolicyKind::kBlock, {slice_job("S", 0, 1, 1200)}, {{5, 400, 1400}});
    EXPECT_EQ(r.jobs_completed, 1u);
    for (const WaitStats& s : r.responses)
        if (s.size_class == "gpus_33_64")
            return static_cast<Seconds>(s.max);
    ADD_FAILURE() << "no response of the 64-GPU job";
    return -1;
}

TEST(Checkpoints, ARestartResumesFromTheLastCheckpoint) {
    EXPECT_EQ(response(test::two_racks()), 410 + 900);
}

TEST(Checkpoints, LoadingTheCheckpointDelaysTheEnd) {
    SimOptions o = test::two_racks();
    o.victims.checkpoint_restore = 60;
    EXPECT_EQ(response(o), 410 + 60 + 900);
}

TEST(Checkpoints, AJobThatWritesNoneStartsOverAndLoadsNothing) {
    SimOptions o = test::two_racks();
    o.victims.checkpoint_share = 0;
    o.victims.checkpoint_restore = 60;
    EXPECT_EQ(response(o), 410 + 1200);
}

TEST(Checkpoints, WhichJobsCheckpointIsDrawnOncePerJob) {
    VictimModel m;
    m.checkpoint_share = 0.5;
    int writes = 0;
    for (int i = 0; i < 1000; ++i)
        writes += draw_victim_traits(m, "job" + std::to_string(i)).checkpoints ? 1 : 0;
    EXPECT_NEAR(writes, 500, 60);
    EXPECT_EQ(draw_victim_traits(m, "job7").checkpoints, draw_victim_traits(m, "job7").checkpoints);
}

} // namespace
} // namespace nvlblock::sim
