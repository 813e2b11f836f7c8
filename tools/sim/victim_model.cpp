// SPDX-License-Identifier: GPL-2.0-or-later
#include "victim_model.hpp"

#include "rng.hpp"

namespace nvlblock::sim {

namespace {

bool drawn(std::uint64_t seed, std::uint64_t kind, std::uint64_t index, double share) {
    if (share <= 0)
        return false;
    if (share >= 1)
        return true;
    Rng r(stream_seed(seed, kind, index));
    return r.uniform() < share;
}

} // namespace

VictimTraits draw_victim_traits(const VictimModel& model, const std::string& job_name) {
    constexpr std::uint64_t kSignal = 0x5349474e;     // "SIGN"
    constexpr std::uint64_t kRequeue = 0x52455155;    // "REQU"
    constexpr std::uint64_t kCheckpoint = 0x434b5054; // "CKPT"
    const std::uint64_t index = name_index(job_name);
    VictimTraits t;
    t.checkpoints_on_signal = drawn(model.seed, kSignal, index, model.checkpoint_on_signal);
    t.requeueable = drawn(model.seed, kRequeue, index, model.requeueable_share);
    t.checkpoints = drawn(model.seed, kCheckpoint, index, model.checkpoint_share);
    return t;
}

} // namespace nvlblock::sim
