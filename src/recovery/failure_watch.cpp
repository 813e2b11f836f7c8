// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/failure_watch.hpp"

#include "recovery/rules.hpp"

#include <algorithm>

namespace nvlblock {

std::int64_t failure_window(const Topology& topo, std::int64_t slurm_requeue_delay) {
    const std::int64_t set = topo.policy().recovery.failure_window_seconds;
    return set >= 0 ? set : std::max<std::int64_t>(0, slurm_requeue_delay);
}

namespace {

bool any_node(const FailureWatch& w, std::span<const NodeState> states, bool (*pred)(NodeState)) {
    return std::any_of(w.nodes.begin(), w.nodes.end(),
                       [&](NodeIndex n) { return n < states.size() && pred(states[n]); });
}

bool completing(NodeState s) {
    return s == NodeState::kBusy;
}

bool completing_or_failed(NodeState s) {
    return s == NodeState::kBusy || is_failed(s);
}

} // namespace

bool watch_open(const FailureWatch& w, std::span<const NodeState> states, std::int64_t now) {
    return now < w.until || (now < w.limit && any_node(w, states, completing));
}

bool watch_holds(const FailureWatch& w, std::span<const NodeState> states, std::int64_t now) {
    return watch_open(w, states, now) && any_node(w, states, completing_or_failed);
}

RecoveryClaim watch_claim(const Topology& topo, const FailureWatch& w, std::span<const NodeState> states) {
    RecoveryClaim c;
    c.job_id = w.job_id;
    c.deadline = w.limit;
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
