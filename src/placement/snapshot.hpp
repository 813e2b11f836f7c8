// SPDX-License-Identifier: GPL-2.0-or-later
//
// The cluster as the engine sees it at one moment: node states, per-block
// failure tallies (which make a block degraded or down as a whole) and the
// nodes held for jobs waiting to restart in place. The tallies are counted
// here, or handed in already counted (TallyCache keeps them across the many
// decisions of a scheduling pass); the holds likewise (the planner keeps
// them while the claims and the states are the same).
#pragma once

#include "model/topology.hpp"
#include "placement/block_fault.hpp"
#include "placement/node_state.hpp"
#include "placement/request.hpp"

#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace nvlblock {

class RoomIndex;

// Held capacity of one block for jobs waiting to restart there.
struct BlockHold {
    std::uint32_t job_id = 0;
    std::uint32_t need = 0;       // nodes the job will take on this block
    std::uint32_t held_nodes = 0; // of which specific free nodes (its prior healthy ones)
};

struct BlockTally {
    int size = 0;
    int failed = 0; // down + drained
    int down = 0;
    int drained = 0;
    int busy = 0;
    int lent = 0; // counted only where lending is on; elsewhere such nodes are busy
    int free = 0;
    bool fault = false; // block fault: failed together beyond spares and the fault fraction

    int spares_configured = 0;
    // Spares still held back: the configured count less failures it absorbs.
    int spare_reserve() const { return std::max(0, spares_configured - failed); }
    bool degraded() const { return failed > spares_configured; }
};

// Throws std::invalid_argument unless there is one state per node of `topo`.
void check_state_count(const Topology& topo, std::span<const NodeState> states);

// The tally of one block under `states`.
BlockTally count_block(const Topology& topo, const Block& block, std::span<const NodeState> states);

using Tallies = std::vector<BlockTally>;

// What the claims of jobs waiting to restart in place hold under some
// states: holds sorted by block (claim order within a block), and the held
// nodes sorted by node. A handful, where a per-node array would cost a
// cluster-sized allocation per decision.
struct Holds {
    std::vector<BlockIndex> hold_blocks;
    std::vector<BlockHold> holds;
    std::vector<std::pair<NodeIndex, std::uint32_t>> held;
    std::vector<BlockIndex> held_blocks; // blocks of the held nodes, sorted, once each
};

// Each free prior healthy node of a claim is held for the first claim that
// lists it (claims in ledger order); a faulted block holds nothing.
// `tallies` are those of `states`. Null when nothing is held.
std::shared_ptr<const Holds> count_holds(const Topology& topo, std::span<const NodeState> states,
                                         const Tallies& tallies, std::span<const RecoveryClaim> claims);

class Snapshot {
  public:
    // `claims`: jobs waiting to restart in place (not yet expired).
    Snapshot(const Topology& topo, std::span<const NodeState> states, std::span<const RecoveryClaim> claims);
    // The same with the tallies of `states` already counted (one per block).
    Snapshot(const Topology& topo, std::span<const NodeState> states, std::shared_ptr<const Tallies> tallies,
             std::span<const RecoveryClaim> claims);
    // The same with the holds already counted (count_holds() of these states
    // and tallies; null: none).
    Snapshot(const Topology& topo, std::span<const NodeState> states, std::shared_ptr<const Tallies> tallies,
             std::shared_ptr<const Holds> holds);

    const Topology& topology() const { return *topo_; }
    std::span<const NodeState> states() const { return states_; }
    NodeState state(NodeIndex n) const { return states_[n]; }
    const BlockTally& tally(BlockIndex b) const { return (*tallies_)[static_cast<std::size_t>(b)]; }
    const Tallies& tallies() const { return *tallies_; }
    // Holds on a block, in the order of the claims. Asked for every block on
    // every decision; holds are on a few blocks, found by a range check.
    std::span<const BlockHold> holds(BlockIndex b) const {
        if (!holds_ || b < holds_->hold_blocks.front() || b > holds_->hold_blocks.back())
            return {};
        return holds_on(b);
    }
    // The job a node is held for (its prior healthy node), 0 when none.
    std::uint32_t held_for(NodeIndex n) const;
    // Whether any node of the block is held (held_for() is not 0 there).
    bool has_held_nodes(BlockIndex b) const {
        if (!holds_ || holds_->held_blocks.empty())
            return false;
        const std::vector<BlockIndex>& held = holds_->held_blocks;
        return b >= held.front() && b <= held.back() && std::binary_search(held.begin(), held.end(), b);
    }

    // Blocks with holds, and blocks of held nodes (sorted; a block may be
    // listed in both): the blocks where a request's view depends on its job.
    std::span<const BlockIndex> hold_blocks() const {
        return holds_ ? std::span<const BlockIndex>(holds_->hold_blocks) : std::span<const BlockIndex>();
    }
    std::span<const BlockIndex> held_blocks() const {
        return holds_ ? std::span<const BlockIndex>(holds_->held_blocks) : std::span<const BlockIndex>();
    }

    // Lemons (recovery/lemons.hpp, docs/placement.md rule 5a): nodes taken
    // last within their block. Sorted; few or none, so no per-node array.
    // The list must outlive the snapshot (the planner's cache does).
    void set_last_choice(std::span<const NodeIndex> sorted) { last_choice_ = sorted; }
    bool last_choice(NodeIndex n) const {
        return !last_choice_.empty() && std::binary_search(last_choice_.begin(), last_choice_.end(), n);
    }
    std::span<const NodeIndex> last_choice() const { return last_choice_; }

    // The index of blocks by room (room_index.hpp) for these states under
    // `available`, when one was attached for exactly that map (same array,
    // or both empty); else null and the engine looks at every block.
    void attach_room_index(std::shared_ptr<const RoomIndex> index, std::span<const std::uint8_t> available) {
        room_index_ = std::move(index);
        room_map_ = available;
    }
    const RoomIndex* room_index(std::span<const std::uint8_t> available) const {
        const bool same =
            available.size() == room_map_.size() && (available.empty() || available.data() == room_map_.data());
        return same ? room_index_.get() : nullptr;
    }

  private:
    std::span<const BlockHold> holds_on(BlockIndex b) const;

    const Topology* topo_;
    std::span<const NodeState> states_;
    std::shared_ptr<const Tallies> tallies_;
    std::shared_ptr<const Holds> holds_; // null: nothing held (never an empty one)
    std::shared_ptr<const RoomIndex> room_index_;
    std::span<const std::uint8_t> room_map_;
    std::span<const NodeIndex> last_choice_;
};

} // namespace nvlblock
