// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/tally_cache.hpp"

#include "placement/byte_words.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace nvlblock {
void TallyCache::reset() {
    topo_ = nullptr;
    slots_ = {};
}

std::shared_ptr<const Tallies> TallyCache::tallies(const Topology& topo, std::span<const NodeState> states,
                                                   const ChangeJournal* journal) {
    check_state_count(topo, states);
    if (topo_ != &topo) {
        reset();
        topo_ = &topo;
        touched_.size_for(topo);
    }
    Slot* slot = nullptr;
    for (Slot& s : slots_)
        if (s.tallies && s.source == states.data())
            slot = &s;
    if (!slot) { // the least recently used, counted from another array
        slot = &*std::min_element(slots_.begin(), slots_.end(),
                                  [](const Slot& a, const Slot& b) { return a.used < b.used; });
        slot->mark = {};
    }
    slot->used = ++clock_;
    slot->source = states.data();
    return update(*slot, topo, states, journal);
}

void TallyCache::compare(Slot& slot, const Topology& topo, std::span<const NodeState> states, std::size_t i) {
    if (states[i] == slot.states[i])
        return;
    slot.states[i] = states[i];
    touched_.touch(topo, static_cast<NodeIndex>(i));
}

std::shared_ptr<const Tallies> TallyCache::update(Slot& slot, const Topology& topo, std::span<const NodeState> states,
                                                  const ChangeJournal* journal) {
    const auto noted = slot.mark.pending(journal, {states.data()});
    slot.mark.sync(journal, {states.data()});
    if (!slot.tallies || slot.states.size() != states.size()) {
        slot.states.assign(states.begin(), states.end());
        slot.tallies = std::make_shared<Tallies>();
        slot.tallies->reserve(topo.block_count());
        for (const Block& b : topo.blocks())
            slot.tallies->push_back(count_block(topo, b, slot.states));
        return slot.tallies;
    }
    if (noted) {
        for (NodeIndex n : *noted)
            if (n < states.size())
                compare(slot, topo, states, n);
    } else { // NodeState is one byte: compare the arrays as bytes
        byte_words::for_each_in_differing_words(reinterpret_cast<const unsigned char*>(states.data()),
                                                reinterpret_cast<const unsigned char*>(slot.states.data()), nullptr,
                                                nullptr, states.size(),
                                                [&](std::size_t i) { compare(slot, topo, states, i); });
    }
    if (touched_.empty())
        return slot.tallies;
    // A snapshot may still hold these tallies: update a copy then.
    if (slot.tallies.use_count() > 1)
        slot.tallies = std::make_shared<Tallies>(*slot.tallies);
    for (BlockIndex b : touched_.list())
        (*slot.tallies)[static_cast<std::size_t>(b)] = count_block(topo, topo.block(b), slot.states);
    touched_.clear();
    return slot.tallies;
}

} // namespace nvlblock
