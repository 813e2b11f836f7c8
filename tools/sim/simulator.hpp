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
    void fetch_arrival();
    bool finished() const;
    PolicyResult result(double wall_seconds) const;

    const SimOptions& opt_;
    World world_;
    Scheduler scheduler_;
    std::unique_ptr<Workload> workload_;
    FailureSource failures_;
    std::optional<JobSpec> next_arrival_;
    Seconds end_ = 0;
    bool stopped_ = false;
};

} // namespace nvlblock::sim
