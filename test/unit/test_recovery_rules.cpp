// SPDX-License-Identifier: GPL-2.0-or-later
//
// The recovery module's rules (src/recovery/rules.hpp) one by one, the clock
// (time moves only through advance()), the purity of every question (what
// Slurm's will-run and test-only evaluations ask changes nothing), repaired
// nodes going back to their job, Slurm's "could it ever run" question, the
// segments of an allocation, and 10,000 open recoveries at once.
#include "core/planner.hpp"
#include "placement/segments.hpp"
#include "recovery/rules.hpp"
#include "recovery_log.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>

namespace nvlblock {
namespace {

using test::all;
using test::range;
using test::set;

constexpr std::uint32_t kJob = 42;
using test::kRack02First16;

Request job(std::uint32_t id, std::uint32_t n, std::uint32_t segment = 0) {
    Request r;
    r.job_id = id;
    r.min_nodes = r.max_nodes = n;
    r.segment = segment;
    return r;
}

TEST(RecoveryRules, HoldOrNot) {
    EXPECT_TRUE(earns_hold(std::vector<NodeIndex>{1, 2}, std::vector<NodeIndex>{2}));
    EXPECT_FALSE(earns_hold(std::vector<NodeIndex>{1}, std::vector<NodeIndex>{1}));   // single node
    EXPECT_FALSE(earns_hold(std::vector<NodeIndex>{1, 2}, std::vector<NodeIndex>{})); // nothing lost
}

// ---- The clock -------------------------------------------------------------------

TEST(RecoveryRules, TheClock) {
    EXPECT_EQ(hold_delay(11), 11 + kRequeueSchedulingSlack);
    EXPECT_EQ(hold_delay(-5), kRequeueSchedulingSlack);
    const Topology idle = test::racks(2, 18, 16, 2, false, "recovery:\n  wait: 300\n");
    const Topology reclaim = test::racks(2, 18, 16, 2, false, "  reserve: reclaim\nrecovery:\n  wait: 300\n");
    EXPECT_EQ(wait_after_failure(idle, range(0, 15), 41), 300);
    EXPECT_EQ(wait_after_failure(reclaim, range(0, 15), 41), 41); // reclaiming holds nothing longer
    RecoveryRecord r;
    r.fallback_at = 1300;
    r.hold_until = 1300;
    EXPECT_TRUE(holds_at(r, 1299));
    EXPECT_FALSE(holds_at(r, 1300));
    EXPECT_FALSE(wait_over(r, 1299));
    EXPECT_TRUE(wait_over(r, 1300));
    r.fallback = true;
    EXPECT_FALSE(holds_at(r, 1000));
}

// ---- In place, shortfalls -------------------------------------------------------

TEST(RecoveryRules, OneDefinitionOfInPlace) {
    const Topology t = test::racks(3);
    const auto before = range(0, 15);
    EXPECT_TRUE(restarted_in_place(t, before, before));
    std::vector<NodeIndex> swapped = range(1, 16); // a spare of the same rack instead of node 0
    EXPECT_TRUE(restarted_in_place(t, before, swapped));
    EXPECT_FALSE(restarted_in_place(t, before, range(18, 33))); // another rack
    EXPECT_FALSE(restarted_in_place(t, before, range(0, 14)));  // fewer nodes
    EXPECT_FALSE(restarted_in_place(t, before, {}));
    std::vector<NodeIndex> two = range(10, 25);             // rack01 and rack02
    EXPECT_TRUE(restarted_in_place(t, two, range(2, 17)));  // only its own rack01
    EXPECT_FALSE(restarted_in_place(t, range(0, 15), two)); // rack02 it never had
}

TEST(RecoveryRules, ShortfallSentencesAreMadeFromFacts) {
    const Topology t = test::racks(2);
    Shortfall s;
    s.block = 1;
    s.need = 16;
    s.room = 15;
    s.failed = 3;
    s.spares = 2;
    EXPECT_EQ(describe_shortfall(t, s), "rack02 has room for 15 of the 16 nodes it needs (3 failed, 2 spares)");
    s.lent = 2;
    EXPECT_EQ(describe_shortfall(t, s), "rack02 has room for 15 of the 16 nodes it needs (3 failed, 2 spares, 2 lent)");
    s.block_down = true;
    s.failed = 18;
    s.size = 18;
    EXPECT_EQ(describe_shortfall(t, s), "rack02 is down (block fault: 18 of 18 nodes failed)");
}

// ---- Repair ------------------------------------------------------------------------

TEST(RecoveryRules, ARepairedNodeGoesBackToItsJob) {
    const Topology t = test::racks(3);
    Planner planner(t);
    auto s = all(t);
    set(s, range(0, 17), NodeState::kBusy);
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20}, 1000);
    s[20] = NodeState::kDown;
    const auto claim_down = claim_for(t, *planner.ledger().find(kJob), s);
    EXPECT_EQ(claim_down.blocks.at(0).lost, 1u);
    s[20] = NodeState::kFree; // resumed before the job restarted
    const auto claim_up = claim_for(t, *planner.ledger().find(kJob), s);
    EXPECT_EQ(claim_up.blocks.at(0).lost, 0u);
    EXPECT_EQ(claim_up.blocks.at(0).prior_healthy.size(), 16u);
    // It is held for its job (nothing else takes it)...
    auto busy = s;
    set(busy, range(36, 53), NodeState::kBusy);
    set(busy, {34, 35}, NodeState::kBusy);
    Request other = job(7, 1);
    std::vector<std::uint8_t> only20(t.node_count(), 0);
    only20[20] = 1;
    other.available = only20;
    EXPECT_FALSE(planner.place(busy, other, 1005).placed());
    // ...and the job restarts on exactly its old nodes: no spare used.
    Placement p = planner.place(s, job(kJob, 16), 1011);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_EQ(p.nodes, kRack02First16);
    EXPECT_EQ(p.spares_used, 0u);
    EXPECT_EQ(explain(t, p), "restart in place: 16 prior nodes + 0 spares");
}

// What a restart in place could take at most: the nodes of its blocks that
// could be offered. A fallen-back job is refused while both that and the
// room bound for it anywhere are short (Planner::bound_shortfall).
TEST(RecoveryRules, TheInPlaceShortfallCountsWhatItsBlocksCouldOffer) {
    const Topology t = test::racks(2);
    Planner planner(t);
    auto s = all(t);
    planner.job_failed(kJob, range(0, 15), std::vector<NodeIndex>{5}, 1000);
    s[5] = NodeState::kDown;
    const std::vector<NodeIndex>& had = planner.ledger().find(kJob)->nodes;
    // The claim's need and blocks are those of the nodes it had.
    const RecoveryClaim claim = claim_for(t, *planner.ledger().find(kJob), s);
    ASSERT_EQ(claim.total_need(), had.size());
    ASSERT_EQ(claim.blocks.size(), 1u);
    EXPECT_EQ(in_place_shortfall(t, had, s, {}), 0); // 17 healthy nodes on rack01
    set(s, range(6, 15), NodeState::kBusy);          // another job took ten of them
    EXPECT_EQ(in_place_shortfall(t, had, s, {}), 9);
    s[16] = NodeState::kLent; // lent work on a spare: it may still be freed for the job
    EXPECT_EQ(in_place_shortfall(t, had, s, {}), 9);
    std::vector<std::uint8_t> offered(t.node_count(), 0);
    for (NodeIndex n : range(12, 17))
        offered[n] = 1; // with a map only what it offers counts
    EXPECT_EQ(in_place_shortfall(t, had, s, offered), 10);
    // Nodes on two racks count both racks' nodes, each once.
    const std::vector<NodeIndex> two = {0, 1, 18, 19};
    EXPECT_EQ(in_place_shortfall(t, two, s, offered), 0);
    std::vector<std::uint8_t> none(t.node_count(), 0);
    none[0] = 1;
    EXPECT_EQ(in_place_shortfall(t, two, s, none), 3);
    // Falling back, the job is refused while both bounds say so, and asked once either does not.
    auto all_busy = s;
    set(all_busy, range(18, 35), NodeState::kBusy);
    planner.advance(all_busy, 5000); // its wait is over and its block cannot take it
    ASSERT_TRUE(planner.ledger().find(kJob)->fallback);
    EXPECT_GT(planner.bound_shortfall(all_busy, job(kJob, 16), 5000), 0);
    EXPECT_FALSE(planner.place(all_busy, job(kJob, 16), 5000).placed());
    set(all_busy, range(6, 15), NodeState::kFree); // its block frees: in place again
    EXPECT_EQ(planner.bound_shortfall(all_busy, job(kJob, 16), 5000), 0);
    EXPECT_TRUE(planner.place(all_busy, job(kJob, 16), 5000).placed());
}

// The bound is speed only: whatever it refuses, place() refuses too. Random
// states (free, busy, lent, down) and maps, a fallen-back job of 16 nodes.
TEST(RecoveryRules, AFallenBackJobsBoundNeverRefusesWhatPlaceWouldPlace) {
    const Topology t = test::racks(3);
    Planner planner(t);
    planner.job_failed(kJob, range(0, 15), std::vector<NodeIndex>{5}, 1000);
    auto busy = all(t);
    set(busy, range(0, 53), NodeState::kBusy);
    planner.advance(busy, 5000);
    ASSERT_TRUE(planner.ledger().find(kJob)->fallback);
    std::mt19937 rng(7);
    const NodeState kinds[] = {NodeState::kFree, NodeState::kBusy, NodeState::kLent, NodeState::kDown};
    int refused_by_bound = 0, placed = 0;
    for (int round = 0; round < 3000; ++round) {
        // Its own rack mostly free, the others mostly taken: where the bound
        // anywhere says no, its own rack's count decides.
        auto s = all(t);
        const int own_free = 60 + static_cast<int>(rng() % 41), other_free = static_cast<int>(rng() % 30);
        for (NodeIndex n = 0; n < s.size(); ++n)
            s[n] = static_cast<int>(rng() % 100) < (n < 18 ? own_free : other_free) ? NodeState::kFree
                                                                                    : kinds[1 + rng() % 3];
        Request r = job(kJob, 16);
        std::vector<std::uint8_t> map;
        if (rng() % 2) {
            map.assign(t.node_count(), 0);
            for (std::size_t n = 0; n < map.size(); ++n)
                map[n] = s[n] == NodeState::kFree || (s[n] == NodeState::kLent && rng() % 2);
            r.available = map;
        }
        const long shortfall = planner.bound_shortfall(s, r, 5000);
        const bool ok = planner.place(s, r, 5000).placed();
        if (shortfall > 0) {
            ++refused_by_bound;
            EXPECT_FALSE(ok) << "round " << round << ": the bound refused a job place() places";
        }
        placed += ok;
    }
    EXPECT_GT(refused_by_bound, 100);
    EXPECT_GT(placed, 100);
}

// ---- Purity: questions change nothing ------------------------------------------

TEST(RecoveryClock, QuestionsChangeNothingOnlyAdvanceMovesTime) {
    const Topology t = test::racks(4, 18, 16, 2, false, "recovery:\n  wait: 60\n");
    Planner planner(t);
    planner.set_slurm_requeue_delay(11);
    auto s = all(t);
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20, 25, 30}, 1000);
    set(s, {20, 25, 30}, NodeState::kDown);
    test::log_lines(planner);
    const std::string before = planner.save_state();
    // Every question Slurm may ask, long past the job's wait: real, will-run
    // (future times), test-only (all nodes offered), other jobs, reclaims.
    std::vector<std::uint8_t> everything(t.node_count(), 1);
    for (std::int64_t now : {1001, 1059, 1060, 5000, 999999}) {
        Request r = job(kJob, 16);
        EXPECT_EQ(planner.place(s, r, now).reason, Reason::kRecoveryWaiting) << now;
        r.available = everything;
        EXPECT_TRUE(planner.place(s, r, now).placed()) << now; // could it ever run: yes, in place
        EXPECT_TRUE(planner.place(s, job(7, 16), now).placed());
        EXPECT_FALSE(planner.plan_reclaim(s, job(kJob, 16), Reclaimer{}, {}, now).plan);
        EXPECT_TRUE(planner.can_ever_run(job(kJob, 16)));
        (void)planner.snapshot(s, now);
    }
    EXPECT_EQ(planner.save_state(), before);
    EXPECT_TRUE(test::log_lines(planner).empty());
    // Time moves here, and only here.
    EXPECT_EQ(planner.next_deadline(1000), 1060);
    EXPECT_EQ(planner.advance(s, 1059), 0u);
    EXPECT_EQ(planner.save_state(), before);
    EXPECT_EQ(planner.advance(s, 1060), 1u);
    EXPECT_NE(planner.save_state(), before);
    EXPECT_EQ(planner.next_deadline(1060), std::numeric_limits<std::int64_t>::max());
    Placement p = planner.place(s, job(kJob, 16), 1060);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_FALSE(p.recovery_in_place);
}

TEST(RecoveryClock, AdvanceLeavesAJobWhoseBlockCanTakeItInPlaceUntilItsHoldEnds) {
    // Its wait (0) is over, but its block has room again (a node was
    // repaired): until Slurm could have started it (its requeue delay and a
    // scheduling pass) it restarts in place when Slurm asks.
    const Topology t = test::racks(3, 18, 16, 2, false, "recovery:\n  wait: 0\n");
    Planner planner(t);
    planner.set_slurm_requeue_delay(11);
    auto s = all(t);
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20, 25, 30}, 1000);
    set(s, {20, 25, 30}, NodeState::kDown);
    s[30] = NodeState::kFree;
    EXPECT_EQ(planner.advance(s, 1000), 0u);
    EXPECT_EQ(planner.advance(s, 1040), 0u);
    Placement p = planner.place(s, job(kJob, 16), 1040);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_FALSE(planner.recovery().active_claims(t, s, 1040).empty());
    EXPECT_EQ(planner.next_deadline(1040), 1041);
    EXPECT_EQ(planner.advance(s, 1041), 1u); // Slurm could have started it: the hold is over
}

TEST(RecoveryClock, TheWaitBoundsAJobSlurmDoesNotStartOnABlockThatCanTakeIt) {
    // Soak (docs/reliability.md): a job whose block could take it, that
    // Slurm did not start there (a higher PriorityTier), was kept to its
    // block 39 s past its wait. The wait is the bound: at its end the job
    // falls back, saying its block could take it.
    const Topology t = test::racks(3, 18, 16, 2, false, "recovery:\n  wait: 60\n");
    Planner planner(t);
    auto s = all(t);
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20, 25, 30}, 1000);
    set(s, {20, 25, 30}, NodeState::kDown);
    s[30] = NodeState::kFree;
    test::log_lines(planner);
    EXPECT_EQ(planner.advance(s, 1059), 0u);
    EXPECT_EQ(planner.advance(s, 1060), 1u);
    EXPECT_EQ(test::log_lines(planner),
              std::vector<std::string>{"nvlblock: recovery JobId=" + std::to_string(kJob) +
                                       " fallback after 60 s: its wait is over; Slurm has not started it on rack02, "
                                       "which can take it and still may; placing it anywhere (had rack02)"});
    // Nothing is held for it any more...
    EXPECT_TRUE(planner.recovery().active_claims(t, s, 1060).empty());
    // ...and its own block comes first while it can take it: in place, with a spare.
    Placement p = planner.place(s, job(kJob, 16), 1060);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_EQ(p.spares_used, 2u);
    // Where Slurm offers only other nodes (backfill keeps rack02's for
    // another job), it is placed there: no longer confined to its block.
    Request elsewhere = job(kJob, 16);
    std::vector<std::uint8_t> offered(t.node_count(), 1);
    for (NodeIndex n = 18; n < 36; ++n)
        offered[n] = 0;
    elsewhere.available = offered;
    p = planner.place(s, elsewhere, 1060);
    ASSERT_TRUE(p.placed()) << explain(t, p);
    EXPECT_FALSE(p.recovery_in_place);
    EXPECT_NE(t.block_of(p.nodes.front()), 1);
}

TEST(RecoveryClock, ARunFromBeforeTheFailureIsNotARestart) {
    // slurmctld killed right after a requeue restores the failed run from
    // state saved before it: the job shows RUNNING on its old nodes, then is
    // requeued once more. Neither is a new recovery, nor its end.
    const Topology t = test::racks(2, 18, 16, 2, false, "recovery:\n  wait: 60\n");
    Planner planner(t);
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20}, 1000);
    test::log_lines(planner);
    planner.job_started(kJob, kRack02First16, 900); // the run that began at 900 and failed at 1000
    ASSERT_TRUE(planner.recovery().recovering(kJob));
    EXPECT_TRUE(test::log_lines(planner).empty());
    planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20, 21}, 1030); // requeued again
    const RecoveryRecord* r = planner.ledger().find(kJob);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->failed_at, 1000); // one failure, one clock
    EXPECT_EQ(r->fallback_at, 1060);
    EXPECT_EQ(r->failed, (std::vector<NodeIndex>{20, 21}));
    EXPECT_EQ(planner.ledger().counters().failures, 1u);
    const auto log = test::log_lines(planner);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_EQ(log[0], "nvlblock: recovery JobId=42 failure reported again (gb[0021-0022]): the same run, restored "
                      "by slurmctld; still waiting since 30 s");
    planner.job_started(kJob, range(18, 33), 1045); // a real restart
    EXPECT_FALSE(planner.recovery().recovering(kJob));
    EXPECT_EQ(planner.ledger().recent().back().seconds, 45);
}

// ---- Slurm's "could it ever run" ------------------------------------------------

TEST(RecoveryRules, FailedNodesSlurmOffersCountAsHealthy) {
    // Slurm offers down nodes only when it asks whether a job could ever
    // run; a refusal there would hold the job for good.
    const Topology t = test::racks(1);
    Planner planner(t);
    auto s = all(t);
    set(s, range(0, 5), NodeState::kDown);
    std::vector<std::uint8_t> everything(t.node_count(), 1);
    Request r = job(9, 16);
    EXPECT_FALSE(planner.place(s, r, 0).placed()); // now: 12 healthy nodes
    r.available = everything;
    EXPECT_TRUE(planner.place(s, r, 0).placed()); // ever: yes
    std::vector<NodeState> scratch;
    EXPECT_EQ(offered_as_healthy(s, everything, scratch)[3], NodeState::kFree);
    EXPECT_EQ(s[3], NodeState::kDown); // the caller's states are untouched
    std::vector<std::uint8_t> none(t.node_count(), 0);
    EXPECT_EQ(offered_as_healthy(s, none, scratch).data(), s.data()); // nothing offered: no copy
}

TEST(RecoveryRules, CanEverRun) {
    const Topology idle = test::racks(2, 18, 16, 2, true);
    const Planner p(idle);
    EXPECT_TRUE(p.can_ever_run(job(1, 32)));
    EXPECT_FALSE(p.can_ever_run(job(1, 33))); // only the spares could hold it
    Request pre = job(1, 36);
    pre.preemptible = true; // lending: preemptible work may use them
    EXPECT_TRUE(p.can_ever_run(pre));
    EXPECT_FALSE(p.can_ever_run(job(1, 32, 17))); // a segment larger than the slice
    const Topology reclaim = test::racks(2, 18, 16, 2, false, "  reserve: reclaim\n");
    EXPECT_TRUE(Planner(reclaim).can_ever_run(job(1, 36)));
}

// ---- Segments ----------------------------------------------------------------------

TEST(Segments, PerBlockRunsAndTheRestOneMore) {
    std::vector<std::string> universe;
    for (int i = 1; i <= 36; ++i) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "gb%04d", i);
        universe.push_back(buf);
    }
    universe.push_back("cpu01");
    const Topology t = test::yaml_topology("blocks:\n  - name: rack01\n    nodes: gb[0001-0018]\n"
                                           "  - name: rack02\n    nodes: gb[0019-0036]\n",
                                           &universe);
    std::vector<NodeIndex> nodes = range(20, 27); // 8 on rack02
    for (NodeIndex n : range(0, 7))
        nodes.push_back(n); // 8 on rack01, given after
    nodes.push_back(36);    // a server outside every block
    const auto segs = segments_of(t, nodes, 4);
    ASSERT_EQ(segs.size(), 5u);
    EXPECT_EQ(segs[0], range(0, 3));
    EXPECT_EQ(segs[1], range(4, 7));
    EXPECT_EQ(segs[2], range(20, 23));
    EXPECT_EQ(segs[3], range(24, 27));
    EXPECT_EQ(segs[4], std::vector<NodeIndex>{36});
    const auto whole = segments_of(t, nodes, 0); // no --segment: one per block
    ASSERT_EQ(whole.size(), 3u);
    EXPECT_EQ(whole[0].size(), 8u);
    const auto odd = segments_of(t, range(0, 9), 4); // 10 nodes: 4 + 4 + 2
    ASSERT_EQ(odd.size(), 3u);
    EXPECT_EQ(odd[2], range(8, 9));
    EXPECT_TRUE(segments_of(t, {}, 4).empty());
}

// ---- Scale: no fixed caps ------------------------------------------------------------

// `racks` racks, 8 two-node jobs on the first 16 nodes of each: every job
// lost a node. On each rack the failed nodes of 2 jobs are still down (they
// take the rack's 2 spares); those of the other 6 were repaired (they go back
// to their jobs). Asserts what holds at any size; returns the CPU seconds the
// recoveries took.
double open_recoveries(int racks) {
    std::string y = "defaults:\n  reserve: idle\nrecovery:\n  wait: 300\nblocks:\n";
    for (int r = 0; r < racks; ++r) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  - name: r%04d\n    nodes: n[%05d-%05d]\n", r, r * 18 + 1, r * 18 + 18);
        y += buf;
    }
    const Topology t = test::yaml_topology(y);
    const auto jobs = static_cast<std::uint32_t>(racks) * 8;
    Planner planner(t);
    planner.set_slurm_requeue_delay(11);
    auto s = all(t);
    auto nodes_of = [](std::uint32_t j) { // job j = 1..jobs
        const NodeIndex first = (j - 1) / 8 * 18 + (j - 1) % 8 * 2;
        return std::vector<NodeIndex>{first, first + 1};
    };
    const std::clock_t start = std::clock();
    for (std::uint32_t j = 1; j <= jobs; ++j) {
        const auto nodes = nodes_of(j);
        planner.job_failed(j, nodes, std::vector<NodeIndex>{nodes[1]}, 1000);
        if ((j - 1) % 8 < 2)
            s[nodes[1]] = NodeState::kDown;
    }
    EXPECT_EQ(planner.ledger().records().size(), jobs);
    for (std::uint32_t j = 1; j <= jobs; ++j)
        EXPECT_TRUE(planner.recovery().recovering(j)) << j;
    // Each one, the last as the first, goes back in place.
    for (std::uint32_t j : {1u, 2u, 3u, jobs - 1, jobs}) {
        Placement p = planner.place(s, job(j, 2), 1011);
        EXPECT_TRUE(p.placed()) << j << ": " << explain(t, p);
        EXPECT_TRUE(p.recovery_in_place);
        EXPECT_EQ(p.spares_used, (j - 1) % 8 < 2 ? 1u : 0u) << j;
    }
    // Saved and loaded whole.
    Planner other(t);
    other.load_state(planner.save_state(), "state");
    EXPECT_EQ(other.ledger().records().size(), jobs);
    // The clock looks at every one of them: within the wait, none falls
    // back (their racks can take them)...
    EXPECT_EQ(planner.advance(s, 1200), 0u);
    // ...until the last rack goes down as a whole: its 8 jobs fall back, all
    // the others still go back in place.
    const auto last_rack = static_cast<NodeIndex>(racks - 1) * 18;
    set(s, range(last_rack, last_rack + 17), NodeState::kDown);
    EXPECT_EQ(planner.advance(s, 1201), 8u);
    EXPECT_TRUE(planner.ledger().find(jobs)->fallback);
    EXPECT_FALSE(planner.ledger().find(jobs - 8)->fallback);
    EXPECT_EQ(planner.ledger().records().size(), jobs);
    for (std::uint32_t j = 1; j <= jobs; j += 2)
        planner.job_started(j, nodes_of(j), 1250);
    EXPECT_EQ(planner.ledger().records().size(), jobs / 2);
    EXPECT_EQ(planner.ledger().counters().in_place, jobs / 2);
    // At the end of the wait every one still waiting is placed on its rack,
    // and falls back (the wait is the bound).
    EXPECT_EQ(planner.advance(s, 1300), jobs / 2 - 4);
    return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

TEST(RecoveryScale, TenThousandOpenRecoveries) {
    // No fixed cap: 10,000 open recoveries on 1,250 racks (22,500 nodes)
    // behave as 1,000 on 125 do, and the cost does not grow with the square
    // of their number: 10 times the recoveries on 10 times the racks take at
    // most 50 times the CPU time of the small run. Measured: 21 times, plain
    // and under ASan alike (linear would be 10; the rest is work per
    // recovery that grows with the racks, e.g. each place() views every
    // block); a cost quadratic in the open recoveries alone would be about
    // 100. CPU time of the two runs side by side in one process, not wall
    // time: a loaded or sanitized run is slower in both alike.
    const double small = open_recoveries(125);
    const double large = open_recoveries(1250);
    std::printf("open recoveries: 1,000 in %.3f CPU-s, 10,000 in %.3f CPU-s\n", small, large);
    EXPECT_LT(large, 50.0 * std::max(small, 0.01))
        << "1,000 recoveries took " << small << " CPU-s, 10,000 took " << large;
}

} // namespace
} // namespace nvlblock
