// SPDX-License-Identifier: GPL-2.0-or-later
//
// The room bound (placement/engine.hpp may_place, Planner::may_place): it
// says "no" only where the decision refuses, on clusters with spares withheld
// or lent, reclaimed spares, BlockSizes levels, jobs carved whole into one
// block, maps that offer preemptible work or failed nodes, and other jobs'
// holds; and it says "no" often enough on a busy cluster to spare the
// decisions it is for.
#include "core/planner.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace nvlblock {
namespace {

struct BoundCount {
    int ruled_out = 0, asked = 0;
    int level_refusals = 0, levels_ruled_out = 0; // refused by a level of the hierarchy; of those, ruled out
    // Refused a job carved whole into one block (unsegmented within a
    // slice, or one segment); of those, ruled out.
    int one_block_refusals = 0, one_block_ruled_out = 0;
};

// A request the bound rules out `s` nodes short (bound_shortfall) stays ruled
// out with any s - 1 busy nodes freed (the simulator keeps such a refusal
// until that many were), and is at least one node short; the nodes freed
// are put back.
void expect_shortfall_stands(const Planner& planner, std::vector<NodeState>& states, Request r, std::mt19937& rng,
                             int step) {
    const long shortfall = planner.bound_shortfall(states, r, step);
    ASSERT_GE(shortfall, 1) << "step " << step;
    std::vector<NodeIndex> busy;
    for (std::size_t i = 0; i < states.size(); ++i)
        if (states[i] == NodeState::kBusy)
            busy.push_back(static_cast<NodeIndex>(i));
    std::shuffle(busy.begin(), busy.end(), rng);
    busy.resize(std::min(busy.size(), static_cast<std::size_t>(shortfall - 1)));
    // The maps offer the freed nodes too: a copy, so that the caller's stay as they were.
    std::vector<std::uint8_t> map(r.available.begin(), r.available.end());
    for (NodeIndex n : busy) {
        states[n] = NodeState::kFree;
        if (!map.empty())
            map[n] = 1;
    }
    if (!map.empty())
        r.available = map;
    EXPECT_FALSE(planner.may_place(states, r, step))
        << "step " << step << ": " << busy.size() << " nodes freed of a shortfall of " << shortfall;
    for (NodeIndex n : busy)
        states[n] = NodeState::kBusy;
}

// Random states, maps, holds and requests over `t`: whenever the bound rules
// a request out, the planner refuses it.
BoundCount expect_bound_only_refuses(const Topology& t, unsigned seed) {
    Planner planner(t);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> pct(0, 99);
    std::vector<NodeState> states(t.node_count(), NodeState::kFree);
    std::vector<std::uint8_t> free_map(states.size()), wide_map(states.size());
    const std::uint32_t sizes[] = {1, 4, 16, 17, 30, 48, 64, 100, 160};
    BoundCount n;
    for (int step = 0; step < 600; ++step) {
        // How full the cluster is this step; on odd steps each rack its own
        // (full racks beside idle ones: what the levels' groups tell apart).
        const int cluster_busy = pct(rng);
        std::vector<int> rack_busy(t.block_count() + 1);
        for (int& b : rack_busy)
            b = step % 2 ? pct(rng) : cluster_busy;
        for (std::size_t i = 0; i < states.size(); ++i) {
            const BlockIndex block = t.block_of(static_cast<NodeIndex>(i));
            const int busy = rack_busy[block == kNoBlock ? t.block_count() : static_cast<std::size_t>(block)];
            const int r = pct(rng);
            states[i] = r < busy ? NodeState::kBusy : r < busy + 3 ? NodeState::kDown : NodeState::kFree;
            free_map[i] = states[i] == NodeState::kFree;
            wide_map[i] = states[i] != NodeState::kBusy || pct(rng) < 20; // preemptible work, failed nodes offered
        }
        if (step % 50 == 7) { // a job failed on its rack: its nodes are held for it while it waits
            const NodeIndex first = static_cast<NodeIndex>(node(rng)) / 18 * 18;
            std::vector<NodeIndex> nodes;
            for (NodeIndex k = first; k < first + 16 && k < t.node_count(); ++k)
                nodes.push_back(k);
            const std::uint32_t job = 500 + static_cast<std::uint32_t>(step);
            planner.job_started(job, nodes, step);
            planner.job_failed(job, nodes, std::vector<NodeIndex>{nodes.front()}, step);
        }
        Request r;
        r.job_id = 1000 + static_cast<std::uint32_t>(step);
        r.min_nodes = r.max_nodes = sizes[static_cast<std::size_t>(pct(rng)) % std::size(sizes)];
        r.segment = pct(rng) < 20 && r.min_nodes % 4 == 0 ? (r.min_nodes == 16 && pct(rng) < 50 ? 16 : 4) : 0;
        r.preemptible = pct(rng) < 30;
        r.waited = pct(rng) < 50 ? 0 : 3600; // past a crossing (30 minutes) or not
        const int map = pct(rng) % 3;
        if (map)
            r.available = map == 1 ? free_map : wide_map;
        const Placement p = planner.place(states, r, step);
        if (!planner.may_place(states, r, step)) {
            ++n.ruled_out;
            EXPECT_FALSE(p.placed()) << "step " << step << ": ruled out, yet placed " << r.min_nodes << " nodes";
            expect_shortfall_stands(planner, states, r, rng, step);
        }
        ++n.asked;
        if (p.reason == Reason::kNoGroupFits) {
            ++n.level_refusals;
            n.levels_ruled_out += !planner.may_place(states, r, step);
        }
        const bool whole = r.segment ? r.segment == r.min_nodes : static_cast<int>(r.min_nodes) <= t.largest_slice();
        if (!p.placed() && whole) {
            ++n.one_block_refusals;
            n.one_block_ruled_out += !planner.may_place(states, r, step);
        }
    }
    return n;
}

TEST(MayPlace, RulesOutOnlyWhatTheDecisionRefuses) {
    const BoundCount idle = expect_bound_only_refuses(test::racks(12), 51);
    const BoundCount lent = expect_bound_only_refuses(test::racks(12, 18, 16, 2, true), 52);
    const BoundCount reclaim = expect_bound_only_refuses(test::racks(12, 18, 16, 2, false, "  reserve: reclaim\n"), 53);
    std::string conf;
    for (int r = 1; r <= 12; ++r)
        conf += "BlockName=rack" + std::to_string(r) + " Nodes=gb[" + std::to_string(1000 + (r - 1) * 18) + "-" +
                std::to_string(1000 + r * 18 - 1) + "]\n";
    const BoundCount levels = expect_bound_only_refuses(test::conf_topology(conf + "BlockSizes=18,36,72\n"), 54);
    // Not a bound that never speaks: it rules out a good share of a busy cluster's questions.
    // A job carved whole is ruled out when no one block offers it every
    // node, though the cluster may: every such refusal here, those by other
    // jobs' holds too (200 of 200; without the holds counted, 166 of 175).
    for (const BoundCount& c : {idle, lent, reclaim, levels}) {
        EXPECT_GT(c.ruled_out, c.asked / 10);
        EXPECT_GT(c.one_block_refusals, 10);
        EXPECT_EQ(c.one_block_ruled_out, c.one_block_refusals);
    }
}

// The hierarchy's groups (level_choice.hpp holding_rung): a job the levels
// hold inside one group is ruled out when no group of its rung offers it
// every node, under topology.conf's BlockSizes (the base alone, as the
// simulator's block-aware policies have it, and with levels) and
// nvlblock.yaml groups (strict and with a crossing, which the bound must
// not apply once a job may cross).
TEST(MayPlace, RulesOutWhatNoGroupOfTheJobsLevelHolds) {
    std::string conf;
    for (int r = 1; r <= 12; ++r)
        conf += "BlockName=rack" + std::to_string(r) + " Nodes=gb[" + std::to_string(1000 + (r - 1) * 18) + "-" +
                std::to_string(1000 + r * 18 - 1) + "]\n";
    const std::string groups = "hierarchy:\n  levels:\n    - name: su\n      groups:\n"
                               "        su1: rack[01-04]\n        su2: rack[05-08]\n        su3: rack[09-12]\n"
                               "    - name: pod\n      groups:\n        pod1: su[1-2]\n        pod2: su3\n";
    const BoundCount base = expect_bound_only_refuses(test::conf_topology(conf + "BlockSizes=16\n"), 61);
    const BoundCount sizes = expect_bound_only_refuses(test::conf_topology(conf + "BlockSizes=16,32,64\n"), 62);
    const BoundCount strict = expect_bound_only_refuses(test::racks(12, 18, 16, 2, false, groups), 63);
    const BoundCount crossing =
        expect_bound_only_refuses(test::racks(12, 18, 16, 2, true, groups + "  crossing: 30m\n"), 64);
    // It speaks for nearly all of the levels' refusals (they would otherwise
    // each cost a decision): 851 of 853 here, the two a job past its
    // crossing that may still cross later.
    for (const BoundCount& c : {base, sizes, strict, crossing}) {
        EXPECT_GT(c.level_refusals, c.asked / 20);
        EXPECT_GE(c.levels_ruled_out * 10, c.level_refusals * 9);
    }
}

// Job 7 ran on nodes 0-15 of rack 1 and failed at 10 s on node 3 (down
// since): it waits to restart there. Rack 1's other nodes are free, every
// other rack busy. Returns the states.
std::vector<NodeState> held_rack_one(Planner& planner) {
    std::vector<NodeState> states(planner.topology().node_count(), NodeState::kBusy);
    const std::vector<NodeIndex> nodes = test::range(0, 15);
    for (NodeIndex n : test::range(0, 17))
        states[n] = NodeState::kFree;
    states[3] = NodeState::kDown;
    planner.job_started(7, nodes, 0);
    planner.job_failed(7, nodes, std::vector<NodeIndex>{3}, 10);
    return states;
}

// A failed job waiting to restart in place holds its rack: the index
// counts no holds, so the bound counts them itself (held_offers.hpp), for
// every job but the one holding.
TEST(MayPlace, CountsTheRoomOtherJobsHold) {
    const Topology t = test::racks(3);
    Planner planner(t);
    const std::vector<NodeState> states = held_rack_one(planner);
    // Rack 1 has 17 free nodes and one failed: 16 for ordinary work, all
    // of them held for job 7 (its 15 healthy nodes and one spare).
    Request r;
    r.job_id = 8;
    for (std::uint32_t size : {1u, 2u, 16u, 17u, 20u}) {
        r.min_nodes = r.max_nodes = size;
        EXPECT_FALSE(planner.place(states, r, 20).placed()) << size;
        EXPECT_FALSE(planner.may_place(states, r, 20)) << size;
    }
    // Every healthy node offered (busy ones run preemptible work). A map
    // that offers the failed node asks whether the job could ever run,
    // where holds do not count.
    std::vector<std::uint8_t> map(t.node_count(), 1);
    map[3] = 0;
    r.available = map;
    r.min_nodes = r.max_nodes = 16;
    EXPECT_TRUE(planner.may_place(states, r, 20)); // racks 2 and 3
    for (NodeIndex n = 18; n < t.node_count(); ++n)
        map[n] = 0;
    EXPECT_FALSE(planner.may_place(states, r, 20)); // rack 1 alone
    EXPECT_FALSE(planner.place(states, r, 20).placed());
    // Once the hold is over (recovery.wait: 5 minutes after the failure),
    // the rack is open again.
    r.available = {};
    EXPECT_TRUE(planner.may_place(states, r, 10 + 301));
    EXPECT_TRUE(planner.place(states, r, 10 + 301).placed());
    // Job 7's own request is always asked.
    r.job_id = 7;
    EXPECT_TRUE(planner.may_place(states, r, 20));
}

// Held nodes a map leaves out take nothing more from the request: it could
// not use them anyway. Reclaimed spares (none withheld): the two nodes job
// 7 does not hold are one node of room beside its hold's one spare.
TEST(MayPlace, CountsOnlyTheHeldNodesAMapOffers) {
    const Topology t = test::racks(3, 18, 16, 2, false, "  reserve: reclaim\n");
    Planner planner(t);
    const std::vector<NodeState> states = held_rack_one(planner);
    std::vector<std::uint8_t> map(t.node_count(), 0);
    map[16] = map[17] = 1;
    Request r;
    r.job_id = 8;
    r.available = map;
    r.min_nodes = r.max_nodes = 1;
    EXPECT_TRUE(planner.place(states, r, 20).placed());
    EXPECT_TRUE(planner.may_place(states, r, 20));
    r.min_nodes = r.max_nodes = 2;
    EXPECT_FALSE(planner.place(states, r, 20).placed());
    EXPECT_FALSE(planner.may_place(states, r, 20));
}

TEST(MayPlace, AJobWithARecoveryRecordIsAlwaysAsked) {
    const Topology t = test::racks(2);
    Planner planner(t);
    std::vector<NodeState> states(t.node_count(), NodeState::kBusy);
    const std::vector<NodeIndex> nodes = test::range(0, 15);
    planner.job_started(7, nodes, 0);
    planner.job_failed(7, nodes, std::vector<NodeIndex>{3}, 10);
    Request r;
    r.job_id = 7;
    r.min_nodes = r.max_nodes = 16;
    EXPECT_TRUE(planner.may_place(states, r, 20)); // its own spares: not a room the bound counts
    r.job_id = 8;
    EXPECT_FALSE(planner.may_place(states, r, 20)); // every node busy
}

} // namespace
} // namespace nvlblock
