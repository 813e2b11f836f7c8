// SPDX-License-Identifier: GPL-2.0-or-later
//
// A run is a function of its inputs and seed: the same output twice, every
// policy sees the same failures, and the reservation shortcut changes no
// decision.
#include "csv_output.hpp"
#include "failure_kinds.hpp"
#include "json_output.hpp"
#include "sim_test_support.hpp"
#include "synthetic.hpp"
#include "trace_reader.hpp"

#include <cstdlib>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

namespace nvlblock::sim {
namespace {

struct Outcome {
    std::string json, csv;
    std::vector<PolicyResult> results;
};

// The results as the JSON and CSV writers give them.
Outcome outcome_of(const RunInfo& info, std::vector<PolicyResult> results) {
    Outcome out;
    out.results = std::move(results);
    out.json = results_json(info, out.results, false);
    std::ostringstream csv;
    write_series_csv(csv, out.results);
    out.csv = csv.str();
    return out;
}

Outcome run_mix(std::uint64_t seed, bool reuse = true, QueueMode queue = QueueMode::kEasy, bool cache = true,
                PreemptionMode preemption = PreemptionMode::kAll, const char* kinds = "down", bool warm = true,
                bool bound = true, bool long_first = true, bool keep_bound = true) {
    RunInfo info;
    info.seed = seed;
    SimOptions& o = info.options;
    o.shape.racks = 8;
    o.queue = queue;
    o.horizon = 4 * 86400;
    o.window_end = o.horizon;
    o.bucket = 3600;
    o.reuse_reservation = reuse;
    o.cache_refusals = cache;
    o.warm_search = warm;
    o.bound_attempts = bound;
    o.long_first = long_first;
    o.keep_bound_refusals = keep_bound;
    o.preemption = preemption;
    SyntheticSpec spec = parse_synthetic("load=1.2,small_load=0.1,mean_hours=3,max_slices=4");
    resolve_synthetic(spec, o.shape.racks, o.horizon, NVLBLOCK_SOURCE_DIR);
    SyntheticWorkload workload(spec, o.shape.nodes(), seed);
    FailureSource failures =
        FailureSource::model(parse_failure_model("mtbi=300h,mttr=10h,rack_mtbf=100h,rack_mttr=6h", 4), o.shape.racks,
                             o.shape.nodes_per_rack, seed);
    o.kinds = parse_failure_kinds(kinds, 4, FailureKindSpec{});
    o.seed = seed;
    failures.set_kinds(o.kinds, seed);
    std::vector<PolicyResult> results;
    for (PolicyKind k : {PolicyKind::kFullRack, PolicyKind::kBlock, PolicyKind::kNvlblock, PolicyKind::kNvlblockLend}) {
        Simulator sim(o, make_policy(k, o.shape, o.preemption), workload.clone(), failures);
        results.push_back(sim.run());
    }
    return outcome_of(info, std::move(results));
}

TEST(Determinism, SameSeedSameOutput) {
    const Outcome a = run_mix(11), b = run_mix(11);
    EXPECT_TRUE(a.json == b.json);
    EXPECT_TRUE(a.csv == b.csv);
    EXPECT_FALSE(a.json == run_mix(12).json);
}

TEST(Determinism, EveryPolicySeesTheSameFailures) {
    const Outcome a = run_mix(5);
    ASSERT_EQ(a.results.size(), 4u);
    EXPECT_GT(a.results[0].node_failures, 0u);
    EXPECT_GT(a.results[0].rack_faults, 0u);
    for (const auto& r : a.results) {
        EXPECT_EQ(r.node_failures, a.results[0].node_failures);
        EXPECT_EQ(r.rack_faults, a.results[0].rack_faults);
        EXPECT_DOUBLE_EQ(r.healthy_gpu_hours, a.results[0].healthy_gpu_hours);
    }
}

TEST(Determinism, KeepingAReservationChangesNoDecision) {
    // The scheduler keeps a backfill reservation across passes only when a new
    // search would provably find the same one; recomputing every time must give
    // exactly the same run.
    const char* env = std::getenv("NVLBLOCK_SIM_SEEDS"); // more seeds on request
    const int seeds = env ? std::atoi(env) : 3;
    for (PreemptionMode pm : {PreemptionMode::kAll, PreemptionMode::kLend})
        for (std::uint64_t seed = 3; seed < 3 + static_cast<std::uint64_t>(seeds); ++seed) {
            const Outcome kept = run_mix(seed, true, QueueMode::kEasy, true, pm),
                          fresh = run_mix(seed, false, QueueMode::kEasy, true, pm);
            EXPECT_TRUE(kept.csv == fresh.csv) << "seed " << seed << ": the time series differ";
            for (std::size_t i = 0; i < kept.results.size(); ++i) {
                EXPECT_EQ(kept.results[i].jobs_started, fresh.results[i].jobs_started);
                EXPECT_DOUBLE_EQ(kept.results[i].useful_gpu_hours, fresh.results[i].useful_gpu_hours);
                EXPECT_LE(kept.results[i].reservations, fresh.results[i].reservations);
            }
        }
}

// A shortcut that only spares decisions, against the same runs without it
// (`without`): the same time series, starts, work and reservations, and
// fewer decisions asked, on three seeds (NVLBLOCK_SIM_SEEDS: more) and both
// preemption modes.
template <class Without>
void expect_only_decisions_spared(const char* shortcut, Without without) {
    const char* env = std::getenv("NVLBLOCK_SIM_SEEDS");
    const int seeds = env ? std::atoi(env) : 3;
    for (PreemptionMode pm : {PreemptionMode::kAll, PreemptionMode::kLend})
        for (std::uint64_t seed = 3; seed < 3 + static_cast<std::uint64_t>(seeds); ++seed) {
            const Outcome with = run_mix(seed, true, QueueMode::kEasy, true, pm), plain = without(seed, pm);
            EXPECT_TRUE(with.csv == plain.csv) << shortcut << ", seed " << seed << ": the time series differ";
            std::uint64_t calls_with = 0, calls_plain = 0;
            for (std::size_t i = 0; i < with.results.size(); ++i) {
                EXPECT_EQ(with.results[i].jobs_started, plain.results[i].jobs_started);
                EXPECT_DOUBLE_EQ(with.results[i].useful_gpu_hours, plain.results[i].useful_gpu_hours);
                EXPECT_EQ(with.results[i].reservations, plain.results[i].reservations);
                calls_with += with.results[i].place_calls;
                calls_plain += plain.results[i].place_calls;
            }
            EXPECT_LT(calls_with, calls_plain) << shortcut << ", seed " << seed << ": no decision spared";
        }
}

TEST(Determinism, StartingTheSearchAtTheLastReservedTimeChangesNoDecision) {
    // A head job's new reservation search starts where its last one ended;
    // searching from the fewest jobs whose nodes suffice must give exactly
    // the same run, with more decisions asked.
    expect_only_decisions_spared("the warm search", [](std::uint64_t seed, PreemptionMode pm) {
        return run_mix(seed, true, QueueMode::kEasy, true, pm, "down", false);
    });
}

TEST(Determinism, SkippingAttemptsTheRoomBoundRulesOutChangesNoDecision) {
    // A start attempt that the planner's room bound rules out is not asked;
    // asking every one must give exactly the same run.
    expect_only_decisions_spared("the room bound", [](std::uint64_t seed, PreemptionMode pm) {
        return run_mix(seed, true, QueueMode::kEasy, true, pm, "down", true, false);
    });
}

TEST(Determinism, AskingLongJobsWithoutTheReservedNodesFirstChangesNoDecision) {
    // A long backfill candidate is asked without the reserved nodes before
    // its start attempt; asking the start attempt first must give exactly
    // the same run.
    expect_only_decisions_spared("long jobs first", [](std::uint64_t seed, PreemptionMode pm) {
        return run_mix(seed, true, QueueMode::kEasy, true, pm, "down", true, true, false);
    });
}

TEST(Determinism, KeepingTheBoundsRefusalsUntilEnoughNodesAreFreedChangesNoDecision) {
    // A shape the room bound ruled out some nodes short is not asked again
    // until jobs ending freed that many (or something else changed); asking
    // it again at every epoch must give exactly the same run, with more
    // questions to the bound.
    // (Under PreemptionMode::kLend these mixes' refusals are mostly the
    // decision's, not the bound's: fewer questions over all runs is asked.)
    const char* env = std::getenv("NVLBLOCK_SIM_SEEDS");
    const int seeds = env ? std::atoi(env) : 3;
    std::uint64_t bound_kept = 0, bound_asked = 0;
    for (PreemptionMode pm : {PreemptionMode::kAll, PreemptionMode::kLend})
        for (std::uint64_t seed = 3; seed < 3 + static_cast<std::uint64_t>(seeds); ++seed) {
            const Outcome kept = run_mix(seed, true, QueueMode::kEasy, true, pm),
                          asked = run_mix(seed, true, QueueMode::kEasy, true, pm, "down", true, true, true, false);
            EXPECT_TRUE(kept.json == asked.json) << "seed " << seed << ": the results differ";
            EXPECT_TRUE(kept.csv == asked.csv) << "seed " << seed << ": the time series differ";
            for (std::size_t i = 0; i < kept.results.size(); ++i) {
                EXPECT_LE(kept.results[i].bound_calls, asked.results[i].bound_calls) << "seed " << seed;
                bound_kept += kept.results[i].bound_calls;
                bound_asked += asked.results[i].bound_calls;
            }
        }
    EXPECT_LT(bound_kept, bound_asked) << "no question to the bound spared";
}

TEST(Determinism, RememberingRefusalsChangesNoDecision) {
    // A refusal is remembered until something frees capacity (the epoch);
    // asking the Planner every time must give exactly the same run.
    const char* env = std::getenv("NVLBLOCK_SIM_SEEDS");
    const std::uint64_t seeds = env ? static_cast<std::uint64_t>(std::atoi(env)) : 2;
    for (QueueMode q : {QueueMode::kEasy, QueueMode::kFifo})
        for (std::uint64_t seed = 6; seed < 6 + seeds; ++seed) {
            const Outcome cached = run_mix(seed, true, q, true), asked = run_mix(seed, false, q, false);
            EXPECT_TRUE(cached.csv == asked.csv) << "seed " << seed << ": the time series differ";
            std::uint64_t calls_cached = 0, calls_asked = 0;
            for (std::size_t i = 0; i < cached.results.size(); ++i) {
                EXPECT_EQ(cached.results[i].jobs_started, asked.results[i].jobs_started);
                EXPECT_LE(cached.results[i].place_calls, asked.results[i].place_calls);
                calls_cached += cached.results[i].place_calls;
                calls_asked += asked.results[i].place_calls;
            }
            EXPECT_LT(calls_cached, calls_asked);
        }
}

// philly_small36.csv on 2 racks, a fifth of its 1-node jobs preemptible
// and Slurm's preemption on, Llama-3-like failures, the nvlblock policy:
// remembered refusals (`cache`) or asked every time.
Outcome run_philly_preempting(std::uint64_t seed, bool cache) {
    RunInfo info;
    info.seed = seed;
    SimOptions& o = info.options;
    o.shape.racks = 2;
    o.preemption = PreemptionMode::kAll;
    o.window_end = 60 * 86400;
    o.cache_refusals = cache;
    o.seed = seed;
    std::vector<JobSpec> rows = read_trace(std::string(NVLBLOCK_SOURCE_DIR) + "/data/traces/philly_small36.csv", {});
    mark_preemptible(rows, 0.2, 1, seed);
    auto jobs = std::make_shared<const std::vector<JobSpec>>(std::move(rows));
    FailureSource failures =
        make_failure_source("llama3", o.shape.racks, o.shape.nodes_per_rack, o.shape.gpus_per_node, seed);
    o.kinds = default_failure_kinds("llama3", o.shape.gpus_per_node);
    failures.set_kinds(o.kinds, seed);
    Simulator sim(o, make_policy(PolicyKind::kNvlblock, o.shape, o.preemption),
                  std::make_unique<TraceWorkload>(jobs, "philly_small36"), failures);
    return outcome_of(info, {sim.run()});
}

TEST(Determinism, RememberingALongJobsRefusalChangesNoDecisionWithPreemption) {
    // A long backfill candidate refused where the head job's question
    // failed is not remembered: once later starts fill the free nodes the
    // same shape is placed on preemptible work and leaves the head job its
    // place (this run differed from asking every time while it was).
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        const Outcome cached = run_philly_preempting(seed, true), asked = run_philly_preempting(seed, false);
        EXPECT_TRUE(cached.json == asked.json) << "seed " << seed << ": the results differ";
        EXPECT_TRUE(cached.csv == asked.csv) << "seed " << seed << ": the time series differ";
        EXPECT_EQ(cached.results[0].jobs_started, asked.results[0].jobs_started) << "seed " << seed;
    }
}

// An HPC-like queue on 8 racks: jobs of 1 to 40 nodes, up to hours long,
// offered at about twice the cluster for 8 days, so that the backfill walks
// a queue behind a head job's reservation, which later starts move within
// one epoch.
Outcome run_deep_queue(std::uint64_t seed, bool cache) {
    RunInfo info;
    info.seed = seed;
    SimOptions& o = info.options;
    o.shape.racks = 8;
    o.window_end = 10 * 86400;
    o.cache_refusals = cache;
    o.seed = seed;
    Rng rng(seed);
    std::vector<JobSpec> rows;
    Seconds t = 0;
    for (int i = 0; t < 8 * 86400; ++i) {
        JobSpec j;
        j.name = std::to_string(i + 1);
        t += static_cast<Seconds>(rng.uniform() * 600);
        j.submit = t;
        j.nodes = rng.uniform() < 0.5 ? 1 : 1 + static_cast<std::uint32_t>(rng.uniform() * 40);
        j.duration = 600 + static_cast<Seconds>(rng.uniform() * 4 * 3600);
        rows.push_back(j);
    }
    auto jobs = std::make_shared<const std::vector<JobSpec>>(std::move(rows));
    FailureSource failures =
        make_failure_source("llama3", o.shape.racks, o.shape.nodes_per_rack, o.shape.gpus_per_node, seed);
    std::vector<PolicyResult> results;
    for (PolicyKind k : {PolicyKind::kBlock, PolicyKind::kNvlblock}) {
        Simulator sim(o, make_policy(k, o.shape, o.preemption), std::make_unique<TraceWorkload>(jobs, "deep"),
                      failures);
        results.push_back(sim.run());
    }
    return outcome_of(info, std::move(results));
}

TEST(Determinism, RememberingRefusalsChangesNoDecisionOnADeepMultiNodeQueue) {
    // The synthetic mixes above are slices of one size class; here most
    // refusals are of jobs of other sizes behind a reservation that later
    // starts move within one epoch (a walk that skipped long jobs refused
    // beside an older reservation gave other results here).
    for (std::uint64_t seed = 1; seed <= 2; ++seed) {
        const Outcome cached = run_deep_queue(seed, true), asked = run_deep_queue(seed, false);
        // Every figure but the count of decisions asked.
        const std::regex calls("\"place_calls\": [0-9]+");
        EXPECT_TRUE(std::regex_replace(cached.json, calls, "") == std::regex_replace(asked.json, calls, ""))
            << "seed " << seed << ": the results differ";
        EXPECT_TRUE(cached.csv == asked.csv) << "seed " << seed << ": the time series differ";
    }
}

TEST(Determinism, FailureKindsKeepEveryShortcutExact) {
    // Faults with the node up change the cluster through other events
    // (Epilogs ending, drains, watches opening and ending): each must move
    // the epoch that remembered refusals and kept reservations rely on.
    // Asking afresh every time must give exactly the same run.
    for (const char* kinds : {"llama3", "up,epilog=0,requeue=0.8", "up,epilog=off,periodic=10m"}) {
        const Outcome shortcut = run_mix(9, true, QueueMode::kEasy, true, PreemptionMode::kAll, kinds);
        const Outcome fresh = run_mix(9, false, QueueMode::kEasy, false, PreemptionMode::kAll, kinds);
        EXPECT_TRUE(shortcut.csv == fresh.csv) << kinds << ": the time series differ";
        std::uint64_t fault_ends = 0;
        for (std::size_t i = 0; i < shortcut.results.size(); ++i) {
            EXPECT_EQ(shortcut.results[i].jobs_started, fresh.results[i].jobs_started) << kinds;
            EXPECT_DOUBLE_EQ(shortcut.results[i].useful_gpu_hours, fresh.results[i].useful_gpu_hours)
                << kinds << " " << policy_name(shortcut.results[i].policy.kind);
            fault_ends += shortcut.results[i].fault_ends;
        }
        EXPECT_GT(fault_ends, 0u) << kinds;
        EXPECT_TRUE(shortcut.json == run_mix(9, true, QueueMode::kEasy, true, PreemptionMode::kAll, kinds).json);
    }
}

TEST(Determinism, FifoNeverStartsAJobAheadOfABlockedOne) {
    // Under FIFO nothing overtakes: first starts are in submit order.
    SimOptions o = test::two_racks(QueueMode::kFifo);
    std::vector<JobSpec> jobs;
    for (int i = 0; i < 30; ++i)
        jobs.push_back(test::job("j", i * 10, 1 + (i * 7) % 16, 200 + (i * 37) % 300));
    SimHooks hooks;
    std::vector<std::uint32_t> started;
    hooks.on_job_started = [&](std::uint32_t id, const std::vector<nvlblock::NodeIndex>&, Seconds) {
        started.push_back(id);
    };
    auto shared = std::make_shared<const std::vector<JobSpec>>(jobs);
    Simulator sim(o, make_policy(PolicyKind::kNvlblock, o.shape, o.preemption),
                  std::make_unique<TraceWorkload>(shared, "t"), FailureSource::none(), hooks);
    sim.run();
    ASSERT_EQ(started.size(), 30u);
    for (std::size_t i = 1; i < started.size(); ++i)
        EXPECT_LT(started[i - 1], started[i]);
}

} // namespace
} // namespace nvlblock::sim
