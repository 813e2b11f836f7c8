// SPDX-License-Identifier: GPL-2.0-or-later
//
// Rule 3 (spares) as counts: how many nodes a request may take on a block
// from the nodes it may use there. One function, so that the engine's view
// of a block (engine.cpp) and the index of blocks by room (room_index.hpp),
// which both need it, cannot disagree.
#pragma once

#include "model/topology.hpp"
#include "placement/snapshot.hpp"

#include <algorithm>

namespace nvlblock {

struct BlockLimits {
    int limit = 0;       // nodes the request may take now
    int spare_limit = 0; // nodes it could take if spares were not withheld
};

// The nodes a request may use on a block beside other jobs' holds there:
// `usable` already leaves out the free nodes held for them; of what their
// holds need there (`held_need`), the part not yet tied to nodes
// (`held_need - held_nodes`) drops out too. The engine's view of a block
// (engine.cpp view_block) and the room bound's recount of a held block
// (held_offers.cpp) both count it here.
inline int beside_holds(int usable, int held_need, int held_nodes) {
    return usable - (held_need - held_nodes);
}

// `by_nodes`: nodes the request may use, less holds not yet tied to nodes;
// `lent_unavailable`: lent nodes it cannot see (0 where the block does not
// lend); `may_take_spares`: a recovery back on its own block or preemptible
// work on a lending block. Spares still held back are counted among the
// nodes the request can see plus those lent out: a healthy block keeps
// max(0, S - F) of them free. Reclaimed spares are not held back: a
// recovery takes them back (rule 3b).
inline BlockLimits block_limits(const Block& block, const BlockTally& t, int by_nodes, int lent_unavailable,
                                bool may_take_spares) {
    const bool reclaim = block.settings.reserve == SpareReserve::kReclaim;
    const int reserve = reclaim ? 0 : t.spare_reserve();
    const int ordinary = std::min(by_nodes, by_nodes + lent_unavailable - reserve);
    return {std::max(0, may_take_spares ? by_nodes : ordinary), std::max(0, by_nodes)};
}

} // namespace nvlblock
