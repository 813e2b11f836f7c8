// SPDX-License-Identifier: GPL-2.0-or-later
//
// What the placement engine knows about a node. The Slurm shim maps Slurm's
// node states onto these; the simulator sets them directly.
#pragma once

#include <cstdint>

namespace nvlblock {

enum class NodeState : std::uint8_t {
    kFree = 0,    // healthy, nothing running
    kBusy = 1,    // running (or finishing) ordinary work
    kLent = 2,    // running preemptible work (only counts as lent where lending is on)
    kDown = 3,    // failed: down, not responding, powered off
    kDrained = 4, // taken out of service by an operator (drain or draining)
};

// The state of a healthy node running a job: preemptible work (the
// topology's `preemptible:`) makes it LENT, anything else BUSY. The engine
// counts a lent node as lent only on blocks that lend spares; elsewhere it
// is busy, but still the first to be freed by preemption. The plugin marks
// nodes so (plugin/common/slurm_bridge.c), and the simulator asks here.
inline NodeState running_state(bool preemptible_work) {
    return preemptible_work ? NodeState::kLent : NodeState::kBusy;
}

inline bool is_failed(NodeState s) {
    return s == NodeState::kDown || s == NodeState::kDrained;
}
inline bool is_healthy(NodeState s) {
    return !is_failed(s);
}

} // namespace nvlblock
