// SPDX-License-Identifier: GPL-2.0-or-later
//
// Block tallies kept across decisions. A scheduler asks many questions per
// pass (each job, test-only and will-run evaluations, backfill) over node
// states that change only where a job started or ended, so the tallies are
// recounted only on the blocks whose nodes changed since the previous call.
// The comparison is exact (every state, byte for byte), so a decision never
// sees a stale tally; finding what changed costs a scan of the state array
// in word-sized steps, the recount costs only the blocks touched.
//
// A caller that notes what it changes (change_journal.hpp) spares the scan:
// only the nodes it noted are compared.
//
// A caller may alternate between a few state arrays (the simulator's
// backfill asks about the cluster as it is, as it will be when some jobs
// end and when all have): each array keeps its own tallies, found by its
// address first; which one is used never changes the result, only how much
// is recounted.
#pragma once

#include "model/topology.hpp"
#include "placement/change_journal.hpp"
#include "placement/node_state.hpp"
#include "placement/snapshot.hpp"
#include "placement/touched_blocks.hpp"

#include <array>
#include <memory>
#include <span>
#include <vector>

namespace nvlblock {

class TallyCache {
  public:
    // The tallies of `states` on `topo`. A snapshot still holding earlier
    // tallies keeps them unchanged (they are copied before an update).
    // `journal`: what the caller noted changing (null: compare every node).
    std::shared_ptr<const Tallies> tallies(const Topology& topo, std::span<const NodeState> states,
                                           const ChangeJournal* journal = nullptr);

    // Forget everything (the topology changed).
    void reset();

  private:
    struct Slot {
        const NodeState* source = nullptr; // the array last counted here (a hint only)
        std::vector<NodeState> states;     // its states as counted
        std::shared_ptr<Tallies> tallies;
        std::uint64_t used = 0;
        JournalMark mark;
    };
    std::shared_ptr<const Tallies> update(Slot& slot, const Topology& topo, std::span<const NodeState> states,
                                          const ChangeJournal* journal);
    // Compares the slot's copy with `states` at node i; a change touches its block.
    void compare(Slot& slot, const Topology& topo, std::span<const NodeState> states, std::size_t i);

    const Topology* topo_ = nullptr;
    std::array<Slot, 3> slots_;
    std::uint64_t clock_ = 0;
    TouchedBlocks touched_;
};

} // namespace nvlblock
