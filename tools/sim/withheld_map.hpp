// SPDX-License-Identifier: GPL-2.0-or-later
//
// The cluster's free map less a set of nodes (the head job's reserved
// nodes), kept as an array of its own. The backfill asks every long
// candidate whether it is placed without the reserved nodes; patching them
// out of the free map for each question and back after it noted every
// reserved node twice per candidate, and each of the planner's caches then
// compared them and recounted their blocks twice over. This array changes
// only where the free map or the set changes, and each change is noted once.
#pragma once

#include "model/topology.hpp"
#include "placement/change_journal.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace nvlblock::sim {

class WithheldMap {
  public:
    WithheldMap() = default;
    WithheldMap(const WithheldMap&) = delete;
    WithheldMap& operator=(const WithheldMap&) = delete;
    ~WithheldMap() { forget(); }

    // `free` less `nodes`. `free_changes` notes every node whose byte of
    // `free` changes (ClusterState::map_changes): the copy follows those.
    // `journal`: the planner's, where the copy is tracked and each of its
    // changes noted; null: a fresh copy each call, tracked nowhere.
    const std::vector<std::uint8_t>& of(const std::vector<std::uint8_t>& free, const ChangeJournal& free_changes,
                                        std::span<const NodeIndex> nodes, ChangeJournal* journal);

  private:
    // Untracks the array (its journal is gone or another).
    void forget();
    void start(const std::vector<std::uint8_t>& free, ChangeJournal* journal);
    // The byte of node n as `free` and the withheld set say; noted if it changes.
    void refresh(const std::vector<std::uint8_t>& free, NodeIndex n);
    void withhold(const std::vector<std::uint8_t>& free, std::span<const NodeIndex> nodes);
    // Brings the copy up to date with `free` from the nodes noted since the last call.
    void follow(const std::vector<std::uint8_t>& free, const ChangeJournal& free_changes);

    std::vector<std::uint8_t> map_;
    std::vector<std::uint8_t> withheld_; // per node: 1 if in nodes_
    std::vector<NodeIndex> nodes_;
    ChangeJournal* journal_ = nullptr;
    JournalMark mark_; // against free_changes
};

} // namespace nvlblock::sim
