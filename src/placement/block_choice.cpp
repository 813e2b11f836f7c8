// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/block_choice.hpp"

#include <algorithm>
#include <tuple>

namespace nvlblock {
namespace {

// What taking `need` nodes of a room costs, smaller first (block_choice.hpp).
// Free nodes are taken before nodes freed by preemption.
auto fit_key(const BlockRoom& r, int need) {
    return std::make_tuple(preempted_for(r, need), r.limit, r.usable);
}

// Best fit for `need` among rooms not yet taken that hold it in whole
// segments; ties go to the lower block index (rooms are in index order),
// which keeps decisions deterministic.
const BlockRoom* best_fit(const std::vector<BlockRoom>& rooms, const std::vector<char>& taken, int need) {
    const BlockRoom* best = nullptr;
    for (std::size_t i = 0; i < rooms.size(); ++i) {
        const BlockRoom& r = rooms[i];
        if (taken[i] || r.segment_cap < need)
            continue;
        if (!best || fits_better(r, *best, need))
            best = &r;
    }
    return best;
}

} // namespace

int preempted_for(const BlockRoom& r, int need) {
    return std::max(0, need - (r.limit - r.preempted));
}

bool fits_better(const BlockRoom& a, const BlockRoom& b, int need) {
    return fit_key(a, need) < fit_key(b, need);
}

std::optional<std::vector<BlockTake>> choose_blocks(const std::vector<BlockRoom>& rooms, int nodes, int segment) {
    if (nodes <= 0 || segment <= 0 || nodes % segment)
        return std::nullopt;
    std::vector<char> taken(rooms.size(), 0);
    if (const BlockRoom* one = best_fit(rooms, taken, nodes))
        return std::vector<BlockTake>{{one->block, nodes}};

    long total = 0;
    for (const auto& r : rooms)
        total += r.segment_cap;
    if (total < nodes)
        return std::nullopt;

    // Largest rooms first (the lower index first among equals), so the job
    // spans as few blocks as possible.
    std::vector<std::size_t> order(rooms.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return rooms[a].segment_cap != rooms[b].segment_cap ? rooms[a].segment_cap > rooms[b].segment_cap : a < b;
    });
    std::vector<BlockTake> out;
    int rem = nodes;
    for (std::size_t i : order) {
        if (rem == 0)
            break;
        // The rooms taken so far are those before i in this order: no room
        // left holds more than i's, so none holds the rest unless i's does
        // (the scan below is skipped, not changed).
        const BlockRoom* last = rooms[i].segment_cap >= rem ? best_fit(rooms, taken, rem) : nullptr;
        if (last) {
            out.push_back({last->block, rem});
            rem = 0;
            break;
        }
        const BlockRoom& r = rooms[i];
        if (taken[i] || r.segment_cap == 0)
            continue;
        taken[i] = true;
        const int take = std::min(rem, r.segment_cap);
        out.push_back({r.block, take});
        rem -= take;
    }
    if (rem != 0)
        return std::nullopt;
    std::sort(out.begin(), out.end(), [](const BlockTake& a, const BlockTake& b) { return a.block < b.block; });
    return out;
}

} // namespace nvlblock
