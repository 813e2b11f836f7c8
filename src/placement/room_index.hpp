// SPDX-License-Identifier: GPL-2.0-or-later
//
// Blocks by free room, kept across decisions. On a busy cluster most blocks
// have no room for an ordinary request (only their spares are free), yet a
// decision that looks at every block costs a pass over all of them: about a
// million decisions a simulated day at 147,456 nodes. The index keeps, for one
// state array and one availability map (or none), what each block offers a
// request that holds nothing there, and the blocks where that is any room,
// as bit sets; the engine then looks closely only at those blocks (and at
// the few with holds or a recovery's own). It is a data structure, not a
// rule: its numbers come from count_available() and block_limits(), the
// engine's own, and the engine falls back to every block when it has none.
//
// The index is updated the way TallyCache updates tallies: the arrays are
// compared with the copies last counted, 64 bytes per step, and only the
// blocks whose nodes changed are recounted (or, where the caller notes its
// changes, change_journal.hpp, only the nodes it noted are compared). Several (states, map) pairs are
// kept (found by address first), since a scheduler alternates between the
// cluster as it is and as it will be, and between maps.
#pragma once

#include "model/topology.hpp"
#include "placement/availability_counts.hpp"
#include "placement/change_journal.hpp"
#include "placement/node_state.hpp"
#include "placement/snapshot.hpp"
#include "placement/touched_blocks.hpp"

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace nvlblock {

// What a block offers a request that holds nothing there and is not
// restarting there.
struct BlockOffer {
    AvailabilityCounts counts; // with a map: count_available(); without: available = free nodes
    int limit = 0;             // nodes it may take now (0 on a faulted block)
    int spare_limit = 0;       // nodes it could take if spares were not withheld (0 on a faulted block)
};

// A block that offers one request less than the index says: other jobs
// hold nodes there (held_offers.hpp). What the engine's view of the block
// lets the request take with those holds counted: `limit`, and what
// preemptible work may take (a lending block's spare_limit; its limit
// elsewhere). Neither exceeds the index's own offer.
struct OfferCut {
    BlockIndex block = kNoBlock;
    int limit = 0;
    int borrowing = 0;
};

class RoomIndex {
  public:
    const BlockOffer& offer(BlockIndex b) const { return offers_[static_cast<std::size_t>(b)]; }
    std::size_t block_count() const { return offers_.size(); }
    // Whether some block (a faulted one too) has a node the request may see.
    bool any_available() const { return with_available_ > 0; }
    // Calls f(block), in block order, for every block where a request may
    // take `at_least` nodes: limit >= at_least, or (`preemptible` work) a
    // lending block with spare_limit >= at_least. Every other block offers it
    // fewer (none, for at_least 1).
    template <class F>
    void for_each_with_room(bool preemptible, int at_least, F&& f) const {
        for (std::size_t w = 0; w < ordinary_.size(); ++w) {
            std::uint64_t bits = at_least <= 1 ? ordinary_[w] | (preemptible ? lending_[w] : 0)
                                               : with_room_word(w, preemptible, at_least);
            for (; bits; bits &= bits - 1)
                f(static_cast<BlockIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
        }
    }
    // How many blocks have exactly this limit (0 to largest_block()), and
    // f(block) for each, in block order.
    long blocks_with_limit(int limit) const { return by_limit_[static_cast<std::size_t>(limit)]; }
    template <class F>
    void for_each_with_limit(int limit, F&& f) const {
        const std::vector<std::uint64_t>& set = limit_is_[static_cast<std::size_t>(limit)];
        for (std::size_t w = 0; w < set.size(); ++w)
            for (std::uint64_t bits = set[w]; bits; bits &= bits - 1)
                f(static_cast<BlockIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits))));
    }
    // The same blocks by spare_limit (smallest first), in block order within
    // one spare_limit, until f returns true: best fit's order among blocks of
    // one limit (block_choice.cpp), so a search that finds its answer early
    // (thousands of blocks of a saturated cluster with the same room) stops
    // there. Costs a pass over the words per spare_limit value present.
    template <class F>
    void for_each_with_limit_by_spare(int limit, F&& f) const {
        const std::vector<std::uint64_t>& set = limit_is_[static_cast<std::size_t>(limit)];
        for (std::size_t s = 0; s < spare_is_.size(); ++s) {
            if (by_spare_value_[s] == 0)
                continue;
            const std::vector<std::uint64_t>& spare = spare_is_[s];
            for (std::size_t w = 0; w < set.size(); ++w)
                for (std::uint64_t bits = set[w] & spare[w]; bits; bits &= bits - 1)
                    if (f(static_cast<BlockIndex>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)))))
                        return;
        }
    }
    // Blocks with spare_limit >= unit whose slice holds `segment` (0: any).
    long spare_at_least(int unit, std::uint32_t segment) const;
    // The most nodes a request that is not restarting may take over every
    // block: the sum of what each offers it (the spares of lending blocks
    // too for preemptible work), with the blocks of `cuts` offering what
    // they say. A decision never gives a block more than its view's limit,
    // which is at most this offer (holds only lower it).
    long room_for(bool preemptible, std::span<const OfferCut> cuts = {}) const;
    // The most nodes a request that is not restarting may take inside one
    // group of rung `rung` of `topo`'s ladder (model/ladder.hpp), on at most
    // `children` of its children (0: any): the largest sum of the offers of
    // its blocks (of its fullest children), counted as room_for() counts the
    // cluster. A pass over the rung's groups (and their children).
    long reach_in_a_group(const Topology& topo, std::size_t rung, long children, bool preemptible,
                          std::span<const OfferCut> cuts = {}) const;
    // The most one block offers a request that is not restarting: its
    // limit, or (`preemptible` work) a lending block's spare_limit. A pass
    // over the values from the top.
    int largest_offer(bool preemptible, std::span<const OfferCut> cuts = {}) const;
    // What block b offers such a request (room_for's terms, no cut).
    int offer_to(BlockIndex b, bool preemptible) const {
        const BlockOffer& o = offer(b);
        return preemptible && lends(b) ? o.spare_limit : o.limit;
    }
    // The most nodes any block has (asked by refusals; kept, not recounted).
    int largest_block() const { return largest_block_; }
    // How many failed nodes the map offers (Slurm asks whether the job could
    // ever run: Planner::place answers over other states then). 0 without a map.
    long offered_failed() const { return offered_failed_; }

  private:
    friend class RoomIndexCache;
    void init(const Topology& topo);
    void add(const Topology& topo, BlockIndex b, int sign);
    // What the group g of rung r offers (room_for's terms).
    long group_offer(std::size_t r, std::size_t g, bool preemptible) const {
        return group_limit_[r][g] + (preemptible ? group_lending_extra_[r][g] : 0);
    }
    bool lends(BlockIndex b) const {
        const auto i = static_cast<std::size_t>(b);
        return (lends_[i / 64] >> (i % 64)) & 1;
    }
    // How many blocks offer each value (`preemptible` work: by_borrowing_offer_,
    // else by_limit_), with the blocks of `cuts` moved to their cut offers.
    std::vector<long> offers_with(std::span<const OfferCut> cuts, bool preemptible) const;
    // What one cut takes from the block's offer (room_for's terms).
    long cut_taken(const OfferCut& c, bool preemptible) const;
    // What the cuts take from each group of rung r (room_for's terms).
    std::vector<long> cut_by_group(const Topology& topo, std::size_t r, std::span<const OfferCut> cuts,
                                   bool preemptible) const;
    // Word w of the blocks with limit (or, preemptible, lending spare_limit) >= at_least.
    std::uint64_t with_room_word(std::size_t w, bool preemptible, int at_least) const;

    std::vector<BlockOffer> offers_;
    std::vector<std::uint64_t> ordinary_; // bit per block: limit > 0
    std::vector<std::uint64_t> lending_;  // bit per block: lends spares and spare_limit > 0
    // Per limit value (1 to largest_block()), bit per block: its limit is that
    // value; the same by spare_limit (every block: with lends_, those that
    // lend spares), and how many blocks have each.
    std::vector<std::vector<std::uint64_t>> limit_is_, spare_is_;
    std::vector<long> by_limit_, by_spare_value_;
    std::vector<long> by_borrowing_offer_;    // per value: blocks offering preemptible work that much
    std::vector<std::uint64_t> lends_;        // bit per block: it lends spares
    std::vector<int> slices_;                 // the slice sizes of the blocks, once each
    std::vector<int> slice_of_;               // per block: its slice, as an index into slices_
    std::vector<std::vector<long>> by_spare_; // per slice: how many blocks have each spare_limit
    long with_available_ = 0;
    long total_limit_ = 0, lending_extra_ = 0; // sums of limit; of spare_limit - limit on lending blocks
    // The same sums per group, per rung of the hierarchy's ladder (none without levels).
    std::vector<std::vector<long>> group_limit_, group_lending_extra_;
    int largest_block_ = 0;
    long offered_failed_ = 0;
};

// What one block offers under `states` and `available` (empty: no map, the
// request takes free nodes), given the block's tally of `states`.
BlockOffer offer_of(const Block& block, const BlockTally& t, std::span<const NodeState> states,
                    std::span<const std::uint8_t> available);

class RoomIndexCache {
  public:
    // The index of `states` (whose tallies are `tallies`) under `available`
    // (empty or one byte per node). An index still held by a snapshot is
    // left unchanged (copied before an update). `journal`: what the caller
    // noted changing (null: compare every node).
    std::shared_ptr<const RoomIndex> index(const Topology& topo, std::span<const NodeState> states,
                                           const Tallies& tallies, std::span<const std::uint8_t> available,
                                           const ChangeJournal* journal = nullptr);
    // Forget everything (the topology changed).
    void reset();
    // Changes whenever an index this cache returned may have changed or
    // gone (built, updated, its slot given to other arrays, reset): a caller
    // holding an index's address may use it again while this stays the same.
    std::uint64_t generation() const { return generation_; }

  private:
    struct Slot {
        const NodeState* states_source = nullptr; // the arrays last counted here (hints only)
        const std::uint8_t* map_source = nullptr;
        bool mapped = false;
        std::vector<NodeState> states; // as counted
        std::vector<std::uint8_t> map; // as counted (mapped only)
        std::shared_ptr<RoomIndex> index;
        std::uint64_t used = 0;
        JournalMark mark;
    };
    Slot& slot_for(std::span<const NodeState> states, std::span<const std::uint8_t> available);
    void build(Slot& slot, const Topology& topo, std::span<const NodeState> states, const Tallies& tallies,
               std::span<const std::uint8_t> available);
    void find_touched(Slot& slot, const Topology& topo, std::span<const NodeState> states,
                      std::span<const std::uint8_t> available, const ChangeJournal* journal);
    void compare(Slot& slot, const Topology& topo, std::span<const NodeState> states,
                 std::span<const std::uint8_t> available, std::size_t i);

    const Topology* topo_ = nullptr;
    std::array<Slot, 8> slots_; // (states, map) pairs: the simulator asks of six
    std::uint64_t clock_ = 0;
    std::uint64_t generation_ = 0;
    TouchedBlocks touched_;
    long offered_failed_change_ = 0; // found by find_touched
};

} // namespace nvlblock
