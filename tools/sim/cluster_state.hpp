// SPDX-License-Identifier: GPL-2.0-or-later
//
// The simulated cluster: per node, the state the placement engine sees, the
// job running there and how many failure causes hold it down, with running
// totals so that metrics cost nothing per event. Node states are set the way
// the plugin sets them from Slurm's (plugin/common/slurm_bridge.c): a node
// running work of the preemptible QOS is LENT where the policy lends spares,
// BUSY otherwise; a failed node is DOWN. A node of a killed job stays BUSY
// while it completes (Slurm's COMPLETING: the job's processes ending within
// KillWait), owned by no job.
#pragma once

#include "sim_types.hpp"

#include "model/topology.hpp"
#include "placement/change_journal.hpp"
#include "placement/node_state.hpp"

#include <cstdint>
#include <map>
#include <vector>

namespace nvlblock::sim {

class ClusterState {
  public:
    explicit ClusterState(const nvlblock::Topology& topo);

    std::size_t size() const { return states_.size(); }
    // From now on every change to the states and the two maps is noted in
    // `journal` (the planner's), which tracks those arrays.
    void set_journal(nvlblock::ChangeJournal* journal) {
        journal_ = journal;
        for (const void* a :
             {static_cast<const void*>(states_.data()), static_cast<const void*>(free_map_.data()),
              static_cast<const void*>(preemptor_map_.data()), static_cast<const void*>(ended_states_.data()),
              static_cast<const void*>(ended_map_.data())})
            journal_->track(a);
    }
    const std::vector<nvlblock::NodeState>& states() const { return states_; }
    nvlblock::NodeState state(nvlblock::NodeIndex n) const { return states_[n]; }
    // Running job (simulator index) on a node, -1 when none.
    std::int32_t job_on(nvlblock::NodeIndex n) const { return node_job_[n]; }
    // Whether the node runs work of the preemptible QOS.
    bool runs_preemptible(nvlblock::NodeIndex n) const { return node_preemptible_[n] != 0; }
    bool healthy(nvlblock::NodeIndex n) const { return causes_[n] == 0; }

    // Availability maps kept with the states (1: usable), so that a decision
    // needing one patches the nodes that differ (patch.hpp) instead of
    // building a node-sized array: free nodes; free nodes and healthy nodes
    // running preemptible work. A caller patches the second for a decision
    // and restores it before the cluster changes; the free map less other
    // nodes is an array of its own (withheld_map.hpp).
    std::vector<std::uint8_t>& preemptor_map() { return preemptor_map_; }
    const std::vector<std::uint8_t>& free_map() const { return free_map_; }
    // The nodes whose state or maps changed, noted here alone (the
    // planner's journal also holds what-if arrays' changes): for a copy
    // that follows the free map (withheld_map.hpp).
    const nvlblock::ChangeJournal& map_changes() const { return map_changes_; }
    const std::vector<std::uint8_t>& preemptor_map() const { return preemptor_map_; }

    // The cluster as it will be once every running job has ended (the
    // backfill's what-if with all of them gone): a running job's nodes free
    // where healthy, every other node as it is; and what a job may use then
    // (the free nodes: no preemptible work is left). Kept with the states, so
    // that asking whether a job could start at all costs a decision, not a
    // rewrite of every node.
    const std::vector<nvlblock::NodeState>& ended_states() const { return ended_states_; }
    const std::vector<std::uint8_t>& ended_map() const { return ended_map_; }

    int healthy_count() const { return healthy_; }
    int busy_count() const { return busy_; }                         // healthy nodes running a job
    int busy_preemptible_count() const { return busy_preemptible_; } // of which preemptible work
    int completing_count() const { return completing_; }             // healthy nodes of killed jobs, not free yet
    int free_count() const { return healthy_ - busy_ - completing_; }
    // Until when the node completes a killed job's work (-1: it does not).
    Seconds completing_until(nvlblock::NodeIndex n) const { return completing_until_[n]; }

    // `state`: what the engine sees on the nodes while the job runs (busy, lent or guarded).
    void allocate(const std::vector<nvlblock::NodeIndex>& nodes, std::int32_t job, bool preemptible,
                  nvlblock::NodeState state);
    // Frees a job's nodes; failed ones stay down.
    void release(const std::vector<nvlblock::NodeIndex>& nodes);
    // A killed job leaves its nodes: its healthy ones complete until `until`
    // (busy, no job's), failed ones stay down, as release() leaves them.
    // Returns how many complete.
    int complete(const std::vector<nvlblock::NodeIndex>& nodes, Seconds until);
    // Frees the nodes whose completion ends `now`; how many it freed. A node
    // that failed meanwhile, or was killed again since, is not freed here.
    int completion_over(Seconds now);
    // A failure cause starts on the node; true if the node was healthy until
    // now. `as`: down, or drained (a health check took it out of service).
    bool cause_down(nvlblock::NodeIndex n, nvlblock::NodeState as = nvlblock::NodeState::kDown);
    // A failure cause ends; true if the node is healthy again.
    bool cause_up(nvlblock::NodeIndex n);

    // A fault with the node up (failure_kinds.hpp) that no check has found
    // yet: the node looks healthy to Slurm and to the engine; a job started
    // on it fails. Each fault gets a number, so that a check scheduled for
    // an earlier one finds nothing to do. 0: no such fault.
    // `process`: the failure process it came from (failure_model.hpp), which its repair follows.
    std::uint32_t hide_fault(nvlblock::NodeIndex n, std::uint32_t process) {
        latent_process_[n] = process;
        return latent_[n] = ++latent_seq_;
    }
    std::uint32_t hidden_fault(nvlblock::NodeIndex n) const { return latent_[n]; }
    std::uint32_t hidden_fault_process(nvlblock::NodeIndex n) const { return latent_process_[n]; }
    void fault_found(nvlblock::NodeIndex n) { latent_[n] = 0; }

  private:
    // Recomputes the node's entries of the maps from its state.
    void sync_maps(nvlblock::NodeIndex n) {
        free_map_[n] = states_[n] == nvlblock::NodeState::kFree ? 1 : 0;
        preemptor_map_[n] = free_map_[n] != 0 || (causes_[n] == 0 && node_preemptible_[n] != 0) ? 1 : 0;
        const bool frees = node_job_[n] >= 0 && nvlblock::is_healthy(states_[n]);
        ended_states_[n] = frees ? nvlblock::NodeState::kFree : states_[n];
        ended_map_[n] = ended_states_[n] == nvlblock::NodeState::kFree ? 1 : 0;
        if (journal_) // every change of a state is followed by this call
            journal_->note(n);
        map_changes_.note(n);
    }

    std::vector<nvlblock::NodeState> states_;
    nvlblock::ChangeJournal* journal_ = nullptr;
    nvlblock::ChangeJournal map_changes_; // this cluster's own: the nodes whose state or maps changed
    std::vector<std::int32_t> node_job_;
    std::vector<std::uint8_t> node_preemptible_;
    std::vector<std::uint16_t> causes_;
    std::vector<std::uint8_t> free_map_, preemptor_map_;
    std::vector<nvlblock::NodeState> ended_states_;
    std::vector<std::uint8_t> ended_map_;
    std::vector<Seconds> completing_until_;
    std::vector<std::uint32_t> latent_, latent_process_; // hide_fault()
    std::uint32_t latent_seq_ = 0;
    // The nodes of each kill by the time their completion ends (some may
    // have failed or completed a later kill since: completing_until_ says).
    std::multimap<Seconds, std::vector<nvlblock::NodeIndex>> completions_;
    int healthy_ = 0, busy_ = 0, busy_preemptible_ = 0, completing_ = 0;
};

} // namespace nvlblock::sim
