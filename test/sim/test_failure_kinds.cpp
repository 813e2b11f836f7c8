// SPDX-License-Identifier: GPL-2.0-or-later
//
// Failure kinds (tools/sim/failure_kinds.hpp): the Llama 3 table's split,
// the option's grammar, the draws, and hand-worked scenarios of a fault with
// the node up on the 2-rack cluster of test_scenarios.cpp (rack001 = nodes
// 0-17, rack002 = 18-35; checkpoints every 300 s; requeue delay 10 s, so the
// core's failure window is 10 s; recovery wait 300 s):
//   J1 16 nodes, 900 s, at 0     J2 16 nodes, 1800 s, at 0     J3 8 nodes, 600 s, at 100
// J1 runs on rack001 (0-15), J2 on rack002 (18-33); J3 finds no room (2 free
// nodes per rack) until a fault frees rack001.
#include "csv.hpp"
#include "failure_kinds.hpp"
#include "sim_test_support.hpp"
#include "units.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <unistd.h>

namespace nvlblock::sim {
namespace {

using test::job;

constexpr double kGpuH = 4.0 / 3600.0;

TEST(FailureKinds, TheBuiltInSplitIsTheDataFiles) {
    const Llama3Kinds file =
        read_llama3_kinds(std::string(NVLBLOCK_SOURCE_DIR) + "/data/traces/llama3_interruptions.csv");
    const Llama3Kinds built = llama3_kinds();
    EXPECT_EQ(file.gpu, built.gpu);
    EXPECT_EQ(file.other, built.other);
    // 419 interruptions: GPU 268 (all up); down 43, up 45, job 63 of the rest.
    EXPECT_EQ(built.gpu[0] + built.gpu[1] + built.gpu[2] + built.other[0] + built.other[1] + built.other[2], 419);
    // 8-GPU hosts: the table as it is; 4-GPU nodes: GPU rows halved (134 + 45 + 43 + 63 = 285).
    const auto host = llama3_kind_shares(8), node = llama3_kind_shares(4);
    EXPECT_NEAR(host[1], 313.0 / 419, 1e-12);
    EXPECT_NEAR(node[0], 43.0 / 285, 1e-12);
    EXPECT_NEAR(node[1], 179.0 / 285, 1e-12);
    EXPECT_NEAR(node[2], 63.0 / 285, 1e-12);
    EXPECT_THROW(llama3_component_kind("Cosmic Rays"), ParseError);
}

TEST(FailureKinds, ParsesSharesDetectionAndRequeue) {
    const FailureKindSpec base;
    const FailureKindSpec w = parse_failure_kinds("down=1,up=3", 4, base);
    EXPECT_DOUBLE_EQ(w.share[0], 0.25);
    EXPECT_DOUBLE_EQ(w.share[1], 0.75);
    EXPECT_DOUBLE_EQ(w.share[2], 0.0);
    EXPECT_EQ(w.epilog, 5);
    EXPECT_EQ(w.periodic, 300);
    const FailureKindSpec d = parse_failure_kinds("up,epilog=off,periodic=10m,requeue=90%", 4, base);
    EXPECT_DOUBLE_EQ(d.share[1], 1.0);
    EXPECT_EQ(d.epilog, -1);
    EXPECT_EQ(d.periodic, 600);
    EXPECT_DOUBLE_EQ(d.requeue, 0.9);
    EXPECT_EQ(parse_failure_kinds("llama3", 4, base).share, llama3_kind_shares(4));
    EXPECT_THROW(parse_failure_kinds("up,epilog=off,periodic=off", 4, base), ParseError); // never drained
    EXPECT_THROW(parse_failure_kinds("requeue=2", 4, base), ParseError);
    EXPECT_THROW(parse_failure_kinds("down=0", 4, base), ParseError);
    EXPECT_THROW(parse_failure_kinds("gpu", 4, base), ParseError);
}

TEST(FailureKinds, TheLlama3PresetBringsItsSharesOtherModelsAreNodeDown) {
    EXPECT_EQ(default_failure_kinds("llama3", 4).share, llama3_kind_shares(4));
    EXPECT_EQ(default_failure_kinds("mttr=8h,llama3", 4).share, llama3_kind_shares(4));
    EXPECT_TRUE(default_failure_kinds("p=2%,mttr=20h", 4).all_down());
}

TEST(FailureKinds, DrawnWithTheirSharesAtTheSameTimes) {
    const FailureModelSpec spec = parse_failure_model("mtbi=100h,mttr=1h", 4);
    FailureSource down = FailureSource::model(spec, 20, 18, 7), mixed = FailureSource::model(spec, 20, 18, 7);
    mixed.set_kinds(parse_failure_kinds("llama3", 4, FailureKindSpec{}), 7);
    EXPECT_FALSE(down.has_kinds());
    EXPECT_TRUE(mixed.has_kinds());
    const auto a = down.initial(), b = mixed.initial();
    ASSERT_EQ(a.size(), b.size());
    std::array<int, kFailureKindCount> seen{};
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].at, b[i].at); // the kinds draw from streams of their own
        EXPECT_EQ(a[i].kind, FailureKind::kDown);
        if (!b[i].initial)
            ++seen[static_cast<std::size_t>(b[i].kind)];
    }
    // Every later interruption of each node too, 40 per node.
    for (FailureEvent e : b)
        for (int k = 0; k < 80 && !e.initial; ++k) {
            e = *mixed.follow(e);
            if (e.down)
                ++seen[static_cast<std::size_t>(e.kind)];
        }
    const double n = seen[0] + seen[1] + seen[2];
    const auto want = llama3_kind_shares(4);
    for (std::size_t k = 0; k < kFailureKindCount; ++k)
        EXPECT_NEAR(seen[k] / n, want[k], 0.03) << failure_kind_name(static_cast<FailureKind>(k));
}

TEST(FailureKinds, ATraceSaysItsKinds) {
    const std::string path = "/tmp/nvlblock-sim-kinds-" + std::to_string(::getpid()) + ".csv";
    {
        std::ofstream f(path);
        f << "node_id,down_s,up_s,kind\n0,10,100,\n1,20,200,up\n2,30,,job\n";
    }
    const auto iv = read_failure_trace(path, 36);
    ASSERT_EQ(iv.size(), 3u);
    EXPECT_EQ(iv[0].kind, FailureKind::kDown);
    EXPECT_EQ(iv[1].kind, FailureKind::kUp);
    EXPECT_EQ(iv[2].kind, FailureKind::kJob);
    FailureSource s = FailureSource::trace(iv);
    EXPECT_TRUE(s.has_kinds());
    const auto first = s.initial();
    // An up fault's node comes back at up_s, or a second after its drain when that is later.
    EXPECT_EQ(s.follow({150, true, false, 1, 1, false, FailureKind::kUp})->at, 200);
    EXPECT_EQ(s.follow({250, true, false, 1, 1, false, FailureKind::kUp})->at, 251);
    EXPECT_FALSE(s.follow(first[2]).has_value()); // a job's fault leaves nothing to repair
    {
        std::ofstream f(path);
        f << "node_id,down_s,up_s,kind\n0,10,100,gpu\n";
    }
    EXPECT_THROW(read_failure_trace(path, 36), CsvError);
    std::remove(path.c_str());
}

// ---- Scenarios --------------------------------------------------------------

std::vector<JobSpec> three_jobs() {
    return {job("J1", 0, 16, 900), job("J2", 0, 16, 1800), job("J3", 100, 8, 600)};
}

SimOptions with_kinds(const std::string& kinds) {
    SimOptions o = test::two_racks();
    o.kinds = parse_failure_kinds(kinds, 4, FailureKindSpec{});
    return o;
}

// The start times of each job, from the simulator's log ("now,event,name,...").
std::string starts(const std::string& log) {
    std::istringstream in(log);
    std::string line, out;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string at, event, name;
        std::getline(f, at, ',');
        std::getline(f, event, ',');
        std::getline(f, name, ',');
        if (event == "start")
            out += name + "@" + at + " ";
    }
    return out;
}

struct Outcome {
    PolicyResult r;
    std::string log;
};

Outcome run(const SimOptions& o, PolicyKind kind, std::vector<JobSpec> jobs, std::vector<FailureInterval> failures) {
    std::ostringstream log;
    SimHooks hooks;
    hooks.log = &log;
    Outcome out{test::run(o, kind, std::move(jobs), std::move(failures), hooks), ""};
    out.log = log.str();
    return out;
}

TEST(FailureKindScenario, AGpuFaultDrainedByTheEpilogRestartsInPlaceUnderNvlblock) {
    // Node 5 (J1's) has a GPU fault at 400 with the node up: J1's processes
    // die and its nodes run their Epilog until 405, which drains node 5;
    // Slurm requeues J1 then (RequeueExit), eligible at 415.
    //   nvlblock: the core watches J1 (every node healthy at its end), holds
    //     its released nodes while node 5 completes, and opens its recovery
    //     when the drain shows at 405 (within the 10 s window): J3 cannot
    //     take rack001; J1 restarts at 415 on its 15 healthy nodes + a spare,
    //     15 s after the fault, 600 s left: ends 1015, when J3 starts.
    //   block: at 405 rack001's 17 healthy nodes are free and J3 takes 8;
    //     J1 waits for them until J3 ends at 1005.
    const SimOptions o = with_kinds("epilog=5s,periodic=off");
    const std::vector<FailureInterval> fault = {{5, 400, 1400, FailureKind::kUp}};
    const Outcome n = run(o, PolicyKind::kNvlblock, three_jobs(), fault);
    EXPECT_EQ(starts(n.log), "J1@0 J2@0 J1@415 J3@1015 ");
    EXPECT_EQ(n.r.up_faults, 1u);
    EXPECT_EQ(n.r.node_failures, 0u);
    EXPECT_EQ(n.r.fault_ends, 1u);
    EXPECT_EQ(n.r.failure_requeues, 1u);
    EXPECT_EQ(n.r.ledger_after_end, 1u);
    EXPECT_EQ(n.r.ledger_in_place, 1u);
    EXPECT_EQ(n.r.multi_node_in_place, 1u);
    EXPECT_DOUBLE_EQ(n.r.restart_delay.p50, 15);
    EXPECT_NEAR(n.r.lost_failure_gpu_hours, 16 * 100 * kGpuH, 1e-9); // back to its checkpoint at 300
    // Node 5 is drained from 405 to its repair at 1400.
    EXPECT_NEAR(n.r.healthy_gpu_hours, (36 * 2000 - 995) * kGpuH, 1e-9);
    const Outcome b = run(o, PolicyKind::kBlock, three_jobs(), fault);
    EXPECT_EQ(starts(b.log), "J1@0 J2@0 J3@405 J1@1005 ");
    EXPECT_DOUBLE_EQ(b.r.restart_delay.p50, 605);
}

// The same fault in Slurm's queue order (the simulator's default): the
// requeue puts J1 behind J3, which is waiting since 100.
//   sched/backfill: J3 heads the queue and cannot take rack001 (held for
//     J1) before J2 ends at 1800; J1 ends before that, so the backfill
//     starts it in its held block at 415, 15 s after the fault, and J3 takes
//     rack001 when J1 ends at 1015 (as in the example above).
//   sched/builtin: nothing behind a blocked job is tried, so J1 waits for
//     J3, and J3 for the hold: when J1's recovery falls back at 705 (405 +
//     the 300 s wait) J3 takes rack001; J1 runs after it, at 1305, on
//     rack001 again (a fallen-back job's own racks come first), 905 s after
//     the fault instead of 15.
TEST(FailureKindScenario, InSlurmsQueueOrderTheBackfillRestartsTheJobBehindAnEarlierOne) {
    SimOptions o = with_kinds("epilog=5s,periodic=off");
    o.requeue_order = RequeueOrder::kRequeue;
    o.queue = QueueMode::kEasy;
    const std::vector<FailureInterval> fault = {{5, 400, 1400, FailureKind::kUp}};
    const Outcome easy = run(o, PolicyKind::kNvlblock, three_jobs(), fault);
    EXPECT_EQ(starts(easy.log), "J1@0 J2@0 J1@415 J3@1015 ");
    EXPECT_EQ(easy.r.ledger_in_place, 1u);
    EXPECT_DOUBLE_EQ(easy.r.restart_delay.p50, 15);
    o.queue = QueueMode::kFifo;
    const Outcome fifo = run(o, PolicyKind::kNvlblock, three_jobs(), fault);
    EXPECT_EQ(starts(fifo.log), "J1@0 J2@0 J3@705 J1@1305 ");
    EXPECT_EQ(fifo.r.ledger_in_place, 1u);
    EXPECT_DOUBLE_EQ(fifo.r.restart_delay.p50, 905);
}

TEST(FailureKindScenario, AnEpilogLongerThanTheFailureWindowOpensNothing) {
    // The same fault, drained 30 s after J1's end: the core's window
    // (recovery.failure_window = Slurm's requeue delay, 10 s here) is over
    // at 410 with no node failed, so the drain at 430 is nobody's failure.
    // J3 takes rack001 when the Epilogs end at 430; J1 (eligible 440) waits
    // for it until 1030, as under block.
    const SimOptions o = with_kinds("epilog=30s,periodic=off");
    const Outcome n = run(o, PolicyKind::kNvlblock, three_jobs(), {{5, 400, 1400, FailureKind::kUp}});
    EXPECT_EQ(starts(n.log), "J1@0 J2@0 J3@430 J1@1030 ");
    EXPECT_EQ(n.r.ledger_failures, 0u);
    EXPECT_DOUBLE_EQ(n.r.restart_delay.p50, 630);
}

TEST(FailureKindScenario, AJobWhoseExitStatusIsNotRequeuedIsCountedNotLost) {
    // requeue=0: J1 leaves the queue at 400 with 600 s of its 16 nodes'
    // work left; the core opens nothing (not a requeue). J3 starts when
    // the Epilogs end at 405.
    const SimOptions o = with_kinds("epilog=5s,periodic=off,requeue=0");
    const Outcome n = run(o, PolicyKind::kNvlblock, three_jobs(), {{5, 400, 1400, FailureKind::kUp}});
    EXPECT_EQ(starts(n.log), "J1@0 J2@0 J3@405 ");
    EXPECT_EQ(n.r.jobs_not_requeued, 1u);
    EXPECT_NEAR(n.r.not_requeued_gpu_hours, 16 * 600 * kGpuH, 1e-9);
    EXPECT_EQ(n.r.jobs_completed, 2u);
    EXPECT_EQ(n.r.restarts, 0u);
    EXPECT_EQ(n.r.ledger_failures, 0u);
    EXPECT_NEAR(n.r.lost_failure_gpu_hours, 16 * 100 * kGpuH, 1e-9);
}

TEST(FailureKindScenario, AJobsOwnFaultDrainsNothingAndOpensNothing) {
    // A fault of J1 itself at 400: no node is faulty, so none is drained or
    // repaired; the core watches J1 and its window passes. The Epilogs end
    // at 405 and J3 takes rack001; J1 (eligible 415) waits for it. Not a
    // restart "in place or not": it lost no node.
    const SimOptions o = with_kinds("epilog=5s,periodic=off");
    const Outcome n = run(o, PolicyKind::kNvlblock, three_jobs(), {{5, 400, 0, FailureKind::kJob}});
    EXPECT_EQ(starts(n.log), "J1@0 J2@0 J3@405 J1@1005 ");
    EXPECT_EQ(n.r.job_faults, 1u);
    EXPECT_EQ(n.r.fault_ends, 1u);
    EXPECT_EQ(n.r.restarts, 0u);
    EXPECT_EQ(n.r.ledger_failures, 0u);
    EXPECT_NEAR(n.r.healthy_gpu_hours, 36 * 2000 * kGpuH, 1e-9);
}

TEST(FailureKindScenario, AFaultNoCheckHasFoundFailsTheNextJobOnTheNode) {
    // The four idle nodes (16, 17, 34, 35) get GPU faults at 50 while
    // idle. J4 (2 nodes, 300 s) arrives at 100; under block the only free
    // nodes are those four.
    //   no periodic check: J4 starts at 100 on two of them and fails 60 s
    //     later (hidden_fault_shows); its Epilog drains them at 165; it is
    //     eligible at 175 and starts on the other two, fails at 235, they are
    //     drained at 240; it then waits for J1's end at 900.
    //   a check every 30 s (drains each node at its phase, before 80): J4
    //     finds no free node and starts at 900.
    std::vector<JobSpec> jobs = {job("J1", 0, 16, 900), job("J2", 0, 16, 1800), job("J4", 100, 2, 300)};
    std::vector<FailureInterval> faults;
    for (std::uint32_t n : {16u, 17u, 34u, 35u})
        faults.push_back({n, 50, 1500, FailureKind::kUp});
    const Outcome hidden = run(with_kinds("epilog=5s,periodic=off"), PolicyKind::kBlock, jobs, faults);
    EXPECT_EQ(starts(hidden.log), "J1@0 J2@0 J4@100 J4@175 J4@900 ");
    EXPECT_EQ(hidden.r.hidden_fault_hits, 2u);
    EXPECT_EQ(hidden.r.fault_ends, 2u);
    const Outcome checked = run(with_kinds("epilog=5s,periodic=30s"), PolicyKind::kBlock, jobs, faults);
    EXPECT_EQ(starts(checked.log), "J1@0 J2@0 J4@900 ");
    EXPECT_EQ(checked.r.hidden_fault_hits, 0u);
    EXPECT_EQ(checked.r.fault_ends, 0u);
}

TEST(FailureKindScenario, ExpeditedRequeueRestartsAtTheEpilogsEndOrHoldsTheJob) {
    // Slurm 25.11's --requeue=expedite: a non-zero exit requeues the job
    // whatever RequeueExit says (requeue=0 here). With a GPU fault the
    // Epilog's check fails: J1 is eligible when the Epilogs end at 405 and
    // first in the queue, so it takes rack001's 17 healthy nodes before J3.
    // With a fault of the job itself every Epilog succeeds: Slurm holds J1
    // (REQUEUE_HOLD), counted as not requeued, and J3 takes the rack.
    const SimOptions o = with_kinds("epilog=5s,periodic=off,requeue=0");
    const Outcome up = run(o, PolicyKind::kBlockExpedite, three_jobs(), {{5, 400, 1400, FailureKind::kUp}});
    EXPECT_EQ(starts(up.log), "J1@0 J2@0 J1@405 J3@1005 ");
    EXPECT_EQ(up.r.jobs_not_requeued, 0u);
    EXPECT_DOUBLE_EQ(up.r.restart_delay.p50, 5);
    const Outcome job = run(o, PolicyKind::kBlockExpedite, three_jobs(), {{5, 400, 0, FailureKind::kJob}});
    EXPECT_EQ(starts(job.log), "J1@0 J2@0 J3@405 ");
    EXPECT_EQ(job.r.jobs_not_requeued, 1u);
}

TEST(FailureKindScenario, NvrxAbsorbsAGpuFaultInTheJob) {
    // One slice job on nvrx-16+2 takes rack001 whole (16 working + 2
    // standbys). A GPU fault on a working node at 400: NVRx finds it in
    // the job, a standby takes its place and the job restarts in the job
    // (60 s), from its checkpoint at 300; no requeue.
    SimOptions o = with_kinds("epilog=5s,periodic=off");
    const Outcome n = run(o, PolicyKind::kNvrx, {test::slice_job("S1", 0, 1, 900)}, {{5, 400, 1400, FailureKind::kUp}});
    EXPECT_EQ(starts(n.log), "S1@0 ");
    EXPECT_EQ(n.r.in_job_restarts, 1u);
    EXPECT_EQ(n.r.standbys_used, 1u);
    EXPECT_EQ(n.r.fault_ends, 0u);
    EXPECT_EQ(n.r.failure_requeues, 0u);
}

} // namespace
} // namespace nvlblock::sim
