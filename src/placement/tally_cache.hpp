// SPDX-License-Identifier: GPL-2.0-or-later
//
// Block tallies kept across decisions. A scheduler asks many questions per
// pass (each job, test-only and will-run evaluations, backfill) over node
// states that change only where a job started or ended, so the tallies are
// recounted only on the blocks whose nodes changed since the previous call.
// The comparison is exact (every state, byte for byte), so a decision never
// sees a stale tally; finding what changed costs a scan of the state array
// in word-sized steps, the recount costs only the blocks touched.
#pragma once

#include "model/topology.hpp"
#include "placement/node_state.hpp"
#include "placement/snapshot.hpp"

#include <memory>
#include <span>
#include <vector>

namespace nvlblock {

class TallyCache {
public:
    // The tallies of `states` on `topo`. A snapshot still holding the
    // previous tallies keeps them unchanged (they are copied before an update).
    std::shared_ptr<const Tallies> tallies(const Topology& topo, std::span<const NodeState> states);

    // Forget everything (the topology changed).
    void reset();

private:
    const Topology* topo_ = nullptr;
    std::vector<NodeState> states_;
    std::shared_ptr<Tallies> tallies_;
    std::vector<BlockIndex> touched_;
    std::vector<bool> is_touched_;
};

} // namespace nvlblock
