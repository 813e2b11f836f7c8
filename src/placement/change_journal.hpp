// SPDX-License-Identifier: GPL-2.0-or-later
//
// Which nodes a caller changed. What the planner keeps across decisions
// (block tallies, the room index and its count of offered failed nodes) is
// a copy of the arrays it was counted from; without the journal, each
// decision finds what changed by comparing every node's byte with that copy:
// three passes over every node, whatever changed. A caller that knows what it
// changes (the simulator makes every change; the plugin sees Slurm's node
// bitmaps change) names those nodes here instead, and a decision compares
// only them: its cost follows what changed, not the cluster's size.
//
// The contract: the caller registers the arrays it keeps (track()) and, from
// then on, notes every node whose byte it changes in any of them before the
// next question. A copy counted from tracked arrays is brought up to date
// from the nodes noted since (compared byte for byte: a node noted that did
// not change costs a comparison, nothing else); a copy of any array not
// tracked (a decision's scratch, a caller that never notes) is compared
// whole, as before. So the journal changes what a decision costs, never
// what it answers, as long as the caller keeps the contract.
#pragma once

#include "model/topology.hpp"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

namespace nvlblock {

class ChangeJournal {
  public:
    // Counts every node noted since the journal began.
    using Position = std::uint64_t;

    // The caller will note every change to this array's bytes (a node-state
    // array or an availability map), until untrack().
    void track(const void* array);
    void untrack(const void* array);
    bool tracks(const void* array) const;

    void note(NodeIndex node);
    void note(std::span<const NodeIndex> nodes) {
        for (NodeIndex n : nodes)
            note(n);
    }
    // The caller changed more than it lists: every copy is compared whole once.
    void note_all();

    Position end() const { return end_; }
    // The nodes noted from `from` on (repeats possible); nullopt when they are
    // no longer kept (note_all, or forgotten past the limit): compare every node.
    std::optional<std::span<const NodeIndex>> since(Position from) const;

    // How many nodes are kept: a note past it forgets the older half (a copy
    // synced before them compares every node; past about an eighth of the
    // nodes, that is as cheap). Copies that catch up often keep their lists.
    void set_limit(std::size_t entries) { limit_ = entries; }

  private:
    std::vector<const void*> tracked_;
    std::vector<NodeIndex> entries_;
    Position base_ = 0; // the position of entries_[0]
    Position end_ = 0;
    std::size_t limit_ = 4096;
};

// Where a copy kept across decisions stands against the journal.
struct JournalMark {
    bool synced = false;              // brought up to date while every array it copies was tracked
    ChangeJournal::Position seen = 0; // up to here

    // The nodes to compare with the copy of `arrays`: those noted since it
    // was synced, when the journal tracks every one of them; nullopt:
    // compare every node.
    std::optional<std::span<const NodeIndex>> pending(const ChangeJournal* journal,
                                                      std::initializer_list<const void*> arrays) const;
    // The copy now equals `arrays`.
    void sync(const ChangeJournal* journal, std::initializer_list<const void*> arrays);
};

} // namespace nvlblock
