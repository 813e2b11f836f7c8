// SPDX-License-Identifier: GPL-2.0-or-later
//
// Lemons (src/recovery/lemons.hpp, docs/placement.md rule 5a): a node that
// failed under recovery.lemon.failures jobs within its window is taken last
// for replacements and slices; what counts, the window, the operator's
// clear, the reports, and the saved state.
#include "core/planner.hpp"
#include "recovery/lemons.hpp"
#include "recovery_log.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"
#include "writers/status_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <random>

namespace nvlblock {
namespace {

using test::all;
using test::job;
using test::range;
using test::set;

constexpr std::int64_t kDay = 24 * 3600;

bool has(const std::vector<NodeIndex>& v, NodeIndex n) {
    return std::find(v.begin(), v.end(), n) != v.end();
}

TEST(FailureHistory, ANodeIsALemonWhileItsFailuresFitTheWindow) {
    const LemonPolicy policy; // 3 in 7 days
    FailureHistory h;
    EXPECT_TRUE(h.record(5, 1000, policy));
    EXPECT_FALSE(h.record(5, 1000, policy)); // the same failure reported twice
    EXPECT_TRUE(h.record(5, 1000 + kDay, policy));
    EXPECT_TRUE(h.lemons(1000 + kDay, policy).empty());
    EXPECT_TRUE(h.record(5, 1000 + 2 * kDay, policy));
    std::int64_t until = 0;
    EXPECT_EQ(h.lemons(1000 + 2 * kDay, policy, &until), std::vector<NodeIndex>{5});
    // The oldest of the three leaves the window a week after it happened.
    EXPECT_EQ(until, 1000 + 7 * kDay);
    EXPECT_EQ(h.lemons(until - 1, policy), std::vector<NodeIndex>{5});
    EXPECT_TRUE(h.lemons(until, policy).empty());
    EXPECT_EQ(h.failures_within(5, until, policy), 2);
    // A fourth failure keeps only the last three.
    EXPECT_TRUE(h.record(5, 1000 + 3 * kDay, policy));
    EXPECT_EQ(h.nodes().at(5).size(), 3u);
    EXPECT_EQ(h.lemons(1000 + 3 * kDay, policy, &until), std::vector<NodeIndex>{5});
    EXPECT_EQ(until, 1000 + 8 * kDay);
    EXPECT_EQ(h.last_failure(5), 1000 + 3 * kDay);
}

TEST(FailureHistory, OffKeepsNothingAndAClearForgets) {
    FailureHistory h;
    EXPECT_FALSE(h.record(1, 10, LemonPolicy{0, kDay}));
    EXPECT_TRUE(h.empty());
    const LemonPolicy two{2, kDay};
    h.record(1, 10, two);
    h.record(1, 20, two);
    h.record(2, 20, two);
    EXPECT_EQ(h.lemons(30, two), std::vector<NodeIndex>{1});
    EXPECT_TRUE(h.clear(1));
    EXPECT_FALSE(h.clear(1));
    EXPECT_TRUE(h.lemons(30, two).empty());
    // Failures older than the window are forgotten, and nodes left with none.
    EXPECT_FALSE(h.forget_before(19));
    EXPECT_TRUE(h.forget_before(20));
    EXPECT_TRUE(h.empty());
}

// The planner keeps the lemons between decisions by the history's version:
// every change moves it, nothing else does, and two histories never share one.
TEST(FailureHistory, ItsVersionMovesWithEveryChangeAndOnlyThen) {
    const LemonPolicy two{2, kDay};
    FailureHistory h, other;
    EXPECT_NE(h.version(), other.version());
    std::uint64_t v = h.version();
    auto moved = [&] {
        const bool m = h.version() != v;
        v = h.version();
        return m;
    };
    h.record(1, 10, two);
    EXPECT_TRUE(moved());
    h.record(1, 10, two); // the same failure again: no change
    EXPECT_FALSE(moved());
    h.lemons(20, two);
    h.failures_within(1, 20, two);
    EXPECT_FALSE(moved());
    h.forget_before(5); // nothing that old
    EXPECT_FALSE(moved());
    h.forget_before(10);
    EXPECT_TRUE(moved());
    h.record(2, 30, two);
    v = h.version();
    EXPECT_TRUE(h.clear(2));
    EXPECT_TRUE(moved());
    h.replace({{3, {40, 50}}});
    EXPECT_TRUE(moved());
    const FailureHistory copy = h; // the same contents: the same lemons
    EXPECT_EQ(copy.version(), h.version());
}

// lemons() and forget_before() read the history through its indexes (by
// failure count, by oldest failure): after any sequence of changes they
// answer what a pass over every node answers.
TEST(FailureHistory, ItsIndexesAnswerAsAPassOverEveryNode) {
    const LemonPolicy policy{3, 5 * kDay};
    FailureHistory h;
    std::mt19937 rng(11);
    std::int64_t now = 0;
    for (int step = 0; step < 4000; ++step) {
        now += static_cast<std::int64_t>(rng() % 7200);
        const auto node = static_cast<NodeIndex>(rng() % 40);
        switch (rng() % 8) {
        case 0:
            h.clear(node);
            break;
        case 1:
            h.forget_before(now - policy.window_seconds);
            break;
        case 2:
            if (step % 500 == 0)
                h.replace(std::map<NodeIndex, std::vector<std::int64_t>>(h.nodes()));
            break;
        default:
            h.record(node, now - static_cast<std::int64_t>(rng() % 3600), policy);
        }
        std::vector<NodeIndex> want;
        std::int64_t want_until = std::numeric_limits<std::int64_t>::max();
        for (const auto& [n, times] : h.nodes()) {
            std::vector<std::int64_t> in;
            for (std::int64_t t : times)
                if (t > now - policy.window_seconds && t <= now)
                    in.push_back(t);
            if (static_cast<int>(in.size()) < policy.failures)
                continue;
            want.push_back(n);
            want_until = std::min(want_until, in[in.size() - 3] + policy.window_seconds);
        }
        std::int64_t until = 0;
        ASSERT_EQ(h.lemons(now, policy, &until), want) << "step " << step;
        ASSERT_EQ(until, want_until) << "step " << step;
    }
}

// 4 racks of 18 (slice 16, 2 spares), lemon after 3 failures in a week.
struct LemonTest : ::testing::Test {
    Topology topo = test::racks(4);
    Planner planner{topo};
    std::vector<NodeState> s = all(topo);
    std::uint32_t next_job = 500;

    // A 16-node job on `nodes` ends at `at`, requeued by its exit status
    // with `bad` drained (a GPU fault).
    JobEndOutcome gpu_fault(const std::vector<NodeIndex>& nodes, NodeIndex bad, std::int64_t at) {
        JobEnd e;
        e.job_id = next_job++;
        e.facts = kEndBatch | kEndRequeueAllowed | kEndCompleting | kEndExitRequeues;
        e.ended_at = at;
        e.started_at = at - 3600;
        for (NodeIndex n : nodes)
            e.nodes.push_back({n, n == bad ? unsigned{kNodeDrain} : 0u, n == bad ? "gpu-xid-79" : ""});
        return planner.job_ended(e);
    }
    // gb0019 (node 18, the first of rack02) failed under three jobs in two days.
    void make_lemon_of_gb0019() {
        for (int i = 0; i < 3; ++i) {
            gpu_fault(range(18, 33), 18, 1000 + i * kDay);
            planner.job_gone(next_job - 1, 1000 + i * kDay + 1);
        }
        test::log_lines(planner);
    }
};

TEST_F(LemonTest, TheThirdFailureMakesALemonAndSaysSo) {
    gpu_fault(range(18, 33), 18, 1000);
    gpu_fault(range(18, 33), 18, 2000);
    EXPECT_TRUE(planner.lemons(2000).empty());
    test::log_lines(planner);
    gpu_fault(range(18, 33), 18, 3000);
    EXPECT_EQ(planner.lemons(3000), std::vector<NodeIndex>{18});
    std::string log;
    for (const std::string& l : test::log_lines(planner))
        log += l + "\n";
    EXPECT_NE(log.find("nvlblock: recovery gb0019 is a lemon: 3 failures under jobs within 604800 s"),
              std::string::npos)
        << log;
}

TEST_F(LemonTest, ANodeFailureSlurmDidNotRequeueCountsToo) {
    for (int i = 0; i < 3; ++i) {
        JobEnd e;
        e.job_id = next_job++;
        e.facts = kEndBatch | kEndNodeFail | kEndCompleting; // killed by the failure, not requeued
        e.ended_at = 1000 + i;
        for (NodeIndex n : range(18, 33))
            e.nodes.push_back({n, n == 18 ? unsigned{kNodeDown} : 0u, ""});
        EXPECT_EQ(planner.job_ended(e), JobEndOutcome::kNothing);
    }
    EXPECT_EQ(planner.lemons(2000), std::vector<NodeIndex>{18});
}

TEST_F(LemonTest, AnEndWithoutAFailureCountsNothing) {
    // Drained under a job that completed (an operator's drain), three times.
    for (int i = 0; i < 3; ++i) {
        JobEnd e;
        e.job_id = next_job++;
        e.facts = kEndBatch | kEndRequeueAllowed | kEndCompleting;
        e.ended_at = 1000 + i;
        for (NodeIndex n : range(18, 33))
            e.nodes.push_back({n, n == 18 ? unsigned{kNodeDrain} : 0u, "maintenance"});
        EXPECT_EQ(planner.job_ended(e), JobEndOutcome::kNothing);
    }
    EXPECT_TRUE(planner.ledger().node_failures().empty());
}

TEST_F(LemonTest, ARecoveryTakesAnotherFreeSpareBeforeTheLemon) {
    make_lemon_of_gb0019();
    // The lemon is back in service; a 16-node job runs on the rest of rack02
    // (gb0021-gb0036), other racks are busy.
    set(s, range(0, 17), NodeState::kBusy);
    set(s, range(36, 71), NodeState::kBusy);
    const std::vector<NodeIndex> nodes = range(20, 35);
    set(s, nodes, NodeState::kBusy);
    // gb0025 fails under it: it needs one spare, gb0019 (the lemon) or gb0020.
    ASSERT_EQ(gpu_fault(nodes, 24, 10 * kDay / 2), JobEndOutcome::kOpened);
    const std::uint32_t failed_job = next_job - 1;
    set(s, nodes, NodeState::kFree);
    set(s, {24}, NodeState::kDrained);
    const Placement p = planner.place(s, job(failed_job, 16), 10 * kDay / 2 + 200);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_TRUE(has(p.nodes, 19));
    EXPECT_FALSE(has(p.nodes, 18));
    // With gb0020 busy as well, the lemon is the only choice, and taken.
    set(s, {19}, NodeState::kBusy);
    const Placement last = planner.place(s, job(failed_job, 16), 10 * kDay / 2 + 200);
    ASSERT_TRUE(last.placed()) << explain(topo, last);
    EXPECT_TRUE(has(last.nodes, 18));
}

TEST_F(LemonTest, ASliceLeavesTheLemonOutUntilItAgesOrIsCleared) {
    make_lemon_of_gb0019();
    set(s, range(0, 17), NodeState::kBusy); // rack01 busy: rack02 gets the job
    const std::int64_t now = 3 * kDay;
    Placement p = planner.place(s, job(9, 16), now);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_FALSE(has(p.nodes, 18));
    EXPECT_EQ(p.nodes, range(19, 34));
    // A week after its first failure it has two left in the window: packed as before.
    p = planner.place(s, job(9, 16), 1000 + 7 * kDay);
    EXPECT_EQ(p.nodes, range(18, 33));
    // Cleared by an operator: the same at once.
    EXPECT_TRUE(planner.clear_lemon(18));
    EXPECT_FALSE(planner.clear_lemon(18));
    p = planner.place(s, job(9, 16), now);
    EXPECT_EQ(p.nodes, range(18, 33));
    std::string log;
    for (const std::string& l : test::log_lines(planner))
        log += l + "\n";
    EXPECT_EQ(log, "nvlblock: recovery failures of gb0019 cleared by an operator: no longer a lemon\n");
}

TEST_F(LemonTest, ReportsListTheLemon) {
    make_lemon_of_gb0019();
    set(s, {18}, NodeState::kDrained);
    ClusterReport r = make_report(planner, s, 3 * kDay);
    ASSERT_EQ(r.lemons.size(), 1u);
    EXPECT_EQ(r.lemons[0].node, "gb0019");
    EXPECT_EQ(r.lemons[0].block, "rack02");
    EXPECT_EQ(r.lemons[0].failures, 3);
    EXPECT_EQ(r.lemons[0].last_failure, 1000 + 2 * kDay);
    EXPECT_FALSE(r.lemons[0].in_service);
    EXPECT_NE(block_line(r.blocks[1]).find(" Lemons=gb0019"), std::string::npos);
    EXPECT_NE(block_line(r.blocks[0]).find(" Lemons=(null)"), std::string::npos);
    EXPECT_NE(summary_line(r).find(" Lemons=1"), std::string::npos);
    const std::string json = report_json(r);
    const auto lemons = json.find("\n  \"lemons\": [");
    ASSERT_NE(lemons, std::string::npos) << json;
    for (const char* field : {R"("node": "gb0019")", R"("block": "rack02")", R"("failures": 3)",
                              R"("last_failure": 173800)", R"("in_service": false)"})
        EXPECT_NE(json.find(field, lemons), std::string::npos) << field;
    EXPECT_NE(json.find(R"("lemons": "gb0019")"), std::string::npos);
    const std::string prom = report_prometheus(r);
    EXPECT_NE(prom.find("nvlblock_block_lemon_nodes{block=\"rack02\"} 1"), std::string::npos);
    EXPECT_NE(prom.find("nvlblock_lemon_failures{node=\"gb0019\",block=\"rack02\",in_service=\"0\"} 3"),
              std::string::npos);
    // Back in service.
    set(s, {18}, NodeState::kFree);
    EXPECT_TRUE(make_report(planner, s, 3 * kDay).lemons[0].in_service);
}

TEST_F(LemonTest, SavedWithTheStateAfterItsEndLine) {
    make_lemon_of_gb0019();
    const std::string saved = planner.save_state();
    const auto end = saved.find("\nend ");
    ASSERT_NE(end, std::string::npos);
    // After the end line: readers before the lemons stop there.
    const std::string after = saved.substr(saved.find('\n', end + 1) + 1);
    EXPECT_EQ(after, "node-failures gb0019 1000,87400,173800\nend-node-failures 1\n");
    Planner restored{topo};
    restored.load_state(saved, "state");
    EXPECT_EQ(restored.lemons(3 * kDay), std::vector<NodeIndex>{18});
    // A later extension after the end line is skipped; a cut one is refused.
    Planner later{topo};
    EXPECT_NO_THROW(later.load_state(saved + "something-new 1 2 3\n", "state"));
    EXPECT_EQ(later.lemons(3 * kDay), std::vector<NodeIndex>{18});
    Planner cut{topo};
    EXPECT_THROW(cut.load_state(saved.substr(0, saved.size() - std::string("end-node-failures 1\n").size()), "state"),
                 ConfigError);
    EXPECT_THROW(cut.load_state(saved + "node-failures gb0020 12,x\nend-node-failures 2\n", "state"), ConfigError);
}

TEST_F(LemonTest, FailuresOlderThanTheWindowAreForgottenAsTimePasses) {
    make_lemon_of_gb0019();
    const std::uint64_t before = planner.ledger().version();
    planner.observe_health(s, 1000 + 8 * kDay); // the first two are over a week old
    EXPECT_GT(planner.ledger().version(), before);
    EXPECT_EQ(planner.ledger().node_failures().nodes().at(18).size(), 1u);
    planner.observe_health(s, 1000 + 10 * kDay);
    EXPECT_TRUE(planner.ledger().node_failures().empty());
}

TEST(LemonSettings, ReadFromTheRecoverySection) {
    const Topology t = test::racks(1, 18, 16, 2, false, "recovery:\n  lemon:\n    failures: 2\n    window: 2d\n");
    EXPECT_EQ(t.policy().recovery.lemon.failures, 2);
    EXPECT_EQ(t.policy().recovery.lemon.window_seconds, 2 * kDay);
    EXPECT_EQ(test::racks(1).policy().recovery.lemon.failures, 3);
}

} // namespace
} // namespace nvlblock
