// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/held_offers.hpp"

#include "placement/block_limits.hpp"

#include <algorithm>

namespace nvlblock {

std::span<const OfferCut> HeldOffers::for_job(std::uint32_t job) const {
    if (std::binary_search(holders.begin(), holders.end(), job))
        return {};
    return cuts;
}

HeldOffers held_offers(const Topology& topo, const RoomIndex& index, const Tallies& tallies, const Holds& holds,
                       std::span<const std::uint8_t> available) {
    HeldOffers out;
    // The blocks with holds, once each, with what the holds need there.
    std::vector<BlockIndex> blocks;
    std::vector<int> need, held_nodes;
    for (std::size_t i = 0; i < holds.hold_blocks.size(); ++i) {
        if (blocks.empty() || blocks.back() != holds.hold_blocks[i]) {
            blocks.push_back(holds.hold_blocks[i]);
            need.push_back(0);
            held_nodes.push_back(0);
        }
        need.back() += static_cast<int>(holds.holds[i].need);
        held_nodes.back() += static_cast<int>(holds.holds[i].held_nodes);
        out.holders.push_back(holds.holds[i].job_id);
    }
    std::sort(out.holders.begin(), out.holders.end());
    out.holders.erase(std::unique(out.holders.begin(), out.holders.end()), out.holders.end());
    // Held nodes are free nodes; a map may leave some out, and those the
    // request could not use anyway (only those it could are taken from it).
    std::vector<int> unoffered(blocks.size(), 0);
    if (!available.empty())
        for (const auto& [node, holder] : holds.held)
            if (node < available.size() && !available[node]) {
                const auto at = std::lower_bound(blocks.begin(), blocks.end(), topo.block_of(node));
                if (at != blocks.end() && *at == topo.block_of(node))
                    ++unoffered[static_cast<std::size_t>(at - blocks.begin())];
            }
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        const BlockIndex b = blocks[i];
        const BlockOffer& o = index.offer(b);
        const Block& block = topo.block(b);
        // As the view counts them: the free nodes held for others that the
        // map offers are not usable, and the holds not yet tied to nodes drop out.
        const int usable = o.counts.available - (held_nodes[i] - unoffered[i]);
        const int by_nodes = beside_holds(usable, need[i], held_nodes[i]);
        const int lent_unavailable = block.settings.lending ? o.counts.lent_unavailable : 0;
        const BlockLimits l =
            block_limits(block, tallies[static_cast<std::size_t>(b)], by_nodes, lent_unavailable, false);
        OfferCut c{b, std::min(o.limit, l.limit), 0};
        c.borrowing = block.settings.lending ? std::min(o.spare_limit, l.spare_limit) : c.limit;
        if (c.limit != index.offer_to(b, false) || c.borrowing != index.offer_to(b, true))
            out.cuts.push_back(c);
    }
    return out;
}

} // namespace nvlblock
