// SPDX-License-Identifier: GPL-2.0-or-later
#include "capacity/monte_carlo.hpp"

#include <cmath>
#include <queue>
#include <random>

namespace nvlblock::capacity {
namespace {

struct Event {
    double time;
    int rack;
    int node; // -1: the rack fault itself
    bool operator>(const Event& o) const { return time > o.time; }
};

Estimate summarize(const std::vector<double>& xs) {
    Estimate e;
    if (xs.empty())
        return e;
    double sum = 0;
    for (double x : xs)
        sum += x;
    e.mean = sum / static_cast<double>(xs.size());
    if (xs.size() > 1) {
        double ss = 0;
        for (double x : xs)
            ss += (x - e.mean) * (x - e.mean);
        const double sd = std::sqrt(ss / static_cast<double>(xs.size() - 1));
        e.ci95 = 1.96 * sd / std::sqrt(static_cast<double>(xs.size()));
    }
    return e;
}

using EventQueue = std::priority_queue<Event, std::vector<Event>, std::greater<>>;

// Rack `r` at time 0, drawn from the stationary distribution so there is no
// warm-up bias: each node down with probability p, the rack itself down with
// its own (when rack faults are modelled); the first event of each queued.
// The draws keep their order (node by node, then the rack): same seed, same result.
void start_rack(const FailureModel& model, int n, double p, int r, std::mt19937_64& rng,
                std::exponential_distribution<double>& up, std::exponential_distribution<double>& down, EventQueue& q,
                std::vector<bool>& node_down, int& failed, std::vector<bool>& rack_down, int /*racks*/) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int i = 0; i < n; ++i) {
        node_down[i] = unit(rng) < p;
        failed += node_down[i];
        q.push({node_down[i] ? down(rng) : up(rng), r, i});
    }
    if (model.rack_mtbf_hours > 0) {
        const double pr = model.rack_mttr_hours / (model.rack_mtbf_hours + model.rack_mttr_hours);
        rack_down[r] = unit(rng) < pr;
        std::exponential_distribution<double> next(1.0 /
                                                   (rack_down[r] ? model.rack_mttr_hours : model.rack_mtbf_hours));
        q.push({next(rng), r, -1});
    }
}

} // namespace

MonteCarloResult simulate_availability(const RackShape& shape, const FailureModel& model,
                                       const std::vector<SliceSpec>& slices, double horizon_hours, int trials,
                                       std::uint64_t seed) {
    MonteCarloResult result;
    std::mt19937_64 rng(seed);
    const int n = shape.nodes_per_rack;
    const double p = model.node_unavailability();
    std::vector<double> healthy_samples;
    std::vector<std::vector<double>> usable_samples(slices.size());

    for (int trial = 0; trial < trials; ++trial) {
        std::exponential_distribution<double> up(1.0 / model.node_mtbi_hours);
        std::exponential_distribution<double> down(1.0 / model.node_mttr_hours);
        std::uniform_real_distribution<double> unit(0.0, 1.0);
        EventQueue q;
        std::vector<std::vector<bool>> node_down(shape.racks, std::vector<bool>(n, false));
        std::vector<int> failed(shape.racks, 0);
        std::vector<bool> rack_down(shape.racks, false);
        for (int r = 0; r < shape.racks; ++r)
            start_rack(model, n, p, r, rng, up, down, q, node_down[r], failed[r], rack_down, shape.racks);
        // Integrate per-rack usable capacity over time.
        auto rack_failed = [&](int r) { return rack_down[r] ? n : failed[r]; };
        double t = 0.0;
        double healthy_area = 0.0;
        std::vector<double> usable_area(slices.size(), 0.0);
        double healthy_now = 0;
        std::vector<double> usable_now(slices.size(), 0.0);
        for (int r = 0; r < shape.racks; ++r) {
            healthy_now += n - rack_failed(r);
            for (std::size_t s = 0; s < slices.size(); ++s)
                usable_now[s] += usable_in_rack(n, rack_failed(r), slices[s].slice, slices[s].spares);
        }
        while (!q.empty() && q.top().time < horizon_hours) {
            Event e = q.top();
            q.pop();
            ++result.events;
            const double dt = e.time - t;
            healthy_area += healthy_now * dt;
            for (std::size_t s = 0; s < slices.size(); ++s)
                usable_area[s] += usable_now[s] * dt;
            t = e.time;
            // Remove the rack's old contribution, change its state, add the new.
            const int before = rack_failed(e.rack);
            if (e.node < 0) {
                rack_down[e.rack] = !rack_down[e.rack];
                std::exponential_distribution<double> next(
                    1.0 / (rack_down[e.rack] ? model.rack_mttr_hours : model.rack_mtbf_hours));
                q.push({t + next(rng), e.rack, -1});
            } else {
                const bool was_down = node_down[e.rack][e.node];
                node_down[e.rack][e.node] = !was_down;
                failed[e.rack] += was_down ? -1 : 1;
                q.push({t + (was_down ? up(rng) : down(rng)), e.rack, e.node});
            }
            const int after = rack_failed(e.rack);
            if (before != after) {
                healthy_now += before - after;
                for (std::size_t s = 0; s < slices.size(); ++s)
                    usable_now[s] += usable_in_rack(n, after, slices[s].slice, slices[s].spares) -
                                     usable_in_rack(n, before, slices[s].slice, slices[s].spares);
            }
        }
        const double dt = horizon_hours - t;
        healthy_area += healthy_now * dt;
        for (std::size_t s = 0; s < slices.size(); ++s)
            usable_area[s] += usable_now[s] * dt;
        healthy_samples.push_back(healthy_area / horizon_hours);
        for (std::size_t s = 0; s < slices.size(); ++s)
            usable_samples[s].push_back(usable_area[s] / horizon_hours);
    }
    result.healthy = summarize(healthy_samples);
    for (const auto& xs : usable_samples)
        result.usable.push_back(summarize(xs));
    return result;
}

} // namespace nvlblock::capacity
