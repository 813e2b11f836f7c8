// SPDX-License-Identifier: GPL-2.0-or-later
//
// The availability model: the numbers of shared/design.md section 4, the
// per-rack arithmetic, and the Monte Carlo model agreeing with the binomial
// one when failures are independent.
#include "capacity/binomial_model.hpp"
#include "capacity/monte_carlo.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

namespace nvlblock::capacity {
namespace {

std::string one_decimal(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

const RackShape kDesign{128, 18};

TEST(BinomialModel, DesignNumbers) {
    const double p = 0.02;
    const double s18 = expected_usable(kDesign, p, 18);
    const double s16 = expected_usable(kDesign, p, 16);
    const double s17 = expected_usable(kDesign, p, 17);
    const double healthy = expected_healthy(kDesign, p);
    EXPECT_NEAR(s18, 1601.6, 0.05);
    EXPECT_NEAR(s16, 2037.3, 0.05);
    EXPECT_NEAR(s17, 2068.3, 0.05);
    EXPECT_NEAR(healthy, 2257.9, 0.05);
    EXPECT_EQ(one_decimal(s18), "1601.6");
    EXPECT_EQ(one_decimal(s16), "2037.3");
    EXPECT_EQ(one_decimal(s17), "2068.3");
    EXPECT_EQ(one_decimal(healthy), "2257.9");
    // "+27.2%" for slice 16 over slice 18.
    EXPECT_EQ(one_decimal(100.0 * (s16 / s18 - 1.0)), "27.2");
}

TEST(BinomialModel, HealthyIsExact) {
    EXPECT_DOUBLE_EQ(expected_healthy(kDesign, 0.0), 2304.0);
    EXPECT_DOUBLE_EQ(expected_healthy({10, 18}, 0.5), 90.0);
}

TEST(BinomialModel, NoFailuresMeansWholeSlices) {
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.0, 18), 2304.0);
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.0, 16), 128.0 * 16);
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.0, 8), 128.0 * 16);
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.0, 1), 2304.0);
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 1.0, 1), 0.0);
}

TEST(BinomialModel, SparesOnlyMatterWhenTheyCostASlice) {
    // Slice 16 of 18 already leaves 2 nodes: spares 2 change nothing.
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.02, 16, 2), expected_usable(kDesign, 0.02, 16, 0));
    // Slice 8: two slices of 8 fit beside 2 spares, but a third spare costs a slice.
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.0, 8, 2), 128.0 * 16);
    EXPECT_DOUBLE_EQ(expected_usable(kDesign, 0.0, 8, 3), 128.0 * 8);
    EXPECT_LT(expected_usable(kDesign, 0.02, 8, 3), expected_usable(kDesign, 0.02, 8, 2));
}

// What spares buy: a spare of the rack up when a job's node fails.
TEST(BinomialModel, InPlaceChanceIsASpareUp) {
    EXPECT_DOUBLE_EQ(in_place_chance(0.02, 0), 0.0); // none counted without spares
    EXPECT_DOUBLE_EQ(in_place_chance(0.02, 1), 0.98);
    EXPECT_NEAR(in_place_chance(0.02, 2), 0.9996, 1e-12);
    EXPECT_DOUBLE_EQ(in_place_chance(0.0, 2), 1.0);
}

TEST(BinomialModel, UsableInRack) {
    EXPECT_EQ(usable_in_rack(18, 0, 16, 0), 16);
    EXPECT_EQ(usable_in_rack(18, 2, 16, 0), 16);
    EXPECT_EQ(usable_in_rack(18, 3, 16, 0), 0);
    EXPECT_EQ(usable_in_rack(18, 0, 18, 0), 18);
    EXPECT_EQ(usable_in_rack(18, 1, 18, 0), 0);
    EXPECT_EQ(usable_in_rack(18, 0, 17, 0), 17);
    EXPECT_EQ(usable_in_rack(18, 1, 17, 0), 17);
    EXPECT_EQ(usable_in_rack(18, 0, 8, 0), 16);
    EXPECT_EQ(usable_in_rack(18, 3, 8, 0), 8);
    EXPECT_EQ(usable_in_rack(18, 11, 8, 0), 0);
    // Spares are held whether or not anything failed; failures use them up.
    EXPECT_EQ(usable_in_rack(18, 0, 8, 3), 8);
    EXPECT_EQ(usable_in_rack(18, 3, 8, 3), 8);
    EXPECT_EQ(usable_in_rack(18, 0, 4, 2), 16);
    EXPECT_EQ(usable_in_rack(18, 5, 4, 2), 12);
    // Degenerate inputs.
    EXPECT_EQ(usable_in_rack(18, 18, 1, 0), 0);
    EXPECT_EQ(usable_in_rack(18, 25, 1, 0), 0);
    EXPECT_EQ(usable_in_rack(18, 0, 0, 0), 0);
    EXPECT_EQ(usable_in_rack(18, 0, -4, 0), 0);
    EXPECT_EQ(usable_in_rack(18, 0, 1, 20), 0);
}

TEST(BinomialModel, PmfValues) {
    EXPECT_DOUBLE_EQ(binomial_pmf(18, 0, 0.02), std::pow(0.98, 18));
    EXPECT_NEAR(binomial_pmf(18, 1, 0.02), 18 * 0.02 * std::pow(0.98, 17), 1e-14);
    EXPECT_NEAR(binomial_pmf(18, 2, 0.02), 153 * 0.0004 * std::pow(0.98, 16), 1e-14);
    EXPECT_NEAR(binomial_pmf(4, 2, 0.5), 6.0 / 16.0, 1e-15);
    EXPECT_EQ(binomial_pmf(18, -1, 0.02), 0.0);
    EXPECT_EQ(binomial_pmf(18, 19, 0.02), 0.0);
    EXPECT_EQ(binomial_pmf(18, 0, 0.0), 1.0);
    EXPECT_EQ(binomial_pmf(18, 1, 0.0), 0.0);
    EXPECT_EQ(binomial_pmf(18, 18, 1.0), 1.0);
    EXPECT_EQ(binomial_pmf(18, 17, 1.0), 0.0);
}

TEST(BinomialModel, PmfSumsToOne) {
    for (int n : {1, 8, 18, 72, 1000}) {
        for (double p : {0.0, 0.001, 0.02, 0.3, 0.5, 0.97, 1.0}) {
            double sum = 0.0, mean = 0.0;
            for (int k = 0; k <= n; ++k) {
                sum += binomial_pmf(n, k, p);
                mean += k * binomial_pmf(n, k, p);
            }
            EXPECT_NEAR(sum, 1.0, 1e-9) << "n=" << n << " p=" << p;
            EXPECT_NEAR(mean, n * p, 1e-7 * n) << "n=" << n << " p=" << p;
        }
    }
}

TEST(BinomialModel, MonotoneInP) {
    double last = expected_usable(kDesign, 0.0, 16);
    for (double p = 0.005; p < 0.2; p += 0.005) {
        const double u = expected_usable(kDesign, p, 16);
        EXPECT_LT(u, last) << p;
        last = u;
    }
}

// ---- Monte Carlo -----------------------------------------------------------------

// 16 racks of 18; p = 2 / (98 + 2) = 0.02. About 230,000 events in all:
// a few tens of milliseconds.
const RackShape kSmall{16, 18};

FailureModel independent() {
    FailureModel m;
    m.node_mtbi_hours = 98.0;
    m.node_mttr_hours = 2.0;
    m.rack_mtbf_hours = 0.0;
    return m;
}

TEST(MonteCarlo, UnavailabilityFromMtbiAndMttr) {
    EXPECT_DOUBLE_EQ(independent().node_unavailability(), 0.02);
    FailureModel d; // defaults: 980 h between interruptions, 20 h to repair
    EXPECT_DOUBLE_EQ(d.node_unavailability(), 0.02);
}

TEST(MonteCarlo, IndependentFailuresConvergeOnTheBinomialModel) {
    const FailureModel m = independent();
    const double p = m.node_unavailability();
    const std::vector<SliceSpec> slices = {{16, 0}, {18, 0}, {8, 2}};
    const MonteCarloResult r = simulate_availability(kSmall, m, slices, 2000.0, 20, 2);
    ASSERT_EQ(r.usable.size(), 3u);
    EXPECT_GT(r.events, 100000u);

    // Each estimate carries a 95% half-width over 20 independent trials. The
    // band allowed is twice that (about four standard errors) so the test does
    // not hinge on one seed or one standard library's distributions; a bias
    // of even 0.1% would still fall far outside it.
    const double want_healthy = expected_healthy(kSmall, p);
    EXPECT_GT(r.healthy.ci95, 0.0);
    EXPECT_LT(r.healthy.ci95, 0.001 * want_healthy);
    EXPECT_NEAR(r.healthy.mean, want_healthy, 2 * r.healthy.ci95);
    for (std::size_t i = 0; i < slices.size(); ++i) {
        const double want = expected_usable(kSmall, p, slices[i].slice, slices[i].spares);
        SCOPED_TRACE("slice " + std::to_string(slices[i].slice) + " spares " + std::to_string(slices[i].spares));
        EXPECT_GT(r.usable[i].ci95, 0.0);
        EXPECT_LT(r.usable[i].ci95, 0.005 * want);
        EXPECT_NEAR(r.usable[i].mean, want, 2 * r.usable[i].ci95);
    }
    // The ordering the design relies on: slice 16 beats slice 18 by far.
    EXPECT_GT(r.usable[0].mean, 1.2 * r.usable[1].mean);
}

TEST(MonteCarlo, CorrelatedRackFaultsLowerUsableCapacity) {
    FailureModel with_faults = independent();
    with_faults.rack_mtbf_hours = 200.0;
    with_faults.rack_mttr_hours = 8.0; // each rack is down 8/208 of the time
    const std::vector<SliceSpec> slices = {{16, 0}, {18, 0}};
    const MonteCarloResult base = simulate_availability(kSmall, independent(), slices, 2000.0, 20, 2);
    const MonteCarloResult corr = simulate_availability(kSmall, with_faults, slices, 2000.0, 20, 2);
    const double rack_up = 200.0 / 208.0;
    EXPECT_LT(corr.healthy.mean, base.healthy.mean - 3 * (corr.healthy.ci95 + base.healthy.ci95));
    EXPECT_NEAR(corr.healthy.mean, expected_healthy(kSmall, 0.02) * rack_up, 2.0);
    for (std::size_t i = 0; i < slices.size(); ++i) {
        EXPECT_LT(corr.usable[i].mean, base.usable[i].mean - 3 * (corr.usable[i].ci95 + base.usable[i].ci95));
        EXPECT_NEAR(corr.usable[i].mean, expected_usable(kSmall, 0.02, slices[i].slice) * rack_up, 2.0);
    }
    // Whole-rack faults widen the spread between trials.
    EXPECT_GT(corr.healthy.ci95, base.healthy.ci95);
    EXPECT_GT(corr.events, base.events);
}

TEST(MonteCarlo, DeterministicForASeed) {
    FailureModel m = independent();
    m.rack_mtbf_hours = 300.0;
    const std::vector<SliceSpec> slices = {{16, 2}};
    const MonteCarloResult a = simulate_availability({4, 18}, m, slices, 500.0, 5, 12345);
    const MonteCarloResult b = simulate_availability({4, 18}, m, slices, 500.0, 5, 12345);
    const MonteCarloResult c = simulate_availability({4, 18}, m, slices, 500.0, 5, 54321);
    EXPECT_EQ(a.events, b.events);
    EXPECT_EQ(a.healthy.mean, b.healthy.mean);
    EXPECT_EQ(a.healthy.ci95, b.healthy.ci95);
    EXPECT_EQ(a.usable.at(0).mean, b.usable.at(0).mean);
    EXPECT_EQ(a.usable.at(0).ci95, b.usable.at(0).ci95);
    EXPECT_NE(a.healthy.mean, c.healthy.mean);
}

TEST(MonteCarlo, OneTrialHasNoInterval) {
    const MonteCarloResult r = simulate_availability({2, 18}, independent(), {{16, 0}}, 100.0, 1, 1);
    EXPECT_GT(r.healthy.mean, 0.0);
    EXPECT_LE(r.healthy.mean, 36.0);
    EXPECT_EQ(r.healthy.ci95, 0.0);
    EXPECT_EQ(r.usable.at(0).ci95, 0.0);
    EXPECT_LE(r.usable[0].mean, 32.0);
    // Usable nodes come in whole slices per rack, healthy ones do not.
    EXPECT_LE(r.usable[0].mean, r.healthy.mean);
}

TEST(MonteCarlo, NoTrialsNoSlices) {
    const MonteCarloResult r = simulate_availability({2, 18}, independent(), {}, 100.0, 0, 1);
    EXPECT_EQ(r.events, 0u);
    EXPECT_EQ(r.healthy.mean, 0.0);
    EXPECT_TRUE(r.usable.empty());
}

} // namespace
} // namespace nvlblock::capacity
