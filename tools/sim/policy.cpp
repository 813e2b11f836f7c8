// SPDX-License-Identifier: GPL-2.0-or-later
#include "policy.hpp"

#include "cli.hpp"

#include "readers/load_topology.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace nvlblock::sim {

const char* policy_name(PolicyKind k) {
    switch (k) {
    case PolicyKind::kFullRack:
        return "full-rack";
    case PolicyKind::kBlock:
        return "block";
    case PolicyKind::kNvlblock:
        return "nvlblock";
    case PolicyKind::kNvlblockLend:
        return "nvlblock+lend";
    case PolicyKind::kRecommended:
        return "recommended";
    case PolicyKind::kBlockExpedite:
        return "block-expedite";
    case PolicyKind::kNvrx:
        return "nvrx-16+2";
    }
    return "?";
}

std::optional<PolicyKind> policy_from_name(const std::string& name) {
    for (PolicyKind k : {PolicyKind::kFullRack, PolicyKind::kBlock, PolicyKind::kNvlblock, PolicyKind::kNvlblockLend,
                         PolicyKind::kRecommended, PolicyKind::kBlockExpedite, PolicyKind::kNvrx})
        if (name == policy_name(k))
            return k;
    return std::nullopt;
}

std::vector<PolicyKind> parse_policies(const std::string& list) {
    std::vector<PolicyKind> out;
    for (const std::string& item : cli::split_list(list)) {
        auto k = policy_from_name(item);
        if (!k)
            throw std::invalid_argument("--policies: unknown policy '" + item +
                                        "' (full-rack, block, nvlblock, nvlblock+lend, recommended, "
                                        "block-expedite, nvrx-16+2)");
        if (std::find(out.begin(), out.end(), *k) != out.end())
            throw std::invalid_argument("--policies: '" + item + "' is listed twice");
        out.push_back(*k);
    }
    return out;
}

namespace {

// "rack007" and its nodes "gb[00109-00126]": racks of nodes_per_rack nodes in order.
std::string rack_name(int r) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "rack%03d", r);
    return buf;
}

std::string rack_nodes(const ClusterShape& shape, int r) {
    const long first = static_cast<long>(r - 1) * shape.nodes_per_rack + 1;
    char buf[48];
    std::snprintf(buf, sizeof buf, "gb[%05ld-%05ld]", first, first + shape.nodes_per_rack - 1);
    return buf;
}

} // namespace

std::string topology_yaml(const ClusterShape& shape, int slice, int spares, bool lending, bool reclaim,
                          bool include_conf) {
    std::string y;
    y.reserve(static_cast<std::size_t>(shape.racks) * 48 + 256);
    y += "# nvlblock-sim: " + std::to_string(shape.racks) + " racks of " + std::to_string(shape.nodes_per_rack) +
         " nodes\n";
    y += "defaults:\n  slice: " + std::to_string(slice) + "\n  spares: " + std::to_string(spares) +
         "\n  lending: " + (lending ? "true" : "false") + "\n";
    y += std::string("  reserve: ") + (reclaim ? "reclaim" : "idle") + "\n";
    y += "recovery:\n  wait: " + std::to_string(shape.recovery_wait) +
         "\n  reclaim_budget: " + std::to_string(shape.reclaim_budget) + "\n";
    if (shape.failure_window >= 0)
        y += "  failure_window: " + std::to_string(shape.failure_window) + "\n";
    // The site's own list, read by the core's reader and applied by its
    // victim_status(): the simulator keeps no second rule.
    if (reclaim && !shape.reclaim_from_qos.empty()) {
        y += "  reclaim_from:\n    qos: [";
        for (std::size_t i = 0; i < shape.reclaim_from_qos.size(); ++i)
            y += (i ? ", " : "") + shape.reclaim_from_qos[i];
        y += "]\n";
    }
    y += "preemptible:\n  qos: [scavenger]\n"; // PolicyConfig::preemptible_qos
    if (include_conf) {
        y += "topology_conf: topology.conf\n";
    } else {
        y += "blocks:\n";
        for (int r = 1; r <= shape.racks; ++r)
            y += "  - name: " + rack_name(r) + "\n    nodes: " + rack_nodes(shape, r) + "\n";
    }
    if (shape.hierarchy.empty())
        return y;
    y += "hierarchy:\n  crossing: " + (shape.crossing < 0 ? std::string("strict") : std::to_string(shape.crossing)) +
         "\n  levels:\n";
    for (std::size_t l = 0; l < shape.hierarchy.size(); ++l) {
        const std::string name = l == 0 ? "su" : l == 1 ? "pod" : "level" + std::to_string(l + 1);
        y += "    - name: " + name + "\n";
        if (l == 0)
            y += "      label: scalable unit\n";
        y += "      groups:\n";
        const int per = shape.hierarchy[l];
        const int below = l == 0 ? 1 : shape.hierarchy[l - 1];
        for (int first = 0, g = 1; first < shape.racks; first += per, ++g) {
            char buf[128];
            const int last = std::min(shape.racks, first + per) - 1;
            if (l == 0)
                std::snprintf(buf, sizeof buf, "        %s%03d: rack[%03d-%03d]\n", name.c_str(), g, first + 1,
                              last + 1);
            else
                std::snprintf(buf, sizeof buf, "        %s%03d: %s[%03d-%03d]\n", name.c_str(), g,
                              l == 1 ? "su" : ("level" + std::to_string(l)).c_str(), first / below + 1,
                              last / below + 1);
            y += buf;
        }
    }
    return y;
}

std::string topology_conf(const ClusterShape& shape, int slice) {
    std::string c = "# nvlblock-sim: topology/block's view of " + std::to_string(shape.racks) + " racks\n";
    for (int r = 1; r <= shape.racks; ++r)
        c += "BlockName=" + rack_name(r) + " Nodes=" + rack_nodes(shape, r) + "\n";
    c += "BlockSizes=" + std::to_string(slice);
    for (int per : shape.hierarchy) {
        if (per < 1 || (per & (per - 1)))
            throw std::invalid_argument("--hierarchy: topology/block's BlockSizes can only express groups of a "
                                        "power of two racks, not " +
                                        std::to_string(per));
        c += "," + std::to_string(static_cast<long>(slice) * per);
    }
    return c + "\n";
}

PolicyConfig make_policy(PolicyKind kind, const ClusterShape& shape, PreemptionMode preemption) {
    PolicyConfig p;
    p.kind = kind;
    p.name = policy_name(kind);
    switch (kind) {
    case PolicyKind::kFullRack:
        p.slice = shape.nodes_per_rack;
        p.spares = 0;
        break;
    case PolicyKind::kBlock:
        p.slice = shape.slice;
        p.spares = 0;
        break;
    case PolicyKind::kBlockExpedite:
        p.slice = shape.slice;
        p.spares = 0;
        p.expedite = true;
        break;
    case PolicyKind::kNvrx:
        // The topology's slice is the whole rack (a segment of a rack's
        // nodes must fit a block); the job works on --slice of them.
        p.slice = shape.nodes_per_rack;
        p.spares = 0;
        p.standbys = shape.nodes_per_rack - shape.slice;
        break;
    case PolicyKind::kNvlblock:
        p.slice = shape.slice;
        p.spares = shape.spares;
        p.recovery = true;
        break;
    case PolicyKind::kNvlblockLend:
        p.slice = shape.slice;
        p.spares = shape.spares;
        p.lending = true;
        p.recovery = true;
        break;
    case PolicyKind::kRecommended:
        p.slice = shape.slice;
        p.spares = shape.spares;
        p.reclaim = true;
        p.recovery = true;
        break;
    }
    p.preemption = preemption == PreemptionMode::kAll || (preemption == PreemptionMode::kLend && p.lending);
    if (kind == PolicyKind::kBlock || kind == PolicyKind::kBlockExpedite || kind == PolicyKind::kNvrx) {
        p.topology_text = topology_conf(shape, p.slice);
        p.topology_format = nvlblock::SourceFormat::kTopologyConf;
    } else if (p.recovery && shape.hierarchy.empty()) {
        // nvlblock over the site's topology.conf: the same BlockSizes levels
        // as block, so that the policies differ only in what nvlblock adds.
        p.included_conf = topology_conf(shape, p.slice);
        p.topology_text = topology_yaml(shape, p.slice, p.spares, p.lending, p.reclaim, true);
    } else {
        p.topology_text = topology_yaml(shape, p.slice, p.spares, p.lending, p.reclaim);
    }
    return p;
}

std::string write_policy_files(const PolicyConfig& policy, const std::string& dir) {
    const bool conf = policy.topology_format == nvlblock::SourceFormat::kTopologyConf;
    const std::string main = dir + (conf ? "/topology.conf" : "/nvlblock.yaml");
    auto write = [](const std::string& path, const std::string& text) {
        std::ofstream out(path);
        out << text;
        if (!out)
            throw std::runtime_error("cannot write " + path);
    };
    write(main, policy.topology_text);
    if (!policy.included_conf.empty())
        write(dir + "/topology.conf", policy.included_conf);
    return main;
}

nvlblock::Topology build_policy_topology(const PolicyConfig& policy) {
    char tmpl[] = "/tmp/nvlblock-sim-XXXXXX";
    if (!::mkdtemp(tmpl))
        throw std::runtime_error("cannot make a temporary directory for the policy's topology files");
    const std::string dir = tmpl;
    try {
        nvlblock::Topology t = nvlblock::load_topology(write_policy_files(policy, dir));
        std::filesystem::remove_all(dir);
        return t;
    } catch (...) {
        std::filesystem::remove_all(dir);
        throw;
    }
}

JobShape shape_for(const JobSpec& job, const PolicyConfig& policy) {
    JobShape s;
    if (job.kind == JobKind::kTrace) {
        s.nodes = job.nodes;
        s.duration = job.duration;
        return s;
    }
    const auto slice = static_cast<std::uint32_t>(policy.slice);
    s.nodes = job.slices * slice;
    s.segment = slice;
    // The work is done on the active nodes: a rack's nodes less its standbys.
    const auto working = slice - static_cast<std::uint32_t>(policy.standbys);
    // Same GPU-hours: duration * 16 / slice, rounded up to a whole second.
    s.duration = std::max<Seconds>(1, (job.duration * kNominalSliceNodes + working - 1) / working);
    return s;
}

Seconds time_limit_for(Seconds duration) {
    const Seconds twice = 2 * duration;
    return (twice + 59) / 60 * 60;
}

nvlblock::JobSelector preemptible_selector(const PolicyConfig& policy, const nvlblock::Topology& topo) {
    if (!topo.policy().preemptible.empty())
        return topo.policy().preemptible;
    nvlblock::JobSelector selector;
    selector.qos = policy.preemptible_qos;
    return selector;
}

} // namespace nvlblock::sim
