// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/failure_watch.hpp"

#include "recovery/rules.hpp"

#include <algorithm>

namespace nvlblock {

std::int64_t failure_window(const Topology& topo, std::int64_t slurm_requeue_delay) {
    const std::int64_t set = topo.policy().recovery.failure_window_seconds;
    return set >= 0 ? set : std::max<std::int64_t>(0, slurm_requeue_delay);
}

bool watch_holds(const FailureWatch& w, std::span<const NodeState> states, std::int64_t now) {
    if (now >= w.until)
        return false;
    return std::any_of(w.nodes.begin(), w.nodes.end(), [&](NodeIndex n) {
        return n < states.size() && (states[n] == NodeState::kBusy || is_failed(states[n]));
    });
}

RecoveryClaim watch_claim(const Topology& topo, const FailureWatch& w, std::span<const NodeState> states) {
    RecoveryClaim c;
    c.job_id = w.job_id;
    c.deadline = w.until;
    for (NodeIndex n : w.nodes)
        claim_node(topo, c, n, n < states.size() && is_failed(states[n]));
    return c;
}

std::vector<NodeIndex> failed_since_end(const FailureWatch& w, std::span<const NodeState> states) {
    std::vector<NodeIndex> out;
    for (NodeIndex n : w.nodes)
        if (n < states.size() && is_failed(states[n]))
            out.push_back(n);
    return out;
}

} // namespace nvlblock
