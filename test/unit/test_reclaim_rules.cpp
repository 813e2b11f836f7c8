// SPDX-License-Identifier: GPL-2.0-or-later
//
// Rule 3b's who, how and how much (docs/placement.md, src/recovery/reclaim*.hpp):
// only work Slurm's preemption lets the recovering job preempt, or work the
// site names in recovery.reclaim_from, ever loses nodes; never_reclaim,
// --no-requeue, other reservations, PreemptExemptTime and the cooldown
// protect; Slurm's own preemption goes before site-named work, an exact fit
// before a plan that moves more than the job lacks, and a heterogeneous job
// goes whole; the per-user and per-hour limits refuse a plan whole; the
// victims' GraceTime keeps the job waiting for them; the moves are saved.
#include "core/planner.hpp"
#include "recovery/reclaim.hpp"
#include "recovery/reclaim_eligibility.hpp"
#include "recovery_log.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"
#include "writers/recovery_log_text.hpp"

#include <gtest/gtest.h>

namespace nvlblock {
namespace {

using test::all;
using test::job;
using test::range;
using test::set;

constexpr std::uint32_t kJob = 42;
using test::kRack02First16;

RunningJob running_job(std::uint32_t id, std::vector<NodeIndex> nodes, std::int64_t started, const char* qos) {
    RunningJob j;
    j.job_id = id;
    j.nodes = std::move(nodes);
    j.started = started;
    j.user = 2000 + id;
    j.qos = qos;
    j.preempt_mode = PreemptMode::kRequeue;
    return j;
}

// Slurm's preemption lets the recovering job preempt it.
RunningJob preemptable(std::uint32_t id, std::vector<NodeIndex> nodes, std::int64_t started) {
    RunningJob j = running_job(id, std::move(nodes), started, "low");
    j.slurm_may_preempt = true;
    return j;
}

// Ordinary work: Slurm's preemption does not let it go.
RunningJob ordinary(std::uint32_t id, std::vector<NodeIndex> nodes, std::int64_t started) {
    return running_job(id, std::move(nodes), started, "normal");
}

std::vector<std::uint32_t> ids(const Reclaim& r) {
    std::vector<std::uint32_t> out;
    for (const ReclaimVictim& v : r.victims)
        out.push_back(v.job_id);
    return out;
}

// rack02 runs kJob on its first 16 nodes, which lose gb0021 at t=1000; other
// work runs on its last two nodes (34 and 35); rack01 is full of other work.
struct Rules : ::testing::Test {
    std::string extra;
    Topology topo = make();
    Planner planner{topo};
    std::vector<NodeState> s = all(topo);
    Reclaimer owner = reclaimer_of_user(1000);

    Topology make(const std::string& more = "") {
        return test::racks(3, 18, 16, 2, false,
                           "  reserve: reclaim\nrecovery:\n  wait: 300\n  reclaim_budget: 300\n" + more);
    }
    void with(const std::string& more) {
        topo = make(more);
        planner = Planner(topo);
    }
    void fail(std::int64_t now = 1000) {
        planner.set_slurm_requeue_delay(11);
        set(s, range(0, 17), NodeState::kBusy);
        set(s, {34, 35}, NodeState::kBusy);
        planner.job_failed(kJob, kRack02First16, std::vector<NodeIndex>{20}, now);
        set(s, kRack02First16, NodeState::kFree);
        set(s, {20}, NodeState::kDown);
    }
    ReclaimDecision ask(const std::vector<RunningJob>& running, std::int64_t now = 1001) {
        return planner.plan_reclaim(s, job(kJob, 16), owner, running, now);
    }
};

TEST(VictimStatus, FirstReasonFirst) {
    RecoveryPolicy policy;
    ReclaimHistory history;
    Reclaimer me = reclaimer_of_user(1);
    me.job_id = 42;
    me.het_job_id = 40;
    RunningJob j = preemptable(7, {1}, 0);
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kPreempt);
    j.preempt_mode = PreemptMode::kSuspend; // keeps its nodes
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kNotAllowed);
    j.preempt_mode = PreemptMode::kCancel;
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kPreempt);
    j.exempt = true;
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kExempt);
    j.reservation = "maint";
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kOtherReservation);
    policy.never_reclaim.qos = {"low"};
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kProtected);
    j.requeueable = false;
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kNotRequeueable);
    j.being_preempted = true;
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kBeingPreempted);
    j.het_job_id = 40; // another component of the recovering job's own heterogeneous job
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kSameJob);
}

TEST(VictimStatus, SiteNamedWorkIsRequeuedTheCooldownProtects) {
    RecoveryPolicy policy;
    policy.reclaim_from.accounts = {"research"};
    ReclaimHistory history;
    Reclaimer me = reclaimer_of_user(1);
    me.job_id = 42;
    RunningJob j = ordinary(7, {1}, 0);
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kNotAllowed);
    j.account = "research";
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kRequeue);
    j.reservation = "";
    history.record({7, 50, 1}, policy.reclaim_cooldown_seconds);
    EXPECT_EQ(victim_status(j, me, policy, history, 100), VictimStatus::kCoolingDown);
    EXPECT_EQ(victim_status(j, me, policy, history, 50 + 3600), VictimStatus::kRequeue);
}

TEST_F(Rules, OrdinaryWorkIsNeverTouchedUnlessTheSiteNamesIt) {
    fail();
    const std::vector<RunningJob> running = {ordinary(7, {34}, 0), ordinary(8, {35}, 900)};
    ReclaimDecision d = ask(running);
    EXPECT_FALSE(d.plan);
    EXPECT_EQ(d.refusal.reason, ReclaimRefusalReason::kNoEligibleWork);
    EXPECT_EQ(d.refusal.jobs_by_status[static_cast<std::size_t>(VictimStatus::kNotAllowed)], 2u);
    EXPECT_EQ(reclaim_refusal_text(kJob, d.refusal),
              "JobId=42: nothing reclaimed: not enough work there may lose its nodes (jobs there: 2 not_allowed)");

    with("  reclaim_from:\n    qos: [normal]\n");
    fail();
    d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{8});
    EXPECT_EQ(d.plan->victims[0].how, VictimStatus::kRequeue);
    // Its own PreemptMode is REQUEUE: through Slurm's preemption, with its
    // GraceTime (SiteNamedWorkWhoseOwnModeRequeuesKeepsItsGraceTime).
    EXPECT_FALSE(d.plan->victims[0].at_once);
    planner.reclaim_started(kJob, *d.plan, owner, 1001, 1001);
    EXPECT_EQ(test::log_lines(planner).back(),
              "nvlblock: recovery JobId=42 reclaiming 1 spare node on rack02: requeueing JobId=8 "
              "(recovery.reclaim_from) (101 node-seconds of run time lost, budget 4500)");
}

TEST_F(Rules, SiteNamedWorkWhoseOwnModeRequeuesKeepsItsGraceTime) {
    // Slurm's preemption with its GraceTime ends in the victim's own mode:
    // REQUEUE requeues it (through the preemption call); CANCEL would cancel
    // it, so that one is requeued at once (issue 36).
    with("  reclaim_from:\n    qos: [normal]\n");
    for (PreemptMode mode : {PreemptMode::kRequeue, PreemptMode::kCancel, PreemptMode::kSuspend}) {
        fail();
        std::vector<RunningJob> running = {ordinary(8, {35}, 900)};
        running[0].preempt_mode = mode;
        const ReclaimDecision d = ask(running);
        ASSERT_TRUE(d.plan);
        EXPECT_EQ(d.plan->victims[0].how, VictimStatus::kRequeue);
        EXPECT_EQ(d.plan->victims[0].at_once, mode != PreemptMode::kRequeue) << static_cast<int>(mode);
    }
}

TEST_F(Rules, SlurmsOwnPreemptionGoesBeforeSiteNamedWork) {
    with("  reclaim_from:\n    qos: [normal]\n");
    fail();
    // The site-named job is younger (cheaper); Slurm's preemptable one still goes first.
    const std::vector<RunningJob> running = {preemptable(7, {34}, 0), ordinary(8, {35}, 990)};
    const ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{7});
    EXPECT_EQ(d.plan->victims[0].how, VictimStatus::kPreempt);
}

TEST_F(Rules, NeverReclaimProtectsWhatSlurmWouldPreempt) {
    with("  never_reclaim:\n    partitions: [prod]\n");
    fail();
    std::vector<RunningJob> running = {preemptable(7, {34}, 0), preemptable(8, {35}, 900)};
    running[1].partition = "prod";
    const ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{7});
}

TEST_F(Rules, AnExactFitBeforeAJobLargerThanTheShortfall) {
    fail();
    // Job 7: one node on the rack (34) and three on rack03, young; job 8: the
    // other spare (35) only, older. One node is missing: job 8 is the exact fit.
    set(s, {40, 41, 42}, NodeState::kBusy);
    std::vector<RunningJob> running = {preemptable(7, {34, 40, 41, 42}, 995), preemptable(8, {35}, 600)};
    ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{8});
    EXPECT_TRUE(d.plan->exact);
    // Without job 8 the larger job goes, counted whole: 4 nodes x 6 s.
    running.pop_back();
    d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{7});
    EXPECT_FALSE(d.plan->exact);
    EXPECT_EQ(d.plan->lost_node_seconds, 4 * 6);
    EXPECT_EQ(d.plan->victims[0].nodes, 4u);
}

TEST_F(Rules, AHeterogeneousJobGoesWholeAndIsCostedWhole) {
    fail();
    // Components 50 (node 34, since 990) and 51 (rack03's 40-47, since 990) of
    // heterogeneous job 50; job 8 on node 35 and rack03's 48 since 960.
    // Neither is an exact fit. Component 50 alone would be cheaper (1 x 11),
    // the whole job is not (9 x 11 > 2 x 41).
    set(s, range(40, 48), NodeState::kBusy);
    std::vector<RunningJob> running = {preemptable(50, {34}, 990), preemptable(51, range(40, 47), 990),
                                       preemptable(8, {35, 48}, 960)};
    running[0].het_job_id = running[1].het_job_id = 50;
    ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{8});
    // One component Slurm will not preempt protects the whole job.
    running.pop_back();
    running[1].slurm_may_preempt = false;
    d = ask(running);
    EXPECT_FALSE(d.plan);
    running[1].slurm_may_preempt = true;
    d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{50});
    EXPECT_EQ(d.plan->victims[0].nodes, 9u);
    EXPECT_EQ(d.plan->lost_node_seconds, 9 * 11);
}

TEST_F(Rules, TheWaitAVictimWouldLoseAgainCounts) {
    fail();
    // Job 7 ran 100 s after waiting an hour; job 8 ran 300 s after a minute.
    std::vector<RunningJob> running = {preemptable(7, {34}, 901), preemptable(8, {35}, 701)};
    running[0].waited = 3600;
    running[1].waited = 60;
    ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{8});
    // Counting run time alone, the younger job goes.
    with("  reclaim_cost: run_time\n");
    fail();
    d = ask(running);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{7});
}

TEST_F(Rules, AJobMovedOnceIsNotMovedAgainWithinTheCooldown) {
    with("  reclaim_cooldown: 2h\n");
    fail();
    std::vector<RunningJob> running = {preemptable(7, {34}, 0), preemptable(8, {35}, 900)};
    ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    ASSERT_EQ(ids(*d.plan), std::vector<std::uint32_t>{8});
    planner.reclaim_started(kJob, *d.plan, owner, 1001, 1001);
    planner.job_started(kJob, range(18, 33), 1050);
    // Another job fails on the rack later: job 8 runs again (the youngest
    // work there) but is cooling down; job 7 goes instead.
    planner.job_failed(43, range(18, 33), std::vector<NodeIndex>{21}, 2999);
    set(s, {21}, NodeState::kDown);
    set(s, {20}, NodeState::kFree);
    running[1].started = 2900;
    d = planner.plan_reclaim(s, job(43, 16), owner, running, 3000);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{7});
    // Once the cooldown is over, job 8 is the cheapest again.
    running[0].started = 8190;
    running[1].started = 8195;
    d = planner.plan_reclaim(s, job(43, 16), owner, running, 1001 + 7200);
    ASSERT_TRUE(d.plan);
    EXPECT_EQ(ids(*d.plan), std::vector<std::uint32_t>{8});
}

// The rack of Rules after job kJob restarted and job 43 lost a node there at
// `now - 1`: job 7 and job 8 run on its spares, started 10 and 5 s ago.
struct Limits : Rules {
    std::vector<RunningJob> running = {preemptable(7, {34}, 0), preemptable(8, {35}, 900)};

    void first_round() {
        fail();
        ReclaimDecision d = ask(running);
        ASSERT_TRUE(d.plan);
        planner.reclaim_started(kJob, *d.plan, owner, 1001, 1001);
        planner.job_started(kJob, range(18, 33), 1050);
    }
    ReclaimDecision again(const Reclaimer& who, std::int64_t now) {
        if (!planner.recovery().recovering(43)) {
            planner.job_failed(43, range(18, 33), std::vector<NodeIndex>{21}, now - 1);
            set(s, {21}, NodeState::kDown);
            set(s, {20}, NodeState::kFree);
        }
        running[0].started = now - 10;
        running[1].started = now - 5;
        return planner.plan_reclaim(s, job(43, 16), who, running, now);
    }
};

TEST_F(Limits, ThePerUserLimitRefusesAPlanWhole) {
    with("  reclaim_limits:\n    per_user_per_day: 1\n    per_hour: 10\n");
    first_round();
    // The same user's next job, a few hours later, on the same rack.
    ReclaimDecision d = again(owner, 20001);
    EXPECT_FALSE(d.plan);
    EXPECT_EQ(d.refusal.reason, ReclaimRefusalReason::kUserLimit);
    // Another user's job may.
    EXPECT_TRUE(again(reclaimer_of_user(1001), 20001).plan);
    // A day after the first move the user may again.
    EXPECT_TRUE(again(owner, 1001 + 24 * 3600).plan);
}

TEST_F(Limits, TheClusterLimitPerHour) {
    with("  reclaim_limits:\n    per_hour: 1\n");
    first_round();
    ReclaimDecision d = again(reclaimer_of_user(7), 2001);
    EXPECT_FALSE(d.plan);
    EXPECT_EQ(d.refusal.reason, ReclaimRefusalReason::kClusterLimit);
    EXPECT_TRUE(again(reclaimer_of_user(7), 1001 + 3600).plan);
}

// Under Slurm's locks each running job costs a preemption question, so a
// limit that refuses every plan is answered before any is asked.
TEST_F(Limits, ALimitRulesAReclaimOutBeforeAnyRunningJobIsAsked) {
    with("  reclaim_limits:\n    per_user_per_day: 1\n    per_hour: 2\n");
    first_round();
    again(owner, 20001); // opens job 43's recovery
    std::optional<ReclaimRefusal> out = planner.reclaim_ruled_out(s, job(43, 16), owner, 20001);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->reason, ReclaimRefusalReason::kUserLimit);
    // Another user's job depends on the work running there.
    EXPECT_FALSE(planner.reclaim_ruled_out(s, job(43, 16), reclaimer_of_user(1001), 20001));
    // The same answer as the plan's, whatever runs there.
    with("  reclaim_limits:\n    per_hour: 1\n");
    first_round();
    again(reclaimer_of_user(7), 2001);
    out = planner.reclaim_ruled_out(s, job(43, 16), reclaimer_of_user(7), 2001);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->reason, ReclaimRefusalReason::kClusterLimit);
    EXPECT_EQ(again(reclaimer_of_user(7), 2001).refusal.reason, ReclaimRefusalReason::kClusterLimit);
}

TEST_F(Rules, LackingMoreThanTheSparesIsRuledOutWithoutTheRunningJobs) {
    fail();
    // Two more nodes of the job's rack fail: it lacks 3, its block has 2 spares.
    set(s, {19, 21}, NodeState::kDown);
    const std::optional<ReclaimRefusal> out = planner.reclaim_ruled_out(s, job(kJob, 16), owner, 1001);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->reason, ReclaimRefusalReason::kMoreThanSpares);
    EXPECT_EQ(ask({preemptable(7, {34}, 0), preemptable(8, {35}, 900)}).refusal.reason,
              ReclaimRefusalReason::kMoreThanSpares);
}

TEST_F(Rules, APlannableReclaimIsNotRuledOut) {
    fail();
    EXPECT_FALSE(planner.reclaim_ruled_out(s, job(kJob, 16), owner, 1001));
    Reclaimer held = owner;
    held.held = true;
    const std::optional<ReclaimRefusal> out = planner.reclaim_ruled_out(s, job(kJob, 16), held, 1001);
    ASSERT_TRUE(out);
    EXPECT_EQ(out->reason, ReclaimRefusalReason::kHeld);
}

TEST(ReclaimLimits, PerHourDefaultsToOnePerHundredNodes) {
    RecoveryPolicy p;
    EXPECT_EQ(reclaim_per_hour(p, 72), 2);
    EXPECT_EQ(reclaim_per_hour(p, 2304), 24);
    p.reclaim_per_hour = 5;
    EXPECT_EQ(reclaim_per_hour(p, 2304), 5);
}

TEST_F(Rules, TheVictimsGraceTimeKeepsTheJobWaiting) {
    fail();
    std::vector<RunningJob> running = {preemptable(7, {34}, 0), preemptable(8, {35}, 900)};
    ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    // Job 8 has 120 s of GraceTime: its node is free at 1121 at the latest.
    planner.reclaim_started(kJob, *d.plan, owner, 1121, 1001);
    EXPECT_EQ(planner.advance(s, 1100), 0u); // past the hold delay (41 s) of the failure
    EXPECT_EQ(planner.place(s, job(kJob, 16), 1100).reason, Reason::kRecoveryWaiting);
    EXPECT_FALSE(ask(running, 1100).plan); // no second round meanwhile
    set(s, {35}, NodeState::kFree);
    const Placement p = planner.place(s, job(kJob, 16), 1125);
    ASSERT_TRUE(p.placed()) << explain(planner.topology(), p);
    EXPECT_TRUE(p.recovery_in_place);
    // Nothing came free by then: it falls back after the grace and the hold delay.
    set(s, {35}, NodeState::kBusy);
    EXPECT_EQ(planner.advance(s, 1121 + 40), 0u);
    EXPECT_EQ(planner.advance(s, 1121 + 41), 1u);
}

TEST_F(Rules, MovesAreSavedWithTheState) {
    fail();
    std::vector<RunningJob> running = {preemptable(7, {34}, 0), preemptable(8, {35}, 900)};
    ReclaimDecision d = ask(running);
    ASSERT_TRUE(d.plan);
    planner.reclaim_started(kJob, *d.plan, owner, 1001, 1001);
    const std::string saved = planner.save_state();
    EXPECT_NE(saved.find("nvlblock-state 2\n"), std::string::npos) << saved;
    EXPECT_NE(saved.find("\nmoved 8 1001 1000\n"), std::string::npos) << saved;
    EXPECT_NE(saved.find("\nend 1 0 1\n"), std::string::npos) << saved;
    Planner restored(topo);
    restored.load_state(saved, "state");
    ASSERT_EQ(restored.ledger().reclaims().moves().size(), 1u);
    EXPECT_EQ(restored.ledger().counters().reclaims, 1u);
    EXPECT_EQ(restored.ledger().counters().reclaimed_jobs, 1u);
    EXPECT_EQ(restored.save_state(), saved);
}

TEST(ReclaimState, VersionOneFilesAreStillRead) {
    const Topology topo = test::racks(2);
    Planner p(topo);
    p.load_state("nvlblock-state 1\ncounters 3 2 1 0\nrecord 9 100 400 400 0 gb[0001-0016] gb0002\nend 1 0\n", "old");
    EXPECT_EQ(p.ledger().counters().failures, 3u);
    EXPECT_NE(p.ledger().find(9), nullptr);
    EXPECT_THROW(p.load_state("nvlblock-state 1\nmoved 8 1 1\nend 0 0\n", "old"), ConfigError);
    EXPECT_THROW(p.load_state("nvlblock-state 2\nmoved 8 1 1\nend 0 0 0\n", "new"), ConfigError);
}

TEST(ReclaimSettings, ReadWithFileAndLineOnEveryMistake) {
    const std::string blocks = "blocks:\n  - name: a\n    nodes: n[1-18]\n";
    const Topology t = test::yaml_topology("recovery:\n  reclaim_from:\n    qos: [normal, long]\n    accounts: ml\n"
                                           "  never_reclaim:\n    partitions: [prod]\n  reclaim_cooldown: 2h\n"
                                           "  reclaim_limits:\n    per_user_per_day: 5\n    per_hour: auto\n"
                                           "  reclaim_cost: run_time\n" +
                                           blocks);
    const RecoveryPolicy& r = t.policy().recovery;
    EXPECT_EQ(r.reclaim_from.qos, (std::vector<std::string>{"normal", "long"}));
    EXPECT_EQ(r.reclaim_from.accounts, std::vector<std::string>{"ml"});
    EXPECT_EQ(r.never_reclaim.partitions, std::vector<std::string>{"prod"});
    EXPECT_EQ(r.reclaim_cooldown_seconds, 7200);
    EXPECT_EQ(r.reclaim_per_user_per_day, 5);
    EXPECT_EQ(r.reclaim_per_hour, 0);
    EXPECT_EQ(r.reclaim_cost, ReclaimCost::kRunTime);
    const RecoveryPolicy defaults = test::yaml_topology(blocks).policy().recovery;
    EXPECT_TRUE(defaults.reclaim_from.empty());
    EXPECT_EQ(defaults.reclaim_cooldown_seconds, 3600);
    EXPECT_EQ(defaults.reclaim_per_user_per_day, 24);
    EXPECT_EQ(defaults.reclaim_cost, ReclaimCost::kRunTimeAndWait);
    const std::pair<std::string, std::string> bad[] = {
        {"recovery:\n  reclaim_from:\n    users: [bob]\n", "test.yaml:3: unknown key 'users' in recovery.reclaim_from"},
        {"recovery:\n  reclaim_from: normal\n", "test.yaml:2: recovery.reclaim_from must be a mapping"},
        {"recovery:\n  reclaim_limits:\n    per_hour: 0\n", "test.yaml:3: recovery.reclaim_limits.per_hour: "},
        {"recovery:\n  reclaim_cost: nodes\n",
         "test.yaml:2: recovery.reclaim_cost: expected run_time or run_time_and_wait, got 'nodes'"},
    };
    for (const auto& [text, want] : bad) {
        try {
            test::yaml_topology(text + blocks);
            ADD_FAILURE() << "accepted " << text;
        } catch (const ConfigError& e) {
            EXPECT_EQ(e.first().str().rfind(want, 0), 0u) << e.first().str();
        }
    }
}

} // namespace
} // namespace nvlblock
