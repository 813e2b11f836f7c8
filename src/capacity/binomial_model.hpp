// SPDX-License-Identifier: GPL-2.0-or-later
//
// The availability arithmetic behind slices and spares (shared/design.md
// section 4). Each node is unavailable with probability p, independently;
// a rack with k failed nodes serves floor((n - max(k, spares)) / slice)
// slices. Expected usable nodes over R racks:
//   R * sum_k C(n,k) p^k (1-p)^(n-k) * floor((n - max(k, r)) / s) * s
#pragma once

namespace nvlblock::capacity {

struct RackShape {
    int racks = 128;
    int nodes_per_rack = 18;
};

// Nodes in slices that a rack with `failed` failed nodes can serve.
int usable_in_rack(int nodes_per_rack, int failed, int slice, int spares);

// Expected usable nodes (in whole slices) across the racks.
double expected_usable(const RackShape& shape, double p, int slice, int spares = 0);
// Expected healthy nodes: R * n * (1 - p).
double expected_healthy(const RackShape& shape, double p);
// P(exactly k of n nodes failed).
double binomial_pmf(int n, int k, double p);
// What spares buy: the chance that a job on a slice of the rack that loses
// one node finds a healthy spare there at once (at least one of `spares`
// nodes up: 1 - p^spares). With none, it restarts on its rack only if some
// node there happens to be free, which this model does not count: 0.
double in_place_chance(double p, int spares);

} // namespace nvlblock::capacity
