// SPDX-License-Identifier: GPL-2.0-or-later
//
// The shortcuts that keep a decision cheap give the answers of the plain
// definitions: word-at-a-time availability counts, block tallies kept across
// decisions, the index of blocks by room, and a planner's cached decisions
// against fresh snapshots.
#include "core/planner.hpp"
#include "placement/availability_counts.hpp"
#include "placement/block_limits.hpp"
#include "placement/room_index.hpp"
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

// Blocks of mixed settings (slices 4, 8 and 16; spares 0-3; lending on some;
// reclaimed spares on some), sizes 8 to 20, the last listed out of order.
Topology mixed_blocks(int blocks) {
    std::string y = "defaults:\n  slice: 16\n  spares: 2\npreemptible:\n  qos: [lend]\nblocks:\n";
    int node = 1;
    for (int r = 1; r <= blocks; ++r) {
        const int n = 8 + (r * 7) % 13, spares = r % 4;
        y += "  - name: b" + std::to_string(r) + "\n    nodes: ";
        if (r == blocks) {
            for (int k = n - 1; k >= 0; --k)
                y += (k == n - 1 ? "" : ",") + std::string("n") + std::to_string(node + k);
        } else {
            y += "n[" + std::to_string(node) + "-" + std::to_string(node + n - 1) + "]";
        }
        y += "\n    slice: " + std::to_string(std::min(n - spares, r % 3 == 0 ? 4 : r % 3 == 1 ? 8 : 16));
        y += "\n    spares: " + std::to_string(spares);
        y += "\n    lending: " + std::string(r % 2 ? "true" : "false");
        if (r % 5 == 0)
            y += "\n    reserve: reclaim";
        y += "\n";
        node += n;
    }
    std::vector<std::string> universe;
    for (int i = 1; i < node + 3; ++i)
        universe.push_back("n" + std::to_string(i));
    return yaml_topology(y, &universe);
}

// What room_index.hpp keeps, recomputed from its definition for every block.
void expect_index_matches(const Topology& t, const RoomIndex& idx, std::span<const NodeState> states,
                          std::span<const std::uint8_t> avail, int step) {
    ASSERT_EQ(idx.block_count(), t.block_count());
    std::vector<BlockIndex> want_room, want_room_lending;
    bool any = false;
    for (std::size_t i = 0; i < t.block_count(); ++i) {
        const Block& b = t.blocks()[i];
        const BlockTally tally = count_block(t, b, states);
        const BlockOffer& got = idx.offer(static_cast<BlockIndex>(i));
        AvailabilityCounts c;
        if (avail.empty()) {
            c.available = tally.free;
            c.lent_unavailable = tally.lent;
        } else {
            c = reference_counts(b, states, avail);
        }
        EXPECT_EQ(got.counts.available, c.available) << "step " << step << " block " << i;
        EXPECT_EQ(got.counts.preempted, c.preempted) << "step " << step << " block " << i;
        EXPECT_EQ(got.counts.lent_unavailable, c.lent_unavailable) << "step " << step << " block " << i;
        BlockLimits l;
        if (!tally.fault)
            l = block_limits(b, tally, c.available, b.settings.lending ? c.lent_unavailable : 0, false);
        EXPECT_EQ(got.limit, l.limit) << "step " << step << " block " << i;
        EXPECT_EQ(got.spare_limit, l.spare_limit) << "step " << step << " block " << i;
        any = any || c.available > 0;
        if (l.limit > 0)
            want_room.push_back(static_cast<BlockIndex>(i));
        if (l.limit > 0 || (b.settings.lending && l.spare_limit > 0))
            want_room_lending.push_back(static_cast<BlockIndex>(i));
    }
    EXPECT_EQ(idx.any_available(), any) << "step " << step;
    std::vector<BlockIndex> got_room, got_room_lending;
    idx.for_each_with_room(false, 1, [&](BlockIndex b) { got_room.push_back(b); });
    idx.for_each_with_room(true, 1, [&](BlockIndex b) { got_room_lending.push_back(b); });
    EXPECT_EQ(got_room, want_room) << "step " << step;
    EXPECT_EQ(got_room_lending, want_room_lending) << "step " << step;
    // With a least room: the blocks offering at least that many, by limit
    // (or, preemptible, a lending block's spare limit); blocks per limit.
    for (int at_least : {2, 3, 5, 8, 16, 40}) {
        for (bool preemptible : {false, true}) {
            std::vector<BlockIndex> want, got;
            for (std::size_t i = 0; i < t.block_count(); ++i) {
                const BlockOffer& o = idx.offer(static_cast<BlockIndex>(i));
                if (o.limit >= at_least || (preemptible && t.blocks()[i].settings.lending && o.spare_limit >= at_least))
                    want.push_back(static_cast<BlockIndex>(i));
            }
            idx.for_each_with_room(preemptible, at_least, [&](BlockIndex b) { got.push_back(b); });
            EXPECT_EQ(got, want) << "step " << step << " at least " << at_least;
        }
    }
    for (int limit = 0; limit <= idx.largest_block(); ++limit) {
        long want = 0;
        for (std::size_t i = 0; i < t.block_count(); ++i)
            want += idx.offer(static_cast<BlockIndex>(i)).limit == limit;
        EXPECT_EQ(idx.blocks_with_limit(limit), want) << "step " << step << " limit " << limit;
    }
    for (std::uint32_t segment : {0u, 4u, 8u, 16u})
        for (int unit = 1; unit <= 21; unit += 4) {
            long want = 0;
            for (std::size_t i = 0; i < t.block_count(); ++i)
                want += (segment == 0 || static_cast<int>(segment) <= t.blocks()[i].settings.slice) &&
                        idx.offer(static_cast<BlockIndex>(i)).spare_limit >= unit;
            EXPECT_EQ(idx.spare_at_least(unit, segment), want) << "step " << step << " unit " << unit;
        }
}

// The index kept across calls (three state arrays, four maps, none) equals
// its definition after every random update, and an index a snapshot still
// holds does not change under it.
TEST(DecisionCost, RoomIndexKeptAcrossCallsEqualsAFreshScan) {
    const Topology t = mixed_blocks(150); // more than two words of block bits
    std::vector<std::vector<NodeState>> states(3, test::all(t));
    std::vector<std::vector<std::uint8_t>> maps(4, std::vector<std::uint8_t>(t.node_count(), 1));
    std::mt19937 rng(17);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), pct(0, 99);
    RoomIndexCache cache;
    TallyCache tallies;
    std::shared_ptr<const RoomIndex> kept;
    std::vector<BlockOffer> kept_copy;
    for (int step = 0; step < 400; ++step) {
        std::vector<NodeState>& s = states[static_cast<std::size_t>(pct(rng)) % states.size()];
        const int m = pct(rng) % 5; // 4: no map
        for (int k = pct(rng) % 40; k > 0; --k)
            s[node(rng)] = static_cast<NodeState>(st(rng));
        if (m < 4)
            for (int k = pct(rng) % 40; k > 0; --k)
                maps[static_cast<std::size_t>(m)][node(rng)] = static_cast<std::uint8_t>(pct(rng) % 3);
        if (step % 60 == 59) // a whole block failing at once (a block fault)
            for (NodeIndex n : t.blocks()[static_cast<std::size_t>(step) % t.block_count()].nodes)
                s[n] = NodeState::kDown;
        const std::span<const std::uint8_t> avail =
            m < 4 ? std::span<const std::uint8_t>(maps[static_cast<std::size_t>(m)]) : std::span<const std::uint8_t>();
        const auto got = cache.index(t, s, *tallies.tallies(t, s), avail);
        ASSERT_TRUE(got);
        expect_index_matches(t, *got, s, avail, step);
        if (kept)
            for (std::size_t b = 0; b < t.block_count(); ++b) {
                EXPECT_EQ(kept->offer(static_cast<BlockIndex>(b)).limit, kept_copy[b].limit) << step;
                EXPECT_EQ(kept->offer(static_cast<BlockIndex>(b)).spare_limit, kept_copy[b].spare_limit) << step;
            }
        if (step % 9 == 0) {
            kept = got;
            kept_copy.clear();
            for (std::size_t b = 0; b < t.block_count(); ++b)
                kept_copy.push_back(got->offer(static_cast<BlockIndex>(b)));
        }
    }
    EXPECT_FALSE(cache.index(t, states[0], *tallies.tallies(t, states[0]), std::vector<std::uint8_t>(3)));
}

// The engine given the room index decides as it does looking at every block,
// on blocks of mixed settings, with holds of jobs waiting to restart.
TEST(DecisionCost, DecisionsWithTheRoomIndexEqualThoseWithout) {
    const Topology t = mixed_blocks(40);
    std::vector<NodeState> states = test::all(t);
    std::mt19937 rng(23);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), pct(0, 99);
    for (NodeState& s : states) // a busy cluster: refusals of every kind too
        s = pct(rng) < 55 ? NodeState::kBusy : static_cast<NodeState>(st(rng));
    RoomIndexCache cache;
    TallyCache tallies;
    const std::uint32_t sizes[] = {1, 2, 3, 4, 5, 8, 12, 16, 17, 20, 24, 32, 64};
    int placed = 0, refused = 0;
    for (int step = 0; step < 600; ++step) {
        for (int k = pct(rng) % 15; k > 0; --k)
            states[node(rng)] = static_cast<NodeState>(st(rng) == 4 ? 1 : st(rng));
        // Now and then a job waiting to restart on block 3 or 7 holds nodes there.
        std::vector<RecoveryClaim> claims;
        if (step % 3 == 0) {
            RecoveryClaim c;
            c.job_id = 77;
            const Block& b = t.blocks()[step % 2 ? 3 : 7];
            RecoveryNeed need;
            need.block = static_cast<BlockIndex>(step % 2 ? 3 : 7);
            need.need = static_cast<std::uint32_t>(b.size() / 2);
            need.prior_healthy = {b.nodes[0], b.nodes[1]};
            c.blocks.push_back(need);
            claims.push_back(c);
        }
        Request r;
        r.job_id = step % 6 == 0 ? 77 : 1000 + static_cast<std::uint32_t>(step);
        r.min_nodes = r.max_nodes = sizes[static_cast<std::size_t>(pct(rng)) % std::size(sizes)];
        if (pct(rng) < 30)
            r.segment = r.min_nodes % 4 == 0 ? 4 : r.min_nodes % 8 == 0 ? 8 : 0;
        if (pct(rng) < 20)
            r.min_nodes = std::max<std::uint32_t>(1, r.min_nodes / 2);
        r.preemptible = pct(rng) < 35;
        r.exclusive_topo = pct(rng) < 5;
        std::vector<std::uint8_t> avail;
        if (pct(rng) < 70) {
            avail.resize(t.node_count());
            for (std::size_t i = 0; i < avail.size(); ++i)
                avail[i] = states[i] == NodeState::kFree || (pct(rng) < 15 && states[i] != NodeState::kFree);
            r.available = avail;
        }
        const Placement want = place(Snapshot(t, states, claims), r);
        Snapshot with(t, states, tallies.tallies(t, states), claims);
        with.attach_room_index(cache.index(t, states, with.tallies(), r.available), r.available);
        const Placement got = place(with, r);
        ASSERT_EQ(got.reason, want.reason) << "step " << step << ": " << explain(t, got) << " / " << explain(t, want);
        EXPECT_EQ(got.nodes, want.nodes) << "step " << step;
        EXPECT_EQ(explain(t, got), explain(t, want)) << "step " << step;
        EXPECT_EQ(got.blocks_if_spares, want.blocks_if_spares) << "step " << step;
        EXPECT_EQ(got.spares_used, want.spares_used) << "step " << step;
        (got.placed() ? placed : refused) += 1;
    }
    EXPECT_GT(placed, 100);
    EXPECT_GT(refused, 100);
}

// A room shared by more blocks than the index reads one by one (engine.cpp,
// best_unheld_block: past 64) is read in best fit's order and the search
// stops at the first block that takes no node by preemption: the same
// answers as viewing every block, on 200 racks most of which have the same
// room, with lent nodes (preemption counts that differ) and maps.
TEST(DecisionCost, AManyBlockRoomReadInBestFitOrderGivesTheSameBlock) {
    const Topology t = test::racks(200, 18, 16, 2, true, "preemptible:\n  qos: [lend]\n");
    std::vector<NodeState> states = test::all(t);
    std::mt19937 rng(29);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> pct(0, 99);
    RoomIndexCache cache;
    TallyCache tallies;
    const std::uint32_t sizes[] = {1, 2, 4, 8, 15, 16};
    int placed = 0, preempting = 0;
    for (int step = 0; step < 400; ++step) {
        for (int k = pct(rng) % 40; k > 0; --k) { // a few nodes busy, lent or down here and there
            const int p = pct(rng);
            states[node(rng)] = p < 40   ? NodeState::kFree
                                : p < 70 ? NodeState::kBusy
                                : p < 95 ? NodeState::kLent
                                         : NodeState::kDown;
        }
        Request r;
        r.job_id = 1000 + static_cast<std::uint32_t>(step);
        r.min_nodes = r.max_nodes = sizes[static_cast<std::size_t>(pct(rng)) % std::size(sizes)];
        r.preemptible = pct(rng) < 20;
        std::vector<std::uint8_t> avail;
        if (pct(rng) < 60) { // Slurm offers the free nodes, and for a preemptor the lent ones too
            const bool preemptor = pct(rng) < 50;
            avail.resize(t.node_count());
            for (std::size_t i = 0; i < avail.size(); ++i)
                avail[i] = states[i] == NodeState::kFree || (preemptor && states[i] == NodeState::kLent);
            r.available = avail;
        }
        const Placement want = place(Snapshot(t, states, {}), r);
        Snapshot with(t, states, tallies.tallies(t, states), nullptr);
        with.attach_room_index(cache.index(t, states, with.tallies(), r.available), r.available);
        const Placement got = place(with, r);
        ASSERT_EQ(got.reason, want.reason) << "step " << step << ": " << explain(t, got) << " / " << explain(t, want);
        ASSERT_EQ(got.nodes, want.nodes) << "step " << step;
        placed += got.placed();
        preempting += got.placed() && std::any_of(got.nodes.begin(), got.nodes.end(),
                                                  [&](NodeIndex n) { return states[n] != NodeState::kFree; });
    }
    EXPECT_GT(placed, 300);
    EXPECT_GT(preempting, 10); // blocks whose room takes nodes by preemption were weighed
}

// offered_as_healthy (eight nodes per step) against its definition: every
// offered node that is down or drained reads as free, nothing else changes;
// any byte values, lengths that are not a multiple of eight.
TEST(DecisionCost, OfferedFailedNodesWordAtATimeMatchTheDefinition) {
    std::mt19937 rng(29);
    std::uniform_int_distribution<int> st(0, 9), pct(0, 99);
    for (int round = 0; round < 200; ++round) {
        const std::size_t n = static_cast<std::size_t>(round % 50) + static_cast<std::size_t>(round / 50) * 97;
        std::vector<NodeState> states(n);
        std::vector<std::uint8_t> avail(n);
        const int failed_pct = round % 4 == 0 ? 0 : round % 4 == 1 ? 2 : 30;
        for (std::size_t i = 0; i < n; ++i) {
            const int p = pct(rng);
            states[i] = p < failed_pct ? static_cast<NodeState>(3 + p % 2) : static_cast<NodeState>(st(rng) % 3);
            if (pct(rng) < 5)
                states[i] = static_cast<NodeState>(st(rng)); // not node states too
            avail[i] = pct(rng) < 50 ? 0 : static_cast<std::uint8_t>(1 + pct(rng) * 2);
        }
        std::vector<NodeState> want = states;
        bool changed = false;
        for (std::size_t i = 0; i < n; ++i)
            if (avail[i] && is_failed(want[i])) {
                want[i] = NodeState::kFree;
                changed = true;
            }
        std::vector<NodeState> scratch;
        const std::span<const NodeState> got = offered_as_healthy(states, avail, scratch);
        ASSERT_EQ(got.size(), n);
        EXPECT_EQ(got.data() == states.data(), !changed) << "round " << round;
        EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << "round " << round;
    }
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
