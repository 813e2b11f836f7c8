// SPDX-License-Identifier: GPL-2.0-or-later
#include "capacity/binomial_model.hpp"

#include <algorithm>
#include <cmath>

namespace nvlblock::capacity {

int usable_in_rack(int nodes_per_rack, int failed, int slice, int spares) {
    if (slice <= 0)
        return 0;
    const int room = nodes_per_rack - std::max(failed, spares);
    return room <= 0 ? 0 : room / slice * slice;
}

double binomial_pmf(int n, int k, double p) {
    if (k < 0 || k > n)
        return 0.0;
    // lgamma keeps this exact enough for any rack size and avoids overflow.
    const double log_c = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
    if (p <= 0.0)
        return k == 0 ? 1.0 : 0.0;
    if (p >= 1.0)
        return k == n ? 1.0 : 0.0;
    return std::exp(log_c + k * std::log(p) + (n - k) * std::log1p(-p));
}

double expected_usable(const RackShape& shape, double p, int slice, int spares) {
    double per_rack = 0.0;
    for (int k = 0; k <= shape.nodes_per_rack; ++k)
        per_rack += binomial_pmf(shape.nodes_per_rack, k, p) * usable_in_rack(shape.nodes_per_rack, k, slice, spares);
    return shape.racks * per_rack;
}

double in_place_chance(double p, int spares) {
    return spares > 0 ? 1.0 - std::pow(p, spares) : 0.0;
}

double expected_healthy(const RackShape& shape, double p) {
    return static_cast<double>(shape.racks) * shape.nodes_per_rack * (1.0 - p);
}

} // namespace nvlblock::capacity
