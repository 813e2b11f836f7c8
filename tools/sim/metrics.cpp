// SPDX-License-Identifier: GPL-2.0-or-later
#include "metrics.hpp"

#include <algorithm>
#include <cmath>

namespace nvlblock::sim {

std::size_t size_class_of(std::uint32_t gpus) {
    if (gpus <= 4)
        return 0;
    if (gpus <= 32)
        return 1;
    if (gpus <= 64)
        return 2;
    if (gpus <= 256)
        return 3;
    if (gpus <= 1024)
        return 4;
    return 5;
}

namespace {

// The nearest rank's position among n > 0 values in ascending order.
std::size_t rank_index(double p, std::size_t n) {
    const double rank = std::ceil(p / 100.0 * static_cast<double>(n));
    const std::size_t i = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
    return std::min(i, n - 1);
}

} // namespace

double percentile(const std::vector<double>& sorted, double p) {
    return sorted.empty() ? 0.0 : sorted[rank_index(p, sorted.size())];
}

Metrics::Metrics(Seconds window_start, Seconds window_end, Seconds bucket)
    : start_(window_start), end_(std::max(window_end, window_start)), bucket_(std::max<Seconds>(1, bucket)) {
    const Seconds span = end_ - start_;
    buckets_.resize(static_cast<std::size_t>((span + bucket_ - 1) / bucket_));
}

template <typename Fn>
void Metrics::per_bucket(Seconds from, Seconds to, Fn&& fn) {
    from = std::max(from, start_);
    to = std::min(to, end_);
    while (from < to) {
        const auto i = static_cast<std::size_t>((from - start_) / bucket_);
        const Seconds edge = std::min(to, start_ + static_cast<Seconds>(i + 1) * bucket_);
        fn(buckets_[i], static_cast<double>(edge - from));
        from = edge;
    }
}

void Metrics::advance(Seconds from, Seconds to, const Levels& l) {
    const Seconds a = std::max(from, start_), b = std::min(to, end_);
    if (a >= b)
        return;
    const double dt = static_cast<double>(b - a);
    healthy_ += l.healthy * dt;
    busy_ += l.busy * dt;
    busy_pre_ += l.busy_preemptible * dt;
    stranded_ += l.stranded * dt;
    if (l.waiting)
        stranded_time_ += dt;
    if (l.standby) {
        standby_ += l.standby * dt;
        // Standbys do no work: the useful series leaves them out as it does lost work.
        per_bucket(a, b, [&](Bucket& k, double d) { k.lost += l.standby * d; });
    }
    per_bucket(a, b, [&](Bucket& k, double d) {
        k.healthy += l.healthy * d;
        k.busy += l.busy * d;
        k.busy_pre += l.busy_preemptible * d;
        k.stranded += l.stranded * d;
        k.pending += l.pending * d;
        k.running += l.running * d;
    });
}

void Metrics::lost(LossCause cause, std::uint32_t nodes, Seconds from, Seconds to) {
    const Seconds a = std::max(from, start_), b = std::min(to, end_);
    if (a >= b)
        return;
    const double ns = static_cast<double>(nodes) * static_cast<double>(b - a);
    (cause == LossCause::kFailure ? lost_failure_ : lost_preempt_) += ns;
    if (cause == LossCause::kReclaim)
        lost_reclaim_ += ns;
    per_bucket(a, b, [&](Bucket& k, double d) { k.lost += nodes * d; });
}

void Metrics::job_waited(std::uint32_t gpus, Seconds wait) {
    waits_[size_class_of(gpus)].push_back(static_cast<double>(wait));
}

void Metrics::job_responded(std::uint32_t gpus, Seconds response) {
    responses_[size_class_of(gpus)].push_back(static_cast<double>(response));
}

void Metrics::job_slowed(std::uint32_t gpus, Seconds response, Seconds run) {
    constexpr double kBound = 10; // seconds
    const double s = static_cast<double>(response) / std::max(static_cast<double>(run), kBound);
    slowdowns_[size_class_of(gpus)].push_back(std::max(1.0, s));
}

void Metrics::victim_done(bool reclaimed, bool preempted, Seconds extra) {
    const double x = static_cast<double>(std::max<Seconds>(0, extra));
    if (reclaimed)
        reclaimed_extra_.push_back(x);
    if (preempted)
        preempted_extra_.push_back(x);
}

void Metrics::job_spread(int racks, int sus, bool fits_one_su) {
    if (racks < 2)
        return;
    ++spread_.multi_rack;
    spread_.sus_spanned += sus;
    spread_.confined_any += sus == 1;
    if (fits_one_su) {
        ++spread_.fit_one_su;
        spread_.confined += sus == 1;
    }
}

void Metrics::restarted(bool in_place, Seconds delay, bool multi_node) {
    restart_delays_.push_back(static_cast<double>(delay));
    if (in_place)
        ++in_place_;
    if (multi_node) {
        multi_delays_.push_back(static_cast<double>(delay));
        if (in_place)
            ++multi_in_place_;
    }
}

namespace {

// Whole seconds (waits, responses, delays) are summed in any order: every
// partial sum is a whole number below 2^53, so exact. Other values
// (slowdowns) are summed in ascending order, as always: that order shows in
// the JSON. The percentiles are selected, not sorted for (a sort of every
// wait was 4% of a deep queue's run): each selection leaves the values below
// its rank before it, where the lower ranks are selected.
WaitStats stats_of(std::string name, std::vector<double> v, bool whole_seconds) {
    WaitStats s;
    s.size_class = std::move(name);
    s.count = v.size();
    if (v.empty())
        return s;
    if (!whole_seconds)
        std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / static_cast<double>(v.size());
    const auto at = [&](std::size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
    const std::size_t i99 = rank_index(99, v.size()), i95 = rank_index(95, v.size()), i50 = rank_index(50, v.size());
    std::nth_element(v.begin(), at(i99), v.end());
    s.p99 = v[i99];
    s.max = *std::max_element(at(i99), v.end());
    std::nth_element(v.begin(), at(i95), at(i99));
    s.p95 = v[i95];
    std::nth_element(v.begin(), at(i50), at(i95));
    s.p50 = v[i50];
    return s;
}

// "all", then each size class.
std::vector<WaitStats> stats_by_class(const std::vector<std::vector<double>>& by_class, bool whole_seconds) {
    std::vector<WaitStats> out;
    std::vector<double> all;
    for (const auto& w : by_class)
        all.insert(all.end(), w.begin(), w.end());
    out.push_back(stats_of("all", std::move(all), whole_seconds));
    for (std::size_t i = 0; i < kSizeClasses.size(); ++i)
        out.push_back(stats_of(kSizeClasses[i], by_class[i], whole_seconds));
    return out;
}

} // namespace

std::vector<WaitStats> Metrics::wait_stats() const {
    return stats_by_class(waits_, true);
}

std::vector<WaitStats> Metrics::response_stats() const {
    return stats_by_class(responses_, true);
}

std::vector<WaitStats> Metrics::slowdown_stats() const {
    return stats_by_class(slowdowns_, false);
}

WaitStats Metrics::victim_extra_stats(bool reclaimed) const {
    return stats_of(reclaimed ? "reclaimed" : "preempted", reclaimed ? reclaimed_extra_ : preempted_extra_, true);
}

WaitStats Metrics::restart_delay_stats() const {
    return stats_of("restart_delay", restart_delays_, true);
}

WaitStats Metrics::multi_node_restart_delay_stats() const {
    return stats_of("multi_node_restart_delay", multi_delays_, true);
}

std::vector<SeriesPoint> Metrics::series() const {
    std::vector<SeriesPoint> out;
    out.reserve(buckets_.size());
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
        SeriesPoint p;
        p.start = start_ + static_cast<Seconds>(i) * bucket_;
        p.end = std::min(end_, p.start + bucket_);
        const double span = static_cast<double>(p.end - p.start);
        const Bucket& k = buckets_[i];
        p.healthy = k.healthy / span;
        p.busy = k.busy / span;
        p.busy_preemptible = k.busy_pre / span;
        p.stranded = k.stranded / span;
        p.useful = (k.busy - k.lost) / span;
        p.pending = k.pending / span;
        p.running = k.running / span;
        out.push_back(p);
    }
    return out;
}

} // namespace nvlblock::sim
