// SPDX-License-Identifier: GPL-2.0-or-later
//
// Inputs: the trace reader, how each policy maps trace jobs and slice jobs
// onto nodes (same GPU-hours), time limits, and the synthetic generator
// (sizes from the AcmeTrace shares, determinism, the saturating closed loop).
#include "csv.hpp"
#include "policy.hpp"
#include "synthetic.hpp"
#include "trace_reader.hpp"
#include "units.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

namespace nvlblock::sim {
namespace {

const std::string kData = std::string(NVLBLOCK_SOURCE_DIR) + "/data/traces/";

TEST(TraceReader, ReadsTheProjectFormatSortedBySubmitTime) {
    const std::string path = "/tmp/nvlblock-sim-trace-test-" + std::to_string(::getpid()) + ".csv";
    std::ofstream(path) << "job_id,submit_s,nodes,gpus_per_node,duration_s,priority,user_vc\n"
                           "a,10,2,4,100,,vc1\nb,5,1,4,50,2,\nc,10,16,4,7,,\n";
    auto jobs = read_trace(path);
    ASSERT_EQ(jobs.size(), 3u);
    EXPECT_EQ(jobs[0].name, "b");
    EXPECT_EQ(jobs[1].name, "a"); // stable among equal submit times
    EXPECT_EQ(jobs[2].nodes, 16u);
    EXPECT_EQ(jobs[1].nominal_gpus(), 8u);
    TraceOptions scaled;
    scaled.time_scale = 60;
    auto s = read_trace(path, scaled);
    EXPECT_EQ(s[0].submit, 300);
    EXPECT_EQ(s[0].duration, 3000);
    std::ofstream(path) << "job_id,submit_s,nodes,gpus_per_node,duration_s\nx,1,0,4,5\n";
    EXPECT_THROW(read_trace(path), CsvError);
    std::remove(path.c_str());
}

// Rows are split into the same vector row after row (no allocation per
// field): a short row after a long one leaves no field of the long one.
TEST(SplitCsvLine, TrimsBlanksDropsCarriageReturnsAndReusesTheFields) {
    std::vector<std::string> f;
    split_csv_line(std::string_view(" a ,b\tc,\t, 4 2\r"), f);
    EXPECT_EQ(f, (std::vector<std::string>{"a", "b\tc", "", "4 2"}));
    split_csv_line(std::string_view("x"), f);
    EXPECT_EQ(f, (std::vector<std::string>{"x"}));
    split_csv_line(std::string_view(",\r1\r,"), f);
    EXPECT_EQ(f, (std::vector<std::string>{"", "1", ""}));
}

TEST(TraceReader, RefusesAColumnNamedTwiceInTheHeader) {
    // Found by fuzzing (simfiles): a duplicate name used to leave a column
    // index past the width of the rows next() returns (a heap overflow).
    const std::string path = "/tmp/nvlblock-sim-dup-test-" + std::to_string(::getpid()) + ".csv";
    std::ofstream(path) << "# a comment\njob_id,submit_s,nodes,gpus_per_node,duration_s,nodes\na,1,2,4,5,\n";
    try {
        read_trace(path);
        ADD_FAILURE() << "a duplicate header column was accepted";
    } catch (const CsvError& e) {
        EXPECT_EQ(std::string(e.what()), path + ":2: column 'nodes' appears twice in the header");
    }
    std::remove(path.c_str());
}

TEST(TraceReader, ReadsTheShippedTraces) {
    auto philly = read_trace(kData + "philly_small72.csv");
    EXPECT_EQ(philly.size(), 1679u);
    auto full = read_trace(kData + "philly_scaled2304.csv");
    EXPECT_EQ(full.size(), 82247u);
}

TEST(TraceReader, MarksAReproducibleShareOfSmallJobsPreemptible) {
    std::vector<JobSpec> jobs(10000);
    for (std::size_t i = 0; i < jobs.size(); ++i)
        jobs[i].nodes = i % 10 == 0 ? 4 : 1;
    auto again = jobs;
    mark_preemptible(jobs, 0.3, 1, 5);
    mark_preemptible(again, 0.3, 1, 5);
    std::size_t marked = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        EXPECT_EQ(jobs[i].preemptible, again[i].preemptible);
        if (jobs[i].nodes > 1) {
            EXPECT_FALSE(jobs[i].preemptible);
        }
        marked += jobs[i].preemptible;
    }
    EXPECT_NEAR(static_cast<double>(marked) / 9000.0, 0.3, 0.02);
}

TEST(Policy, FourPoliciesAsTopologiesAndSwitches) {
    ClusterShape shape;
    shape.racks = 2;
    auto full = make_policy(PolicyKind::kFullRack, shape, PreemptionMode::kLend);
    EXPECT_EQ(full.slice, 18);
    EXPECT_EQ(full.spares, 0);
    EXPECT_FALSE(full.recovery);
    auto block = make_policy(PolicyKind::kBlock, shape, PreemptionMode::kLend);
    EXPECT_EQ(block.slice, 16);
    EXPECT_EQ(block.spares, 0);
    EXPECT_FALSE(block.recovery);
    auto nvl = make_policy(PolicyKind::kNvlblock, shape, PreemptionMode::kLend);
    EXPECT_EQ(nvl.spares, 2);
    EXPECT_TRUE(nvl.recovery);
    EXPECT_FALSE(nvl.lending);
    EXPECT_FALSE(nvl.preemption);
    auto lend = make_policy(PolicyKind::kNvlblockLend, shape, PreemptionMode::kLend);
    EXPECT_TRUE(lend.lending);
    EXPECT_TRUE(lend.preemption);
    EXPECT_TRUE(make_policy(PolicyKind::kBlock, shape, PreemptionMode::kAll).preemption);
    EXPECT_FALSE(make_policy(PolicyKind::kNvlblockLend, shape, PreemptionMode::kNone).preemption);
    // The topology text goes through the project's own reader.
    const nvlblock::Topology t = build_policy_topology(lend);
    EXPECT_EQ(t.block_count(), 2u);
    EXPECT_EQ(t.node_count(), 36u);
    EXPECT_EQ(t.node_name(0), "gb00001");
    EXPECT_EQ(t.block(1).name, "rack002");
    EXPECT_TRUE(t.block(0).settings.lending);
    EXPECT_EQ(t.policy().recovery.wait_seconds, 300);
    JobSpec small;
    small.preemptible = true;
    EXPECT_TRUE(preemptible_selector(lend, t).matches(small.qos(), ""));
    small.preemptible = false;
    EXPECT_FALSE(preemptible_selector(lend, t).matches(small.qos(), ""));
    // topology/block has no selector of its own: Slurm's preempt/qos stands in.
    small.preemptible = true;
    EXPECT_TRUE(preemptible_selector(block, build_policy_topology(block)).matches(small.qos(), ""));
    EXPECT_EQ(parse_policies("nvlblock,block").size(), 2u);
    EXPECT_THROW(parse_policies("nvlblock,blok"), std::invalid_argument);
}

TEST(Policy, SliceJobsKeepTheirGpuHoursUnderEverySlice) {
    ClusterShape shape;
    JobSpec j;
    j.kind = JobKind::kSlice;
    j.slices = 3;
    j.duration = 3600;
    // 16-node slices: 48 nodes for 3,600 s = 172,800 node-seconds.
    JobShape s16 = shape_for(j, make_policy(PolicyKind::kNvlblock, shape, PreemptionMode::kLend));
    EXPECT_EQ(s16.nodes, 48u);
    EXPECT_EQ(s16.segment, 16u);
    EXPECT_EQ(s16.duration, 3600);
    // Full racks: 54 nodes for 3,600 * 16 / 18 = 3,200 s = the same 172,800 node-seconds.
    JobShape s18 = shape_for(j, make_policy(PolicyKind::kFullRack, shape, PreemptionMode::kLend));
    EXPECT_EQ(s18.nodes, 54u);
    EXPECT_EQ(s18.segment, 18u);
    EXPECT_EQ(s18.duration, 3200);
    EXPECT_EQ(s16.nodes * s16.duration, s18.nodes * s18.duration);
    // Slice 17: 3,600 * 16 / 17 = 3,388.2 -> 3,389 s (rounded up).
    shape.slice = 17;
    shape.spares = 1;
    EXPECT_EQ(shape_for(j, make_policy(PolicyKind::kNvlblock, shape, PreemptionMode::kLend)).duration, 3389);
    // A trace job is the same request everywhere.
    JobSpec t;
    t.nodes = 16;
    t.duration = 500;
    JobShape full = shape_for(t, make_policy(PolicyKind::kFullRack, shape, PreemptionMode::kLend));
    EXPECT_EQ(full.nodes, 16u);
    EXPECT_EQ(full.segment, 0u);
    EXPECT_EQ(full.duration, 500);
    EXPECT_EQ(j.nominal_gpus(), 192u);
}

TEST(Policy, TimeLimitIsTwiceTheRunTimeInWholeMinutes) {
    EXPECT_EQ(time_limit_for(900), 1800);
    EXPECT_EQ(time_limit_for(500), 1020); // 1,000 s -> 17 minutes
    EXPECT_EQ(time_limit_for(1), 60);
}

TEST(Synthetic, ReadsTheSharesAndDrawsSizesInProportion) {
    auto rows = read_shares(kData + "gpu_size_shares_from_acme_figure.csv");
    ASSERT_EQ(rows.size(), 10u);
    EXPECT_EQ(rows[2].trace, "Kalos");
    EXPECT_DOUBLE_EQ(rows[3].ge1024, 35.75);
    SyntheticSpec spec = parse_synthetic("load=0.9,weight=gpu_time,shares=Kalos");
    resolve_synthetic(spec, 128, 0, NVLBLOCK_SOURCE_DIR);
    // Kalos GPU time: 64-127: 98.04-96.48 = 1.56, 128-255: 0.23, 256-511: 32.97,
    // 512-1023: 27.53, >=1024: 35.75; jobs in proportion to share / size.
    const double w[] = {1.56 / 64, 0.23 / 128, 32.97 / 256, 27.53 / 512, 35.75 / 1024};
    double total = 0;
    for (double x : w)
        total += x;
    for (std::size_t i = 0; i < 5; ++i)
        EXPECT_NEAR(spec.bin_p[i], w[i] / total, 1e-9);
    EXPECT_EQ(spec.max_slices, 32u);
    // Drawn sizes follow the probabilities; the GPU time of each bin follows the figure.
    SyntheticWorkload wl(spec, 2304, 1);
    std::map<std::uint32_t, double> gpu_time;
    double all = 0;
    for (int i = 0; i < 20000; ++i) {
        JobSpec j = wl.next_closed(0);
        gpu_time[j.slices] += static_cast<double>(j.slices) * static_cast<double>(j.duration);
        all += static_cast<double>(j.slices) * static_cast<double>(j.duration);
    }
    EXPECT_NEAR(gpu_time[4] / all, 32.97 / 98.04, 0.03);
    EXPECT_NEAR(gpu_time[16] / all, 35.75 / 98.04, 0.03);
}

TEST(Synthetic, ClonesYieldTheSameJobs) {
    SyntheticSpec spec = parse_synthetic("load=0.5,small_load=0.1,hours=48,mean_hours=2");
    resolve_synthetic(spec, 8, 0, NVLBLOCK_SOURCE_DIR);
    SyntheticWorkload a(spec, 144, 9);
    auto b = a.clone();
    std::size_t n = 0, small = 0;
    Seconds last = 0;
    while (auto j = a.next_open()) {
        auto k = b->next_open();
        ASSERT_TRUE(k);
        EXPECT_EQ(j->name, k->name);
        EXPECT_EQ(j->submit, k->submit);
        EXPECT_EQ(j->slices, k->slices);
        EXPECT_EQ(j->duration, k->duration);
        EXPECT_GE(j->submit, last);
        last = j->submit;
        small += j->preemptible;
        ++n;
    }
    EXPECT_FALSE(b->next_open());
    EXPECT_LE(last, 48 * 3600);
    // Small jobs: load 0.1 of 144 nodes for 48 h at 1 h each: about 691.
    EXPECT_NEAR(static_cast<double>(small), 691, 100);
    EXPECT_GT(n, small);
}

TEST(Synthetic, ATraceAndTheMixMergeIntoOneQueue) {
    auto trace = std::make_shared<const std::vector<JobSpec>>(
        std::vector<JobSpec>{{"t1", 0, JobKind::kTrace, 1, 0, 4, 10, false, false},
                             {"t2", 7200, JobKind::kTrace, 2, 0, 4, 10, false, false}});
    SyntheticSpec spec = parse_synthetic("load=0.5,small_load=0,hours=3,mean_hours=1,max_slices=1");
    resolve_synthetic(spec, 4, 0, NVLBLOCK_SOURCE_DIR);
    MergedWorkload merged(std::make_unique<TraceWorkload>(trace, "t"),
                          std::make_unique<SyntheticWorkload>(spec, 72, 3));
    auto copy = merged.clone();
    Seconds last = 0;
    int from_trace = 0, slices = 0;
    while (auto j = merged.next_open()) {
        auto k = copy->next_open();
        ASSERT_TRUE(k);
        EXPECT_EQ(j->name, k->name);
        EXPECT_GE(j->submit, last);
        last = j->submit;
        from_trace += j->kind == JobKind::kTrace;
        slices += j->kind == JobKind::kSlice;
    }
    EXPECT_EQ(from_trace, 2);
    EXPECT_GT(slices, 0);
    EXPECT_EQ(merged.last_open_submit(), 3 * 3600);
}

TEST(Synthetic, SaturatingMixHasAClosedLoop) {
    SyntheticSpec spec = parse_synthetic("load=saturate,queue=5,max_slices=1,small_load=0");
    resolve_synthetic(spec, 4, 3600, NVLBLOCK_SOURCE_DIR);
    SyntheticWorkload w(spec, 72, 1);
    EXPECT_EQ(w.closed_target(), 5);
    EXPECT_FALSE(w.next_open());
    JobSpec j = w.next_closed(77);
    EXPECT_EQ(j.submit, 77);
    EXPECT_EQ(j.slices, 1u);
    EXPECT_TRUE(j.closed_loop);
    EXPECT_THROW(parse_synthetic("load=lots"), ParseError);
    EXPECT_THROW(parse_synthetic("colour=blue"), ParseError);
}

} // namespace
} // namespace nvlblock::sim
