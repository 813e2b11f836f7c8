// SPDX-License-Identifier: GPL-2.0-or-later
//
// The change journal (placement/change_journal.hpp): what it keeps, and a
// planner told what changed answers exactly as one that compares every node.
#include "core/planner.hpp"
#include "placement/change_journal.hpp"
#include "placement/room_index.hpp"
#include "placement/tally_cache.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

#include <random>

namespace nvlblock {
namespace {

using test::yaml_topology;

std::vector<NodeIndex> listed(const std::optional<std::span<const NodeIndex>>& s) {
    return s ? std::vector<NodeIndex>(s->begin(), s->end()) : std::vector<NodeIndex>{99999};
}

TEST(ChangeJournal, KeepsTheNodesNotedSinceAPosition) {
    ChangeJournal j;
    j.set_limit(4);
    const ChangeJournal::Position start = j.end();
    j.note(5);
    j.note(2);
    const ChangeJournal::Position mid = j.end();
    j.note(5);
    EXPECT_EQ(listed(j.since(start)), (std::vector<NodeIndex>{5, 2, 5}));
    EXPECT_EQ(listed(j.since(mid)), (std::vector<NodeIndex>{5}));
    EXPECT_EQ(listed(j.since(j.end())), std::vector<NodeIndex>{});
    j.note(1);
    j.note(7); // past the limit: the older half (5, 2) is forgotten
    EXPECT_FALSE(j.since(start));
    EXPECT_EQ(listed(j.since(mid)), (std::vector<NodeIndex>{5, 1, 7}));
    EXPECT_EQ(listed(j.since(j.end())), std::vector<NodeIndex>{});
    j.note_all();
    EXPECT_FALSE(j.since(mid));
}

TEST(ChangeJournal, AMarkFollowsTheJournalOnlyForTrackedArrays) {
    ChangeJournal j;
    const std::vector<std::uint8_t> a(4), b(4);
    JournalMark m;
    EXPECT_FALSE(m.pending(&j, {a.data()})); // never synced
    m.sync(&j, {a.data()});
    EXPECT_FALSE(m.pending(&j, {a.data()})); // a is not tracked
    j.track(a.data());
    m.sync(&j, {a.data(), nullptr}); // no map: nothing to track
    j.note(3);
    EXPECT_EQ(listed(m.pending(&j, {a.data(), nullptr})), (std::vector<NodeIndex>{3}));
    EXPECT_FALSE(m.pending(&j, {a.data(), b.data()})); // b is not tracked
    EXPECT_FALSE(m.pending(nullptr, {a.data()}));
    // Tracking another array, or no longer tracking one, forgets what was
    // noted: a copy synced before may differ from it anywhere.
    j.track(b.data());
    EXPECT_FALSE(m.pending(&j, {a.data()}));
    m.sync(&j, {a.data()});
    j.untrack(b.data());
    EXPECT_FALSE(m.pending(&j, {a.data()}));
}

bool offered_failed_any(std::span<const NodeState> states, std::span<const std::uint8_t> map) {
    for (std::size_t i = 0; i < states.size(); ++i)
        if (map[i] && is_failed(states[i]))
            return true;
    return false;
}

// Racks of 8 to 20 nodes with spares, lending and a reclaim rack.
Topology racks(int blocks) {
    std::string y = "defaults:\n  slice: 16\n  spares: 2\npreemptible:\n  qos: [lend]\nblocks:\n";
    int node = 1;
    for (int r = 1; r <= blocks; ++r) {
        const int n = 8 + (r * 7) % 13;
        y += "  - name: b" + std::to_string(r) + "\n    nodes: n[" + std::to_string(node) + "-" +
             std::to_string(node + n - 1) + "]\n    slice: " + std::to_string(std::min(n - 2, r % 2 ? 8 : 16)) +
             "\n    lending: " + (r % 2 ? "true" : "false") + (r % 5 == 0 ? "\n    reserve: reclaim" : "") + "\n";
        node += n;
    }
    std::vector<std::string> universe;
    for (int i = 1; i < node + 3; ++i)
        universe.push_back("n" + std::to_string(i));
    return yaml_topology(y, &universe);
}

// The caller's arrays, changed a few nodes at a time, each change noted.
struct TrackedCluster {
    explicit TrackedCluster(Planner& p) : planner(p) {
        states.assign(p.topology().node_count(), NodeState::kFree);
        free_map.assign(states.size(), 1);
        wide_map.assign(states.size(), 1);
        for (const void* a : {static_cast<const void*>(states.data()), static_cast<const void*>(free_map.data()),
                              static_cast<const void*>(wide_map.data())})
            p.changes().track(a);
    }
    void set(NodeIndex n, NodeState s, bool offer_failed) {
        states[n] = s;
        free_map[n] = s == NodeState::kFree;
        // Slurm's "could it ever run" map offers failed nodes too.
        wide_map[n] = s != NodeState::kBusy || offer_failed;
        planner.changes().note(n);
    }
    Planner& planner;
    std::vector<NodeState> states;
    std::vector<std::uint8_t> free_map, wide_map;
};

// Random changes and questions: a planner told what changed and one that
// compares every node give the same answers, refusals' sentences included.
TEST(ChangeJournal, APlannerToldWhatChangedAnswersAsOneThatScans) {
    const Topology t = racks(30);
    Planner told(t), scans(t);
    TrackedCluster c(told);
    std::mt19937 rng(41);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), pct(0, 99);
    const std::uint32_t sizes[] = {1, 2, 4, 8, 12, 16, 24, 40};
    int placed = 0, refused = 0, shaped = 0;
    for (int step = 0; step < 1500; ++step) {
        // A burst now and then: more changes than the journal keeps.
        const int changes = step % 97 == 0 ? static_cast<int>(t.node_count()) : pct(rng) % 6;
        for (int k = 0; k < changes; ++k) {
            const auto s = static_cast<NodeState>(st(rng));
            c.set(static_cast<NodeIndex>(node(rng)), pct(rng) < 60 ? NodeState::kBusy : s, pct(rng) < 10);
        }
        Request r;
        r.job_id = 1000 + static_cast<std::uint32_t>(step);
        r.min_nodes = r.max_nodes = sizes[static_cast<std::size_t>(pct(rng)) % std::size(sizes)];
        r.segment = pct(rng) < 25 && r.min_nodes % 4 == 0 ? 4 : 0;
        r.preemptible = pct(rng) < 30;
        const int map = pct(rng) % 3;
        if (map)
            r.available = map == 1 ? c.free_map : c.wide_map;
        // The answer over the same bytes, copied: untracked arrays are compared whole.
        const std::vector<NodeState> copy = c.states;
        std::vector<std::uint8_t> copy_map(r.available.begin(), r.available.end());
        Request asked = r;
        if (map)
            asked.available = copy_map;
        const Placement want = scans.place(copy, asked, step);
        const Placement got = told.place(c.states, r, step);
        ASSERT_EQ(got.reason, want.reason) << "step " << step << ": " << explain(t, got) << " / " << explain(t, want);
        EXPECT_EQ(got.nodes, want.nodes) << "step " << step;
        EXPECT_EQ(explain(t, got), explain(t, want)) << "step " << step;
        (got.placed() ? placed : refused) += 1;
        shaped += map == 2 && offered_failed_any(c.states, c.wide_map);
    }
    EXPECT_GT(placed, 300);
    EXPECT_GT(refused, 300);
    EXPECT_GT(shaped, 100); // the offered-failed path was asked
}

// may_place asked of the same tracked arrays many times in a row (as a
// backfill pass asks the bound of each job it walks) answers as a planner
// that compares every node: after noted changes, and after questions about
// other arrays (nine of them: more than the room index cache keeps) that
// note nothing but give the cache's slots to other arrays.
TEST(ChangeJournal, TheBoundAskedAgainAndAgainAnswersAsOneThatScans) {
    const Topology t = racks(20);
    Planner told(t), scans(t);
    TrackedCluster c(told);
    // Other arrays, all busy: an index of theirs answers no to every question.
    // Decided (place), not bounded: they give the room cache's slots away without a memo of their own.
    std::vector<std::vector<NodeState>> others(9, std::vector<NodeState>(c.states.size(), NodeState::kBusy));
    const std::vector<std::uint8_t> none(c.states.size(), 0);
    std::mt19937 rng(47);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1), block(0, t.block_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), pct(0, 99);
    const std::uint32_t sizes[] = {1, 4, 8, 12, 16, 24, 40, 64};
    int yes = 0, no = 0;
    for (int step = 0; step < 1500; ++step) {
        // A block filled or emptied now and then: the bound's answers turn.
        if (pct(rng) < 50) {
            const bool busy = pct(rng) < 75;
            for (NodeIndex n : t.block(static_cast<BlockIndex>(block(rng))).nodes)
                c.set(n, busy ? NodeState::kBusy : NodeState::kFree, false);
        }
        if (pct(rng) < 30 && pct(rng) < 50) // other arrays asked: every slot theirs, nothing noted
            for (const std::vector<NodeState>& other : others) {
                Request r;
                r.job_id = 1;
                r.min_nodes = r.max_nodes = 2;
                if (pct(rng) < 50)
                    r.available = none;
                EXPECT_FALSE(told.place(other, r, step).placed());
            }
        const bool mapped = pct(rng) < 70;
        for (int ask = 0; ask < 4; ++ask) {
            Request r;
            r.job_id = 5000 + static_cast<std::uint32_t>(step * 4 + ask);
            r.min_nodes = r.max_nodes = sizes[static_cast<std::size_t>(pct(rng)) % std::size(sizes)];
            r.preemptible = pct(rng) < 20;
            if (mapped)
                r.available = c.free_map;
            const std::vector<NodeState> copy = c.states;
            const std::vector<std::uint8_t> copy_map(r.available.begin(), r.available.end());
            Request asked = r;
            if (mapped)
                asked.available = copy_map;
            const bool want = scans.may_place(copy, asked, step);
            ASSERT_EQ(told.may_place(c.states, r, step), want) << "step " << step << ", question " << ask;
            (want ? yes : no) += 1;
        }
    }
    EXPECT_GT(yes, 1000);
    EXPECT_GT(no, 300);
}

// The index's count of offered failed nodes, brought up to date from the
// noted nodes alone, equals a count over every node after each change.
TEST(ChangeJournal, TheOfferedFailedCountFollowsTheNotedChanges) {
    const Topology t = racks(12);
    Planner p(t);
    TrackedCluster c(p);
    TallyCache tallies;
    RoomIndexCache index;
    std::mt19937 rng(43);
    std::uniform_int_distribution<std::size_t> node(0, t.node_count() - 1);
    std::uniform_int_distribution<int> st(0, 4), pct(0, 99);
    for (int step = 0; step < 400; ++step) {
        for (int k = pct(rng) % 4; k > 0; --k)
            c.set(static_cast<NodeIndex>(node(rng)), static_cast<NodeState>(st(rng)), pct(rng) < 50);
        long want = 0;
        for (std::size_t i = 0; i < c.states.size(); ++i)
            want += c.wide_map[i] && is_failed(c.states[i]);
        const auto& counted = *tallies.tallies(t, c.states, &p.changes());
        EXPECT_EQ(index.index(t, c.states, counted, c.wide_map, &p.changes())->offered_failed(), want)
            << "step " << step;
        for (const Block& b : t.blocks())
            ASSERT_EQ(counted[static_cast<std::size_t>(t.block_of(b.nodes.front()))].free,
                      count_block(t, b, c.states).free);
    }
}

// The journal is what a tracked decision reads: a change the caller does
// not note is not seen (the contract), and a note makes it seen.
TEST(ChangeJournal, ATrackedDecisionReadsOnlyTheNodesNoted) {
    const Topology t = racks(4);
    Planner p(t);
    TrackedCluster c(p);
    Request r;
    r.job_id = 1;
    r.min_nodes = r.max_nodes = 1;
    const Placement first = p.place(c.states, r, 0);
    ASSERT_TRUE(first.placed());
    const NodeIndex n = first.nodes.front();
    c.states[n] = NodeState::kBusy; // not noted
    EXPECT_EQ(p.snapshot(c.states, 0).tally(t.block_of(n)).free, t.block(t.block_of(n)).size());
    p.changes().note(n);
    EXPECT_EQ(p.snapshot(c.states, 0).tally(t.block_of(n)).free, t.block(t.block_of(n)).size() - 1);
}

} // namespace
} // namespace nvlblock
