// SPDX-License-Identifier: GPL-2.0-or-later
//
// Availability over time rather than as a static p: every node fails after an
// exponential time with mean MTBI and is repaired after an exponential time
// with mean MTTR; whole-rack faults (a switch tray, power) arrive per rack with
// their own mean interval and repair time and take every node of the rack.
// Reports time-averaged usable and healthy nodes with a 95% confidence
// interval over independent trials. With rack faults off this converges on
// the binomial model at p = MTTR / (MTBI + MTTR).
#pragma once

#include "capacity/binomial_model.hpp"

#include <cstdint>
#include <vector>

namespace nvlblock::capacity {

struct FailureModel {
    double node_mtbi_hours = 980.0;
    double node_mttr_hours = 20.0;
    double rack_mtbf_hours = 0.0; // 0: no correlated rack faults
    double rack_mttr_hours = 8.0;

    double node_unavailability() const { return node_mttr_hours / (node_mtbi_hours + node_mttr_hours); }
};

struct SliceSpec {
    int slice = 16;
    int spares = 0;
};

struct Estimate {
    double mean = 0.0;
    double ci95 = 0.0; // half-width
};

struct MonteCarloResult {
    Estimate healthy;
    std::vector<Estimate> usable; // one per SliceSpec, same order
    std::uint64_t events = 0;
};

MonteCarloResult simulate_availability(const RackShape& shape, const FailureModel& model,
                                       const std::vector<SliceSpec>& slices, double horizon_hours, int trials,
                                       std::uint64_t seed);

} // namespace nvlblock::capacity
