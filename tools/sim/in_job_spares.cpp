// SPDX-License-Identifier: GPL-2.0-or-later
#include "in_job_spares.hpp"

#include <algorithm>
#include <map>

namespace nvlblock::sim {

using nvlblock::BlockIndex;
using nvlblock::NodeIndex;

std::vector<NodeIndex> initial_standbys(const nvlblock::Topology& topo, std::span<const NodeIndex> nodes, int active) {
    std::map<BlockIndex, std::vector<NodeIndex>> by_rack;
    for (NodeIndex n : nodes)
        by_rack[topo.block_of(n)].push_back(n);
    std::vector<NodeIndex> out;
    for (auto& [rack, in_rack] : by_rack) {
        std::sort(in_rack.begin(), in_rack.end());
        for (std::size_t i = static_cast<std::size_t>(std::max(0, active)); i < in_rack.size(); ++i)
            out.push_back(in_rack[i]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

InJobFailure in_job_failure(const nvlblock::Topology& topo, std::span<const NodeIndex> nodes,
                            std::span<const NodeIndex> standbys, std::span<const NodeIndex> failed, int active) {
    // Per rack: nodes of the job, failed active nodes, standbys left (in node order).
    struct Rack {
        int nodes = 0, failed = 0, active_failed = 0;
        std::vector<NodeIndex> spare;
    };
    std::map<BlockIndex, Rack> racks;
    auto is = [](std::span<const NodeIndex> set, NodeIndex n) {
        return std::find(set.begin(), set.end(), n) != set.end();
    };
    for (NodeIndex n : nodes)
        ++racks[topo.block_of(n)].nodes;
    InJobFailure f;
    for (NodeIndex n : failed) {
        Rack& r = racks[topo.block_of(n)];
        ++r.failed;
        if (is(standbys, n))
            ++f.standbys_failed;
        else
            ++r.active_failed;
    }
    for (NodeIndex n : standbys)
        if (!is(failed, n))
            racks[topo.block_of(n)].spare.push_back(n);
    for (auto& [rack, r] : racks) {
        if (r.failed == 0)
            continue;
        // The rack must still form a whole segment of `active` healthy nodes.
        if (r.nodes - r.failed < active || r.active_failed > static_cast<int>(r.spare.size())) {
            f.requeue = true;
            return f;
        }
        std::sort(r.spare.begin(), r.spare.end());
        f.promoted.insert(f.promoted.end(), r.spare.begin(), r.spare.begin() + r.active_failed);
        f.restart = f.restart || r.active_failed > 0;
    }
    return f;
}

} // namespace nvlblock::sim
