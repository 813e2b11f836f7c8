// SPDX-License-Identifier: GPL-2.0-or-later
//
// The shortcuts that keep a decision cheap give the answers of the plain
// definitions: word-at-a-time availability counts, block tallies kept across
// decisions, and a planner's cached decisions against fresh snapshots.
#include "core/planner.hpp"
#include "placement/availability_counts.hpp"
#include "placement/tally_cache.hpp"
#include "recovery/rules.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace nvlblock {
namespace {

using test::yaml_topology;

// The definition availability_counts.hpp implements, node by node.
AvailabilityCounts reference_counts(const Block& b, std::span<const NodeState> states,
                                    std::span<const std::uint8_t> avail) {
    AvailabilityCounts c;
    for (NodeIndex n : b.nodes) {
        const bool a = avail[n] != 0;
        if (a && is_healthy(states[n])) {
            ++c.available;
            c.preempted += states[n] != NodeState::kFree;
        }
        c.lent_unavailable += !a && states[n] == NodeState::kLent;
    }
    return c;
}

// Racks of uneven sizes (1 to 40 nodes), the last one's nodes listed out of
// order (not a contiguous run), and ordinary servers after them.
Topology uneven_racks(std::mt19937& rng, int racks) {
    std::string y = "defaults:\n  slice: 1\n  spares: 0\nblocks:\n";
    int node = 1;
    std::uniform_int_distribution<int> size(1, 40);
    for (int r = 1; r <= racks; ++r) {
        const int n = size(rng);
        y += "  - name: r" + std::to_string(r) + "\n    nodes: ";
        if (r == racks && n > 2) {
            // Listed backwards: the same nodes, not a run in index order.
            for (int k = n - 1; k >= 0; --k)
                y += (k == n - 1 ? "" : ",") + std::string("n") + std::to_string(node + k);
        } else {
            y += "n[" + std::to_string(node) + "-" + std::to_string(node + n - 1) + "]";
        }
        y += "\n";
        node += n;
    }
    std::vector<std::string> universe;
    for (int i = 1; i < node + 5; ++i)
        universe.push_back("n" + std::to_string(i));
    return yaml_topology(y, &universe);
}

TEST(DecisionCost, WordAtATimeCountsMatchTheDefinition) {
    std::mt19937 rng(7);
    for (int round = 0; round < 40; ++round) {
        const Topology t = uneven_racks(rng, 12);
        std::vector<NodeState> states(t.node_count());
        std::vector<std::uint8_t> avail(t.node_count());
        // Mostly valid states, sometimes values that are not node states.
        std::uniform_int_distribution<int> st(0, round % 3 == 0 ? 9 : 4), av(0, 3);
        for (std::size_t i = 0; i < states.size(); ++i) {
            states[i] = static_cast<NodeState>(st(rng));
            const int a = av(rng);
            avail[i] = a == 0 ? 0 : a == 1 ? 1 : a == 2 ? 0x80 : 0xff;
        }
        for (const Block& b : t.blocks()) {
            const AvailabilityCounts got = count_available(b, states, avail);
            const AvailabilityCounts want = reference_counts(b, states, avail);
            EXPECT_EQ(got.available, want.available) << b.name;
            EXPECT_EQ(got.preempted, want.preempted) << b.name;
            EXPECT_EQ(got.lent_unavailable, want.lent_unavailable) << b.name;
        }
    }
}

TEST(DecisionCost, BlocksKnowWhetherTheyAreARunOfNodes) {
    std::mt19937 rng(3);
    const Topology t = uneven_racks(rng, 6);
    for (std::size_t i = 0; i + 1 < t.block_count(); ++i)
        EXPECT_TRUE(t.blocks()[i].contiguous) << t.blocks()[i].name;
    const Block& last = t.blocks().back();
    EXPECT_EQ(last.contiguous, last.nodes.size() <= 2);
}

void expect_same(const BlockTally& a, const BlockTally& b, std::size_t block) {
    EXPECT_EQ(a.size, b.size) << block;
    EXPECT_EQ(a.failed, b.failed) << block;
    EXPECT_EQ(a.down, b.down) << block;
    EXPECT_EQ(a.drained, b.drained) << block;
    EXPECT_EQ(a.busy, b.busy) << block;
    EXPECT_EQ(a.lent, b.lent) << block;
    EXPECT_EQ(a.free, b.free) << block;
    EXPECT_EQ(a.fault, b.fault) << block;
    EXPECT_EQ(a.spares_configured, b.spares_configured) << block;
}

TEST(DecisionCost, TalliesKeptAcrossCallsEqualAFreshCount) {
    const Topology t = test::racks(40, 18, 16, 2, true);
    std::vector<NodeState> states = test::all(t);
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), changes(0, 30);
    TallyCache cache;
    std::shared_ptr<const Tallies> kept;
    Tallies kept_copy;
    for (int step = 0; step < 300; ++step) {
        // Anything from no change to a burst, and now and then a whole rack failing.
        for (int k = changes(rng); k > 0; --k)
            states[node(rng)] = static_cast<NodeState>(st(rng));
        if (step % 50 == 49)
            for (NodeIndex n : t.blocks()[static_cast<std::size_t>(step) % t.block_count()].nodes)
                states[n] = NodeState::kDown;
        const auto got = cache.tallies(t, states);
        ASSERT_EQ(got->size(), t.block_count());
        for (std::size_t b = 0; b < t.block_count(); ++b)
            expect_same((*got)[b], count_block(t, t.blocks()[b], states), b);
        // Tallies a snapshot still holds do not change under it.
        if (kept)
            for (std::size_t b = 0; b < t.block_count(); ++b)
                expect_same((*kept)[b], kept_copy[b], b);
        if (step % 7 == 0) {
            kept = got;
            kept_copy = *got;
        }
    }
}

TEST(DecisionCost, TwoStateArraysInTurnEachGetTheirOwnTallies) {
    // As the simulator's backfill asks: the cluster now, and a what-if copy.
    const Topology t = test::racks(30);
    std::vector<NodeState> now = test::all(t, NodeState::kBusy), then = now, third = now;
    std::mt19937 rng(2);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    TallyCache cache;
    for (int step = 0; step < 200; ++step) {
        std::vector<NodeState>& s = step % 5 == 4 ? third : step % 2 ? then : now;
        for (int k = 0; k < 5; ++k)
            s[node(rng)] = static_cast<NodeState>(step % 5);
        const auto got = cache.tallies(t, s);
        for (std::size_t b = 0; b < t.block_count(); ++b)
            expect_same((*got)[b], count_block(t, t.blocks()[b], s), b);
    }
}

TEST(DecisionCost, TalliesOfAnotherTopologyAreCountedAfresh) {
    const Topology a = test::racks(4), b = test::racks(4, 18, 16, 0);
    TallyCache cache;
    const auto ta = cache.tallies(a, test::all(a));
    EXPECT_EQ((*ta)[0].spares_configured, 2);
    const auto tb = cache.tallies(b, test::all(b));
    EXPECT_EQ((*tb)[0].spares_configured, 0);
    EXPECT_THROW(cache.tallies(b, std::vector<NodeState>(3)), std::invalid_argument);
}

// A planner's decisions (tallies kept across calls, holds of jobs waiting to
// restart) equal those of the engine on a snapshot counted from scratch, over
// a random walk of states, availability maps and requests.
TEST(DecisionCost, PlannerDecisionsEqualFreshSnapshots) {
    const Topology t = test::racks(24, 18, 16, 2, true, "preemptible:\n  qos: [lend]\n");
    Planner planner(t);
    std::mt19937 rng(5);
    std::vector<NodeState> states = test::all(t);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), pct(0, 99);
    // Two jobs waiting to restart on racks 3 and 10.
    for (std::uint32_t j = 0; j < 2; ++j) {
        const auto first = static_cast<NodeIndex>((j == 0 ? 2 : 9) * 18);
        const std::vector<NodeIndex> had = test::range(first, first + 15);
        planner.job_failed(500 + j, had, std::vector<NodeIndex>{had[4]}, 0);
    }
    const std::uint32_t sizes[] = {1, 2, 3, 4, 8, 16, 17, 18, 32, 48, 64};
    int placed = 0, refused = 0, in_place = 0;
    for (int step = 0; step < 400; ++step) {
        for (int k = pct(rng) % 12; k > 0; --k)
            states[node(rng)] = static_cast<NodeState>(st(rng));
        Request r;
        r.job_id =
            step % 10 == 0 ? 500 + static_cast<std::uint32_t>(step / 10 % 2) : 1000 + static_cast<std::uint32_t>(step);
        r.min_nodes = r.max_nodes = sizes[static_cast<std::size_t>(pct(rng)) % std::size(sizes)];
        if (r.min_nodes % 16 == 0 && pct(rng) < 50)
            r.segment = 16;
        if (pct(rng) < 20)
            r.min_nodes = std::max<std::uint32_t>(1, r.min_nodes / 2);
        r.preemptible = pct(rng) < 25;
        r.exclusive_topo = pct(rng) < 5;
        if (r.job_id < 1000) { // a restart: the 16 nodes it had
            r.min_nodes = r.max_nodes = 16;
            r.segment = 0;
            r.preemptible = r.exclusive_topo = false;
        }
        std::vector<std::uint8_t> avail;
        if (pct(rng) < 70) {
            avail.resize(t.node_count());
            for (std::size_t i = 0; i < avail.size(); ++i)
                avail[i] = states[i] == NodeState::kFree || (pct(rng) < 10 && is_healthy(states[i]));
            r.available = avail;
        }
        const std::int64_t now = 10 + step;
        Request fresh_request = r;
        // What the planner adds for a job in its ledger (in-place restart).
        std::vector<NodeState> shaped;
        const std::span<const NodeState> asked = offered_as_healthy(states, r.available, shaped);
        std::vector<std::uint8_t> offered;
        if (const RecoveryRecord* rec = planner.recovery().waiting_in_place(r.job_id)) {
            fresh_request.recovery = claim_for(t, *rec, asked);
            fresh_request.available = without_busy_nodes(asked, r.available, *fresh_request.recovery, offered);
        }
        const std::vector<RecoveryClaim> claims = planner.recovery().active_claims(t, asked, now);
        const Placement want = place(Snapshot(t, asked, claims), fresh_request);
        const Placement got = planner.place(states, r, now);
        if (fresh_request.recovery && !want.placed())
            continue; // the planner may also fall back here: not the engine's question
        ASSERT_EQ(got.reason, want.reason) << "step " << step << ": " << explain(t, got) << " / " << explain(t, want);
        EXPECT_EQ(got.nodes, want.nodes) << "step " << step;
        EXPECT_EQ(explain(t, got), explain(t, want)) << "step " << step;
        EXPECT_EQ(got.blocks_if_spares, want.blocks_if_spares) << "step " << step;
        (got.placed() ? placed : refused) += 1;
        in_place += got.recovery_in_place;
    }
    // The walk covers placements, refusals and restarts in place.
    EXPECT_GT(placed, 50);
    EXPECT_GT(refused, 50);
    EXPECT_GT(in_place, 0);
}

} // namespace
} // namespace nvlblock
