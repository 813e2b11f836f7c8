// SPDX-License-Identifier: GPL-2.0-or-later
//
// Other jobs' holds as the room bound counts them. The room index
// (room_index.hpp) keeps what each block offers a request that holds
// nothing there and counts no holds, so while a failed job waits to restart
// in place the bound saw its blocks as open, and every job too large for
// the rest was asked and refused in full (on an HPC-like queue, a job of 175
// nodes held 12 racks for hours: 170,000 such decisions in 60 days). The
// holds are on a few blocks: each is recounted here as the engine's view of
// it counts the holds (engine.cpp view_block), for every request that holds
// nothing itself.
#pragma once

#include "model/topology.hpp"
#include "placement/room_index.hpp"
#include "placement/snapshot.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace nvlblock {

struct HeldOffers {
    std::vector<OfferCut> cuts;         // blocks offering less than the index says, in block order
    std::vector<std::uint32_t> holders; // jobs holding nodes anywhere, sorted

    // The cuts for a request of `job`: none for a job that holds nodes
    // itself (its view counts only the others' holds; the index's offers
    // bound it still).
    std::span<const OfferCut> for_job(std::uint32_t job) const;
};

// The cuts of `holds` (count_holds() of the states `index` was built on,
// with `tallies` theirs) under `available`, the map `index` answers for
// (empty: free nodes).
HeldOffers held_offers(const Topology& topo, const RoomIndex& index, const Tallies& tallies, const Holds& holds,
                       std::span<const std::uint8_t> available);

} // namespace nvlblock
