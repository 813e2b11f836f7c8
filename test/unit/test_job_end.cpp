// SPDX-License-Identifier: GPL-2.0-or-later
//
// A job's end as Slurm reports it (src/recovery/job_end.hpp) and what the
// core does with it (Recovery::job_ended, failure_watch.hpp): which paths are
// requeues, which nodes count as failed (drained ones too: a GPU or NVLink
// fault leaves the node up), the watch for a node an Epilog or health check
// drains after the job's end, and the counters by trigger and path.
#include "core/planner.hpp"
#include "recovery/job_end.hpp"
#include "recovery_log.hpp"
#include "test_support.hpp"
#include "writers/explain.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace nvlblock {
namespace {

using test::all;
using test::job;
using test::range;
using test::set;

constexpr std::uint32_t kJob = 42;
using test::kRack02First16;

// ---- The rules -------------------------------------------------------------------

TEST(JobEndRules, EveryRequeuePathOfABatchJob) {
    const unsigned batch = kEndBatch | kEndRequeueAllowed;
    EXPECT_EQ(requeue_path(batch | kEndNodeFail), RequeuePath::kNodeFail);
    EXPECT_EQ(requeue_path(batch | kEndPending | kEndCompleting), RequeuePath::kRequested);
    EXPECT_EQ(requeue_path(batch | kEndExitRequeues | kEndCompleting), RequeuePath::kExitCode);
    EXPECT_EQ(requeue_path(batch | kEndExitHolds | kEndCompleting), RequeuePath::kExitCode);
    // Slurm requeues after a node failure whatever --requeue says where it
    // requeues at all (requeue_on_resume_failure): NODE_FAIL without
    // COMPLETING is its sign.
    EXPECT_EQ(requeue_path(kEndBatch | kEndNodeFail), RequeuePath::kNodeFail);
}

TEST(JobEndRules, WhatIsNotARequeue) {
    const unsigned batch = kEndBatch | kEndRequeueAllowed;
    EXPECT_EQ(requeue_path(batch), RequeuePath::kNone);                                 // it ended
    EXPECT_EQ(requeue_path(batch | kEndNodeFail | kEndCompleting), RequeuePath::kNone); // killed, not requeued
    EXPECT_EQ(requeue_path(batch | kEndPending | kEndPreempted), RequeuePath::kNone);   // preemption
    EXPECT_EQ(requeue_path(batch | kEndExitRequeues | kEndPreempted), RequeuePath::kNone);
    EXPECT_EQ(requeue_path(kEndBatch | kEndExitRequeues), RequeuePath::kNone);             // --no-requeue
    EXPECT_EQ(requeue_path(batch | kEndExitRequeues | kEndCancelled), RequeuePath::kNone); // scancel
    EXPECT_EQ(requeue_path(kEndRequeueAllowed | kEndNodeFail), RequeuePath::kNone);        // srun, salloc
}

TEST(JobEndRules, RequeueExitWinsOverRequeueExitHold) {
    const unsigned ended = kEndBatch | kEndRequeueAllowed | kEndCompleting;
    EXPECT_TRUE(requeued_held(ended | kEndExitHolds));
    EXPECT_FALSE(requeued_held(ended | kEndExitHolds | kEndExitRequeues));
    EXPECT_FALSE(requeued_held(ended | kEndExitRequeues));
}

TEST(JobEndRules, WhichNodesCountAsFailedAndWhy) {
    EXPECT_FALSE(node_counts_as_failed(0)); // a healthy node of the job
    for (unsigned sign : {kNodeMissing, kNodeDown, kNodeNotResponding, kNodeFailing, kNodeNamedFailed, kNodeDrain})
        EXPECT_TRUE(node_counts_as_failed(sign)) << sign;
    EXPECT_EQ(trigger_of(kNodeDrain), FailureTrigger::kDrained);
    EXPECT_EQ(trigger_of(kNodeFailing), FailureTrigger::kDrained);
    EXPECT_EQ(trigger_of(kNodeDown | kNodeDrain), FailureTrigger::kDown);
    EXPECT_EQ(trigger_of(kNodeNotResponding | kNodeDrain), FailureTrigger::kDown);
}

// ---- Through the Planner -----------------------------------------------------------

// rack01 full of other work, rack02 runs kJob on its first 16 nodes, rack03
// and rack04 busy too: a waiting job can only go to rack02.
struct JobEndTest : ::testing::Test {
    Topology topo = test::racks(4, 18, 16, 2, false, "recovery:\n  wait: 60\n");
    Planner planner{topo};
    std::vector<NodeState> s = all(topo);

    void SetUp() override {
        planner.set_slurm_requeue_delay(121);
        set(s, range(0, 17), NodeState::kBusy);
        set(s, kRack02First16, NodeState::kBusy);
        set(s, range(36, 71), NodeState::kBusy);
    }
    JobEnd end_of(unsigned facts, std::int64_t at = 1000) const {
        JobEnd e;
        e.job_id = kJob;
        e.facts = kEndBatch | kEndRequeueAllowed | facts;
        e.ended_at = at;
        e.started_at = 100;
        for (NodeIndex n : kRack02First16)
            e.nodes.push_back({n, 0, ""});
        return e;
    }
    static void sign(JobEnd& e, NodeIndex n, unsigned signs, std::string reason = "") {
        for (EndedNode& x : e.nodes)
            if (x.node == n)
                x.signs = signs, x.reason = std::move(reason);
    }
    std::string log() {
        std::string out;
        for (const std::string& l : test::log_lines(planner))
            out += l + "\n";
        return out;
    }
};

TEST_F(JobEndTest, AGpuFaultRequeuedByItsExitCodeRestartsInPlace) {
    // The job's script drained its node and exited with a RequeueExit status.
    JobEnd e = end_of(kEndCompleting | kEndExitRequeues);
    sign(e, 20, kNodeDrain, "gpu-xid-79");
    EXPECT_EQ(planner.job_ended(e), JobEndOutcome::kOpened);
    EXPECT_EQ(log(), "nvlblock: recovery JobId=42 lost 1 of 16 nodes (gb0021) on rack02; holding rack02 for an "
                     "in-place restart (15 prior nodes + 1 spares), fallback after 60 s; drained: gb0021 "
                     "(gpu-xid-79); requeued by its exit status (RequeueExit)\n");
    set(s, kRack02First16, NodeState::kFree);
    set(s, {20}, NodeState::kDrained);
    // Nothing else takes rack02 while it waits.
    EXPECT_FALSE(planner.place(s, job(7, 8), 1010).placed());
    const Placement p = planner.place(s, job(kJob, 16), 1122);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_EQ(p.spares_used, 1u);
    EXPECT_EQ(std::count(p.nodes.begin(), p.nodes.end(), 20), 0);
    const LedgerCounters& c = planner.ledger().counters();
    EXPECT_EQ(c.failures, 1u);
    EXPECT_EQ(c.by_trigger[static_cast<std::size_t>(FailureTrigger::kDrained)], 1u);
    EXPECT_EQ(c.by_path[static_cast<std::size_t>(RequeuePath::kExitCode)], 1u);
}

TEST_F(JobEndTest, ScontrolRequeueWithADrainingNodeOpensARecovery) {
    JobEnd e = end_of(kEndPending | kEndCompleting);
    sign(e, 25, kNodeDrain, "nvlink");
    EXPECT_EQ(planner.job_ended(e), JobEndOutcome::kOpened);
    EXPECT_NE(log().find("; drained: gb0026 (nvlink); requeued by scontrol requeue (or by Slurm)"), std::string::npos);
    EXPECT_EQ(planner.ledger().counters().by_path[static_cast<std::size_t>(RequeuePath::kRequested)], 1u);
}

TEST_F(JobEndTest, ANodeFailureLogsAsBefore) {
    JobEnd e = end_of(kEndNodeFail);
    sign(e, 20, kNodeDown | kNodeNamedFailed);
    EXPECT_EQ(planner.job_ended(e), JobEndOutcome::kOpened);
    EXPECT_EQ(log(), "nvlblock: recovery JobId=42 lost 1 of 16 nodes (gb0021) on rack02; holding rack02 for an "
                     "in-place restart (15 prior nodes + 1 spares), fallback after 60 s\n");
    EXPECT_EQ(planner.ledger().counters().by_trigger[static_cast<std::size_t>(FailureTrigger::kDown)], 1u);
}

TEST_F(JobEndTest, NoRequeueNoRecoveryWhateverItsNodes) {
    for (unsigned facts : {unsigned{kEndCompleting}, kEndPending | kEndPreempted | kEndCompleting,
                           kEndNodeFail | kEndCompleting, kEndExitRequeues | kEndCancelled | kEndCompleting}) {
        JobEnd e = end_of(facts);
        sign(e, 20, kNodeDrain, "gpu");
        EXPECT_EQ(planner.job_ended(e), JobEndOutcome::kNothing) << facts;
    }
    EXPECT_TRUE(planner.recovery().watches().empty());
    EXPECT_EQ(planner.ledger().counters().failures, 0u);
    EXPECT_EQ(log(), "");
}

TEST_F(JobEndTest, ARequeueWithEveryNodeHealthyIsWatchedNotRecovered) {
    EXPECT_EQ(planner.job_ended(end_of(kEndPending | kEndCompleting)), JobEndOutcome::kWatching);
    EXPECT_EQ(log(), "");
    EXPECT_EQ(planner.ledger().counters().failures, 0u);
    EXPECT_TRUE(planner.ledger().empty());
    // One node still runs its Epilog: the fifteen released ones are held.
    set(s, kRack02First16, NodeState::kFree);
    set(s, {30}, NodeState::kBusy);
    EXPECT_FALSE(planner.place(s, job(7, 8), 1005).placed());
    // Its Epilog ended without a drain: nothing is held any more.
    set(s, {30}, NodeState::kFree);
    EXPECT_TRUE(planner.place(s, job(7, 8), 1006).placed());
    EXPECT_EQ(planner.advance(s, 1006), 0u);
    EXPECT_TRUE(planner.ledger().empty());
    // The window (Slurm's requeue delay here) ends the watch.
    EXPECT_EQ(planner.advance(s, 1121), 0u);
    EXPECT_TRUE(planner.recovery().watches().empty());
}

TEST_F(JobEndTest, ANodeDrainedByItsEpilogAfterTheEndOpensTheRecovery) {
    EXPECT_EQ(planner.job_ended(end_of(kEndCompleting | kEndExitRequeues)), JobEndOutcome::kWatching);
    set(s, kRack02First16, NodeState::kFree);
    set(s, {30}, NodeState::kBusy); // its Epilog runs on...
    EXPECT_EQ(planner.advance(s, 1004), 0u);
    set(s, {30}, NodeState::kDrained);                        // ...and drains it, released at once:
    EXPECT_FALSE(planner.place(s, job(7, 8), 1005).placed()); // still the job's before advance()
    EXPECT_FALSE(planner.place(s, job(8, 1), 1005).placed()); // its spare too
    EXPECT_EQ(planner.advance(s, 1006), 1u);
    EXPECT_TRUE(planner.recovery().watches().empty());
    const RecoveryRecord* r = planner.ledger().find(kJob);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->failed_at, 1000); // counted from the job's end
    EXPECT_EQ(r->failed, std::vector<NodeIndex>{30});
    EXPECT_EQ(log(), "nvlblock: recovery JobId=42 lost 1 of 16 nodes (gb0031) on rack02; holding rack02 for an "
                     "in-place restart (15 prior nodes + 1 spares), fallback after 60 s; gb0031 failed or "
                     "drained 6 s after the job ended; requeued by its exit status (RequeueExit)\n");
    EXPECT_EQ(planner.ledger().counters().by_trigger[static_cast<std::size_t>(FailureTrigger::kAfterEnd)], 1u);
    EXPECT_FALSE(planner.place(s, job(7, 8), 1010).placed());
    const Placement p = planner.place(s, job(kJob, 16), 1122);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_TRUE(p.recovery_in_place);
    EXPECT_EQ(p.spares_used, 1u);
}

TEST_F(JobEndTest, ARecoveryADrainOpensHoldsAndWaitsFromTheDrain) {
    // A 40 s window, a 30 s Epilog health check on gb0031: Slurm requeues
    // the job when that Epilog ends, and it cannot start before its requeue
    // delay after that (the simulator's failure kinds found holds counted
    // from the end running out the second the job became eligible).
    Topology t = test::racks(4, 18, 16, 2, false, "recovery:\n  wait: 60\n  failure_window: 40\n");
    Planner p{t};
    p.set_slurm_requeue_delay(121);
    EXPECT_EQ(p.job_ended(end_of(kEndCompleting | kEndExitRequeues)), JobEndOutcome::kWatching);
    set(s, kRack02First16, NodeState::kFree);
    set(s, {30}, NodeState::kBusy); // its Epilog still runs
    EXPECT_EQ(p.advance(s, 1020), 0u);
    set(s, {30}, NodeState::kDrained);
    EXPECT_EQ(p.advance(s, 1030), 1u);
    const RecoveryRecord* r = p.ledger().find(kJob);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->failed_at, 1000);   // the failure counts from the job's end...
    EXPECT_EQ(r->fallback_at, 1090); // ...its wait from the drain (before: 1060)
    EXPECT_EQ(r->hold_until, std::max<std::int64_t>(1090, 1030 + p.recovery().hold_delay()));
    std::string lines;
    for (const std::string& l : test::log_lines(p))
        lines += l + "\n";
    EXPECT_NE(lines.find("fallback after 60 s; gb0031 failed or drained 30 s after the job ended"), std::string::npos)
        << lines;
}

TEST_F(JobEndTest, AHeldRequeueDrainedLaterSaysItWasHeld) {
    planner.job_ended(end_of(kEndCompleting | kEndExitHolds));
    set(s, kRack02First16, NodeState::kFree);
    set(s, {30}, NodeState::kDrained);
    EXPECT_EQ(planner.advance(s, 1003), 1u);
    EXPECT_NE(log().find("; gb0031 failed or drained 3 s after the job ended; requeued held by its exit status "
                         "(RequeueExitHold)"),
              std::string::npos);
}

TEST_F(JobEndTest, ADrainAfterTheWindowIsNotTheJobs) {
    planner.job_ended(end_of(kEndPending | kEndCompleting));
    set(s, kRack02First16, NodeState::kFree);
    EXPECT_EQ(planner.advance(s, 1121), 0u); // window: 121 s
    set(s, {30}, NodeState::kDrained);
    EXPECT_EQ(planner.advance(s, 1130), 0u);
    EXPECT_TRUE(planner.ledger().empty());
}

TEST_F(JobEndTest, TheWindowIsASetting) {
    Topology t = test::racks(4, 18, 16, 2, false, "recovery:\n  wait: 60\n  failure_window: 10\n");
    Planner p{t};
    p.set_slurm_requeue_delay(121);
    EXPECT_EQ(failure_window(t, 121), 10);
    EXPECT_EQ(failure_window(topo, 121), 121);
    Topology off = test::racks(4, 18, 16, 2, false, "recovery:\n  failure_window: 0\n");
    Planner q{off};
    EXPECT_EQ(q.job_ended(end_of(kEndPending | kEndCompleting)), JobEndOutcome::kNothing);
}

TEST_F(JobEndTest, AWatchedJobThatRunsAgainOrLeavesIsNoLongerWatched) {
    planner.job_ended(end_of(kEndPending | kEndCompleting));
    planner.job_started(kJob, kRack02First16, 1050);
    EXPECT_TRUE(planner.recovery().watches().empty());
    planner.job_ended(end_of(kEndPending | kEndCompleting, 2000));
    planner.job_gone(kJob, 2001);
    EXPECT_TRUE(planner.recovery().watches().empty());
}

TEST_F(JobEndTest, ARestartedJobsNextEndCountsItsRestartFirst) {
    JobEnd first = end_of(kEndNodeFail);
    sign(first, 20, kNodeDown);
    planner.job_ended(first);
    // It restarted in place (gb0035 for gb0021) and its run ends by its
    // exit code with a drained node: the restart counts, a new recovery opens.
    JobEnd second = end_of(kEndCompleting | kEndExitRequeues, 3000);
    second.started_at = 1130;
    std::replace_if(
        second.nodes.begin(), second.nodes.end(), [](const EndedNode& n) { return n.node == 20; },
        EndedNode{34, 0, ""});
    sign(second, 25, kNodeDrain, "xid");
    EXPECT_EQ(planner.job_ended(second), JobEndOutcome::kOpened);
    const LedgerCounters& c = planner.ledger().counters();
    EXPECT_EQ(c.in_place, 1u);
    EXPECT_EQ(c.failures, 2u);
    EXPECT_EQ(planner.ledger().find(kJob)->failed_at, 3000);
}

TEST_F(JobEndTest, TheFailedRunEndedAgainWithoutAStartIsNoRestart) {
    // slurmctld, killed after requeueing the job and restarted, restores it
    // PENDING and COMPLETING on its old nodes and ends that run once more;
    // its record shows no start of a run (0, or the scheduler's estimate,
    // which the shim does not pass). Seen in the kill storm: the failed run
    // passed for a restart in place on its failed nodes and the hold ended.
    JobEnd first = end_of(kEndNodeFail);
    sign(first, 20, kNodeDown);
    ASSERT_EQ(planner.job_ended(first), JobEndOutcome::kOpened);
    log();
    JobEnd again = end_of(kEndPending | kEndCompleting, 1009);
    again.started_at = 0;
    sign(again, 20, kNodeDown);
    EXPECT_EQ(planner.job_ended(again), JobEndOutcome::kOpened);
    const LedgerCounters& c = planner.ledger().counters();
    EXPECT_EQ(c.in_place, 0u);
    EXPECT_EQ(c.failures, 1u);
    EXPECT_EQ(planner.ledger().find(kJob)->failed_at, 1000); // one failure, one clock
    EXPECT_NE(log().find("failure reported again (gb0021): the same run"), std::string::npos);
}

TEST_F(JobEndTest, APriorNodeDrainedAfterTheRequeueNeedsASpareToo) {
    JobEnd e = end_of(kEndNodeFail);
    sign(e, 20, kNodeDown);
    planner.job_ended(e);
    set(s, kRack02First16, NodeState::kFree);
    set(s, {20}, NodeState::kDown);
    set(s, {26}, NodeState::kDrained); // a health check, after the requeue
    // Both spares are held for it now, so a small job cannot take one.
    EXPECT_FALSE(planner.place(s, job(7, 1), 1010).placed());
    const Placement p = planner.place(s, job(kJob, 16), 1122);
    ASSERT_TRUE(p.placed()) << explain(topo, p);
    EXPECT_EQ(p.spares_used, 2u);
}

TEST_F(JobEndTest, CountersByKindSurviveARestartAndOldFilesStillLoad) {
    JobEnd e = end_of(kEndCompleting | kEndExitRequeues);
    sign(e, 20, kNodeDrain);
    planner.job_ended(e);
    const std::string saved = planner.save_state();
    EXPECT_NE(saved.find("counters 1 0 0 0 0 0 0 1 0 0 0 1 0\n"), std::string::npos) << saved;
    Planner again{topo};
    again.load_state(saved, "state");
    EXPECT_EQ(again.ledger().counters().by_trigger, planner.ledger().counters().by_trigger);
    EXPECT_EQ(again.ledger().counters().by_path, planner.ledger().counters().by_path);
    Planner old{topo};
    old.load_state("nvlblock-state 2\ncounters 3 1 1 1 0 0\nend 0 0 0\n", "old");
    EXPECT_EQ(old.ledger().counters().failures, 3u);
    EXPECT_EQ(old.ledger().counters().by_trigger[0], 0u);
}

} // namespace
} // namespace nvlblock
