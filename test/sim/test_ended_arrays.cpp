// SPDX-License-Identifier: GPL-2.0-or-later
//
// The cluster keeps the backfill's "every running job ended" what-if
// (ClusterState::ended_states and ended_map) with its states: a running
// job's healthy nodes free, every other node as it is; usable = free. The
// reservation search asks it whether the head job could start at all, and
// starts its probes from the cluster's own maps (the what-if with no job
// ended), so both must equal their definitions after any change: random
// allocations, ends, kills with a kill wait, failures and repairs on 2
// racks of 18.
#include "sim_test_support.hpp"

#include <gtest/gtest.h>

#include <random>

namespace nvlblock::sim {
namespace {

using nvlblock::NodeIndex;
using nvlblock::NodeState;

void expect_ended_arrays_match(const ClusterState& c, int step) {
    for (std::size_t i = 0; i < c.size(); ++i) {
        const auto n = static_cast<NodeIndex>(i);
        const NodeState s = c.state(n);
        const NodeState want = c.job_on(n) >= 0 && nvlblock::is_healthy(s) ? NodeState::kFree : s;
        ASSERT_EQ(c.ended_states()[i], want) << "node " << i << " after step " << step;
        ASSERT_EQ(c.ended_map()[i], want == NodeState::kFree ? 1 : 0) << "node " << i << " after step " << step;
        // The what-if with no job ended is the cluster with these maps
        // (Scheduler::probe copies them): free nodes; and, for a job that
        // may preempt, the healthy nodes of preemptible work too.
        const bool free = s == NodeState::kFree;
        ASSERT_EQ(c.free_map()[i], free ? 1 : 0) << "node " << i << " after step " << step;
        ASSERT_EQ(c.preemptor_map()[i], free || (nvlblock::is_healthy(s) && c.runs_preemptible(n)) ? 1 : 0)
            << "node " << i << " after step " << step;
    }
}

TEST(EndedArrays, FollowEveryChangeOfTheCluster) {
    const SimOptions o = test::two_racks();
    World w(o, make_policy(PolicyKind::kNvlblock, o.shape, o.preemption));
    ClusterState& c = w.cluster();
    std::mt19937 rng(7);
    std::vector<std::vector<NodeIndex>> running; // by job id
    Seconds now = 0;
    for (int step = 0; step < 3000; ++step) {
        now += 1;
        const auto node = static_cast<NodeIndex>(rng() % c.size());
        switch (rng() % 6) {
        case 0:
        case 1: { // a job on up to 4 free nodes from `node` on
            std::vector<NodeIndex> nodes;
            for (std::size_t k = node; k < c.size() && nodes.size() < 1 + rng() % 4; ++k)
                if (c.state(static_cast<NodeIndex>(k)) == NodeState::kFree && c.job_on(static_cast<NodeIndex>(k)) < 0)
                    nodes.push_back(static_cast<NodeIndex>(k));
            if (nodes.empty())
                break;
            c.allocate(nodes, static_cast<std::int32_t>(running.size()), rng() % 2 == 0, NodeState::kBusy);
            running.push_back(nodes);
            break;
        }
        case 2: // a job ends, or is killed and completes for 5 s
            if (const std::int32_t job = c.job_on(node); job >= 0) {
                if (rng() % 2)
                    c.release(running[static_cast<std::size_t>(job)]);
                else
                    c.complete(running[static_cast<std::size_t>(job)], now + 5);
            }
            break;
        case 3: // a failure: the node's job, if any, is released in the same second
            c.cause_down(node, rng() % 2 ? NodeState::kDown : NodeState::kDrained);
            if (const std::int32_t job = c.job_on(node); job >= 0 && rng() % 2)
                c.release(running[static_cast<std::size_t>(job)]);
            break;
        case 4:
            if (!c.healthy(node) && c.job_on(node) < 0)
                c.cause_up(node);
            break;
        case 5:
            c.completion_over(now);
            break;
        }
        expect_ended_arrays_match(c, step);
    }
}

} // namespace
} // namespace nvlblock::sim
