// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster_state.hpp"

#include <stdexcept>

namespace nvlblock::sim {

using nvlblock::NodeIndex;
using nvlblock::NodeState;

ClusterState::ClusterState(const nvlblock::Topology& topo)
    : states_(topo.node_count(), NodeState::kFree), node_job_(topo.node_count(), -1),
      node_preemptible_(topo.node_count(), 0), causes_(topo.node_count(), 0), free_map_(topo.node_count(), 1),
      preemptor_map_(topo.node_count(), 1), healthy_(static_cast<int>(topo.node_count())) {}

void ClusterState::allocate(const std::vector<NodeIndex>& nodes, std::int32_t job, bool preemptible, NodeState state) {
    for (NodeIndex n : nodes) {
        if (states_[n] != NodeState::kFree || node_job_[n] >= 0)
            throw std::logic_error("simulator: allocating node " + std::to_string(n) + " that is not free");
        node_job_[n] = job;
        node_preemptible_[n] = preemptible ? 1 : 0;
        states_[n] = state;
        ++busy_;
        if (preemptible)
            ++busy_preemptible_;
        sync_maps(n);
    }
}

void ClusterState::release(const std::vector<NodeIndex>& nodes) {
    for (NodeIndex n : nodes) {
        if (node_job_[n] < 0)
            continue;
        if (causes_[n] == 0) {
            --busy_;
            if (node_preemptible_[n])
                --busy_preemptible_;
            states_[n] = NodeState::kFree;
        }
        node_job_[n] = -1;
        node_preemptible_[n] = 0;
        sync_maps(n);
    }
}

bool ClusterState::cause_down(NodeIndex n) {
    if (causes_[n]++ != 0)
        return false;
    --healthy_;
    if (node_job_[n] >= 0) { // the job is killed in this same second; its node no longer works
        --busy_;
        if (node_preemptible_[n])
            --busy_preemptible_;
    }
    states_[n] = NodeState::kDown;
    sync_maps(n);
    return true;
}

bool ClusterState::cause_up(NodeIndex n) {
    if (causes_[n] == 0)
        throw std::logic_error("simulator: repair of a node with no failure");
    if (--causes_[n] != 0)
        return false;
    ++healthy_;
    states_[n] = NodeState::kFree;
    sync_maps(n);
    if (node_job_[n] >= 0) // cannot happen: a failed node's job is released in the second it fails
        throw std::logic_error("simulator: repaired node still allocated");
    return true;
}

} // namespace nvlblock::sim
