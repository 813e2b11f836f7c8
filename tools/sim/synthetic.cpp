// SPDX-License-Identifier: GPL-2.0-or-later
#include "synthetic.hpp"

#include "cli.hpp"
#include "csv.hpp"
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace nvlblock::sim {
namespace {

constexpr std::uint64_t kSliceSizes = 0x534c4943;  // "SLIC"
constexpr std::uint64_t kSmallSizes = 0x534d414c;  // "SMAL"
constexpr std::uint64_t kSliceArrive = 0x53415252; // "SARR"
constexpr std::uint64_t kSmallArrive = 0x4d415252; // "MARR"

Seconds next_arrival(Rng& r, Seconds after, double rate) {
    if (rate <= 0)
        return kNever;
    return after + std::max<Seconds>(0, static_cast<Seconds>(std::llround(r.exponential(1.0 / rate))));
}

} // namespace

std::vector<SharesRow> read_shares(const std::string& path) {
    CsvReader r(path);
    const std::size_t c_trace = r.column("trace"), c_weight = r.column("weight");
    const char* names[] = {"pct_le1gpu", "pct_ge8",   "pct_ge16",  "pct_ge32",  "pct_ge64",
                           "pct_ge72",   "pct_ge128", "pct_ge256", "pct_ge512", "pct_ge1024"};
    std::size_t cols[10];
    for (int i = 0; i < 10; ++i)
        cols[i] = r.column(names[i]);
    std::vector<SharesRow> out;
    std::vector<std::string> f;
    while (r.next(f)) {
        SharesRow row;
        row.trace = f[c_trace];
        row.weight = f[c_weight];
        double* dst[] = {&row.le1,  &row.ge8,   &row.ge16,  &row.ge32,  &row.ge64,
                         &row.ge72, &row.ge128, &row.ge256, &row.ge512, &row.ge1024};
        for (int i = 0; i < 10; ++i) {
            try {
                *dst[i] = parse_number(f[cols[i]], names[i]);
            } catch (const ParseError& e) {
                r.fail(e.what());
            }
        }
        out.push_back(row);
    }
    return out;
}

SyntheticSpec parse_synthetic(const std::string& text) {
    SyntheticSpec s;
    for (const std::string& item : cli::split_list(text)) {
        if (item.empty())
            continue;
        const auto eq = item.find('=');
        const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
        const std::string what = "synthetic " + key;
        if (key == "saturate" && eq == std::string::npos) {
            s.saturate = true;
        } else if (eq == std::string::npos) {
            throw ParseError("synthetic: '" + item + "' is not KEY=VALUE");
        } else if (key == "load") {
            if (value == "saturate")
                s.saturate = true;
            else
                s.load = parse_number(value, what);
        } else if (key == "queue") {
            s.queue = std::max(1, static_cast<int>(parse_number(value, what)));
        } else if (key == "small_load") {
            s.small_load = parse_number(value, what);
        } else if (key == "small_nodes") {
            s.small_nodes = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(parse_number(value, what)));
        } else if (key == "hours") {
            s.hours = parse_number(value, what);
        } else if (key == "mean_hours") {
            s.mean_hours = parse_number(value, what);
        } else if (key == "small_mean_hours") {
            s.small_mean_hours = parse_number(value, what);
        } else if (key == "min_minutes") {
            s.min_minutes = parse_number(value, what);
        } else if (key == "shares") {
            s.shares = value;
        } else if (key == "weight") {
            if (value != "gpu_time" && value != "jobs")
                throw ParseError("synthetic weight: '" + value + "' (gpu_time or jobs)");
            s.weight = value;
        } else if (key == "shares_file") {
            s.shares_file = value;
        } else if (key == "max_slices") {
            s.max_slices = static_cast<std::uint32_t>(parse_number(value, what));
        } else {
            throw ParseError("synthetic: unknown key '" + key +
                             "' (load, queue, small_load, small_nodes, hours, mean_hours, small_mean_hours, "
                             "min_minutes, shares, weight, shares_file, max_slices)");
        }
    }
    if (s.mean_hours <= 0 || s.small_mean_hours <= 0)
        throw ParseError("synthetic: mean run times must be positive");
    return s;
}

void resolve_synthetic(SyntheticSpec& s, int racks, Seconds horizon, const std::string& source_dir) {
    if (s.hours <= 0)
        s.hours = horizon > 0 ? static_cast<double>(horizon) / 3600.0 : 336.0;
    if (s.max_slices == 0)
        s.max_slices = static_cast<std::uint32_t>(std::max(1, racks / 4));
    for (auto& b : s.bin_slices)
        b = std::min(b, s.max_slices);
    std::string path = s.shares_file;
    if (path.empty()) {
        const std::string rel = "data/traces/gpu_size_shares_from_acme_figure.csv";
        std::error_code ec;
        path = std::filesystem::is_regular_file(rel, ec) ? rel : source_dir + "/" + rel;
    }
    const auto rows = read_shares(path);
    const SharesRow* row = nullptr;
    for (const auto& r : rows)
        if (r.trace == s.shares && r.weight == s.weight)
            row = &r;
    if (!row)
        throw ParseError("synthetic: no row trace=" + s.shares + ", weight=" + s.weight + " in " + path);
    const double edges[] = {row->ge64, row->ge128, row->ge256, row->ge512, row->ge1024, 0.0};
    const double gpus[] = {64, 128, 256, 512, 1024};
    double total = 0;
    for (int i = 0; i < 5; ++i) {
        double share = std::max(0.0, edges[i] - edges[i + 1]);
        if (s.weight == "gpu_time")
            share /= gpus[i]; // equal mean run time: jobs in proportion to GPU time / size
        s.bin_p[static_cast<std::size_t>(i)] = share;
        total += share;
    }
    if (total <= 0)
        throw ParseError("synthetic: the " + s.shares + " row has no jobs of 64 GPUs or more");
    for (auto& p : s.bin_p)
        p /= total;
}

SyntheticWorkload::SyntheticWorkload(SyntheticSpec spec, std::size_t cluster_nodes, std::uint64_t seed)
    : spec_(std::move(spec)), nodes_(cluster_nodes), seed_(seed), slice_rng_(stream_seed(seed, kSliceSizes, 0)),
      small_rng_(stream_seed(seed, kSmallSizes, 0)), slice_arrivals_(stream_seed(seed, kSliceArrive, 0)),
      small_arrivals_(stream_seed(seed, kSmallArrive, 0)) {
    end_ = static_cast<Seconds>(std::llround(spec_.hours * 3600.0));
    const double slice_work = mean_slices() * kNominalSliceNodes * spec_.mean_hours * 3600.0; // node-seconds per job
    slice_rate_ = spec_.saturate ? 0.0 : spec_.load * static_cast<double>(nodes_) / slice_work;
    small_rate_ =
        spec_.small_load * static_cast<double>(nodes_) / (spec_.small_nodes * spec_.small_mean_hours * 3600.0);
    next_slice_ = next_arrival(slice_arrivals_, 0, slice_rate_);
    next_small_ = next_arrival(small_arrivals_, 0, small_rate_);
}

double SyntheticWorkload::mean_slices() const {
    double m = 0;
    for (std::size_t i = 0; i < 5; ++i)
        m += spec_.bin_p[i] * spec_.bin_slices[i];
    return m;
}

Seconds SyntheticWorkload::draw_duration(Rng& r, double mean_s) {
    const double d = std::max(spec_.min_minutes * 60.0, r.exponential(mean_s));
    return std::max<Seconds>(1, static_cast<Seconds>(std::llround(d)));
}

JobSpec SyntheticWorkload::draw_slice_job(Seconds submit) {
    JobSpec j;
    j.kind = JobKind::kSlice;
    j.submit = submit;
    double u = slice_rng_.uniform();
    std::size_t bin = 4;
    for (std::size_t i = 0; i < 5; ++i) {
        if (u < spec_.bin_p[i]) {
            bin = i;
            break;
        }
        u -= spec_.bin_p[i];
    }
    j.slices = spec_.bin_slices[bin];
    j.duration = draw_duration(slice_rng_, spec_.mean_hours * 3600.0);
    char name[32];
    std::snprintf(name, sizeof name, "sl-%06llu", static_cast<unsigned long long>(++slice_count_));
    j.name = name;
    return j;
}

JobSpec SyntheticWorkload::draw_small_job(Seconds submit) {
    JobSpec j;
    j.kind = JobKind::kTrace;
    j.submit = submit;
    j.nodes = spec_.small_nodes;
    j.preemptible = true;
    j.duration = draw_duration(small_rng_, spec_.small_mean_hours * 3600.0);
    char name[32];
    std::snprintf(name, sizeof name, "sm-%06llu", static_cast<unsigned long long>(++small_count_));
    j.name = name;
    return j;
}

std::optional<JobSpec> SyntheticWorkload::next_open() {
    const Seconds t = std::min(next_slice_, next_small_);
    if (t >= kNever || t > end_)
        return std::nullopt;
    if (next_slice_ <= next_small_) {
        JobSpec j = draw_slice_job(next_slice_);
        next_slice_ = next_arrival(slice_arrivals_, next_slice_, slice_rate_);
        return j;
    }
    JobSpec j = draw_small_job(next_small_);
    next_small_ = next_arrival(small_arrivals_, next_small_, small_rate_);
    return j;
}

JobSpec SyntheticWorkload::next_closed(Seconds now) {
    JobSpec j = draw_slice_job(now);
    j.closed_loop = true;
    return j;
}

Seconds SyntheticWorkload::last_open_submit() const {
    return end_;
}

std::string SyntheticWorkload::describe() const {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "synthetic %s mix (%s weights): slice jobs %s, mean %.3g slices x %.3g h; small preemptible "
                  "%u-node jobs at load %.3g, mean %.3g h; arrivals for %.4g h",
                  spec_.shares.c_str(), spec_.weight.c_str(),
                  spec_.saturate ? ("kept " + std::to_string(spec_.queue) + " pending (saturating)").c_str()
                                 : ("at load " + std::to_string(spec_.load).substr(0, 4)).c_str(),
                  mean_slices(), spec_.mean_hours, spec_.small_nodes, spec_.small_load, spec_.small_mean_hours,
                  spec_.hours);
    return buf;
}

std::unique_ptr<Workload> SyntheticWorkload::clone() const {
    return std::make_unique<SyntheticWorkload>(spec_, nodes_, seed_);
}

} // namespace nvlblock::sim
