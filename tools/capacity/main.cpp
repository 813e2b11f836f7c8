// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-capacity: how many nodes racks of NVLink domains deliver in whole
// slices when nodes fail, for any slice size and spare count. The binomial
// model by default; --monte-carlo for failures and repairs over time with
// correlated whole-rack faults.
#include "capacity/binomial_model.hpp"
#include "capacity/monte_carlo.hpp"
#include "cli.hpp"
#include "run_main.hpp"
#include "writers/json_writer.hpp"

#include <cstdio>
#include <iostream>
#include <set>

using namespace nvlblock;
using namespace nvlblock::capacity;

namespace {

const char* kUsage = R"(usage: nvlblock-capacity [options]

Expected usable nodes (in whole slices) of R racks of n nodes when nodes fail.

  --racks N              racks (default 128)
  --nodes-per-rack N     nodes per rack / NVLink domain (default 18)
  --unavailability P     per-node unavailability, a fraction or a percentage
                         (0.02 or 2%); a comma list gives one column each
                         (default 0.02)
  --table                shorthand for --unavailability 0.01,0.02,0.03,0.04,0.05
  --slices LIST          slice sizes to compare (default n, n-1, n-2)
  --spares LIST          spare counts to compare (default: with neither option,
                         n - slice for each default slice: 18+0, 17+1, 16+2;
                         with --slices alone, 0)
  --json                 machine-readable output

Monte Carlo (failures over time instead of a fixed P):
  --monte-carlo          simulate instead of using the binomial model
  --mtbi HOURS           mean time between interruptions per node (default 980)
  --mttr HOURS           mean time to repair a node (default 20)
  --rack-mtbf HOURS      mean time between whole-rack faults per rack (default 0: none)
  --rack-mttr HOURS      mean time to repair a rack fault (default 8)
  --horizon HOURS        simulated time per trial (default 8760)
  --trials N             independent trials, for the confidence interval (default 20)
  --seed S               random seed (default 1)
)";

struct Row {
    SliceSpec spec;
    std::vector<Estimate> usable; // one per column
};

void print_table(const RackShape& shape, const std::vector<std::string>& columns, const std::vector<Estimate>& healthy,
                 const std::vector<Row>& rows, bool with_ci) {
    std::printf("%-6s %-6s", "slice", "spares");
    for (const auto& c : columns)
        std::printf(" %*s", with_ci ? 22 : 14, c.c_str());
    std::printf("\n");
    for (const auto& r : rows) {
        std::printf("%6d %6d", r.spec.slice, r.spec.spares);
        for (std::size_t i = 0; i < r.usable.size(); ++i) {
            const double share = healthy[i].mean > 0 ? 100.0 * r.usable[i].mean / healthy[i].mean : 0.0;
            char cell[64];
            if (with_ci)
                std::snprintf(cell, sizeof cell, "%s ±%s (%4.1f%%)", cli::grouped(r.usable[i].mean, 1).c_str(),
                              cli::grouped(r.usable[i].ci95, 1).c_str(), share);
            else
                std::snprintf(cell, sizeof cell, "%s (%4.1f%%)", cli::grouped(r.usable[i].mean, 1).c_str(), share);
            std::printf(" %*s", with_ci ? 22 : 14, cell);
        }
        std::printf("\n");
    }
    std::printf("%-13s", "healthy");
    for (const auto& h : healthy) {
        char cell[64];
        if (with_ci)
            std::snprintf(cell, sizeof cell, "%s ±%s", cli::grouped(h.mean, 1).c_str(),
                          cli::grouped(h.ci95, 1).c_str());
        else
            std::snprintf(cell, sizeof cell, "%s", cli::grouped(h.mean, 1).c_str());
        std::printf(" %*s", with_ci ? 22 : 14, cell);
    }
    std::printf("\n(%d racks x %d nodes = %s nodes; usable = nodes in whole slices; %% of healthy)\n", shape.racks,
                shape.nodes_per_rack, cli::grouped(shape.racks * shape.nodes_per_rack, 0).c_str());
}

// What spares buy (a failed slice job restarts on its rack at once) and
// what they cost (nodes kept from ordinary work with `reserve: idle`; none
// with `reserve: reclaim`, which moves preemptible work instead).
void print_spares_table(const RackShape& shape, const std::vector<std::string>& columns, const std::vector<double>& ps,
                        const std::vector<Row>& rows) {
    const int nodes = shape.racks * shape.nodes_per_rack;
    std::printf("\nwhat spares buy (restarts in place) and cost (nodes withheld)\n%-6s %-6s %16s", "slice", "spares",
                "withheld (idle)");
    for (const auto& c : columns)
        std::printf(" %14s", c.c_str());
    std::printf("\n");
    for (const auto& r : rows) {
        const int withheld = shape.racks * r.spec.spares;
        char cell[64];
        std::snprintf(cell, sizeof cell, "%s (%4.1f%%)", cli::grouped(withheld, 0).c_str(), 100.0 * withheld / nodes);
        std::printf("%6d %6d %16s", r.spec.slice, r.spec.spares, cell);
        for (double p : ps) {
            if (r.spec.spares == 0)
                std::snprintf(cell, sizeof cell, "-");
            else
                std::snprintf(cell, sizeof cell, "%.2f%%", 100.0 * in_place_chance(p, r.spec.spares));
            std::printf(" %14s", cell);
        }
        std::printf("\n");
    }
    std::printf("(p columns: the chance a slice job that loses a node finds a spare of its rack up and restarts\n"
                " there at once; without spares, only where a node happens to be free. withheld: nodes kept from\n"
                " ordinary work with reserve: idle; reserve: reclaim withholds none, it moves preemptible work)\n");
}

// --NAME's comma-separated whole numbers, each from lo to hi.
std::vector<int> counts(const cli::Args& args, const std::string& name, int lo, int hi, const std::string& what) {
    std::vector<int> out;
    for (const auto& s : args.list(name)) {
        char* end = nullptr;
        long v = std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end || v < lo || v > hi)
            throw cli::UsageError("--" + name + ": '" + s + "' is not " + what + " from " + std::to_string(lo) +
                                  " to " + std::to_string(hi));
        out.push_back(static_cast<int>(v));
    }
    return out;
}

// The rows asked for: every --slices with every --spares; neither given, the
// rack's own choices, n - k nodes per slice with k spares (18 + 0, 17 + 1,
// 16 + 2 on an NVL72 rack). A row that does not fit is said, not dropped.
std::vector<SliceSpec> slice_specs(const cli::Args& args, int n) {
    std::vector<int> slices = counts(args, "slices", 1, n, "a slice size");
    std::vector<int> spares = counts(args, "spares", 0, n - 1, "a spare count");
    if (slices.empty())
        for (int s : {n, n - 1, n - 2})
            if (s >= 1)
                slices.push_back(s);
    const bool paired = !args.has("slices") && !args.has("spares");
    if (spares.empty())
        spares.push_back(0);
    std::vector<SliceSpec> specs;
    for (int s : slices)
        for (int r : paired ? std::vector<int>{n - s} : spares) {
            if (s + r <= n)
                specs.push_back({s, r});
            else
                std::fprintf(stderr, "nvlblock-capacity: slice %d + %d spares does not fit in %d nodes: left out\n", s,
                             r, n);
        }
    if (specs.empty())
        throw cli::UsageError("no slice and spare combination fits in " + std::to_string(n) + " nodes");
    return specs;
}

// The table's columns: one per unavailability (binomial), or the one a
// Monte Carlo failure model gives.
struct Columns {
    bool mc = false;
    std::vector<std::string> labels;
    std::vector<Estimate> healthy;
    std::vector<double> ps; // binomial: each column's unavailability
    FailureModel model;     // Monte Carlo
    double horizon = 0;
    int trials = 0;
    std::uint64_t seed = 0, events = 0;

    double unavailability(std::size_t c) const { return mc ? model.node_unavailability() : ps[c]; }
};

Columns monte_carlo(const cli::Args& args, const RackShape& shape, const std::vector<SliceSpec>& specs,
                    std::vector<Row>& rows) {
    Columns c;
    c.mc = true;
    c.model.node_mtbi_hours = args.number("mtbi", 980.0);
    c.model.node_mttr_hours = args.number("mttr", 20.0);
    c.model.rack_mtbf_hours = args.number("rack-mtbf", 0.0);
    c.model.rack_mttr_hours = args.number("rack-mttr", 8.0);
    if (c.model.node_mtbi_hours <= 0 || c.model.node_mttr_hours <= 0 || c.model.rack_mtbf_hours < 0 ||
        c.model.rack_mttr_hours <= 0)
        throw cli::UsageError("--mtbi, --mttr and --rack-mttr must be positive, --rack-mtbf 0 or positive");
    c.horizon = args.number("horizon", 8760.0);
    if (c.horizon <= 0)
        throw cli::UsageError("--horizon must be positive");
    c.trials = static_cast<int>(args.integer("trials", 20, 2, 100000));
    c.seed = static_cast<std::uint64_t>(args.integer("seed", 1, 0, INT64_MAX));
    MonteCarloResult r = simulate_availability(shape, c.model, specs, c.horizon, c.trials, c.seed);
    char label[64];
    std::snprintf(label, sizeof label, "MC p=%.2f%%", 100 * c.model.node_unavailability());
    c.labels.push_back(label);
    c.healthy.push_back(r.healthy);
    for (std::size_t i = 0; i < rows.size(); ++i)
        rows[i].usable.push_back(r.usable[i]);
    c.events = r.events;
    return c;
}

Columns binomial(const cli::Args& args, const RackShape& shape, std::vector<Row>& rows) {
    Columns c;
    std::vector<std::string> plist = args.has("table")
                                         ? std::vector<std::string>{"0.01", "0.02", "0.03", "0.04", "0.05"}
                                         : args.list("unavailability");
    if (plist.empty())
        plist.push_back("0.02");
    for (const auto& s : plist) {
        const std::optional<double> share = cli::parse_share(s);
        if (!share || *share > 1.0)
            throw cli::UsageError("--unavailability: '" + s + "' is not a fraction from 0 to 1 (or 0% to 100%)");
        const double p = *share;
        c.ps.push_back(p);
        char label[32];
        std::snprintf(label, sizeof label, "p=%.2f%%", 100 * p);
        c.labels.push_back(label);
        c.healthy.push_back({expected_healthy(shape, p), 0.0});
        for (auto& r : rows)
            r.usable.push_back({expected_usable(shape, p, r.spec.slice, r.spec.spares), 0.0});
    }
    return c;
}

void write_json(const RackShape& shape, const Columns& cols, const std::vector<Row>& rows) {
    JsonWriter w;
    w.begin_object();
    w.field("racks", shape.racks).field("nodes_per_rack", shape.nodes_per_rack);
    w.field("nodes", shape.racks * shape.nodes_per_rack);
    w.field("model", cols.mc ? "monte_carlo" : "binomial");
    if (cols.mc) {
        const FailureModel& m = cols.model;
        w.key("failure_model").begin_object();
        w.field("node_mtbi_hours", m.node_mtbi_hours, 3).field("node_mttr_hours", m.node_mttr_hours, 3);
        w.field("rack_mtbf_hours", m.rack_mtbf_hours, 3).field("rack_mttr_hours", m.rack_mttr_hours, 3);
        w.field("horizon_hours", cols.horizon, 1).field("trials", cols.trials).field("seed", cols.seed);
        w.field("events", cols.events);
        w.end_object();
    }
    w.key("results").begin_array();
    for (std::size_t c = 0; c < cols.labels.size(); ++c) {
        w.begin_object();
        w.field("unavailability", cols.unavailability(c), 6);
        w.field("healthy_nodes", cols.healthy[c].mean, 1);
        if (cols.mc)
            w.field("healthy_nodes_ci95", cols.healthy[c].ci95, 1);
        w.key("slices").begin_array();
        for (const auto& r : rows) {
            w.begin_object();
            w.field("slice", r.spec.slice).field("spares", r.spec.spares);
            w.field("usable_nodes", r.usable[c].mean, 1);
            if (cols.mc)
                w.field("usable_nodes_ci95", r.usable[c].ci95, 1);
            w.field("share_of_healthy", cols.healthy[c].mean > 0 ? r.usable[c].mean / cols.healthy[c].mean : 0.0, 4);
            w.field("withheld_nodes_if_idle", shape.racks * r.spec.spares);
            w.field("in_place_chance", in_place_chance(cols.unavailability(c), r.spec.spares), 6);
            w.end_object();
        }
        w.end_array();
        w.end_object();
    }
    w.end_array();
    w.end_object();
    std::cout << w.str();
}

void print_monte_carlo_header(const Columns& c) {
    const FailureModel& m = c.model;
    std::printf("Monte Carlo: node MTBI %.0f h, MTTR %.0f h (p = %.2f%%), rack faults %s, %d trials of %.0f h, "
                "%llu events, seed %llu\n\n",
                m.node_mtbi_hours, m.node_mttr_hours, 100 * m.node_unavailability(),
                m.rack_mtbf_hours > 0 ? ("every " + cli::grouped(m.rack_mtbf_hours, 0) + " h per rack, " +
                                         cli::grouped(m.rack_mttr_hours, 0) + " h to repair")
                                            .c_str()
                                      : "off",
                c.trials, c.horizon, static_cast<unsigned long long>(c.events),
                static_cast<unsigned long long>(c.seed));
}

int run(int argc, char** argv) {
    cli::Args args(argc, argv,
                   {"racks", "nodes-per-rack", "unavailability", "slices", "spares", "mtbi", "mttr", "rack-mtbf",
                    "rack-mttr", "horizon", "trials", "seed"},
                   {"json", "table", "monte-carlo", "help"});
    if (args.has("help")) {
        std::cout << kUsage;
        return 0;
    }
    if (!args.positional().empty())
        throw cli::UsageError("unexpected argument '" + args.positional().front() + "'");
    RackShape shape;
    shape.racks = static_cast<int>(args.integer("racks", 128, 1, 1'000'000));
    shape.nodes_per_rack = static_cast<int>(args.integer("nodes-per-rack", 18, 1, 10'000));
    const std::vector<SliceSpec> specs = slice_specs(args, shape.nodes_per_rack);
    std::vector<Row> rows;
    for (const auto& s : specs)
        rows.push_back({s, {}});
    const Columns cols = args.has("monte-carlo") ? monte_carlo(args, shape, specs, rows) : binomial(args, shape, rows);
    if (args.has("json")) {
        write_json(shape, cols, rows);
        return 0;
    }
    if (cols.mc)
        print_monte_carlo_header(cols);
    print_table(shape, cols.labels, cols.healthy, rows, cols.mc);
    print_spares_table(shape, cols.labels, cols.mc ? std::vector<double>{cols.model.node_unavailability()} : cols.ps,
                       rows);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    return nvlblock::cli::run_main("nvlblock-capacity", run, argc, argv);
}
