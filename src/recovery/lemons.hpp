// SPDX-License-Identifier: GPL-2.0-or-later
//
// Lemons (docs/placement.md rule 5a): a node that failed under `failures`
// jobs within `window` is the last choice, once it is back in service, for
// a replacement in an in-place restart and for a slice. Every published
// fleet study finds a few nodes causing most job failures (Meta's research
// clusters ("Revisiting Reliability in Large-Scale ML Research Clusters",
// HPCA 2025) detect such "lemon" nodes for that reason); a node repaired
// and resumed by a health check that missed the fault fails the next job
// too, and the job an in-place restart puts on it is the one that just
// failed.
//
// What counts: each time a job ends with the node failed (down, not
// responding, failing, drained) and Slurm requeues the job or ended it with
// NODE_FAIL, and each failure that opens a recovery later (a drain within
// recovery.failure_window). Several of a job's nodes failing at once count
// once each. Nothing else: a node drained while idle, or under a job that
// completed normally, is an operator's decision, not a fault under a job.
//
// The history is kept per node (oldest first, at most `failures` times:
// older ones cannot matter), saved with the ledger, followed by name across
// reconfigures, and cleared for a node by an explicit call (an operator who
// replaced the part: nvlblock-status --clear-lemon). Data and one rule;
// placement reads only the sorted list of lemons at a time.
#pragma once

#include "model/topology.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nvlblock {

struct NodeFailures {
    NodeIndex node = 0;
    std::vector<std::int64_t> at; // oldest first
};

class FailureHistory {
  public:
    // The node failed under a job at `at`. Returns whether anything changed
    // (the same failure reported twice is kept once).
    bool record(NodeIndex node, std::int64_t at, const LemonPolicy& policy);
    // Forgets the node's failures (an operator's clear). Returns whether it had any.
    bool clear(NodeIndex node);

    // Failures of `node` within the window ending at `now`.
    int failures_within(NodeIndex node, std::int64_t now, const LemonPolicy& policy) const;
    // Nodes that are lemons at `now`, sorted by index; `until` (when given)
    // gets the first time after `now` at which one of them stops being one
    // as its failures age (INT64_MAX: none). Nothing else changes the list
    // but a new failure or a clear.
    std::vector<NodeIndex> lemons(std::int64_t now, const LemonPolicy& policy, std::int64_t* until = nullptr) const;
    // The latest failure of the node (0: none kept).
    std::int64_t last_failure(NodeIndex node) const;

    bool empty() const { return by_node_.empty(); }
    const std::map<NodeIndex, std::vector<std::int64_t>>& nodes() const { return by_node_; }
    // The history as saved (nodes with no failure kept are left out).
    void replace(std::map<NodeIndex, std::vector<std::int64_t>> by_node);
    // Changes whenever the history does, and differs between histories of
    // different contents (drawn from one counter for the whole process): what
    // a cache of lemons() keys on. The ledger's own version moves with every
    // recovery change, far more often than its failures do (at 8,192 racks,
    // recounting the lemons per ledger change was a third of a simulated
    // month).
    std::uint64_t version() const { return version_; }
    // Drops failures at or before `since` (older than any window asked
    // with) and nodes left with none. Returns whether anything was dropped.
    bool forget_before(std::int64_t since);
    // After a reconfigure: nodes follow their names; those gone are dropped.
    void remap(const Topology& from, const Topology& to);

  private:
    void changed();
    // The two indexes below, kept with by_node_: a node's entries leave them
    // before its times change and come back after (none while it has none).
    void unindex(NodeIndex node, const std::vector<std::int64_t>& times);
    void index(NodeIndex node, const std::vector<std::int64_t>& times);
    void reindex_all();

    std::map<NodeIndex, std::vector<std::int64_t>> by_node_;
    // Nodes by their oldest kept failure: forget_before() reads only the
    // nodes it drops from, not every node that failed within the window.
    std::set<std::pair<std::int64_t, NodeIndex>> by_oldest_;
    // Nodes by how many failures they keep: lemons() reads only those that
    // keep at least `failures` (at 8,192 racks, a handful of the ~25,000
    // nodes that fail in a week).
    std::map<std::size_t, std::set<NodeIndex>> by_count_;
    std::uint64_t version_ = next_version();
    static std::uint64_t next_version();
};

} // namespace nvlblock
