// SPDX-License-Identifier: GPL-2.0-or-later
#include "failure_model.hpp"

#include "cli.hpp"
#include "csv.hpp"
#include "units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace nvlblock::sim {
namespace {

constexpr std::uint64_t kNodeStream = 0x4e4f4445; // "NODE"
constexpr std::uint64_t kRackStream = 0x5241434b; // "RACK"
constexpr std::uint64_t kKindStream = 0x4b494e44; // "KIND"

Seconds draw(Rng& r, double mean) {
    return std::max<Seconds>(1, static_cast<Seconds>(std::llround(r.exponential(mean))));
}

} // namespace

double llama3_node_mtbi_hours(int gpus_per_node, const Llama3Table& t) {
    const double hosts = static_cast<double>(t.gpus) / t.gpus_per_host;
    const double per_gpu_day = t.gpu_interruptions / (t.gpus * t.days);
    const double per_host_day = t.other_interruptions / (hosts * t.days);
    const double per_node_day = per_gpu_day * gpus_per_node + per_host_day;
    return 24.0 / per_node_day;
}

Llama3Table read_llama3_table(const std::string& path) {
    CsvReader r(path);
    const std::size_t c_cat = r.column("category"), c_n = r.column("interruptions");
    Llama3Table t;
    t.gpu_interruptions = t.other_interruptions = 0;
    std::vector<std::string> f;
    while (r.next(f)) {
        char* end = nullptr;
        const long n = std::strtol(f[c_n].c_str(), &end, 10);
        if (f[c_n].empty() || *end || n < 0)
            r.fail("interruptions '" + f[c_n] + "' is not a count");
        (f[c_cat] == "GPU" ? t.gpu_interruptions : t.other_interruptions) += static_cast<int>(n);
    }
    return t;
}

FailureModelSpec parse_failure_model(const std::string& text, int gpus_per_node) {
    FailureModelSpec s;
    s.label = text;
    double p = -1;
    bool mttr_given = false;
    for (const std::string& item : cli::split_list(text)) {
        if (item.empty())
            continue;
        const auto eq = item.find('=');
        if (eq == std::string::npos) {
            if (item == "none") {
                s.node_mtbi_s = 0;
                s.rack_mtbf_s = 0;
            } else if (item == "llama3") {
                s.node_mtbi_s = llama3_node_mtbi_hours(gpus_per_node) * 3600.0;
                if (!mttr_given)
                    s.node_mttr_s = 24 * 3600.0;
            } else {
                throw ParseError("--failures: unknown item '" + item +
                                 "' (keys: mtbi, mttr, rack_mtbf, rack_mttr, p; presets: llama3, none)");
            }
            continue;
        }
        const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
        const std::string what = "--failures " + key;
        if (key == "mtbi") {
            s.node_mtbi_s = parse_duration(value, 'h', what);
            p = -1;
        } else if (key == "mttr") {
            s.node_mttr_s = parse_duration(value, 'h', what);
            mttr_given = true;
        } else if (key == "rack_mtbf") {
            s.rack_mtbf_s = parse_duration(value, 'h', what);
        } else if (key == "rack_mttr") {
            s.rack_mttr_s = parse_duration(value, 'h', what);
        } else if (key == "p") {
            const std::optional<double> share = cli::parse_share(value);
            if (!share)
                throw ParseError(what + ": '" + value + "' is not a non-negative number");
            p = *share;
            if (!(p > 0 && p < 1))
                throw ParseError(what + ": '" + value + "' is not a fraction between 0 and 1");
        } else {
            throw ParseError("--failures: unknown key '" + key + "' (keys: mtbi, mttr, rack_mtbf, rack_mttr, p)");
        }
    }
    if (s.node_mttr_s <= 0 || s.rack_mttr_s <= 0)
        throw ParseError("--failures: repair times must be positive");
    if (p > 0)
        s.node_mtbi_s = s.node_mttr_s * (1 - p) / p;
    return s;
}

std::vector<FailureInterval> read_failure_trace(const std::string& path, std::size_t node_count) {
    CsvReader r(path);
    const std::size_t c_node = r.column("node_id"), c_down = r.column("down_s"), c_up = r.column("up_s");
    const bool kinds = r.has_column("kind");
    const std::size_t c_kind = kinds ? r.column("kind") : 0;
    std::vector<FailureInterval> out;
    std::vector<std::string> f;
    while (r.next(f)) {
        auto whole = [&](const std::string& v, const char* col) {
            char* end = nullptr;
            const long long x = std::strtoll(v.c_str(), &end, 10);
            if (v.empty() || *end || x < 0)
                r.fail(std::string(col) + " '" + v + "' is not a whole number >= 0");
            return x;
        };
        FailureInterval iv;
        const long long node = whole(f[c_node], "node_id");
        if (static_cast<std::size_t>(node) >= node_count)
            r.fail("node_id " + f[c_node] + " is out of range (the cluster has " + std::to_string(node_count) +
                   " nodes, 0-based)");
        iv.node = static_cast<std::uint32_t>(node);
        iv.down = whole(f[c_down], "down_s");
        if (kinds && !f[c_kind].empty()) {
            const std::string& k = f[c_kind];
            if (k != "down" && k != "up" && k != "job")
                r.fail("kind '" + k + "' is not down, up or job");
            iv.kind = k == "up" ? FailureKind::kUp : k == "job" ? FailureKind::kJob : FailureKind::kDown;
        }
        iv.up = f[c_up].empty() || iv.kind == FailureKind::kJob ? kNever : whole(f[c_up], "up_s");
        if (iv.up <= iv.down)
            r.fail("up_s must be later than down_s");
        out.push_back(iv);
    }
    return out;
}

FailureSource FailureSource::none() {
    return FailureSource();
}

FailureSource FailureSource::model(const FailureModelSpec& spec, int racks, int nodes_per_rack, std::uint64_t seed) {
    FailureSource s;
    s.kind_ = Kind::kModel;
    s.spec_ = spec;
    s.racks_ = racks;
    s.nodes_per_rack_ = nodes_per_rack;
    const int nodes = racks * nodes_per_rack;
    s.streams_.reserve(static_cast<std::size_t>(nodes + racks));
    for (int n = 0; n < nodes; ++n)
        s.streams_.emplace_back(stream_seed(seed, kNodeStream, static_cast<std::uint64_t>(n)));
    for (int r = 0; r < racks; ++r)
        s.streams_.emplace_back(stream_seed(seed, kRackStream, static_cast<std::uint64_t>(r)));
    char buf[256];
    std::snprintf(buf, sizeof buf, "node MTBI %s, MTTR %s (unavailability %.3f%%)",
                  spec.node_mtbi_s > 0 ? format_duration(spec.node_mtbi_s).c_str() : "inf",
                  format_duration(spec.node_mttr_s).c_str(), 100 * spec.node_unavailability());
    s.description_ = buf;
    if (spec.rack_mtbf_s > 0) {
        std::snprintf(buf, sizeof buf, "; rack faults every %s per rack, %s to repair",
                      format_duration(spec.rack_mtbf_s).c_str(), format_duration(spec.rack_mttr_s).c_str());
        s.description_ += buf;
    }
    if (spec.node_mtbi_s <= 0 && spec.rack_mtbf_s <= 0)
        s.description_ = "none";
    return s;
}

FailureSource FailureSource::trace(std::vector<FailureInterval> intervals) {
    FailureSource s;
    s.kind_ = Kind::kTrace;
    s.description_ = "trace of " + std::to_string(intervals.size()) + " outages";
    s.intervals_ = std::move(intervals);
    return s;
}

void FailureSource::set_kinds(const FailureKindSpec& kinds, std::uint64_t seed) {
    kinds_ = kinds;
    kind_streams_.clear();
    if (kind_ != Kind::kModel || kinds.all_down())
        return;
    const int nodes = racks_ * nodes_per_rack_;
    kind_streams_.reserve(static_cast<std::size_t>(nodes));
    for (int n = 0; n < nodes; ++n)
        kind_streams_.emplace_back(stream_seed(seed, kKindStream, static_cast<std::uint64_t>(n)));
}

bool FailureSource::has_kinds() const {
    if (kind_ == Kind::kTrace)
        return std::any_of(intervals_.begin(), intervals_.end(),
                           [](const FailureInterval& iv) { return iv.kind != FailureKind::kDown; });
    return !kind_streams_.empty();
}

FailureKind FailureSource::draw_kind(std::uint32_t node) {
    if (kind_streams_.empty())
        return FailureKind::kDown;
    const double u = kind_streams_[node].uniform();
    if (u < kinds_.share[0])
        return FailureKind::kDown;
    return u < kinds_.share[0] + kinds_.share[1] ? FailureKind::kUp : FailureKind::kJob;
}

std::vector<FailureEvent> FailureSource::initial() {
    std::vector<FailureEvent> out;
    if (kind_ == Kind::kTrace) {
        for (std::size_t i = 0; i < intervals_.size(); ++i)
            out.push_back({intervals_[i].down, true, false, intervals_[i].node, static_cast<std::uint32_t>(i), false,
                           intervals_[i].kind});
        return out;
    }
    if (kind_ != Kind::kModel)
        return out;
    const int nodes = racks_ * nodes_per_rack_;
    auto start = [&](std::size_t proc, bool rack, std::uint32_t target, double mtbf, double mttr) {
        Rng& r = streams_[proc];
        const double p_down = mttr / (mtbf + mttr);
        if (r.uniform() < p_down) {
            out.push_back({0, true, rack, target, static_cast<std::uint32_t>(proc), true});
        } else {
            out.push_back({draw(r, mtbf), true, rack, target, static_cast<std::uint32_t>(proc), false,
                           rack ? FailureKind::kDown : draw_kind(target)});
        }
    };
    if (spec_.node_mtbi_s > 0)
        for (int n = 0; n < nodes; ++n)
            start(static_cast<std::size_t>(n), false, static_cast<std::uint32_t>(n), spec_.node_mtbi_s,
                  spec_.node_mttr_s);
    if (spec_.rack_mtbf_s > 0)
        for (int k = 0; k < racks_; ++k)
            start(static_cast<std::size_t>(nodes + k), true, static_cast<std::uint32_t>(k), spec_.rack_mtbf_s,
                  spec_.rack_mttr_s);
    return out;
}

std::optional<FailureEvent> FailureSource::follow(const FailureEvent& e) {
    if (kind_ == Kind::kTrace) {
        const FailureInterval& iv = intervals_[e.process];
        if (!e.down || iv.kind == FailureKind::kJob || iv.up >= kNever)
            return std::nullopt;
        // An `up` fault's node is followed from its drain (e.at), and cannot come back before it.
        return FailureEvent{std::max(iv.up, e.at + 1), false, false, e.target, e.process};
    }
    if (kind_ != Kind::kModel)
        return std::nullopt;
    Rng& r = streams_[e.process];
    // A fault of the job itself leaves nothing to repair: the node's next interruption follows.
    const bool next_down = !e.down || (!e.rack && e.kind == FailureKind::kJob);
    const double mean =
        e.rack ? (e.down ? spec_.rack_mttr_s : spec_.rack_mtbf_s) : (next_down ? spec_.node_mtbi_s : spec_.node_mttr_s);
    FailureEvent next{e.at + draw(r, mean), next_down, e.rack, e.target, e.process};
    if (next_down && !e.rack)
        next.kind = draw_kind(e.target);
    return next;
}

FailureSource make_failure_source(const std::string& arg, int racks, int nodes_per_rack, int gpus_per_node,
                                  std::uint64_t seed, FailureModelSpec* spec_out) {
    if (arg.empty() || arg == "none")
        return FailureSource::none();
    std::error_code ec;
    const bool is_file =
        std::filesystem::is_regular_file(arg, ec) || (arg.size() > 4 && arg.compare(arg.size() - 4, 4, ".csv") == 0);
    if (is_file)
        return FailureSource::trace(
            read_failure_trace(arg, static_cast<std::size_t>(racks) * static_cast<std::size_t>(nodes_per_rack)));
    FailureModelSpec spec = parse_failure_model(arg, gpus_per_node);
    if (spec_out)
        *spec_out = spec;
    return FailureSource::model(spec, racks, nodes_per_rack, seed);
}

} // namespace nvlblock::sim
