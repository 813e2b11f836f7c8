// SPDX-License-Identifier: GPL-2.0-or-later
//
// The engine decides, the writer explains (writers/explain.hpp): a refusal
// is facts, and the sentence is made from them alone. The worked example of
// docs/placement.md ("Where the sentence comes from").
#include "placement/engine.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

namespace nvlblock {
namespace {

using test::all;
using test::nodes;
using test::range;
using test::run;
using test::set;

TEST(Explain, TheWorkedExampleOfPlacementMd) {
    Topology t = test::racks(4); // 18 nodes, slice 16, 2 spares
    auto s = all(t);
    for (NodeIndex first : {0u, 18u, 36u})
        set(s, range(first, first + 3), NodeState::kBusy);
    set(s, range(54, 55), NodeState::kBusy);
    const Placement p = run(t, s, nodes(16));
    EXPECT_EQ(p.reason, Reason::kSparesWithheld);
    EXPECT_EQ(p.blocks_if_spares, 1u);
    EXPECT_EQ(p.why.kind, Refusal::Kind::kOneBlockSpares);
    EXPECT_EQ(p.why.min_nodes, 16u);
    EXPECT_EQ(p.why.unit, 16);
    EXPECT_EQ(p.why.offered, 14);
    EXPECT_EQ(explain(t, p), "no block has 16 healthy free non-spare nodes; 1 block would fit if their spares were "
                             "used (spares are kept for in-place recovery)");
    // The same facts, no block fitting even with its spares.
    Placement q = p;
    q.why.kind = Refusal::Kind::kOneBlockNoRoom;
    EXPECT_EQ(explain(t, q), "no block has 16 healthy free nodes now (the most any block offers is 14)");
}

// A placed answer is worded from its facts too.
TEST(Explain, PlacedAnswersSayWhereTheyWent) {
    Topology t = test::racks(2);
    const Placement p = run(t, all(t), nodes(20));
    ASSERT_TRUE(p.placed());
    EXPECT_EQ(p.blocks, 2u);
    EXPECT_EQ(explain(t, p), "placed on 2 blocks");
}

} // namespace
} // namespace nvlblock
