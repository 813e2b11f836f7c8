// SPDX-License-Identifier: GPL-2.0-or-later
#include "workload.hpp"

#include <algorithm>
#include <stdexcept>

namespace nvlblock::sim {

JobSpec Workload::next_closed(Seconds) {
    throw std::logic_error("this workload has no closed loop");
}

TraceWorkload::TraceWorkload(std::shared_ptr<const std::vector<JobSpec>> jobs, std::string label)
    : jobs_(std::move(jobs)), label_(std::move(label)) {}

std::optional<JobSpec> TraceWorkload::next_open() {
    if (next_ >= jobs_->size())
        return std::nullopt;
    return (*jobs_)[next_++];
}

Seconds TraceWorkload::last_open_submit() const {
    return jobs_->empty() ? 0 : jobs_->back().submit;
}

std::unique_ptr<Workload> TraceWorkload::clone() const {
    return std::make_unique<TraceWorkload>(jobs_, label_);
}

MergedWorkload::MergedWorkload(std::unique_ptr<Workload> first, std::unique_ptr<Workload> second)
    : first_(std::move(first)), second_(std::move(second)) {}

std::optional<JobSpec> MergedWorkload::next_open() {
    if (!primed_) {
        a_ = first_->next_open();
        b_ = second_->next_open();
        primed_ = true;
    }
    std::optional<JobSpec> out;
    if (a_ && (!b_ || a_->submit <= b_->submit)) {
        out = std::move(a_);
        a_ = first_->next_open();
    } else if (b_) {
        out = std::move(b_);
        b_ = second_->next_open();
    }
    return out;
}

Seconds MergedWorkload::last_open_submit() const {
    return std::max(first_->last_open_submit(), second_->last_open_submit());
}

std::unique_ptr<Workload> MergedWorkload::clone() const {
    return std::make_unique<MergedWorkload>(first_->clone(), second_->clone());
}

} // namespace nvlblock::sim
