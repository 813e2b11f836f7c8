// SPDX-License-Identifier: GPL-2.0-or-later
//
// The event loop of one policy: take every event of the next second (repairs,
// job ends, failures, arrivals, timers), apply it to the World, kill the
// jobs the failures hit (each with all of its failed nodes, so a rack fault
// is one event per job), run one scheduling pass, top up a saturating queue,
// and integrate the metrics over the time to the next event.
#pragma once

#include "failure_model.hpp"
#include "results.hpp"
#include "scheduler.hpp"
#include "workload.hpp"
#include "world.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace nvlblock::sim {

class Simulator {
  public:
    Simulator(const SimOptions& options, PolicyConfig policy, std::unique_ptr<Workload> workload,
              FailureSource failures, SimHooks hooks = {});

    // Called now and then with the simulated time and the jobs completed so far.
    using Progress = std::function<void(Seconds now, std::uint64_t completed)>;
    PolicyResult run(const Progress& progress = {});

    World& world() { return world_; }
    bool stopped_at_max_time() const { return stopped_; }

  private:
    // The jobs the failures of one second hit: by a node down (with its
    // failed nodes), by a fault with the node up (its faulty nodes), by a
    // fault of the job itself.
    struct Hits {
        std::map<std::uint32_t, std::vector<nvlblock::NodeIndex>> down, up;
        std::map<std::uint32_t, bool> job;
    };
    void push_cause(const FailureEvent& f);
    void cause_event(const Event& e, Seconds t, Hits& hits);
    // A health check drains a node with a hidden fault; its repair follows.
    // A job running on it fails with it (added to `hits`, when given).
    void drain(nvlblock::NodeIndex n, Seconds t, Hits* hits);
    // The node's first periodic health check after t.
    Seconds next_check(nvlblock::NodeIndex n, Seconds t) const;
    // The hit jobs end, each once, with all of its nodes that failed.
    void apply_hits(Seconds t, Hits& hits);
    bool past_the_end(Seconds t);
    void fault_hit(const Event& e, Seconds t, Hits& hits);
    void handle(const Event& e, Seconds t, Hits& hits);
    void schedule(Seconds t);
    void fetch_arrival();
    bool finished() const;
    PolicyResult result(double wall_seconds) const;

    const SimOptions& opt_;
    World world_;
    Scheduler scheduler_;
    std::unique_ptr<Workload> workload_;
    FailureSource failures_;
    std::optional<JobSpec> next_arrival_;
    std::vector<Seconds> check_phase_; // per node, in [0, periodic)
    Seconds end_ = 0;
    bool stopped_ = false;
};

} // namespace nvlblock::sim
