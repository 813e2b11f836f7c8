// SPDX-License-Identifier: GPL-2.0-or-later
//
// The event queue orders by time, then by kind (repairs, ends, failures,
// submissions, timers: the order the world changes within one second), then
// by insertion.
#include "event_queue.hpp"

#include <gtest/gtest.h>

namespace nvlblock::sim {
namespace {

TEST(EventQueue, OrdersByTimeThenKindThenInsertion) {
    EventQueue q;
    q.push({20, EventKind::kSubmit, 1, 0, 0, 0});
    q.push({10, EventKind::kTimer, 2, 0, 0, 0});
    q.push({10, EventKind::kCauseDown, 3, 0, 0, 0});
    q.push({10, EventKind::kJobEnd, 4, 0, 0, 0});
    q.push({10, EventKind::kCauseUp, 5, 0, 0, 0});
    q.push({10, EventKind::kJobEnd, 6, 0, 0, 0});
    q.push({5, EventKind::kSubmit, 7, 0, 0, 0});
    std::vector<std::uint32_t> order;
    while (!q.empty())
        order.push_back(q.pop().a);
    EXPECT_EQ(order, (std::vector<std::uint32_t>{7, 5, 4, 6, 3, 2, 1}));
}

TEST(EventQueue, NextTimeOfAnEmptyQueueIsNever) {
    EventQueue q;
    EXPECT_EQ(q.next_time(), kNever);
    q.push({3, EventKind::kTimer, 0, 0, 0, 0});
    EXPECT_EQ(q.next_time(), 3);
    EXPECT_EQ(q.size(), 1u);
}

} // namespace
} // namespace nvlblock::sim
