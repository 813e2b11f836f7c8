// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-sim: a discrete-event simulator of a cluster of NVLink-domain
// racks under a job trace and node failures, comparing placement policies
// side by side. Every placement is decided by nvlblock::Planner::place, the
// engine the Slurm plugin runs; the simulator only plays the rest of Slurm
// (queue order, backfill, requeue, preemption) and the world (jobs, failures).
#include "cli.hpp"
#include "csv_output.hpp"
#include "failure_model.hpp"
#include "json_output.hpp"
#include "plot.hpp"
#include "progress.hpp"
#include "run_info.hpp"
#include "run_main.hpp"
#include "simulator.hpp"
#include "synthetic.hpp"
#include "table_writer.hpp"
#include "trace_reader.hpp"
#include "units.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <thread>
#include <unistd.h>

#ifndef NVLBLOCK_SOURCE_DIR
#define NVLBLOCK_SOURCE_DIR "."
#endif

using namespace nvlblock;
using namespace nvlblock::sim;

namespace {

const char* kUsage = R"(usage: nvlblock-sim --trace FILE --racks N [options]

Simulates racks of NVLink domains under a job trace and node failures, and
compares placement policies side by side. Every placement is decided by the
same engine the Slurm plugin runs (nvlblock::Planner).

Cluster and policies:
  --trace FILE|synthetic:SPEC  job trace CSV (data/traces/README.md), or a
                         synthetic large-job mix (docs/sim.md), e.g.
                         synthetic:load=saturate,small_load=0.08
  --mix SPEC             add the synthetic mix SPEC to the trace FILE (one queue)
  --racks N              racks (NVLink domains)
  --nodes-per-rack N     nodes per rack (default 18)
  --slice N              slice for block and nvlblock (default 16)
  --spares N             spares per rack for nvlblock (default 2)
  --gpus-per-node N      (default 4)
  --policies LIST        any of full-rack,block,nvlblock,nvlblock+lend,recommended
                         and the peers block-expedite,nvrx-16+2 (docs/sim.md)
                         (default: the first five)
  --in-job-restart S     nvrx-16+2: from a failure absorbed by a standby in the
                         job to the job working again (default 60)
  --recovery-wait S      nvlblock's recovery.wait: hold a failed job's block this
                         long, then place it anywhere (default 300)
  --failure-window S|auto  nvlblock's recovery.failure_window: how long after a
                         requeued job's end a drained node still opens its
                         recovery (default auto: the kill wait plus the
                         requeue delay)
  --reclaim-budget S     recovery.reclaim_budget of the recommended policy: the
                         work requeued to restart a job in place stays below
                         its held nodes x S (default 3600)
  --hierarchy LIST       racks per group at each level above the racks, lowest
                         first, e.g. 8 (scalable units of 8 racks) or 8,64 (and
                         pods of 64): nvlblock.yaml groups for the nvlblock
                         policies, BlockSizes levels for block (powers of two);
                         the results then count how many SUs multi-rack jobs span
  --crossing strict|S    nvlblock policies' hierarchy.crossing: a job that has
                         waited S may cross to a larger level (default strict)
  --preemption MODE      where jobs of the preemptible QOS can be preempted by
                         other jobs: lend (only in policies that lend spares;
                         default), all (every policy), none; a reclaim
                         (recommended) preempts them only where this allows
  --reclaim-from qos=LIST  recovery.reclaim_from of the recommended policy:
                         jobs of these QOS (normal, scavenger) may be requeued
                         for an in-place restart beyond what preemption allows
                         (default: none)

Jobs that lose their nodes to a reclaim (PreemptMode=REQUEUE):
  --grace-time S         they keep their nodes S after the reclaim (Slurm's
                         GraceTime; default 0)
  --checkpoint-on-signal F  this share of jobs writes a checkpoint when
                         signalled and loses no work if the grace time covers
                         the write (default 0; drawn from --seed)
  --checkpoint-write S   the write takes S (default 0: any grace time covers it)
  --requeueable-share F  this share of jobs may be requeued; the rest
                         (--no-requeue) are never reclaimed (default 1)

Every job that loses its nodes (failure, preemption, reclaim):
  --checkpoint-share F   this share of jobs writes the periodic checkpoints of
                         --checkpoint-interval; the rest start over (default 1;
                         drawn from --seed)
  --checkpoint-restore S  a job restarted from a checkpoint loads it for S
                         before it works again (default 0)
  --kill-wait S          a killed job's nodes complete for S before they are
                         free: the most a job ignoring SIGTERM holds them
                         (Slurm's KillWait, 30 s by default there; default 0
                         here: free at once, the optimistic bound)

Failures:
  --failures MODEL|FILE  none (default); a model such as
                         mtbi=980h,mttr=20h,rack_mtbf=5000h,rack_mttr=8h or
                         p=2%,mttr=20h or llama3 (docs/sim.md); or a CSV trace
                         with columns node_id,down_s,up_s (0-based node ids)
  --failure-kinds SPEC   what each interruption of the model does (docs/sim.md,
                         "Failure kinds"): shares of down (the node dies,
                         NODE_FAIL), up (a GPU or network fault, the node up
                         until a health check drains it) and job (the job's
                         own fault): llama3 (the Llama 3 table's: default with
                         --failures llama3), down (default otherwise), up,
                         job, or down=W,up=W,job=W; with epilog=S|off (the
                         node Epilog drains S after the job's end; 0: the
                         job's script drains it; default 5s), periodic=S|off
                         (HealthCheckInterval; default 5m) and requeue=F (the
                         share of failed jobs whose exit status the site
                         requeues; default 1, as docs/admin.md 4.5 sets
                         RequeueExit)
  --seed S               random seed for failures and synthetic jobs (default 1)

Scheduling:
  --queue fifo|easy      queue policy (default easy: EASY backfill)
  --checkpoint-interval S  a failed or preempted job resumes from its last
                         checkpoint, taken every S seconds of run (default 3600; 0: never)
  --requeue-delay S      a requeued job cannot start before S after its nodes
                         stopped completing (--kill-wait) (default 11: cred_expire=10
                         + 1 as in the test clusters; Slurm's default is 121)
  --requeue-order requeue|submit  a requeued job queues behind every job
                         submitted before its requeue, as Slurm does (default),
                         or keeps its place by submit time (not Slurm's)
  --bf-interval S        at most one backfill pass per S seconds (default 30)
  --bf-max-job-test N    jobs a backfill pass examines (default 500)

Time:
  --horizon S            stop at S (default: when every job has finished)
  --warmup S             start of the measured window (default 0)
  --window-end S         end of the measured window (default: the horizon, else
                         the last submission)
  --time-scale F         multiply trace submit times and durations by F
  --max-jobs N           read only the first N jobs of the trace
  --preemptible-share F  submit this share of the trace's small jobs in the
                         preemptible QOS (default 0; drawn from --seed)
  --preemptible-max-nodes N  small = at most N nodes (default 1)
  --bucket S             time-series resolution (default: window / 400, whole minutes)
  Durations take a unit s, m, h or d (default seconds).

Output:
  --json OUT             results, one object per policy (docs/sim.md)
  --timing               include wall-clock figures in the JSON (not reproducible)
  --scan-changes         do not name changed nodes to the planner: every decision
                         compares every node (same results, slower; for benchmarks)
  --csv OUT              time series, one row per policy and bucket
  --plot PREFIX          PREFIX-utilization.png, PREFIX-stranded.png,
                         PREFIX-goodput.png (gnuplot)
  --log PREFIX           PREFIX-<policy>.csv: every start, end, failure, preemption
  --threads N            policies simulated in parallel (default: CPUs)
  --quiet                no progress bar, no summary table

Reported per policy (the table, --json; docs/sim.md "Metrics"): goodput and
utilization; per size class the wait to the first start, the response time
(submit to final end, restarts included) p50/p95 and the bounded slowdown;
restarts (in place, in the job, their delay); the victims of reclaims and of
Slurm's preemption: jobs moved, node-hours they lost, their extra time, the
most times one job was moved.
)";

Seconds seconds_arg(const cli::Args& a, const std::string& name, Seconds fallback) {
    if (!a.has(name))
        return fallback;
    try {
        return parse_seconds(a.str(name), 's', "--" + name);
    } catch (const ParseError& e) {
        throw cli::UsageError(e.what());
    }
}

double share_arg(const cli::Args& a, const std::string& name, double fallback) {
    const double v = a.number(name, fallback);
    if (!(v >= 0 && v <= 1))
        throw cli::UsageError("--" + name + " must be a fraction from 0 to 1");
    return v;
}

// --reclaim-from qos=normal,scavenger: the QOS names for recovery.reclaim_from.
// Simulated jobs carry a QOS only (no partition or account to name).
std::vector<std::string> reclaim_from_arg(const cli::Args& a) {
    if (!a.has("reclaim-from"))
        return {};
    const std::string text = a.str("reclaim-from");
    if (text.rfind("qos=", 0) != 0)
        throw cli::UsageError("--reclaim-from: '" + text + "' (expected qos=NAME[,NAME...])");
    std::vector<std::string> names = cli::split_list(text.substr(4));
    for (const std::string& n : names)
        if (n.empty() || n.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") !=
                             std::string::npos)
            throw cli::UsageError("--reclaim-from: '" + n + "' is not a QOS name");
    return names;
}

std::string command_line(int argc, char** argv) {
    std::string s;
    for (int i = 0; i < argc; ++i) {
        if (i)
            s += ' ';
        s += argv[i];
    }
    return s;
}

// Every option that takes a value (the flags are quiet, timing, scan-changes and help).
const std::vector<std::string> kValueOptions = {"trace",
                                                "racks",
                                                "nodes-per-rack",
                                                "slice",
                                                "spares",
                                                "gpus-per-node",
                                                "policies",
                                                "failures",
                                                "seed",
                                                "json",
                                                "csv",
                                                "plot",
                                                "log",
                                                "queue",
                                                "checkpoint-interval",
                                                "requeue-delay",
                                                "requeue-order",
                                                "recovery-wait",
                                                "reclaim-budget",
                                                "preemption",
                                                "horizon",
                                                "warmup",
                                                "window-end",
                                                "time-scale",
                                                "max-jobs",
                                                "bucket",
                                                "bf-interval",
                                                "bf-max-job-test",
                                                "threads",
                                                "preemptible-share",
                                                "preemptible-max-nodes",
                                                "mix",
                                                "hierarchy",
                                                "crossing",
                                                "reclaim-from",
                                                "grace-time",
                                                "checkpoint-on-signal",
                                                "checkpoint-write",
                                                "requeueable-share",
                                                "checkpoint-share",
                                                "checkpoint-restore",
                                                "kill-wait",
                                                "in-job-restart",
                                                "failure-kinds",
                                                "failure-window"};

// The cluster: racks, slices, spares, recovery settings and the hierarchy.
void read_shape(const cli::Args& args, ClusterShape& shape) {
    shape.racks = static_cast<int>(args.integer("racks", 128, 1, 100000));
    shape.nodes_per_rack = static_cast<int>(args.integer("nodes-per-rack", 18, 1, 1024));
    shape.slice = static_cast<int>(args.integer("slice", 16, 1, shape.nodes_per_rack));
    shape.spares = static_cast<int>(args.integer("spares", 2, 0, shape.nodes_per_rack - 1));
    shape.gpus_per_node = static_cast<int>(args.integer("gpus-per-node", 4, 1, 64));
    shape.recovery_wait = seconds_arg(args, "recovery-wait", shape.recovery_wait);
    shape.reclaim_budget = seconds_arg(args, "reclaim-budget", shape.reclaim_budget);
    if (args.has("failure-window") && args.str("failure-window") != "auto")
        shape.failure_window = seconds_arg(args, "failure-window", -1);
    shape.reclaim_from_qos = reclaim_from_arg(args);
    if (shape.slice + shape.spares > shape.nodes_per_rack)
        throw cli::UsageError("--slice + --spares exceed --nodes-per-rack");
    if (args.has("hierarchy")) {
        // An empty --hierarchy is one empty item, refused below.
        for (const std::string& item : cli::split_list(args.str("hierarchy"))) {
            char* end = nullptr;
            const long v = std::strtol(item.c_str(), &end, 10);
            if (item.empty() || *end || v < 2 || v > shape.racks)
                throw cli::UsageError("--hierarchy: '" + item + "' is not a number of racks from 2 to --racks");
            if (!shape.hierarchy.empty() && v % shape.hierarchy.back())
                throw cli::UsageError("--hierarchy: each level must be a multiple of the level below");
            shape.hierarchy.push_back(static_cast<int>(v));
        }
    }
    if (args.has("crossing")) {
        if (shape.hierarchy.empty())
            throw cli::UsageError("--crossing needs --hierarchy");
        if (args.str("crossing") != "strict")
            shape.crossing = seconds_arg(args, "crossing", -1);
    }
}

// How Slurm is modelled: queue, preemption, requeue, backfill, victims.
void read_options(const cli::Args& args, RunInfo& run) {
    SimOptions& opt = run.options;
    run.seed = static_cast<std::uint64_t>(args.integer("seed", 1, 0, INT64_MAX));
    const std::string queue = args.str("queue", "easy");
    if (queue != "easy" && queue != "fifo")
        throw cli::UsageError("--queue: '" + queue + "' (fifo or easy)");
    opt.queue = queue == "fifo" ? QueueMode::kFifo : QueueMode::kEasy;
    const std::string pre = args.str("preemption", "lend");
    if (pre == "lend")
        opt.preemption = PreemptionMode::kLend;
    else if (pre == "all")
        opt.preemption = PreemptionMode::kAll;
    else if (pre == "none")
        opt.preemption = PreemptionMode::kNone;
    else
        throw cli::UsageError("--preemption: '" + pre + "' (lend, all or none)");
    opt.checkpoint_interval = seconds_arg(args, "checkpoint-interval", 3600);
    opt.requeue_delay = seconds_arg(args, "requeue-delay", 11);
    const std::string order = args.str("requeue-order", "requeue");
    if (order != "submit" && order != "requeue")
        throw cli::UsageError("--requeue-order: '" + order + "' (requeue or submit)");
    opt.requeue_order = order == "requeue" ? RequeueOrder::kRequeue : RequeueOrder::kSubmit;
    opt.bf_interval = seconds_arg(args, "bf-interval", 30);
    opt.bf_max_job_test = static_cast<int>(args.integer("bf-max-job-test", 500, 1, 1000000));
    opt.note_changes = !args.has("scan-changes");
    opt.horizon = seconds_arg(args, "horizon", 0);
    opt.victims.grace_time = seconds_arg(args, "grace-time", 0);
    opt.victims.checkpoint_on_signal = share_arg(args, "checkpoint-on-signal", 0);
    opt.victims.checkpoint_write = seconds_arg(args, "checkpoint-write", 0);
    opt.victims.requeueable_share = share_arg(args, "requeueable-share", 1);
    opt.victims.checkpoint_share = share_arg(args, "checkpoint-share", 1);
    opt.victims.checkpoint_restore = seconds_arg(args, "checkpoint-restore", 0);
    opt.victims.kill_wait = seconds_arg(args, "kill-wait", 0);
    opt.victims.seed = run.seed;
    opt.in_job_restart = seconds_arg(args, "in-job-restart", opt.in_job_restart);
    if (opt.in_job_restart < 0)
        throw cli::UsageError("--in-job-restart must not be negative");
    if (opt.victims.grace_time < 0 || opt.victims.checkpoint_write < 0 || opt.victims.checkpoint_restore < 0 ||
        opt.victims.kill_wait < 0)
        throw cli::UsageError(
            "--grace-time, --checkpoint-write, --checkpoint-restore and --kill-wait must not be negative");
    opt.window_start = seconds_arg(args, "warmup", 0);
}

std::unique_ptr<Workload> synthetic_workload(const std::string& text, const RunInfo& run) {
    const SimOptions& opt = run.options;
    SyntheticSpec spec;
    try {
        spec = parse_synthetic(text);
        resolve_synthetic(spec, opt.shape.racks, opt.horizon, NVLBLOCK_SOURCE_DIR);
    } catch (const ParseError& e) {
        throw cli::UsageError(e.what());
    }
    if (spec.saturate && opt.horizon <= 0)
        throw cli::UsageError("a saturating workload never ends: give --horizon");
    return std::make_unique<SyntheticWorkload>(spec, opt.shape.nodes(), run.seed);
}

// A trace file's jobs (scaled, cut, some marked preemptible), with --mix's
// synthetic jobs added.
std::unique_ptr<Workload> trace_workload(const cli::Args& args, const std::string& trace, RunInfo& run) {
    std::unique_ptr<Workload> workload;
    TraceOptions to;
    to.time_scale = args.number("time-scale", 1.0);
    if (!(to.time_scale > 0))
        throw cli::UsageError("--time-scale must be positive");
    to.max_jobs = static_cast<std::uint32_t>(args.integer("max-jobs", 0, 0, 100000000));
    std::vector<JobSpec> rows = read_trace(trace, to);
    const double share = args.number("preemptible-share", 0.0);
    if (share < 0 || share > 1)
        throw cli::UsageError("--preemptible-share must be a fraction from 0 to 1");
    const auto max_nodes = static_cast<std::uint32_t>(args.integer("preemptible-max-nodes", 1, 1, 1000000));
    std::string label = trace + " (" + std::to_string(rows.size()) + " jobs";
    if (share > 0) {
        mark_preemptible(rows, share, max_nodes, run.seed);
        std::size_t marked = 0;
        for (const auto& j : rows)
            marked += j.preemptible;
        label += ", " + std::to_string(marked) + " of them preemptible";
    }
    label += ")";
    auto jobs = std::make_shared<const std::vector<JobSpec>>(std::move(rows));
    workload = std::make_unique<TraceWorkload>(jobs, label);
    if (args.has("mix")) {
        workload = std::make_unique<MergedWorkload>(std::move(workload), synthetic_workload(args.str("mix"), run));
        run.trace += " + synthetic:" + args.str("mix");
    }
    return workload;
}

// Workload: a trace, the synthetic mix, or a trace with the synthetic mix added (--mix).
std::unique_ptr<Workload> read_workload(const cli::Args& args, RunInfo& run) {
    const std::string trace = args.str("trace");
    run.trace = trace;
    std::unique_ptr<Workload> workload;
    if (trace.rfind("synthetic:", 0) == 0) {
        if (args.has("mix"))
            throw cli::UsageError(
                "--mix adds the synthetic mix to a trace file; with --trace synthetic:... give one spec");
        workload = synthetic_workload(trace.substr(10), run);
    } else if (trace == "synthetic") {
        workload = synthetic_workload(args.str("mix"), run);
    } else {
        workload = trace_workload(args, trace, run);
    }
    run.workload = workload->describe();
    return workload;
}

// Failures: one schedule from the seed, replayed identically by every policy.
FailureSource read_failures(const cli::Args& args, RunInfo& run) {
    SimOptions& opt = run.options;
    const ClusterShape& shape = opt.shape;
    run.failures_arg = args.str("failures", "none");
    FailureSource failures;
    try {
        failures =
            make_failure_source(run.failures_arg, shape.racks, shape.nodes_per_rack, shape.gpus_per_node, run.seed);
    } catch (const ParseError& e) {
        throw cli::UsageError(e.what());
    }
    run.failures = failures.describe();
    // What each interruption does: node down, a fault with the node up, or
    // a fault of the job (failure_kinds.hpp); the same draws for every policy.
    try {
        opt.kinds = default_failure_kinds(run.failures_arg, shape.gpus_per_node);
        if (args.has("failure-kinds")) {
            if (failures.empty())
                throw cli::UsageError("--failure-kinds needs --failures (a model, or a trace with a kind column)");
            opt.kinds = parse_failure_kinds(args.str("failure-kinds"), shape.gpus_per_node, opt.kinds);
        }
    } catch (const ParseError& e) {
        throw cli::UsageError(e.what());
    }
    opt.seed = run.seed;
    // A trace says each interruption's kind itself (its kind column); the
    // detection and requeue settings apply to it all the same.
    failures.set_kinds(opt.kinds, run.seed);
    if (failures.has_kinds())
        run.failures += "; " + std::string(failures.is_trace() ? "detection" : "kinds") + ": " +
                        describe_failure_kinds(opt.kinds, !failures.is_trace());
    return failures;
}

// The measured window and the time series' resolution.
void read_window(const cli::Args& args, SimOptions& opt, const Workload& workload) {
    const Seconds default_end = opt.horizon > 0 ? opt.horizon : workload.last_open_submit();
    opt.window_end = seconds_arg(args, "window-end", default_end);
    if (opt.horizon > 0 && opt.window_end > opt.horizon)
        throw cli::UsageError("--window-end is after --horizon");
    if (opt.window_end <= opt.window_start)
        throw cli::UsageError("the measured window is empty (window end " + std::to_string(opt.window_end) +
                              " s, warm-up " + std::to_string(opt.window_start) + " s)");
    const Seconds span = opt.window_end - opt.window_start;
    opt.bucket = seconds_arg(args, "bucket", std::max<Seconds>(60, (span / 400 + 59) / 60 * 60));
    if (opt.bucket <= 0)
        throw cli::UsageError("--bucket must be positive");
}

// Per-policy decision logs (--log PREFIX), their header written.
std::vector<std::unique_ptr<std::ofstream>> open_logs(const cli::Args& args, const std::vector<PolicyKind>& kinds) {
    std::vector<std::unique_ptr<std::ofstream>> logs(kinds.size());
    if (args.has("log"))
        for (std::size_t i = 0; i < kinds.size(); ++i) {
            const std::string path = args.str("log") + "-" + policy_name(kinds[i]) + ".csv";
            logs[i] = std::make_unique<std::ofstream>(path);
            if (!*logs[i])
                throw std::runtime_error("cannot write " + path);
            *logs[i] << "time_s,event,job,job_nodes,hosts,detail\n";
        }
    return logs;
}

// Why a run that never ended may not have: victims of Slurm's preemption
// that keep their place in the queue (--requeue-order submit) can take back
// the nodes their preemptors wait for, round after round (docs/sim.md,
// --kill-wait). Said where one job was preempted that often.
std::string churn_hint(const SimOptions& opt, std::uint64_t most_preemptions_one_job) {
    constexpr std::uint64_t kChurn = 100;
    if (most_preemptions_one_job < kChurn || opt.requeue_order != RequeueOrder::kSubmit)
        return "";
    return "; one job was preempted " + std::to_string(most_preemptions_one_job) +
           " times: preempted jobs keep their place in the queue and may take back the nodes their preemptors "
           "wait for (--requeue-order requeue queues them as Slurm does)";
}

// Every policy over the same workload and failures, --threads at a time,
// its wall time in run.wall_seconds; 1 if one failed (said on stderr).
int simulate(RunInfo& run, const std::vector<PolicyKind>& kinds, const Workload& workload,
             const FailureSource& failures, std::vector<std::unique_ptr<std::ofstream>>& logs, bool quiet,
             std::vector<PolicyResult>& results) {
    const SimOptions& opt = run.options;
    const ClusterShape& shape = opt.shape;
    ProgressBar bar(!quiet && isatty(STDERR_FILENO), kinds.size());
    const std::size_t open_jobs = workload.open_count();
    std::vector<std::string> errors(kinds.size());
    std::atomic<std::size_t> next{0};
    const auto wall0 = std::chrono::steady_clock::now();
    auto worker = [&] {
        for (std::size_t i; (i = next.fetch_add(1)) < kinds.size();) {
            try {
                SimHooks hooks;
                hooks.log = logs[i].get();
                Simulator sim(opt, make_policy(kinds[i], shape, opt.preemption), workload.clone(), failures,
                              std::move(hooks));
                results[i] = sim.run([&, i](Seconds now, std::uint64_t done) {
                    double f = opt.horizon > 0 ? static_cast<double>(now) / static_cast<double>(opt.horizon)
                               : open_jobs     ? static_cast<double>(done) / static_cast<double>(open_jobs)
                                               : static_cast<double>(now) / static_cast<double>(opt.window_end);
                    bar.update(i, f);
                });
                if (sim.stopped_at_max_time())
                    errors[i] = std::string("warning: ") + policy_name(kinds[i]) + ": stopped after " +
                                format_duration(static_cast<double>(opt.max_time)) +
                                " of simulated time with jobs left (give --horizon)" +
                                churn_hint(opt, results[i].most_preemptions_one_job);
            } catch (const std::exception& e) {
                errors[i] = std::string("error: ") + policy_name(kinds[i]) + ": " + e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < run.threads; ++t)
        pool.emplace_back(worker);
    worker();
    for (auto& t : pool)
        t.join();
    bar.finish();
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    int rc = 0;
    for (const auto& e : errors)
        if (!e.empty()) {
            std::fprintf(stderr, "nvlblock-sim: %s\n", e.c_str());
            if (e.rfind("error", 0) == 0)
                rc = 1;
        }
    return rc;
}

void write_outputs(const cli::Args& args, const RunInfo& run, const std::vector<PolicyResult>& results) {
    const ClusterShape& shape = run.options.shape;
    const std::string trace = args.str("trace");
    if (args.has("json")) {
        std::ofstream out(args.str("json"));
        if (!out)
            throw std::runtime_error("cannot write " + args.str("json"));
        out << results_json(run, results, args.has("timing"));
    }
    if (args.has("csv")) {
        std::ofstream out(args.str("csv"));
        if (!out)
            throw std::runtime_error("cannot write " + args.str("csv"));
        write_series_csv(out, results);
    }
    if (args.has("plot")) {
        char title[256];
        const std::string shown =
            trace.substr(trace.find_last_of('/') == std::string::npos ? 0 : trace.find_last_of('/') + 1);
        std::snprintf(title, sizeof title, "%d racks x %d nodes; %s; failures: %s; seed %llu", shape.racks,
                      shape.nodes_per_rack, shown.c_str(), run.failures_arg.c_str(),
                      static_cast<unsigned long long>(run.seed));
        const std::string err = write_plots(args.str("plot"), title, results);
        if (!err.empty())
            std::fprintf(stderr, "nvlblock-sim: %s\n", err.c_str());
    }
}

void print_rate(const RunInfo& run, const std::vector<PolicyResult>& results) {
    std::uint64_t events = 0;
    double busy = 0;
    for (const auto& r : results) {
        events += r.events;
        busy += r.wall_seconds;
    }
    std::fprintf(stderr,
                 "nvlblock-sim: %zu policies, %llu events in %.2f s wall (%d threads; %.0f events/s per thread)\n",
                 results.size(), static_cast<unsigned long long>(events), run.wall_seconds, run.threads,
                 busy > 0 ? static_cast<double>(events) / busy : 0.0);
}

int run(int argc, char** argv) {
    cli::Args args(argc, argv, kValueOptions, {"quiet", "timing", "scan-changes", "help"});
    if (args.has("help")) {
        std::cout << kUsage;
        return 0;
    }
    if (!args.positional().empty())
        throw cli::UsageError("unexpected argument '" + args.positional().front() + "'");
    if (!args.has("trace"))
        throw cli::UsageError("--trace is required");
    if (!args.has("racks"))
        throw cli::UsageError("--racks is required");
    RunInfo run;
    run.command = command_line(argc, argv);
    read_shape(args, run.options.shape);
    std::vector<PolicyKind> kinds;
    try {
        kinds = parse_policies(args.str("policies", "full-rack,block,nvlblock,nvlblock+lend,recommended"));
    } catch (const std::invalid_argument& e) {
        throw cli::UsageError(e.what());
    }
    read_options(args, run);
    const std::unique_ptr<Workload> workload = read_workload(args, run);
    const FailureSource failures = read_failures(args, run);
    read_window(args, run.options, *workload);
    const bool quiet = args.has("quiet");
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    run.threads =
        static_cast<int>(args.integer("threads", std::min<unsigned>(hw, static_cast<unsigned>(kinds.size())), 1, 256));
    std::vector<std::unique_ptr<std::ofstream>> logs = open_logs(args, kinds);
    std::vector<PolicyResult> results(kinds.size());
    if (const int rc = simulate(run, kinds, *workload, failures, logs, quiet, results))
        return rc;
    if (!quiet)
        write_table(std::cout, run, results);
    write_outputs(args, run, results);
    print_rate(run, results);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    return nvlblock::cli::run_main("nvlblock-sim", run, argc, argv);
}
