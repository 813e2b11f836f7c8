// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/block_choice.hpp"

#include <algorithm>
#include <tuple>

namespace nvlblock {
namespace {

// What taking `need` nodes of a block costs the jobs that come later, most
// important first; smaller is better. Best fit: the room left (then the
// fuller block). Slices: first the whole slices (with their spares) the block
// could no longer host, then the spares taken from a guarded block, then
// nodes taken by preemption, then best fit.
struct Cost {
    int slices_lost = 0, spares_taken = 0, preempted = 0, room = 0, usable = 0;
    auto key() const { return std::tie(slices_lost, spares_taken, preempted, room, usable); }
};

int whole_slices(int free_nodes, int slice_need) { return slice_need > 0 ? std::max(0, free_nodes) / slice_need : 0; }

Cost cost_of(const BlockRoom& r, int need, Packing packing) {
    Cost c;
    c.room = r.limit;
    c.usable = r.usable;
    if (packing == Packing::kSlices) {
        c.slices_lost = whole_slices(r.usable, r.slice_need) - whole_slices(r.usable - need, r.slice_need);
        if (r.guarded)
            c.spares_taken = std::max(0, std::min(r.reserve, need - std::max(0, r.usable - r.reserve)));
        c.preempted = std::min(need, r.preempted);
    }
    return c;
}

// The best block for `need` among rooms not yet taken, holding it in whole
// segments; ties go to the lower block index (rooms are in index order),
// which keeps decisions deterministic.
const BlockRoom* best_fit(const std::vector<BlockRoom>& rooms, const std::vector<bool>& taken, int need,
                          Packing packing) {
    const BlockRoom* best = nullptr;
    Cost best_cost;
    for (std::size_t i = 0; i < rooms.size(); ++i) {
        const BlockRoom& r = rooms[i];
        if (taken[i] || r.segment_cap < need)
            continue;
        const Cost c = cost_of(r, need, packing);
        if (!best || c.key() < best_cost.key()) {
            best = &r;
            best_cost = c;
        }
    }
    return best;
}

} // namespace

std::optional<std::vector<BlockTake>> choose_blocks(const std::vector<BlockRoom>& rooms, int nodes, int segment,
                                                    Packing packing) {
    if (nodes <= 0 || segment <= 0 || nodes % segment)
        return std::nullopt;
    std::vector<bool> taken(rooms.size(), false);
    if (const BlockRoom* one = best_fit(rooms, taken, nodes, packing))
        return std::vector<BlockTake>{{one->block, nodes}};

    long total = 0;
    for (const auto& r : rooms)
        total += r.segment_cap;
    if (total < nodes)
        return std::nullopt;

    // Largest rooms first, so the job spans as few blocks as possible.
    std::vector<std::size_t> order(rooms.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return rooms[a].segment_cap > rooms[b].segment_cap; });
    std::vector<BlockTake> out;
    int rem = nodes;
    for (std::size_t i : order) {
        if (rem == 0)
            break;
        if (const BlockRoom* last = best_fit(rooms, taken, rem, packing)) {
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
