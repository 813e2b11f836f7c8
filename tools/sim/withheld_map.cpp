// SPDX-License-Identifier: GPL-2.0-or-later
#include "withheld_map.hpp"

#include <algorithm>

namespace nvlblock::sim {

void WithheldMap::forget() {
    if (journal_)
        journal_->untrack(map_.data());
    journal_ = nullptr;
}

// A copy of `free` with nothing withheld, tracked from now on.
void WithheldMap::start(const std::vector<std::uint8_t>& free, ChangeJournal* journal) {
    forget();
    map_ = free;
    withheld_.assign(free.size(), 0);
    nodes_.clear();
    mark_ = {}; // the first call compares every node
    journal_ = journal;
    journal_->track(map_.data()); // noted as a change of every node: each cache compares it whole once
}

void WithheldMap::refresh(const std::vector<std::uint8_t>& free, NodeIndex n) {
    const std::uint8_t value = withheld_[n] ? 0 : free[n];
    if (map_[n] == value)
        return;
    map_[n] = value;
    journal_->note(n);
}

// The withheld set becomes `nodes`: only the nodes leaving or joining it change.
void WithheldMap::withhold(const std::vector<std::uint8_t>& free, std::span<const NodeIndex> nodes) {
    if (std::equal(nodes.begin(), nodes.end(), nodes_.begin(), nodes_.end()))
        return;
    for (NodeIndex n : nodes_)
        withheld_[n] = 0;
    for (NodeIndex n : nodes)
        withheld_[n] = 1;
    for (NodeIndex n : nodes_)
        refresh(free, n);
    for (NodeIndex n : nodes)
        refresh(free, n);
    nodes_.assign(nodes.begin(), nodes.end());
}

void WithheldMap::follow(const std::vector<std::uint8_t>& free, const ChangeJournal& free_changes) {
    if (const auto pending = mark_.pending(&free_changes, {free.data()})) {
        for (NodeIndex n : *pending)
            if (n < map_.size())
                refresh(free, n);
    } else {
        for (std::size_t n = 0; n < map_.size(); ++n)
            refresh(free, static_cast<NodeIndex>(n));
    }
    mark_.sync(&free_changes, {free.data()});
}

const std::vector<std::uint8_t>& WithheldMap::of(const std::vector<std::uint8_t>& free,
                                                 const ChangeJournal& free_changes, std::span<const NodeIndex> nodes,
                                                 ChangeJournal* journal) {
    if (!journal) {
        forget();
        map_ = free;
        for (NodeIndex n : nodes)
            map_[n] = 0;
        return map_;
    }
    if (journal != journal_ || map_.size() != free.size())
        start(free, journal);
    follow(free, free_changes);
    withhold(free, nodes);
    return map_;
}

} // namespace nvlblock::sim
