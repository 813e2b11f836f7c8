// SPDX-License-Identifier: GPL-2.0-or-later
//
// The free map less the reserved nodes (tools/sim/withheld_map.hpp): always
// the free map with those nodes zeroed, and every byte it changes noted in
// the planner's journal (a copy that follows the journal stays equal).
#include "withheld_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace nvlblock::sim {
namespace {

std::vector<std::uint8_t> less(std::vector<std::uint8_t> free, const std::vector<NodeIndex>& nodes) {
    for (NodeIndex n : nodes)
        free[n] = 0;
    return free;
}

TEST(WithheldMap, IsTheFreeMapLessTheNodesWithEveryChangeNoted) {
    constexpr std::size_t kNodes = 300;
    std::vector<std::uint8_t> free(kNodes, 1);
    ChangeJournal free_changes, planner;
    free_changes.set_limit(40); // bursts past it: the map is compared whole
    free_changes.track(free.data());
    WithheldMap map;
    // A copy of the map that, like the planner's caches, learns only what the journal notes.
    std::vector<std::uint8_t> follower;
    JournalMark mark;
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::size_t> node(0, kNodes - 1);
    std::uniform_int_distribution<int> pct(0, 99);
    std::vector<NodeIndex> nodes;
    int changed_sets = 0;
    for (int step = 0; step < 2000; ++step) {
        const int changes = step % 151 == 0 ? 100 : pct(rng) % 5;
        for (int k = 0; k < changes; ++k) {
            const auto n = static_cast<NodeIndex>(node(rng));
            free[n] = pct(rng) < 50;
            free_changes.note(n);
        }
        if (pct(rng) < 20) { // a new reservation, or the same nodes again
            nodes.clear();
            for (int k = pct(rng) % 20; k > 0; --k)
                nodes.push_back(static_cast<NodeIndex>(node(rng)));
            ++changed_sets;
        }
        const std::vector<std::uint8_t>& got = map.of(free, free_changes, nodes, &planner);
        ASSERT_EQ(got, less(free, nodes)) << "step " << step;
        ASSERT_TRUE(planner.tracks(got.data()));
        if (const auto pending = mark.pending(&planner, {got.data()})) {
            for (NodeIndex n : *pending)
                follower[n] = got[n];
        } else {
            follower = got;
        }
        mark.sync(&planner, {got.data()});
        ASSERT_EQ(follower, got) << "step " << step << ": a change was not noted";
    }
    EXPECT_GT(changed_sets, 300);
}

TEST(WithheldMap, WithoutAJournalIsAFreshCopyTrackedNowhere) {
    std::vector<std::uint8_t> free(8, 1);
    ChangeJournal free_changes, planner;
    WithheldMap map;
    const std::vector<NodeIndex> nodes{1, 5};
    const std::vector<std::uint8_t>& tracked = map.of(free, free_changes, nodes, &planner);
    EXPECT_TRUE(planner.tracks(tracked.data()));
    free[2] = 0; // not noted anywhere: a fresh copy sees it
    const std::vector<std::uint8_t>& copy = map.of(free, free_changes, nodes, nullptr);
    EXPECT_EQ(copy, less(free, nodes));
    EXPECT_FALSE(planner.tracks(copy.data()));
}

} // namespace
} // namespace nvlblock::sim
