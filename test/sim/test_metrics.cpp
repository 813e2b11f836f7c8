// SPDX-License-Identifier: GPL-2.0-or-later
//
// The metric accumulators on their own: exact integration over the window,
// clipping, buckets, nearest-rank percentiles, size classes.
#include "metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

namespace nvlblock::sim {
namespace {

TEST(Metrics, NearestRankPercentiles) {
    // 5 values: p50 is the 3rd (ceil(2.5)), p95 and p99 the 5th (ceil(4.75), ceil(4.95)).
    const std::vector<double> v{0, 0, 810, 910, 1010};
    EXPECT_EQ(percentile(v, 50), 810);
    EXPECT_EQ(percentile(v, 95), 1010);
    EXPECT_EQ(percentile(v, 99), 1010);
    EXPECT_EQ(percentile({7}, 1), 7);
    EXPECT_EQ(percentile({}, 50), 0);
    std::vector<double> hundred;
    for (int i = 1; i <= 100; ++i)
        hundred.push_back(i);
    EXPECT_EQ(percentile(hundred, 95), 95);
    EXPECT_EQ(percentile(hundred, 99), 99);
}

// The figures of values sorted ascending, the mean summed in that order.
void expect_sorted_figures(const WaitStats& got, std::vector<double> values) {
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (double v : values)
        sum += v;
    EXPECT_EQ(got.count, values.size());
    EXPECT_EQ(got.mean, sum / static_cast<double>(values.size()));
    EXPECT_EQ(got.p50, percentile(values, 50));
    EXPECT_EQ(got.p95, percentile(values, 95));
    EXPECT_EQ(got.p99, percentile(values, 99));
    EXPECT_EQ(got.max, values.back());
}

// Waits and slowdowns are summarised by selection, not by a sort: the same
// figures as sorting them, bit for bit (the mean of whole seconds is exact in
// any order; slowdowns, not whole, are still summed in ascending order).
TEST(Metrics, WaitAndSlowdownFiguresAreThoseOfTheSortedValues) {
    for (std::size_t n : {1u, 2u, 5u, 99u, 100u, 101u, 1000u, 4097u}) {
        Metrics m(0, 1000, 100);
        std::vector<double> waits, slowdowns;
        std::uint64_t x = n * 2654435761u + 1;
        for (std::size_t i = 0; i < n; ++i) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            const Seconds wait = static_cast<Seconds>((x >> 33) % 5000000); // repeats too
            const Seconds run = static_cast<Seconds>(1 + (x >> 13) % 90000);
            m.job_waited(4, wait);
            m.job_slowed(4, wait + run, run);
            waits.push_back(static_cast<double>(wait));
            slowdowns.push_back(std::max(1.0, static_cast<double>(wait + run) / std::max<double>(run, 10)));
        }
        SCOPED_TRACE(n);
        expect_sorted_figures(m.wait_stats().front(), waits);
        expect_sorted_figures(m.slowdown_stats().front(), slowdowns);
    }
}

TEST(Metrics, SizeClassesByRequestedGpus) {
    EXPECT_EQ(kSizeClasses[size_class_of(4)], std::string("gpus_1_4"));
    EXPECT_EQ(kSizeClasses[size_class_of(8)], std::string("gpus_5_32"));
    EXPECT_EQ(kSizeClasses[size_class_of(64)], std::string("gpus_33_64"));
    EXPECT_EQ(kSizeClasses[size_class_of(72)], std::string("gpus_65_256"));
    EXPECT_EQ(kSizeClasses[size_class_of(1024)], std::string("gpus_257_1024"));
    EXPECT_EQ(kSizeClasses[size_class_of(2048)], std::string("gpus_1025_plus"));
}

TEST(Metrics, IntegratesLevelsExactlyOverTheWindowOnly) {
    Metrics m(100, 1100, 250); // window [100, 1100), buckets of 250 s
    Levels a;
    a.healthy = 10;
    a.busy = 6;
    a.busy_preemptible = 1;
    a.stranded = 4;
    a.waiting = true;
    m.advance(0, 300, a); // only [100, 300) counts: 200 s
    Levels b = a;
    b.busy = 10;
    b.stranded = 0;
    b.waiting = false;
    m.advance(300, 2000, b); // [300, 1100): 800 s
    EXPECT_DOUBLE_EQ(m.healthy_node_s(), 10.0 * 1000);
    EXPECT_DOUBLE_EQ(m.busy_node_s(), 6.0 * 200 + 10.0 * 800);
    EXPECT_DOUBLE_EQ(m.busy_preemptible_node_s(), 1.0 * 1000);
    EXPECT_DOUBLE_EQ(m.stranded_node_s(), 4.0 * 200);
    EXPECT_DOUBLE_EQ(m.stranded_time_s(), 200);
    // Lost work [50, 150) on 3 nodes: only [100, 150) is in the window.
    m.lost(LossCause::kFailure, 3, 50, 150);
    m.lost(LossCause::kPreemption, 1, 1000, 1200);
    EXPECT_DOUBLE_EQ(m.lost_node_s(LossCause::kFailure), 150);
    EXPECT_DOUBLE_EQ(m.lost_node_s(LossCause::kPreemption), 100);
    auto s = m.series();
    ASSERT_EQ(s.size(), 4u);
    EXPECT_EQ(s[0].start, 100);
    EXPECT_EQ(s[0].end, 350);
    // Bucket 0: busy 6 for 200 s, 10 for 50 s -> 7.2; useful loses 150 node-s -> 6.6.
    EXPECT_DOUBLE_EQ(s[0].busy, (6.0 * 200 + 10.0 * 50) / 250);
    EXPECT_DOUBLE_EQ(s[0].useful, (6.0 * 200 + 10.0 * 50 - 150) / 250);
    EXPECT_DOUBLE_EQ(s[0].stranded, 4.0 * 200 / 250);
    EXPECT_DOUBLE_EQ(s[3].useful, (10.0 * 250 - 100) / 250);
}

TEST(Metrics, WaitsAndRestarts) {
    Metrics m(0, 10, 10);
    m.job_waited(64, 0);
    m.job_waited(64, 0);
    m.job_waited(4, 1010);
    m.job_waited(16, 910);
    m.job_waited(8, 810);
    auto w = m.wait_stats();
    ASSERT_EQ(w.size(), 1 + kSizeClasses.size());
    EXPECT_EQ(w[0].size_class, "all");
    EXPECT_EQ(w[0].count, 5u);
    EXPECT_DOUBLE_EQ(w[0].mean, 546);
    EXPECT_DOUBLE_EQ(w[0].p50, 810);
    EXPECT_DOUBLE_EQ(w[2].p95, 910); // gpus_5_32: {810, 910}
    m.restarted(true, 10, true);
    m.restarted(false, 300, true);
    m.restarted(false, 20, false); // a single-node job: counted in all restarts only
    EXPECT_EQ(m.restarts(), 3u);
    EXPECT_EQ(m.restarts_in_place(), 1u);
    EXPECT_DOUBLE_EQ(m.restart_delay_stats().p50, 20);
    EXPECT_EQ(m.multi_node_restarts(), 2u);
    EXPECT_EQ(m.multi_node_restarts_in_place(), 1u);
    EXPECT_DOUBLE_EQ(m.multi_node_restart_delay_stats().p50, 10);
    EXPECT_DOUBLE_EQ(m.multi_node_restart_delay_stats().p95, 300);
}

} // namespace
} // namespace nvlblock::sim
