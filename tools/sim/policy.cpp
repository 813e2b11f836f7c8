// SPDX-License-Identifier: GPL-2.0-or-later
#include "policy.hpp"

#include "readers/load_topology.hpp"

#include <algorithm>
#include <cstdio>
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
    }
    return "?";
}

std::optional<PolicyKind> policy_from_name(const std::string& name) {
    for (PolicyKind k : {PolicyKind::kFullRack, PolicyKind::kBlock, PolicyKind::kNvlblock, PolicyKind::kNvlblockLend,
                         PolicyKind::kRecommended})
        if (name == policy_name(k))
            return k;
    return std::nullopt;
}

std::vector<PolicyKind> parse_policies(const std::string& list) {
    std::vector<PolicyKind> out;
    std::size_t pos = 0;
    while (pos <= list.size()) {
        const auto comma = list.find(',', pos);
        const std::string item = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? list.size() + 1 : comma + 1;
        auto k = policy_from_name(item);
        if (!k)
            throw std::invalid_argument("--policies: unknown policy '" + item +
                                        "' (full-rack, block, nvlblock, nvlblock+lend, recommended)");
        if (std::find(out.begin(), out.end(), *k) != out.end())
            throw std::invalid_argument("--policies: '" + item + "' is listed twice");
        out.push_back(*k);
    }
    return out;
}

std::string topology_yaml(const ClusterShape& shape, int slice, int spares, bool lending, bool reclaim) {
    std::string y;
    y.reserve(static_cast<std::size_t>(shape.racks) * 48 + 256);
    y += "# nvlblock-sim: " + std::to_string(shape.racks) + " racks of " + std::to_string(shape.nodes_per_rack) +
         " nodes\n";
    y += "defaults:\n  slice: " + std::to_string(slice) + "\n  spares: " + std::to_string(spares) +
         "\n  lending: " + (lending ? "true" : "false") + "\n";
    if (reclaim)
        y += "  reserve: reclaim\n";
    y += "recovery:\n  wait: " + std::to_string(shape.recovery_wait) + "\n";
    y += "preemptible:\n  qos: [scavenger]\n";
    y += "blocks:\n";
    long node = 1;
    for (int r = 1; r <= shape.racks; ++r) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  - name: rack%03d\n    nodes: gb[%05ld-%05ld]\n", r, node,
                      node + shape.nodes_per_rack - 1);
        y += buf;
        node += shape.nodes_per_rack;
    }
    return y;
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
    p.topology_yaml = topology_yaml(shape, p.slice, p.spares, p.lending, p.reclaim);
    return p;
}

nvlblock::Topology build_policy_topology(const PolicyConfig& policy) {
    return nvlblock::build_topology(
        nvlblock::read_topology_spec_text(policy.topology_yaml, policy.name + ".yaml", nvlblock::SourceFormat::kYaml));
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
    // Same GPU-hours: duration * 16 / slice, rounded up to a whole second.
    s.duration = std::max<Seconds>(1, (job.duration * kNominalSliceNodes + slice - 1) / slice);
    return s;
}

Seconds time_limit_for(Seconds duration) {
    const Seconds twice = 2 * duration;
    return (twice + 59) / 60 * 60;
}

bool selector_matches(const nvlblock::Topology& topo, const JobSpec& job) {
    const auto& qos = topo.policy().preemptible.qos;
    return std::find(qos.begin(), qos.end(), job.qos()) != qos.end();
}

} // namespace nvlblock::sim
