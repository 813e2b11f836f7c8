// SPDX-License-Identifier: GPL-2.0-or-later
#include "cluster_state.hpp"

#include <algorithm>
#include <stdexcept>

namespace nvlblock::sim {

using nvlblock::NodeIndex;
using nvlblock::NodeState;

ClusterState::ClusterState(const nvlblock::Topology& topo)
    : states_(topo.node_count(), NodeState::kFree), node_job_(topo.node_count(), -1),
      node_preemptible_(topo.node_count(), 0), causes_(topo.node_count(), 0), free_map_(topo.node_count(), 1),
      preemptor_map_(topo.node_count(), 1), ended_states_(topo.node_count(), NodeState::kFree),
      ended_map_(topo.node_count(), 1), completing_until_(topo.node_count(), -1), latent_(topo.node_count(), 0),
      latent_process_(topo.node_count(), 0), healthy_(static_cast<int>(topo.node_count())) {
    map_changes_.set_limit(std::max<std::size_t>(64, topo.node_count() / 8)); // past that, a full compare is as cheap
    map_changes_.track(free_map_.data());
}

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

int ClusterState::complete(const std::vector<NodeIndex>& nodes, Seconds until) {
    std::vector<NodeIndex> completing;
    for (NodeIndex n : nodes) {
        if (node_job_[n] < 0)
            continue;
        const bool up = causes_[n] == 0;
        release({n});
        if (!up)
            continue;
        // Busy again, as COMPLETING nodes are to Slurm: not free, not preemptible.
        ++completing_;
        states_[n] = NodeState::kBusy;
        completing_until_[n] = until;
        sync_maps(n);
        completing.push_back(n);
    }
    const int count = static_cast<int>(completing.size());
    if (count > 0)
        completions_.emplace(until, std::move(completing));
    return count;
}

int ClusterState::completion_over(Seconds now) {
    int freed = 0;
    while (!completions_.empty() && completions_.begin()->first <= now) {
        for (NodeIndex n : completions_.begin()->second) {
            if (completing_until_[n] != completions_.begin()->first)
                continue; // failed since (down), or completing a later kill
            completing_until_[n] = -1;
            --completing_;
            states_[n] = NodeState::kFree;
            sync_maps(n);
            ++freed;
        }
        completions_.erase(completions_.begin());
    }
    return freed;
}

bool ClusterState::cause_down(NodeIndex n, NodeState as) {
    if (causes_[n]++ != 0)
        return false;
    --healthy_;
    if (completing_until_[n] >= 0) { // down now: the completion no longer holds it
        completing_until_[n] = -1;
        --completing_;
    }
    if (node_job_[n] >= 0) { // the job is killed in this same second; its node no longer works
        --busy_;
        if (node_preemptible_[n])
            --busy_preemptible_;
    }
    states_[n] = as;
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
