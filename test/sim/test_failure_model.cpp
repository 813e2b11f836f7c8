// SPDX-License-Identifier: GPL-2.0-or-later
//
// The failure model: its syntax, its rates over a long run, determinism for a
// seed (every policy replays the same schedule), the stationary start, the
// Llama 3 preset against the data file, and failure traces.
#include "csv.hpp"
#include "failure_model.hpp"
#include "units.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <queue>
#include <unistd.h>

namespace nvlblock::sim {
namespace {

TEST(FailureModel, ParsesKeysAndUnits) {
    FailureModelSpec s = parse_failure_model("mtbi=980h,mttr=20h,rack_mtbf=5000h,rack_mttr=8h", 4);
    EXPECT_DOUBLE_EQ(s.node_mtbi_s, 980 * 3600.0);
    EXPECT_DOUBLE_EQ(s.node_mttr_s, 20 * 3600.0);
    EXPECT_DOUBLE_EQ(s.rack_mtbf_s, 5000 * 3600.0);
    EXPECT_DOUBLE_EQ(s.rack_mttr_s, 8 * 3600.0);
    EXPECT_NEAR(s.node_unavailability(), 0.02, 1e-12);
    // Bare numbers are hours; s, m, d work too.
    s = parse_failure_model("mtbi=40d,mttr=90m", 4);
    EXPECT_DOUBLE_EQ(s.node_mtbi_s, 40 * 86400.0);
    EXPECT_DOUBLE_EQ(s.node_mttr_s, 5400.0);
    EXPECT_DOUBLE_EQ(parse_failure_model("mtbi=10", 4).node_mtbi_s, 36000.0);
}

// Durations in the tables and messages: three significant digits, whole
// days from 1,000 days on (the 3-year safety stop read "1.1e+03d").
TEST(Units, DurationsAreWrittenInTheirLargestUnit) {
    EXPECT_EQ(format_duration(45), "45s");
    EXPECT_EQ(format_duration(5400), "1.5h");
    EXPECT_EQ(format_duration(40 * 86400.0), "40d");
    EXPECT_EQ(format_duration(3 * 365 * 86400.0), "1095d");
}

TEST(FailureModel, UnavailabilitySetsTheMtbiFromTheMttr) {
    // p = MTTR / (MTBI + MTTR) = 0.02 with MTTR 20 h: MTBI = 20 * 0.98 / 0.02 = 980 h.
    FailureModelSpec s = parse_failure_model("p=2%,mttr=20h", 4);
    EXPECT_NEAR(s.node_mtbi_s, 980 * 3600.0, 1e-6);
    s = parse_failure_model("mttr=10h,p=0.05", 4);
    EXPECT_NEAR(s.node_mtbi_s, 190 * 3600.0, 1e-6);
}

TEST(FailureModel, RejectsUnknownKeysAndBadValues) {
    EXPECT_THROW(parse_failure_model("mtbf=10h", 4), ParseError);
    EXPECT_THROW(parse_failure_model("mtbi=ten", 4), ParseError);
    EXPECT_THROW(parse_failure_model("p=1.5", 4), ParseError);
    EXPECT_THROW(parse_failure_model("weekly", 4), ParseError);
}

TEST(FailureModel, Llama3PresetMatchesTheInterruptionTable) {
    // 419 interruptions in 54 days on 16,384 GPUs (2,048 hosts of 8):
    // 3.79 per 1,000 host-days, i.e. a host MTBI of 1000/3.789 days.
    const double host_h = llama3_node_mtbi_hours(8);
    EXPECT_NEAR(24.0 / host_h * 1000.0, 419.0 / (2048 * 54) * 1000.0, 1e-9);
    EXPECT_NEAR(24.0 / host_h * 1000.0, 3.789, 0.001);
    // 4-GPU nodes: the 268 GPU interruptions scale with GPUs, the other 151 per host:
    // 268 / (16384 * 54) * 4 + 151 / (2048 * 54) = 0.0025771 per node-day -> 9,312.7 h.
    EXPECT_NEAR(llama3_node_mtbi_hours(4), 9312.7, 0.5);
    const Llama3Table file =
        read_llama3_table(std::string(NVLBLOCK_SOURCE_DIR) + "/data/traces/llama3_interruptions.csv");
    EXPECT_EQ(file.gpu_interruptions, Llama3Table{}.gpu_interruptions);
    EXPECT_EQ(file.other_interruptions, Llama3Table{}.other_interruptions);
    const FailureModelSpec s = parse_failure_model("llama3", 4);
    EXPECT_NEAR(s.node_mtbi_s / 3600.0, 9312.7, 0.5);
    EXPECT_DOUBLE_EQ(s.node_mttr_s, 24 * 3600.0);
    EXPECT_DOUBLE_EQ(parse_failure_model("mttr=8h,llama3", 4).node_mttr_s, 8 * 3600.0);
}

// Runs a source for `horizon` seconds and returns every event in order.
std::vector<FailureEvent> run_source(FailureSource src, Seconds horizon) {
    auto later = [](const FailureEvent& a, const FailureEvent& b) {
        return a.at != b.at ? a.at > b.at : a.process > b.process;
    };
    std::priority_queue<FailureEvent, std::vector<FailureEvent>, decltype(later)> q(later);
    for (const auto& e : src.initial())
        q.push(e);
    std::vector<FailureEvent> out;
    while (!q.empty() && q.top().at < horizon) {
        FailureEvent e = q.top();
        q.pop();
        out.push_back(e);
        if (auto n = src.follow(e))
            q.push(*n);
    }
    return out;
}

TEST(FailureModel, RatesMatchTheModelOverALongRun) {
    // 64 racks x 18 nodes, MTBI 980 h, MTTR 20 h, rack faults every 5,000 h for 8 h,
    // over 4 years: about 1,152 * 35,040 / 1,000 = 40,000 node failures.
    FailureModelSpec spec = parse_failure_model("mtbi=980h,mttr=20h,rack_mtbf=5000h,rack_mttr=8h", 4);
    const Seconds horizon = 4 * 8760 * 3600LL;
    auto events = run_source(FailureSource::model(spec, 64, 18, 7), horizon);
    double node_down_s = 0, rack_down_s = 0;
    std::size_t node_failures = 0, rack_faults = 0;
    std::map<std::uint32_t, Seconds> down_since;
    for (const auto& e : events) {
        const std::uint32_t key = e.process;
        if (e.down) {
            down_since[key] = e.at;
            if (!e.initial)
                ++(e.rack ? rack_faults : node_failures);
        } else {
            (e.rack ? rack_down_s : node_down_s) += static_cast<double>(e.at - down_since[key]);
            down_since.erase(key);
        }
    }
    for (const auto& [key, since] : down_since)
        (key >= 64 * 18 ? rack_down_s : node_down_s) += static_cast<double>(horizon - since);
    const double node_time = 64.0 * 18 * static_cast<double>(horizon);
    const double rack_time = 64.0 * static_cast<double>(horizon);
    EXPECT_NEAR(node_down_s / node_time, 0.02, 0.001);               // unavailability p = 20 / 1000
    EXPECT_NEAR(rack_down_s / rack_time, 8.0 / 5008.0, 0.0004);      // rack unavailability
    const double expected = node_time * (1 - 0.02) / (980 * 3600.0); // failures while up
    EXPECT_NEAR(static_cast<double>(node_failures) / expected, 1.0, 0.03);
    const double expected_racks = rack_time / (5008 * 3600.0);
    EXPECT_NEAR(static_cast<double>(rack_faults) / expected_racks, 1.0, 0.15);
}

TEST(FailureModel, StartsInTheStationaryState) {
    // With p = 5%, about 5% of 9,000 nodes are down at time 0 (binomial sd 0.23%).
    FailureModelSpec spec = parse_failure_model("p=5%,mttr=10h", 4);
    FailureSource src = FailureSource::model(spec, 500, 18, 3);
    std::size_t down = 0;
    for (const auto& e : src.initial())
        down += e.at == 0 && e.initial;
    EXPECT_NEAR(static_cast<double>(down) / 9000.0, 0.05, 0.01);
}

TEST(FailureModel, SameSeedSameScheduleOtherSeedAnother) {
    FailureModelSpec spec = parse_failure_model("mtbi=500h,mttr=20h,rack_mtbf=2000h,rack_mttr=8h", 4);
    FailureSource a = FailureSource::model(spec, 8, 18, 42);
    FailureSource copy = a; // what each policy of a run gets
    auto ea = run_source(a, 365 * 86400LL), eb = run_source(FailureSource::model(spec, 8, 18, 42), 365 * 86400LL);
    auto ec = run_source(copy, 365 * 86400LL);
    auto ed = run_source(FailureSource::model(spec, 8, 18, 43), 365 * 86400LL);
    ASSERT_EQ(ea.size(), eb.size());
    ASSERT_EQ(ea.size(), ec.size());
    bool differs = ea.size() != ed.size();
    for (std::size_t i = 0; i < ea.size(); ++i) {
        EXPECT_EQ(ea[i].at, eb[i].at);
        EXPECT_EQ(ea[i].target, eb[i].target);
        EXPECT_EQ(ea[i].at, ec[i].at);
        if (i < ed.size())
            differs = differs || ea[i].at != ed[i].at;
    }
    EXPECT_TRUE(differs);
    // A node's schedule does not depend on how big the cluster is: node 3 of 8 racks = node 3 of 16 racks.
    auto small =
        run_source(FailureSource::model(parse_failure_model("mtbi=500h,mttr=20h", 4), 8, 18, 9), 86400LL * 365);
    auto big = run_source(FailureSource::model(parse_failure_model("mtbi=500h,mttr=20h", 4), 16, 18, 9), 86400LL * 365);
    std::vector<Seconds> s3, b3;
    for (const auto& e : small)
        if (e.target == 3)
            s3.push_back(e.at);
    for (const auto& e : big)
        if (e.target == 3)
            b3.push_back(e.at);
    EXPECT_EQ(s3, b3);
}

TEST(FailureModel, ReadsATraceAndMergesNothingItShouldNot) {
    const std::string path = "/tmp/nvlblock-sim-failures-test-" + std::to_string(::getpid()) + ".csv";
    std::ofstream(path) << "node_id,down_s,up_s,cause\n3,100,200,gpu\n3,150,400,psu\n# comment\n7,50,\n";
    auto iv = read_failure_trace(path, 36);
    ASSERT_EQ(iv.size(), 3u);
    EXPECT_EQ(iv[0].node, 3u);
    EXPECT_EQ(iv[1].up, 400);
    EXPECT_EQ(iv[2].up, kNever);
    FailureSource src = FailureSource::trace(iv);
    auto ev = run_source(src, kNever - 1);
    // Causes: down 7@50, down 3@100, down 3@150, up 3@200, up 3@400 (node 7 never returns).
    ASSERT_EQ(ev.size(), 5u);
    EXPECT_EQ(ev[0].at, 50);
    EXPECT_EQ(ev[3].at, 200);
    EXPECT_FALSE(ev[3].down);
    std::ofstream(path) << "node_id,down_s,up_s\n36,1,2\n";
    EXPECT_THROW(read_failure_trace(path, 36), CsvError);
    std::ofstream(path) << "node_id,down_s,up_s\n1,5,5\n";
    EXPECT_THROW(read_failure_trace(path, 36), CsvError);
    std::remove(path.c_str());
}

} // namespace
} // namespace nvlblock::sim
