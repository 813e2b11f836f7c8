// SPDX-License-Identifier: GPL-2.0-or-later
#include "failure_kinds.hpp"

#include "cli.hpp"
#include "csv.hpp"
#include "failure_model.hpp"
#include "units.hpp"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace nvlblock::sim {
namespace {

// The Llama 3 table's components by kind. Down: the host itself stops
// (power, chassis, CPU, its memory, a PCIe board) or is taken out for
// maintenance. Up: the host stays up and a health check finds the fault
// (every GPU row, the NIC, the network link, the local disk). Job: nothing
// on the node is faulty (software, dependencies, NCCL timeouts).
const std::pair<const char*, FailureKind> kComponents[] = {
    {"Faulty GPU", FailureKind::kUp},
    {"GPU HBM3 Memory", FailureKind::kUp},
    {"Software Bug", FailureKind::kJob},
    {"Network Switch/Cable", FailureKind::kUp},
    {"Host Maintenance", FailureKind::kDown},
    {"GPU SRAM Memory", FailureKind::kUp},
    {"GPU System Processor", FailureKind::kUp},
    {"NIC", FailureKind::kUp},
    {"NCCL Watchdog Timeouts", FailureKind::kJob},
    {"Silent Data Corruption", FailureKind::kUp},
    {"GPU Thermal Interface + Sensor", FailureKind::kUp},
    {"SSD", FailureKind::kUp},
    {"Power Supply", FailureKind::kDown},
    {"Server Chassis", FailureKind::kDown},
    {"IO Expansion Board", FailureKind::kDown},
    {"Dependency", FailureKind::kJob},
    {"CPU", FailureKind::kDown},
    {"System Memory", FailureKind::kDown},
};

Seconds detection_seconds(const std::string& value, const std::string& what) {
    if (value == "off")
        return -1;
    return parse_seconds(value, 's', what);
}

} // namespace

const char* failure_kind_name(FailureKind k) {
    switch (k) {
    case FailureKind::kUp:
        return "up";
    case FailureKind::kJob:
        return "job";
    case FailureKind::kDown:
        break;
    }
    return "down";
}

FailureKind llama3_component_kind(const std::string& component) {
    for (const auto& [name, kind] : kComponents)
        if (component == name)
            return kind;
    throw ParseError("llama3 table: component '" + component + "' has no failure kind");
}

Llama3Kinds llama3_kinds() {
    Llama3Kinds t;
    t.gpu = {0, 268, 0};
    t.other = {43, 45, 63};
    return t;
}

Llama3Kinds read_llama3_kinds(const std::string& path) {
    CsvReader r(path);
    const std::size_t c_comp = r.column("component"), c_cat = r.column("category"), c_n = r.column("interruptions");
    Llama3Kinds t;
    std::vector<std::string> f;
    while (r.next(f)) {
        char* end = nullptr;
        const long n = std::strtol(f[c_n].c_str(), &end, 10);
        if (f[c_n].empty() || *end || n < 0)
            r.fail("interruptions '" + f[c_n] + "' is not a count");
        const auto k = static_cast<std::size_t>(llama3_component_kind(f[c_comp]));
        (f[c_cat] == "GPU" ? t.gpu : t.other)[k] += static_cast<int>(n);
    }
    return t;
}

std::array<double, kFailureKindCount> llama3_kind_shares(int gpus_per_node, const Llama3Kinds& t) {
    // As llama3_node_mtbi_hours: GPU causes in proportion to GPUs, the rest once per host.
    const double gpu_weight = static_cast<double>(gpus_per_node) / Llama3Table{}.gpus_per_host;
    std::array<double, kFailureKindCount> s{};
    double total = 0;
    for (std::size_t k = 0; k < kFailureKindCount; ++k) {
        s[k] = gpu_weight * t.gpu[k] + t.other[k];
        total += s[k];
    }
    for (double& x : s)
        x = total > 0 ? x / total : 0;
    return s;
}

FailureKindSpec default_failure_kinds(const std::string& failures_arg, int gpus_per_node) {
    FailureKindSpec s;
    bool llama3 = false;
    for (const std::string& item : cli::split_list(failures_arg))
        llama3 = llama3 || item == "llama3";
    if (llama3) {
        s.share = llama3_kind_shares(gpus_per_node);
        s.label = "llama3";
    }
    return s;
}

FailureKindSpec parse_failure_kinds(const std::string& text, int gpus_per_node, FailureKindSpec s) {
    std::array<double, kFailureKindCount> weights{};
    bool weighted = false;
    for (const std::string& item : cli::split_list(text)) {
        if (item.empty())
            continue;
        const auto eq = item.find('=');
        const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
        const std::string what = "--failure-kinds " + key;
        if (eq == std::string::npos && key == "llama3") {
            s.share = llama3_kind_shares(gpus_per_node);
        } else if (eq == std::string::npos && (key == "down" || key == "up" || key == "job")) {
            s.share = {key == "down" ? 1.0 : 0.0, key == "up" ? 1.0 : 0.0, key == "job" ? 1.0 : 0.0};
        } else if (eq != std::string::npos && (key == "down" || key == "up" || key == "job")) {
            weights[key == "down" ? 0 : key == "up" ? 1 : 2] = parse_number(value, what);
            weighted = true;
        } else if (key == "epilog" && eq != std::string::npos) {
            s.epilog = detection_seconds(value, what);
        } else if (key == "periodic" && eq != std::string::npos) {
            s.periodic = std::max<Seconds>(0, detection_seconds(value, what));
        } else if (key == "requeue" && eq != std::string::npos) {
            const std::optional<double> share = cli::parse_share(value);
            if (!share)
                throw ParseError(what + ": '" + value + "' is not a non-negative number");
            s.requeue = *share;
            if (s.requeue > 1)
                throw ParseError(what + ": '" + value + "' is not a share from 0 to 1");
        } else {
            throw ParseError("--failure-kinds: unknown item '" + item +
                             "' (llama3, down, up, job, down=W, up=W, job=W, epilog=S|off, periodic=S|off, "
                             "requeue=F)");
        }
    }
    if (weighted) {
        const double total = weights[0] + weights[1] + weights[2];
        if (!(total > 0))
            throw ParseError("--failure-kinds: the weights sum to 0");
        for (std::size_t k = 0; k < kFailureKindCount; ++k)
            s.share[k] = weights[k] / total;
    }
    if (s.share[1] > 0 && s.epilog < 0 && s.periodic <= 0)
        throw ParseError("--failure-kinds: with epilog=off and periodic=off no check ever drains a faulty node");
    s.label = text;
    return s;
}

std::string describe_failure_kinds(const FailureKindSpec& s, bool shares) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "down %.1f%%, up %.1f%%, job %.1f%%; ", 100 * s.share[0], 100 * s.share[1],
                  100 * s.share[2]);
    std::string out = shares ? buf : "";
    if (shares && s.all_down())
        return out.substr(0, out.size() - 2);
    std::snprintf(buf, sizeof buf, "drained by %s%s%s; %.0f%% of failed jobs requeued (RequeueExit)",
                  s.epilog < 0    ? ""
                  : s.epilog == 0 ? "the job's script"
                                  : ("the Epilog after " + format_duration(static_cast<double>(s.epilog))).c_str(),
                  s.epilog >= 0 && s.periodic > 0 ? " or " : "",
                  s.periodic > 0 ? ("a health check every " + format_duration(static_cast<double>(s.periodic))).c_str()
                                 : "",
                  100 * s.requeue);
    return out + buf;
}

} // namespace nvlblock::sim
