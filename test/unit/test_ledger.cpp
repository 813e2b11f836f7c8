// SPDX-License-Identifier: GPL-2.0-or-later
//
// The recovery ledger (records, claims, outcomes, log lines, persistence,
// remapping across reconfigures) and the atomic file helpers it is saved with.
#include "core/planner.hpp"
#include "recovery/ledger.hpp"
#include "recovery/recovery.hpp"
#include "recovery/rules.hpp"
#include "recovery_log.hpp"
#include "state/atomic_file.hpp"
#include "state/ledger_file.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace nvlblock {
namespace {

using test::range;
using test::TempDir;

// rack01 = gb0001..gb0018 (0..17), rack02 = gb0019..gb0036 (18..35), and
// login1 (36), a node of slurm.conf outside every block.
Topology cluster(std::int64_t wait = 300) {
    std::vector<std::string> universe;
    for (int i = 1; i <= 36; ++i) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "gb%04d", i);
        universe.push_back(buf);
    }
    universe.push_back("login1");
    return test::yaml_topology("defaults:\n  reserve: idle\nrecovery:\n  wait: " + std::to_string(wait) +
                                   "\nblocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n"
                                   "  - name: rack02\n    nodes: gb[0019-0036]\n",
                               &universe);
}

std::vector<NodeIndex> with(std::vector<NodeIndex> v, std::initializer_list<NodeIndex> more) {
    v.insert(v.end(), more);
    return v;
}

std::vector<NodeIndex> without(std::vector<NodeIndex> v, std::initializer_list<NodeIndex> less) {
    std::erase_if(v, [&](NodeIndex n) { return std::find(less.begin(), less.end(), n) != less.end(); });
    return v;
}

ConfigError load_error(const Topology& t, const std::string& text) {
    Ledger l;
    try {
        load_ledger_state(l, t, text, "state");
    } catch (const ConfigError& e) {
        return e;
    }
    ADD_FAILURE() << "no ConfigError for:\n" << text;
    return ConfigError({"", 0}, "");
}

class LedgerTest : public ::testing::Test {
  protected:
    Topology topo = cluster();
    Recovery recovery;
    Ledger& ledger = recovery.ledger();
    const std::vector<NodeIndex> job = range(0, 15); // 16 nodes of rack01

    // The log lines noted since the last call (every note here is made on
    // nodes `topo` names the same way).
    std::vector<std::string> log() { return test::log_lines(ledger, topo); }

    // A node failure requeued `id`: with recovery.wait `wait` and nodes held
    // at least `hold` s (Slurm's requeue delay + the scheduling slack).
    void fail(std::uint32_t id, const std::vector<NodeIndex>& nodes, const std::vector<NodeIndex>& failed,
              std::int64_t now, std::int64_t wait, std::int64_t hold) {
        recovery.set_slurm_requeue_delay(hold - kRequeueSchedulingSlack);
        recovery.job_failed(wait == topo.policy().recovery.wait_seconds ? topo : cluster(wait), id, nodes, failed, now);
    }
};

TEST_F(LedgerTest, JobFailedCreatesARecord) {
    const std::vector<NodeIndex> failed = {3};
    fail(7, job, failed, 1000, 300, 130);
    const RecoveryRecord* r = ledger.find(7);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->job_id, 7u);
    EXPECT_EQ(r->nodes, job);
    EXPECT_EQ(r->failed, failed);
    EXPECT_EQ(r->failed_at, 1000);
    EXPECT_EQ(r->fallback_at, 1300);
    EXPECT_EQ(r->hold_until, 1300); // the wait is longer than the requeue delay
    EXPECT_FALSE(r->fallback);
    EXPECT_FALSE(ledger.empty());
    EXPECT_EQ(ledger.records().size(), 1u);
    EXPECT_EQ(ledger.counters().failures, 1u);
    EXPECT_EQ(ledger.counters().in_place, 0u);
    EXPECT_EQ(log(),
              std::vector<std::string>{"nvlblock: recovery JobId=7 lost 1 of 16 nodes (gb0004) on rack01; holding "
                                       "rack01 for an in-place restart (15 prior nodes + 1 spares), fallback after "
                                       "300 s"});
}

TEST_F(LedgerTest, HoldLastsAtLeastTheRequeueDelay) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 60, 130);
    EXPECT_EQ(ledger.find(7)->fallback_at, 1060);
    EXPECT_EQ(ledger.find(7)->hold_until, 1130);
}

TEST_F(LedgerTest, NodesOutsideBlocksAreIgnored) {
    const auto nodes = with(job, {36});
    fail(7, nodes, std::vector<NodeIndex>{36, 5}, 1000, 300, 0);
    ASSERT_NE(ledger.find(7), nullptr);
    EXPECT_EQ(ledger.find(7)->nodes, job);
    EXPECT_EQ(ledger.find(7)->failed, std::vector<NodeIndex>{5});
}

TEST_F(LedgerTest, NoRecordWhenNothingOfOursFailed) {
    // Only the login node failed.
    fail(7, with(job, {36}), std::vector<NodeIndex>{36}, 1000, 300, 0);
    // Nothing failed at all.
    fail(8, job, std::vector<NodeIndex>{}, 1000, 300, 0);
    // The failed node was not the job's.
    fail(9, job, std::vector<NodeIndex>{17}, 1000, 300, 0);
    // A job entirely outside the blocks.
    fail(10, std::vector<NodeIndex>{36}, std::vector<NodeIndex>{36}, 1000, 300, 0);
    // A single-node job restarts anywhere: it needs no NVLink domain.
    fail(12, std::vector<NodeIndex>{4}, std::vector<NodeIndex>{4}, 1000, 300, 0);
    // Out-of-range indices are not ours either.
    fail(11, std::vector<NodeIndex>{999}, std::vector<NodeIndex>{999}, 1000, 300, 0);
    EXPECT_TRUE(ledger.empty());
    EXPECT_EQ(ledger.counters().failures, 0u);
    EXPECT_TRUE(log().empty());
}

TEST_F(LedgerTest, RepeatedFailedNodeCountsOnce) {
    fail(7, job, std::vector<NodeIndex>{3, 3, 4}, 1000, 300, 0);
    EXPECT_EQ(ledger.find(7)->failed, (std::vector<NodeIndex>{3, 4}));
}

TEST_F(LedgerTest, ClaimPerBlock) {
    // 8 nodes on each rack; one lost on rack01, two on rack02.
    const auto nodes = with(range(10, 17), {18, 19, 20, 21, 22, 23, 24, 25});
    fail(42, nodes, std::vector<NodeIndex>{12, 20, 21}, 500, 300, 0);
    const RecoveryClaim c = claim_for(topo, *ledger.find(42), {});
    EXPECT_EQ(c.job_id, 42u);
    EXPECT_EQ(c.deadline, 800);
    EXPECT_EQ(c.total_need(), 16u);
    ASSERT_EQ(c.blocks.size(), 2u);
    EXPECT_EQ(c.blocks[0].block, 0);
    EXPECT_EQ(c.blocks[0].need, 8u);
    EXPECT_EQ(c.blocks[0].lost, 1u);
    EXPECT_EQ(c.blocks[0].prior_healthy, (std::vector<NodeIndex>{10, 11, 13, 14, 15, 16, 17}));
    EXPECT_EQ(c.blocks[1].block, 1);
    EXPECT_EQ(c.blocks[1].need, 8u);
    EXPECT_EQ(c.blocks[1].lost, 2u);
    EXPECT_EQ(c.blocks[1].prior_healthy, (std::vector<NodeIndex>{18, 19, 22, 23, 24, 25}));
    const std::string line = log().at(0);
    EXPECT_EQ(line, "nvlblock: recovery JobId=42 lost 3 of 16 nodes (gb[0013,0021-0022]) on rack01,rack02; "
                    "holding "
                    "rack01,rack02 for an in-place restart (13 prior nodes + 3 spares), fallback after 300 s");
}

TEST_F(LedgerTest, ActiveClaimsRespectHoldAndFallback) {
    fail(1, job, std::vector<NodeIndex>{0}, 1000, 300, 0);
    fail(2, range(18, 33), std::vector<NodeIndex>{18}, 1100, 300, 0);
    EXPECT_EQ(recovery.active_claims(topo, {}, 1000).size(), 2u);
    EXPECT_EQ(recovery.active_claims(topo, {}, 1299).size(), 2u);
    // Job 1's hold ends at 1300 (exclusive), job 2's at 1400.
    auto claims = recovery.active_claims(topo, {}, 1300);
    ASSERT_EQ(claims.size(), 1u);
    EXPECT_EQ(claims[0].job_id, 2u);
    EXPECT_EQ(claims[0].blocks.at(0).block, 1);
    EXPECT_TRUE(recovery.active_claims(topo, {}, 1400).empty());
    // A job that fell back holds nothing, even within its hold.
    ledger.mark_fallback(2);
    EXPECT_EQ(recovery.active_claims(topo, {}, 1200).size(), 1u);
    EXPECT_EQ(recovery.active_claims(topo, {}, 1200)[0].job_id, 1u);
    // The record itself stays until the job starts or leaves.
    EXPECT_NE(ledger.find(2), nullptr);
}

TEST_F(LedgerTest, StartedInPlace) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    log();
    // Its 15 healthy nodes and one spare (node 16) of the same rack.
    const auto restart = with(without(job, {3}), {16});
    recovery.job_started(topo, 7, restart, 1040);
    EXPECT_EQ(ledger.find(7), nullptr);
    EXPECT_TRUE(ledger.empty());
    EXPECT_EQ(ledger.counters().failures, 1u);
    EXPECT_EQ(ledger.counters().in_place, 1u);
    EXPECT_EQ(ledger.counters().elsewhere, 0u);
    ASSERT_EQ(ledger.recent().size(), 1u);
    const RecoveryEvent& e = ledger.recent().back();
    EXPECT_EQ(e.at, 1040);
    EXPECT_EQ(e.job_id, 7u);
    EXPECT_EQ(e.outcome, RecoveryOutcome::kInPlace);
    EXPECT_EQ(e.lost, 1u);
    EXPECT_EQ(e.spares_used, 1u);
    EXPECT_EQ(e.seconds, 40);
    EXPECT_EQ(e.blocks, std::vector<std::string>{"rack01"});
    EXPECT_EQ(log(), std::vector<std::string>{"nvlblock: recovery JobId=7 restarted in place on rack01: 15 "
                                              "prior nodes + 1 spares (gb0017) 40 s after the failure"});
}

TEST_F(LedgerTest, StartedInPlaceOnOtherNodesOfTheSameBlock) {
    fail(7, range(0, 7), std::vector<NodeIndex>{0, 1}, 1000, 300, 0);
    // Same rack, but only 4 of its old nodes: the other 4 count as spares.
    recovery.job_started(topo, 7, with(range(4, 7), {10, 11, 12, 13}), 1010);
    const RecoveryEvent& e = ledger.recent().back();
    EXPECT_EQ(e.outcome, RecoveryOutcome::kInPlace);
    EXPECT_EQ(e.lost, 2u);
    EXPECT_EQ(e.spares_used, 4u);
}

TEST_F(LedgerTest, StartedElsewhere) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    log();
    recovery.job_started(topo, 7, range(18, 33), 1400);
    EXPECT_EQ(ledger.find(7), nullptr);
    EXPECT_EQ(ledger.counters().in_place, 0u);
    EXPECT_EQ(ledger.counters().elsewhere, 1u);
    const RecoveryEvent& e = ledger.recent().back();
    EXPECT_EQ(e.outcome, RecoveryOutcome::kElsewhere);
    EXPECT_EQ(e.spares_used, 0u);
    EXPECT_EQ(e.seconds, 400);
    EXPECT_EQ(e.blocks, std::vector<std::string>{"rack01"});
    EXPECT_EQ(log(), std::vector<std::string>{"nvlblock: recovery JobId=7 restarted elsewhere on rack02 "
                                              "(had rack01) 400 s after the failure"});
}

TEST_F(LedgerTest, PartlyElsewhereIsElsewhere) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    recovery.job_started(topo, 7, with(range(0, 14), {18}), 1100);
    EXPECT_EQ(ledger.recent().back().outcome, RecoveryOutcome::kElsewhere);
}

TEST_F(LedgerTest, StartWithNoNodesIsNotInPlace) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    recovery.job_started(topo, 7, std::vector<NodeIndex>{}, 1100);
    EXPECT_EQ(ledger.recent().back().outcome, RecoveryOutcome::kElsewhere);
}

TEST_F(LedgerTest, StartOfAnUnknownJobChangesNothing) {
    recovery.job_started(topo, 99, job, 1000);
    recovery.job_gone(topo, 99, 1000);
    ledger.mark_fallback(99);
    EXPECT_TRUE(ledger.recent().empty());
    EXPECT_TRUE(log().empty());
    EXPECT_EQ(ledger.counters().in_place + ledger.counters().elsewhere + ledger.counters().abandoned, 0u);
}

TEST_F(LedgerTest, JobGoneIsAbandoned) {
    fail(7, job, std::vector<NodeIndex>{3, 4}, 1000, 300, 0);
    log();
    recovery.job_gone(topo, 7, 1050);
    EXPECT_EQ(ledger.find(7), nullptr);
    EXPECT_EQ(ledger.counters().abandoned, 1u);
    const RecoveryEvent& e = ledger.recent().back();
    EXPECT_EQ(e.outcome, RecoveryOutcome::kAbandoned);
    EXPECT_EQ(e.lost, 2u);
    EXPECT_EQ(e.seconds, 50);
    EXPECT_EQ(e.spares_used, 0u);
    EXPECT_EQ(log(), std::vector<std::string>{"nvlblock: recovery JobId=7 left the queue before "
                                              "restarting; released the hold on rack01"});
    // A second call finds nothing to do.
    recovery.job_gone(topo, 7, 1060);
    EXPECT_EQ(ledger.counters().abandoned, 1u);
}

TEST_F(LedgerTest, FallBackOnceWhenTheWaitIsOver) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    log();
    std::vector<NodeState> states(topo.node_count(), NodeState::kFree);
    states[3] = states[4] = states[5] = NodeState::kDown; // 3 failed, 2 spares: room for 15
    Planner never_used(topo);                             // (advance needs only a snapshot)
    const Snapshot snap(topo, states, recovery.active_claims(topo, states, 1299));
    EXPECT_EQ(recovery.advance(snap, 1299), 0u); // still within its wait
    EXPECT_EQ(recovery.advance(snap, 1300), 1u);
    ASSERT_NE(ledger.find(7), nullptr);
    EXPECT_TRUE(ledger.find(7)->fallback);
    EXPECT_EQ(recovery.advance(snap, 1400), 0u); // once
    EXPECT_EQ(log(),
              std::vector<std::string>{"nvlblock: recovery JobId=7 fallback after 300 s: rack01 has room for 15 of "
                                       "the 16 nodes it needs (3 failed, 2 spares); placing it anywhere (had rack01)"});
    // Past its wait, a job whose block can take it falls back too: Slurm
    // did not start it there in time.
    fail(8, range(18, 33), std::vector<NodeIndex>{20}, 1000, 300, 0);
    states[20] = NodeState::kDown;
    log();
    const Snapshot snap2(topo, states, recovery.active_claims(topo, states, 1300));
    EXPECT_EQ(recovery.advance(snap2, 1300), 1u);
    EXPECT_TRUE(ledger.find(8)->fallback);
    EXPECT_EQ(log(), std::vector<std::string>{"nvlblock: recovery JobId=8 fallback after 300 s: its wait is "
                                              "over; Slurm has not started it on rack02, which can take "
                                              "it and still may; placing it anywhere (had rack02)"});
}

TEST_F(LedgerTest, TakeLogEmptiesTheQueue) {
    fail(1, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    fail(2, range(18, 33), std::vector<NodeIndex>{20}, 1000, 300, 0);
    const auto lines = log();
    ASSERT_EQ(lines.size(), 2u);
    for (const auto& l : lines)
        EXPECT_EQ(l.rfind("nvlblock: recovery JobId=", 0), 0u) << l;
    EXPECT_NE(lines[1].find("JobId=2 "), std::string::npos);
    EXPECT_TRUE(log().empty());
}

TEST_F(LedgerTest, RecentEventsAreBounded) {
    for (std::uint32_t id = 1; id <= 40; ++id) {
        fail(id, job, std::vector<NodeIndex>{3}, id * 10, 300, 0);
        recovery.job_gone(topo, id, id * 10 + 1);
    }
    ASSERT_EQ(ledger.recent().size(), Ledger::kRecentEvents);
    EXPECT_EQ(ledger.recent().front().job_id, 9u);
    EXPECT_EQ(ledger.recent().back().job_id, 40u);
    EXPECT_EQ(ledger.counters().failures, 40u);
    EXPECT_EQ(ledger.counters().abandoned, 40u);
}

TEST(LedgerNames, OutcomeNames) {
    EXPECT_STREQ(outcome_name(RecoveryOutcome::kInPlace), "in_place");
    EXPECT_STREQ(outcome_name(RecoveryOutcome::kElsewhere), "elsewhere");
    EXPECT_STREQ(outcome_name(RecoveryOutcome::kAbandoned), "abandoned");
}

// ---- Persistence ---------------------------------------------------------------

TEST_F(LedgerTest, SerializeFormat) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 130);
    fail(8, range(18, 33), std::vector<NodeIndex>{20, 21}, 1010, 300, 400);
    ledger.mark_fallback(8);
    fail(9, range(0, 3), std::vector<NodeIndex>{0}, 900, 300, 0);
    recovery.job_started(topo, 9, range(4, 7), 950);
    EXPECT_EQ(ledger_state_text(ledger, topo),
              "nvlblock-state 2\n"
              "counters 3 1 0 0 0 0 3 0 0 0 3 0 0\n"
              "record 7 1000 1300 1300 0 gb[0001-0016] gb0004 rack01=gb[0001-0018]\n"
              "record 8 1010 1310 1410 1 gb[0019-0034] gb[0021-0022] rack02=gb[0019-0036]\n"
              "event 950 9 in_place 1 4 50 rack01\n"
              "end 2 1 0\n"
              // Each failed node's failures (lemons.hpp), after the end line.
              "node-failures gb0001 900\n"
              "node-failures gb0004 1000\n"
              "node-failures gb0021 1010\n"
              "node-failures gb0022 1010\n"
              "end-node-failures 4\n");
}

TEST_F(LedgerTest, RoundTrip) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 130);
    fail(8, with(range(10, 17), {18, 19}), std::vector<NodeIndex>{18}, 1010, 300, 0);
    ledger.mark_fallback(8);
    fail(9, range(0, 3), std::vector<NodeIndex>{0}, 900, 300, 0);
    recovery.job_started(topo, 9, range(18, 21), 950);
    fail(10, range(0, 3), std::vector<NodeIndex>{0}, 900, 300, 0);
    recovery.job_gone(topo, 10, 990);
    const std::string saved = ledger_state_text(ledger, topo);

    Ledger back;
    load_ledger_state(back, topo, saved, "state");
    EXPECT_EQ(ledger_state_text(back, topo), saved);
    ASSERT_EQ(back.records().size(), 2u);
    const RecoveryRecord* r = back.find(8);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->nodes, with(range(10, 17), {18, 19}));
    EXPECT_EQ(r->failed, std::vector<NodeIndex>{18});
    EXPECT_EQ(r->failed_at, 1010);
    EXPECT_EQ(r->fallback_at, 1310);
    EXPECT_EQ(r->hold_until, 1310);
    EXPECT_TRUE(r->fallback);
    EXPECT_FALSE(back.find(7)->fallback);
    EXPECT_EQ(back.counters().failures, 4u);
    EXPECT_EQ(back.counters().in_place, 0u);
    EXPECT_EQ(back.counters().elsewhere, 1u);
    EXPECT_EQ(back.counters().abandoned, 1u);
    ASSERT_EQ(back.recent().size(), 2u);
    EXPECT_EQ(back.recent()[0].outcome, RecoveryOutcome::kElsewhere);
    EXPECT_EQ(back.recent()[0].blocks, std::vector<std::string>{"rack01"});
    EXPECT_EQ(back.recent()[1].outcome, RecoveryOutcome::kAbandoned);
    EXPECT_EQ(back.recent()[1].seconds, 90);
    EXPECT_TRUE(back.take_notes().empty());
}

TEST_F(LedgerTest, EmptyLedgerRoundTrip) {
    const std::string saved = ledger_state_text(ledger, topo);
    EXPECT_EQ(saved, "nvlblock-state 2\ncounters 0 0 0 0 0 0 0 0 0 0 0 0 0\nend 0 0 0\n");
    Recovery other;
    other.job_failed(topo, 1, job, std::vector<NodeIndex>{3}, 1000);
    Ledger& back = other.ledger();
    load_ledger_state(back, topo, saved, "state"); // replaces the contents
    EXPECT_TRUE(back.empty());
    EXPECT_EQ(back.counters().failures, 0u);
}

TEST_F(LedgerTest, LoadIgnoresBlankLinesAndTextAfterEnd) {
    Ledger back;
    load_ledger_state(back, topo,
                      "\nnvlblock-state 1\n\ncounters 1 0 0 0\nrecord 7 1 2 3 0 gb[0001-0002] "
                      "gb0001\nend 1 0\ngarbage\n",
                      "state");
    ASSERT_NE(back.find(7), nullptr);
    EXPECT_EQ(back.find(7)->nodes, (std::vector<NodeIndex>{0, 1}));
}

TEST(LedgerCorrupt, EachProblemWithItsLine) {
    const Topology topo = cluster();
    const std::pair<std::string, std::string> cases[] = {
        {"", "state: corrupt nvlblock state: empty file"},
        {"counters 0 0 0 0\nend 0 0\n", "state:1: corrupt nvlblock state: missing header"},
        {"nvlblock-state\nend 0 0\n", "state:1: corrupt nvlblock state: missing header"},
        {"nvlblock-state 3\nend 0 0\n", "state:1: corrupt nvlblock state: unsupported version 3"},
        {"nvlblock-state 1\ncounters 0 0 0 0\nrecord 7 1000 1300 1300 0 gb[0001-0016] gb0004\n",
         "state:3: corrupt nvlblock state: truncated (no end line)"},
        {"nvlblock-state 1\ncounters 0 0 0 0\nrecord 7 1000 1300 1300 0 gb[0001-0016] gb0004\nend "
         "2 0\n",
         "state:4: corrupt nvlblock state: end line does not match the contents"},
        {"nvlblock-state 1\nevent 950 9 in_place 1 1 50 rack01\nend 0 0\n",
         "state:3: corrupt nvlblock state: end line does not match the contents"},
        {"nvlblock-state 1\nend\n", "state:2: corrupt nvlblock state: end line does not match the contents"},
        {"nvlblock-state 1\ncounters 0 0 0 0\nbogus 1 2\nend 0 0\n",
         "state:3: corrupt nvlblock state: unknown line 'bogus'"},
        {"nvlblock-state 1\ncounters 0 x 0 0\nend 0 0\n", "state:2: corrupt nvlblock state: bad counters line"},
        {"nvlblock-state 1\nrecord 7 1000 1300\nend 1 0\n", "state:2: corrupt nvlblock state: bad record line"},
        {"nvlblock-state 1\nrecord 7 1000 1300 1300 0 gb[0001-0016 gb0004\nend 1 0\n",
         "state:2: corrupt nvlblock state: bad hostlist 'gb[0001-0016': missing ']'"},
        {"nvlblock-state 1\nevent 950 9 in_place 1\nend 0 1\n", "state:2: corrupt nvlblock state: bad event line"},
        {"nvlblock-state 1\nevent 950 9 sideways 1 1 50 rack01\nend 0 1\n",
         "state:2: corrupt nvlblock state: unknown outcome 'sideways'"},
    };
    for (const auto& [text, message] : cases) {
        const ConfigError e = load_error(topo, text);
        EXPECT_EQ(std::string(e.what()), message) << text;
        EXPECT_EQ(e.problems().size(), 1u);
    }
}

TEST_F(LedgerTest, CorruptLoadLeavesTheLedgerAsItWas) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    const std::string before = ledger_state_text(ledger, topo);
    EXPECT_THROW(load_ledger_state(ledger, topo, "nvlblock-state 1\ncounters 5 5 5 5\n", "state"), ConfigError);
    EXPECT_EQ(ledger_state_text(ledger, topo), before);
}

TEST_F(LedgerTest, StaleRecordsAreDroppedOnLoad) {
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    fail(8, range(18, 33), std::vector<NodeIndex>{20}, 1000, 300, 0);
    // Job 9 had six nodes on rack02 and one on rack01; both its failed nodes count.
    fail(9, with(range(30, 35), {0}), std::vector<NodeIndex>{35, 0}, 1000, 300, 0);
    const std::string saved = ledger_state_text(ledger, topo);

    // The new configuration has rack01 only.
    const Topology small = test::yaml_topology("blocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n");
    Ledger back;
    load_ledger_state(back, small, saved, "state");
    ASSERT_EQ(back.records().size(), 2u);
    EXPECT_NE(back.find(7), nullptr);
    EXPECT_EQ(back.find(8), nullptr);
    // Job 9 keeps the one node it had on rack01, which failed.
    ASSERT_NE(back.find(9), nullptr);
    EXPECT_EQ(back.find(9)->nodes, std::vector<NodeIndex>{0});
    EXPECT_EQ(back.find(9)->failed, std::vector<NodeIndex>{0});
    EXPECT_EQ(test::log_lines(back, small),
              std::vector<std::string>{"nvlblock: recovery JobId=8 dropped from saved state: its "
                                       "nodes are no longer in any block"});
}

TEST_F(LedgerTest, RecordWhoseFailedNodesAreGoneIsDropped) {
    fail(7, with(range(0, 3), {18}), std::vector<NodeIndex>{18}, 1000, 300, 0);
    const Topology small = test::yaml_topology("blocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n");
    Ledger back;
    load_ledger_state(back, small, ledger_state_text(ledger, topo), "state");
    EXPECT_TRUE(back.empty());
}

TEST_F(LedgerTest, RemapAcrossRenumberedTopology) {
    fail(7, range(18, 33), std::vector<NodeIndex>{20}, 1000, 300, 0);
    fail(8, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    log();
    // rack02 is listed first now and rack01 is gone: gb0019 is node 0.
    const Topology next = test::yaml_topology("blocks:\n  - name: rack02\n    nodes: gb[0019-0036]\n"
                                              "  - name: rack03\n    nodes: gb[0037-0054]\n");
    ledger.remap(topo, next);
    ASSERT_EQ(ledger.records().size(), 1u);
    const RecoveryRecord* r = ledger.find(7);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->nodes, range(0, 15));
    EXPECT_EQ(r->failed, std::vector<NodeIndex>{2});
    EXPECT_EQ(r->failed_at, 1000);
    EXPECT_EQ(r->hold_until, 1300);
    const RecoveryClaim c = claim_for(next, *r, {});
    ASSERT_EQ(c.blocks.size(), 1u);
    EXPECT_EQ(c.blocks[0].block, 0);
    EXPECT_EQ(next.block(c.blocks[0].block).name, "rack02");
    EXPECT_EQ(c.blocks[0].lost, 1u);
    EXPECT_EQ(ledger_state_text(ledger, next),
              "nvlblock-state 2\ncounters 2 0 0 0 0 0 2 0 0 0 2 0 0\n"
              "record 7 1000 1300 1300 0 gb[0019-0034] gb0021 rack02=gb[0019-0036]\nend 1 0 0\n"
              "node-failures gb0021 1000\nend-node-failures 1\n");
    EXPECT_EQ(log(), std::vector<std::string>{"nvlblock: recovery JobId=8 dropped after reconfigure: its "
                                              "nodes are no longer in any block"});
}

TEST_F(LedgerTest, SaveAndLoadThroughAFile) {
    TempDir dir;
    fail(7, job, std::vector<NodeIndex>{3}, 1000, 300, 0);
    const std::string path = dir.path() + "/nvlblock_state";
    write_file_atomically(path, ledger_state_text(ledger, topo), kPrivateFileMode);
    const auto text = read_file_if_exists(path);
    ASSERT_TRUE(text.has_value());
    Ledger back;
    load_ledger_state(back, topo, *text, path);
    ASSERT_NE(back.find(7), nullptr);
    EXPECT_EQ(back.find(7)->failed, std::vector<NodeIndex>{3});
}

// The records still waiting, kept beside the tree (Ledger::for_each_waiting,
// any_waiting, find): in job order, without the fallen-back ones, through
// opens, updates, closes, fallbacks and a restore, whether most records wait
// or few do.
TEST(LedgerIndex, ListsTheWaitingRecordsInJobOrder) {
    Ledger ledger;
    auto waiting = [&] {
        std::vector<std::uint32_t> ids;
        ledger.for_each_waiting([&](const RecoveryRecord& r) { ids.push_back(r.job_id); });
        return ids;
    };
    auto record = [](std::uint32_t id, bool fallback) {
        RecoveryRecord r;
        r.job_id = id;
        r.nodes = {0};
        r.failed = {0};
        r.fallback = fallback;
        return r;
    };
    EXPECT_FALSE(ledger.any_waiting());
    for (std::uint32_t id : {30u, 10u, 20u, 40u, 60u, 50u})
        ledger.open(record(id, false));
    EXPECT_EQ(waiting(), (std::vector<std::uint32_t>{10, 20, 30, 40, 50, 60})); // most wait: the tree is walked
    for (std::uint32_t id : {20u, 40u, 30u, 60u, 50u})
        ledger.mark_fallback(id);
    EXPECT_EQ(waiting(), (std::vector<std::uint32_t>{10})); // 1 of 6 waits: it is looked up
    ledger.update(record(40, false));                       // back to waiting (a new hold)
    ledger.close(10, RecoveryEvent{});
    EXPECT_EQ(waiting(), (std::vector<std::uint32_t>{40}));
    EXPECT_EQ(ledger.find(10), nullptr);
    ASSERT_NE(ledger.find(20), nullptr);
    EXPECT_TRUE(ledger.find(20)->fallback);
    EXPECT_EQ(ledger.find(25), nullptr);
    ledger.open(record(20, false)); // a new failure replaces the fallen-back record
    EXPECT_EQ(waiting(), (std::vector<std::uint32_t>{20, 40}));
    LedgerContents saved;
    saved.records[7] = record(7, true);
    saved.records[5] = record(5, false);
    ledger.restore(std::move(saved));
    EXPECT_EQ(waiting(), (std::vector<std::uint32_t>{5}));
    EXPECT_EQ(ledger.find(20), nullptr);
    ASSERT_NE(ledger.find(7), nullptr);
    EXPECT_TRUE(ledger.any_waiting());
}

} // namespace
} // namespace nvlblock
