// SPDX-License-Identifier: GPL-2.0-or-later
//
// The one mapping from what slurmctld says of a node to the engine's node
// state (core/slurm_node_state.hpp), for the states a Slurm administrator
// sees in `sinfo`, written as the facts slurmctld's bitmaps give for them.
#include "core/slurm_node_state.hpp"

#include <gtest/gtest.h>

namespace nvlblock {
namespace {

constexpr unsigned kIdleUp = kNodeUp | kNodeAvail | kNodeIdle;

TEST(SlurmNodeState, IdleIsFreeAndAJobMakesItBusyOrLent) {
    EXPECT_EQ(node_state_from_slurm(kIdleUp), NodeState::kFree);
    EXPECT_EQ(node_state_from_slurm(kNodeUp | kNodeAvail), NodeState::kBusy);
    EXPECT_EQ(node_state_from_slurm(kNodeUp | kNodeAvail | kNodeLent), NodeState::kLent);
    // An epilog still running: busy, though no job is on it any more.
    EXPECT_EQ(node_state_from_slurm(kIdleUp | kNodeCompleting), NodeState::kBusy);
    // The lent mark means nothing on an idle node.
    EXPECT_EQ(node_state_from_slurm(kIdleUp | kNodeLent), NodeState::kFree);
}

TEST(SlurmNodeState, DownFutureAndPoweredOffAreDown) {
    EXPECT_EQ(node_state_from_slurm(kNodeIdle), NodeState::kDown); // DOWN: not in up_node_bitmap
    EXPECT_EQ(node_state_from_slurm(0), NodeState::kDown);         // no record at all
    EXPECT_EQ(node_state_from_slurm(kIdleUp | kNodeFuture), NodeState::kDown);
    EXPECT_EQ(node_state_from_slurm(kIdleUp | kNodePoweredDown), NodeState::kDown);
}

TEST(SlurmNodeState, DrainedFailingOrSilentIsDrained) {
    // Up but not available: DRAIN, DRAINING, FAIL or NO_RESPOND, with or without a job.
    EXPECT_EQ(node_state_from_slurm(kNodeUp | kNodeIdle), NodeState::kDrained);
    EXPECT_EQ(node_state_from_slurm(kNodeUp), NodeState::kDrained);
    EXPECT_EQ(node_state_from_slurm(kNodeUp | kNodeLent), NodeState::kDrained);
}

TEST(SlurmNodeState, ANodeNotYetRegisteredIsBusyNotFailed) {
    // After a slurmctld restart: read as failed, a rack whose job was just
    // requeued would look wholly failed and its waiting job fall back.
    EXPECT_EQ(node_state_from_slurm(kNodeUnregistered), NodeState::kBusy);
    EXPECT_EQ(node_state_from_slurm(kNodeUnregistered | kNodeIdle | kNodePoweredDown), NodeState::kBusy);
    EXPECT_FALSE(is_failed(node_state_from_slurm(kNodeUnregistered)));
}

} // namespace
} // namespace nvlblock
