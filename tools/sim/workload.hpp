// SPDX-License-Identifier: GPL-2.0-or-later
//
// Where jobs come from. A workload hands the simulator its jobs in submit
// order (open arrivals) and, for a saturating run, a generator the simulator
// asks for a new job whenever fewer than closed_target() of its jobs are
// waiting (closed loop: the queue never runs dry). Each policy gets its own
// clone(), which yields exactly the same sequence of jobs.
#pragma once

#include "sim_types.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvlblock::sim {

class Workload {
  public:
    virtual ~Workload() = default;
    // The next open arrival, in submit order; nullopt when there are no more.
    virtual std::optional<JobSpec> next_open() = 0;
    // Closed loop: keep this many generated jobs pending (0: none).
    virtual int closed_target() const { return 0; }
    // The next closed-loop job, submitted at `now`.
    virtual JobSpec next_closed(Seconds now);
    // Submit time of the last open arrival (the default end of the measured window); 0 if none.
    virtual Seconds last_open_submit() const = 0;
    // Total number of open arrivals, when known (for the progress bar); 0 if not.
    virtual std::size_t open_count() const { return 0; }
    virtual std::string describe() const = 0;
    virtual std::unique_ptr<Workload> clone() const = 0;
};

// A job trace read from a file: the same jobs, shared, for every clone.
class TraceWorkload : public Workload {
  public:
    TraceWorkload(std::shared_ptr<const std::vector<JobSpec>> jobs, std::string label);
    std::optional<JobSpec> next_open() override;
    Seconds last_open_submit() const override;
    std::size_t open_count() const override { return jobs_->size(); }
    std::string describe() const override { return label_; }
    std::unique_ptr<Workload> clone() const override;

  private:
    std::shared_ptr<const std::vector<JobSpec>> jobs_;
    std::string label_;
    std::size_t next_ = 0;
};

// Two workloads in one queue (a job trace plus the synthetic large-job mix):
// open arrivals merged by submit time (the first workload's first on ties),
// the closed loop, if any, from the second.
class MergedWorkload : public Workload {
  public:
    MergedWorkload(std::unique_ptr<Workload> first, std::unique_ptr<Workload> second);
    std::optional<JobSpec> next_open() override;
    int closed_target() const override { return second_->closed_target(); }
    JobSpec next_closed(Seconds now) override { return second_->next_closed(now); }
    Seconds last_open_submit() const override;
    std::size_t open_count() const override { return 0; }
    std::string describe() const override { return first_->describe() + " + " + second_->describe(); }
    std::unique_ptr<Workload> clone() const override;

  private:
    std::unique_ptr<Workload> first_, second_;
    std::optional<JobSpec> a_, b_;
    bool primed_ = false;
};

} // namespace nvlblock::sim
