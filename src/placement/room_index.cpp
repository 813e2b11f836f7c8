// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/room_index.hpp"

#include "placement/block_limits.hpp"
#include "placement/byte_words.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

namespace nvlblock {
namespace {

bool offers_failed(std::span<const std::uint8_t> map, const NodeState* states, std::size_t i) {
    return !map.empty() && map[i] && is_failed(states[i]);
}

void set_bit(std::vector<std::uint64_t>& bits, BlockIndex b, bool on) {
    const auto i = static_cast<std::size_t>(b);
    const std::uint64_t m = 1ULL << (i % 64);
    bits[i / 64] = on ? bits[i / 64] | m : bits[i / 64] & ~m;
}

} // namespace

BlockOffer offer_of(const Block& block, const BlockTally& t, std::span<const NodeState> states,
                    std::span<const std::uint8_t> available) {
    // The same counts as the engine's view of a block (engine.cpp,
    // view_block) for a request with no holds and no recovery there.
    BlockOffer o;
    int lent_unavailable = 0;
    if (available.empty()) {
        o.counts.available = t.free;
        o.counts.lent_unavailable = t.lent;
        lent_unavailable = block.settings.lending ? t.lent : 0;
    } else {
        o.counts = count_available(block, states, available);
        lent_unavailable = block.settings.lending ? o.counts.lent_unavailable : 0;
    }
    if (!t.fault) {
        const BlockLimits l = block_limits(block, t, o.counts.available, lent_unavailable, false);
        o.limit = l.limit;
        o.spare_limit = l.spare_limit;
    }
    return o;
}

void RoomIndex::init(const Topology& topo) {
    const std::size_t n = topo.block_count();
    offers_.assign(n, BlockOffer{});
    ordinary_.assign((n + 63) / 64, 0);
    lending_.assign((n + 63) / 64, 0);
    slices_.clear();
    int largest = 0;
    for (const Block& b : topo.blocks()) {
        slices_.push_back(b.settings.slice);
        largest = std::max(largest, b.size());
    }
    std::sort(slices_.begin(), slices_.end());
    slices_.erase(std::unique(slices_.begin(), slices_.end()), slices_.end());
    slice_of_.clear();
    for (const Block& b : topo.blocks())
        slice_of_.push_back(
            static_cast<int>(std::lower_bound(slices_.begin(), slices_.end(), b.settings.slice) - slices_.begin()));
    by_spare_.assign(slices_.size(), std::vector<long>(static_cast<std::size_t>(largest) + 1, 0));
    const std::size_t values = static_cast<std::size_t>(largest) + 1;
    limit_is_.assign(values, std::vector<std::uint64_t>((n + 63) / 64, 0));
    by_limit_.assign(values, 0);
    by_borrowing_offer_.assign(values, 0);
    lends_.assign((n + 63) / 64, 0);
    for (std::size_t i = 0; i < n; ++i)
        set_bit(lends_, static_cast<BlockIndex>(i), topo.block(static_cast<BlockIndex>(i)).settings.lending);
    spare_is_.assign(values, std::vector<std::uint64_t>((n + 63) / 64, 0));
    by_spare_value_.assign(values, 0);
    largest_block_ = largest;
    const std::vector<Rung>& ladder = topo.hierarchy().ladder();
    group_limit_.resize(ladder.size());
    group_lending_extra_.resize(ladder.size());
    for (std::size_t r = 0; r < ladder.size(); ++r) {
        group_limit_[r].assign(ladder[r].groups.size(), 0);
        group_lending_extra_[r].assign(ladder[r].groups.size(), 0);
    }
    with_available_ = 0;
    total_limit_ = 0;
    lending_extra_ = 0;
}

// Adds (sign 1) or removes (sign -1) block b's offer from the sets and counts.
void RoomIndex::add(const Topology& topo, BlockIndex b, int sign) {
    const BlockOffer& o = offer(b);
    const bool on = sign > 0;
    const bool lends = topo.block(b).settings.lending;
    if (o.limit > 0)
        set_bit(ordinary_, b, on);
    if (o.spare_limit > 0 && lends)
        set_bit(lending_, b, on);
    set_bit(limit_is_[static_cast<std::size_t>(o.limit)], b, on);
    by_limit_[static_cast<std::size_t>(o.limit)] += sign;
    by_borrowing_offer_[static_cast<std::size_t>(lends ? o.spare_limit : o.limit)] += sign;
    set_bit(spare_is_[static_cast<std::size_t>(o.spare_limit)], b, on);
    by_spare_value_[static_cast<std::size_t>(o.spare_limit)] += sign;
    with_available_ += o.counts.available > 0 ? sign : 0;
    const long extra = lends ? o.spare_limit - o.limit : 0;
    total_limit_ += sign * o.limit;
    lending_extra_ += sign * extra;
    const std::vector<Rung>& ladder = topo.hierarchy().ladder();
    for (std::size_t r = 0; r < ladder.size(); ++r) {
        const auto g = static_cast<std::size_t>(ladder[r].group_at[static_cast<std::size_t>(b)]);
        group_limit_[r][g] += sign * o.limit;
        group_lending_extra_[r][g] += sign * extra;
    }
    by_spare_[static_cast<std::size_t>(slice_of_[static_cast<std::size_t>(b)])]
             [static_cast<std::size_t>(o.spare_limit)] += sign;
}

std::uint64_t RoomIndex::with_room_word(std::size_t w, bool preemptible, int at_least) const {
    std::uint64_t bits = 0, spare = 0;
    for (std::size_t v = static_cast<std::size_t>(at_least); v < limit_is_.size(); ++v) {
        bits |= limit_is_[v][w];
        spare |= preemptible ? spare_is_[v][w] : 0;
    }
    return bits | (spare & lends_[w]);
}

namespace {

// The largest value some block offers, from counts of blocks per value.
int top_value(std::span<const long> by) {
    for (std::size_t v = by.size(); v-- > 1;)
        if (by[v] > 0)
            return static_cast<int>(v);
    return 0;
}

// The sum of the `k` largest offers, from counts of blocks per value.
long top_sum(std::span<const long> by, long k) {
    long sum = 0;
    for (std::size_t v = by.size(); v-- > 1 && k > 0;) {
        const long take = std::min(k, by[v]);
        sum += take * static_cast<long>(v);
        k -= take;
    }
    return sum;
}

int cut_value(const OfferCut& c, bool preemptible) {
    return preemptible ? c.borrowing : c.limit;
}

} // namespace

long RoomIndex::cut_taken(const OfferCut& c, bool preemptible) const {
    return offer_to(c.block, preemptible) - cut_value(c, preemptible);
}

std::vector<long> RoomIndex::offers_with(std::span<const OfferCut> cuts, bool preemptible) const {
    std::vector<long> by = preemptible ? by_borrowing_offer_ : by_limit_;
    for (const OfferCut& c : cuts) {
        --by[static_cast<std::size_t>(offer_to(c.block, preemptible))];
        ++by[static_cast<std::size_t>(cut_value(c, preemptible))];
    }
    return by;
}

std::vector<long> RoomIndex::cut_by_group(const Topology& topo, std::size_t r, std::span<const OfferCut> cuts,
                                          bool preemptible) const {
    const Rung& rung = topo.hierarchy().ladder()[r];
    std::vector<long> cut(rung.groups.size(), 0);
    for (const OfferCut& c : cuts)
        cut[static_cast<std::size_t>(rung.group_at[static_cast<std::size_t>(c.block)])] += cut_taken(c, preemptible);
    return cut;
}

long RoomIndex::room_for(bool preemptible, std::span<const OfferCut> cuts) const {
    long room = total_limit_ + (preemptible ? lending_extra_ : 0);
    for (const OfferCut& c : cuts)
        room -= cut_taken(c, preemptible);
    return room;
}

int RoomIndex::largest_offer(bool preemptible, std::span<const OfferCut> cuts) const {
    if (cuts.empty())
        return top_value(preemptible ? by_borrowing_offer_ : by_limit_);
    return top_value(offers_with(cuts, preemptible));
}

long RoomIndex::reach_in_a_group(const Topology& topo, std::size_t rung, long children, bool preemptible,
                                 std::span<const OfferCut> cuts) const {
    const std::vector<Rung>& ladder = topo.hierarchy().ladder();
    const Rung& r = ladder[rung];
    // The cluster over its blocks, for work that borrows no spares: read
    // from the count of blocks by limit, not from every block.
    if (r.kind == Rung::Kind::kCluster && rung == 1 && children > 0 && !preemptible)
        return cuts.empty() ? top_sum(by_limit_, children) : top_sum(offers_with(cuts, false), children);
    const std::vector<long> cut = cuts.empty() ? std::vector<long>{} : cut_by_group(topo, rung, cuts, preemptible);
    const std::vector<long> cut_below =
        cuts.empty() || rung == 0 ? std::vector<long>{} : cut_by_group(topo, rung - 1, cuts, preemptible);
    auto offer_of_group = [&](std::size_t rr, std::size_t g, const std::vector<long>& lost) {
        return group_offer(rr, g, preemptible) - (lost.empty() ? 0 : lost[g]);
    };
    long most = 0;
    std::vector<long> offers;
    for (std::size_t g = 0; g < r.groups.size(); ++g) {
        const Rung::Group& group = r.groups[g];
        if (children <= 0 || children >= group.child_count) {
            most = std::max(most, offer_of_group(rung, g, cut));
            continue;
        }
        // Its fullest `children` children: each a group of the rung below.
        offers.clear();
        for (int c = group.first_child; c < group.first_child + group.child_count; ++c) {
            const BlockIndex first = r.blocks_of(r.children[static_cast<std::size_t>(c)]).front();
            const auto below = static_cast<std::size_t>(ladder[rung - 1].group_at[static_cast<std::size_t>(first)]);
            offers.push_back(offer_of_group(rung - 1, below, cut_below));
        }
        std::nth_element(offers.begin(), offers.begin() + children, offers.end(), std::greater<>());
        most = std::max(most, std::accumulate(offers.begin(), offers.begin() + children, 0L));
    }
    return most;
}

long RoomIndex::spare_at_least(int unit, std::uint32_t segment) const {
    long n = 0;
    for (std::size_t i = 0; i < slices_.size(); ++i) {
        if (segment != 0 && static_cast<int>(segment) > slices_[i])
            continue;
        const std::vector<long>& counts = by_spare_[i];
        for (std::size_t s = static_cast<std::size_t>(std::max(unit, 0)); s < counts.size(); ++s)
            n += counts[s];
    }
    return n;
}

void RoomIndexCache::reset() {
    ++generation_;
    topo_ = nullptr;
    slots_ = {};
}

RoomIndexCache::Slot& RoomIndexCache::slot_for(std::span<const NodeState> states,
                                               std::span<const std::uint8_t> available) {
    const bool mapped = !available.empty();
    Slot* slot = nullptr;
    for (Slot& s : slots_)
        if (s.index && s.mapped == mapped && s.states_source == states.data() &&
            (!mapped || s.map_source == available.data()))
            slot = &s;
    if (!slot) { // the least recently used, counted from other arrays
        slot = &*std::min_element(slots_.begin(), slots_.end(),
                                  [](const Slot& a, const Slot& b) { return a.used < b.used; });
        slot->mark = {};
        ++generation_; // the slot's index now answers for other arrays
    }
    slot->used = ++clock_;
    slot->states_source = states.data();
    slot->map_source = available.data();
    return *slot;
}

void RoomIndexCache::build(Slot& slot, const Topology& topo, std::span<const NodeState> states, const Tallies& tallies,
                           std::span<const std::uint8_t> available) {
    ++generation_;
    slot.mapped = !available.empty();
    slot.states.assign(states.begin(), states.end());
    slot.map.assign(available.begin(), available.end());
    slot.index = std::make_shared<RoomIndex>();
    slot.index->init(topo);
    for (std::size_t i = 0; i < topo.block_count(); ++i) {
        const auto b = static_cast<BlockIndex>(i);
        slot.index->offers_[i] = offer_of(topo.block(b), tallies[i], states, available);
        slot.index->add(topo, b, 1);
    }
    for (std::size_t i = 0; i < available.size(); ++i)
        slot.index->offered_failed_ += offers_failed(available, states.data(), i);
}

// Compares the slot's copies with the arrays at node i: a change touches
// the node's block and may change how many failed nodes the map offers.
void RoomIndexCache::compare(Slot& slot, const Topology& topo, std::span<const NodeState> states,
                             std::span<const std::uint8_t> available, std::size_t i) {
    const bool map_same = !slot.mapped || available[i] == slot.map[i];
    if (states[i] == slot.states[i] && map_same)
        return;
    offered_failed_change_ -= offers_failed(slot.map, slot.states.data(), i);
    slot.states[i] = states[i];
    if (slot.mapped)
        slot.map[i] = available[i];
    offered_failed_change_ += offers_failed(slot.map, slot.states.data(), i);
    touched_.touch(topo, static_cast<NodeIndex>(i));
}

// The blocks with a node whose state or map byte differs from the slot's
// copies, into touched_; the copies are brought up to date. With a journal
// covering both arrays, only the nodes it noted are compared.
void RoomIndexCache::find_touched(Slot& slot, const Topology& topo, std::span<const NodeState> states,
                                  std::span<const std::uint8_t> available, const ChangeJournal* journal) {
    offered_failed_change_ = 0;
    const void* map = available.empty() ? nullptr : available.data();
    const auto noted = slot.mark.pending(journal, {states.data(), map});
    slot.mark.sync(journal, {states.data(), map});
    if (noted) {
        for (NodeIndex n : *noted)
            if (n < states.size())
                compare(slot, topo, states, available, n);
        return;
    }
    byte_words::for_each_in_differing_words(reinterpret_cast<const unsigned char*>(states.data()),
                                            reinterpret_cast<const unsigned char*>(slot.states.data()),
                                            slot.mapped ? available.data() : nullptr,
                                            slot.mapped ? slot.map.data() : nullptr, states.size(),
                                            [&](std::size_t i) { compare(slot, topo, states, available, i); });
}

std::shared_ptr<const RoomIndex> RoomIndexCache::index(const Topology& topo, std::span<const NodeState> states,
                                                       const Tallies& tallies, std::span<const std::uint8_t> available,
                                                       const ChangeJournal* journal) {
    check_state_count(topo, states);
    if (!available.empty() && available.size() != states.size())
        return nullptr; // the engine refuses such a map; nothing to index
    if (topo_ != &topo) {
        reset();
        topo_ = &topo;
        touched_.size_for(topo);
    }
    Slot& slot = slot_for(states, available);
    if (!slot.index || slot.mapped != !available.empty() || slot.states.size() != states.size()) {
        build(slot, topo, states, tallies, available);
        slot.mark.sync(journal, {states.data(), available.empty() ? nullptr : available.data()});
        return slot.index;
    }
    find_touched(slot, topo, states, available, journal);
    if (touched_.empty() && offered_failed_change_ == 0) // a node outside every block may change the count alone
        return slot.index;
    ++generation_;
    // A snapshot may still hold this index: update a copy then.
    if (slot.index.use_count() > 1)
        slot.index = std::make_shared<RoomIndex>(*slot.index);
    RoomIndex& idx = *slot.index;
    idx.offered_failed_ += offered_failed_change_;
    for (BlockIndex b : touched_.list()) {
        const auto i = static_cast<std::size_t>(b);
        idx.add(topo, b, -1);
        idx.offers_[i] = offer_of(topo.block(b), tallies[i], states, available);
        idx.add(topo, b, 1);
    }
    touched_.clear();
    return slot.index;
}

} // namespace nvlblock
