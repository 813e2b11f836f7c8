// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/slurm_node_state.hpp"

namespace nvlblock {

NodeState node_state_from_slurm(unsigned facts) {
    const bool up = (facts & kNodeUp) && !(facts & (kNodeFuture | kNodePoweredDown));
    if (!up)
        return (facts & kNodeUnregistered) ? NodeState::kBusy : NodeState::kDown;
    if (!(facts & kNodeAvail))
        return NodeState::kDrained;
    if (!(facts & kNodeIdle) || (facts & kNodeCompleting))
        return (facts & kNodeLent) ? NodeState::kLent : NodeState::kBusy;
    return NodeState::kFree;
}

} // namespace nvlblock
