// SPDX-License-Identifier: GPL-2.0-or-later
//
// Block health over time (src/core/health_clock.hpp) and the spare deficit:
// what an operator alerts on, per rack (issue 35).
#include "core/planner.hpp"
#include "test_support.hpp"
#include "writers/status_report.hpp"

#include <gtest/gtest.h>

namespace nvlblock {
namespace {

using test::all;
using test::range;
using test::set;

TEST(HealthClock, TimeShortOfASliceAccruesBetweenObservations) {
    const Topology topo = test::racks(2, 18, 16, 2);
    Planner planner{topo};
    auto s = all(topo);
    planner.observe_health(s, 100);
    set(s, {0, 1, 2}, NodeState::kDrained); // rack01: 15 healthy, slice 16
    planner.observe_health(s, 110);
    EXPECT_EQ(planner.health().short_seconds(0), 0);
    planner.observe_health(s, 130);
    EXPECT_EQ(planner.health().short_seconds(0), 20);
    set(s, {0}, NodeState::kFree); // repaired: 16 healthy, a whole slice again
    planner.observe_health(s, 140);
    planner.observe_health(s, 200);
    EXPECT_EQ(planner.health().short_seconds(0), 30);
    EXPECT_EQ(planner.health().short_seconds(1), 0);

    set(s, {1, 2}, NodeState::kFree);
    set(s, {20, 21}, NodeState::kDown); // rack02: 16 healthy, both spares gone
    const ClusterReport r = make_report(planner, s, 200);
    EXPECT_EQ(r.blocks[0].spare_deficit, 0);
    EXPECT_EQ(r.blocks[1].spare_deficit, 2);
    EXPECT_EQ(r.blocks[0].short_seconds, 30);
    EXPECT_NE(block_line(r.blocks[0]).find(" SpareDeficit=0 ShortOfSliceSeconds=30"), std::string::npos);
    EXPECT_NE(report_prometheus(r).find("nvlblock_block_short_of_slice_seconds_total{block=\"rack01\"} 30\n"),
              std::string::npos);
    EXPECT_NE(report_prometheus(r).find("nvlblock_block_spare_deficit{block=\"rack02\"} 2\n"), std::string::npos);
}

TEST(HealthClock, ATopologyChangeStartsItAgain) {
    const Topology topo = test::racks(2, 18, 16, 2);
    Planner planner{topo};
    auto s = all(topo);
    set(s, range(0, 5), NodeState::kDown);
    planner.observe_health(s, 0);
    planner.observe_health(s, 50);
    EXPECT_EQ(planner.health().short_seconds(0), 50);
    planner.replace_topology(test::racks(2, 18, 16, 2));
    EXPECT_EQ(planner.health().short_seconds(0), 0);
}

} // namespace
} // namespace nvlblock
