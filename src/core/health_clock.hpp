// SPDX-License-Identifier: GPL-2.0-or-later
//
// How long each block could not host a whole slice: fewer healthy nodes
// than its slice, or a block fault (docs/operations.md "What to watch";
// issue 35). A rack in that state strands every node it has left for the
// jobs it exists for; an operator alerts on the time, not on a moment.
// Time accrues between two observations to the blocks that were short at
// the first of them. Observed by an explicit call (slurmctld's status
// thread, every pass), never by a question. Not saved: a slurmctld restart
// starts the counters at 0, as Prometheus expects of a counter reset.
#pragma once

#include "model/topology.hpp"
#include "placement/snapshot.hpp"

#include <cstdint>
#include <vector>

namespace nvlblock {

// Whether the block can host a whole slice on its healthy nodes.
bool short_of_a_slice(const Block& block, const BlockTally& tally);

class HealthClock {
  public:
    void observe(const Topology& topo, const Tallies& tallies, std::int64_t now);
    // Seconds the block has been short of a slice since the clock started.
    std::int64_t short_seconds(BlockIndex b) const;
    // The blocks changed (reconfigure, a node moved): start again.
    void reset();

  private:
    std::vector<std::int64_t> short_seconds_;
    std::vector<bool> was_short_;
    std::int64_t last_ = -1;
};

} // namespace nvlblock
