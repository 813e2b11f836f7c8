// SPDX-License-Identifier: GPL-2.0-or-later
//
// Small builders for simulator tests: jobs, options for a 2-rack cluster, a run.
#pragma once

#include "simulator.hpp"

#include <memory>
#include <vector>

namespace nvlblock::sim::test {

inline JobSpec job(const char* name, Seconds submit, std::uint32_t nodes, Seconds duration, bool preemptible = false) {
    JobSpec j;
    j.name = name;
    j.submit = submit;
    j.nodes = nodes;
    j.duration = duration;
    j.preemptible = preemptible;
    return j;
}

inline JobSpec slice_job(const char* name, Seconds submit, std::uint32_t slices, Seconds duration) {
    JobSpec j = job(name, submit, 0, duration);
    j.kind = JobKind::kSlice;
    j.slices = slices;
    return j;
}

// 2 racks of 18, slice 16, 2 spares; checkpoints every 300 s, requeue delay
// 10 s, recovery wait 300 s, a backfill pass whenever something changes; the
// window is [0, 2000).
inline SimOptions two_racks(QueueMode queue = QueueMode::kFifo) {
    SimOptions o;
    o.shape.racks = 2;
    o.shape.nodes_per_rack = 18;
    o.shape.slice = 16;
    o.shape.spares = 2;
    o.shape.recovery_wait = 300;
    o.queue = queue;
    o.checkpoint_interval = 300;
    o.requeue_delay = 10;
    o.bf_interval = 0;
    // The worked examples keep a requeued job in its place (as under a
    // priority its requeue does not lower); those of Slurm's own order
    // (a requeued job behind every job submitted before it) set kRequeue.
    o.requeue_order = RequeueOrder::kSubmit;
    o.window_start = 0;
    o.window_end = 2000;
    o.bucket = 500;
    return o;
}

// The lending scenario (test_scenarios.cpp, Scenario.LendingRunsPreemptibleWorkOnSparesAndPreemptsItForARecovery):
// J1 and J2 fill the slices of rack001 and rack002, J3 and J4 are
// preemptible 1-node jobs on rack001's spares, J5 an ordinary 1-node job at
// 50; with node 5 failing at 400 (the failure {5, 400, 1400}) J1 restarts in place by
// preempting J4.
inline std::vector<JobSpec> lending_jobs() {
    return {job("J1", 0, 16, 900), job("J2", 0, 16, 1800), job("J3", 0, 1, 1200, true), job("J4", 0, 1, 1200, true),
            job("J5", 50, 1, 100)};
}

inline PolicyResult run(const SimOptions& o, PolicyKind kind, std::vector<JobSpec> jobs,
                        std::vector<FailureInterval> failures = {}, SimHooks hooks = {}) {
    auto shared = std::make_shared<const std::vector<JobSpec>>(std::move(jobs));
    Simulator sim(o, make_policy(kind, o.shape, o.preemption), std::make_unique<TraceWorkload>(shared, "test"),
                  failures.empty() ? FailureSource::none() : FailureSource::trace(std::move(failures)),
                  std::move(hooks));
    return sim.run();
}

inline const WaitStats& waits(const PolicyResult& r, const std::string& cls) {
    for (const auto& w : r.waits)
        if (w.size_class == cls)
            return w;
    throw std::runtime_error("no class " + cls);
}

} // namespace nvlblock::sim::test
