// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI's shared helpers (abi_support.hpp).
#include "capi/abi_support.hpp"

#include "core/slurm_request.hpp"

#include <algorithm>
#include <cstring>

namespace nvlblock::capi {

void copy_str(char* dst, std::size_t cap, const std::string& src) {
    if (!dst || cap == 0)
        return;
    const std::size_t n = std::min(cap - 1, src.size());
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

nvlb_status_t set_error(nvlb_error_t* err, nvlb_status_t status, const std::string& file, unsigned line,
                        const std::string& message, unsigned count) {
    if (err) {
        std::memset(err, 0, sizeof *err);
        err->status = status;
        copy_str(err->file, sizeof err->file, file);
        err->line = line;
        err->problem_count = count;
        copy_str(err->message, sizeof err->message, message);
    }
    return status;
}

nvlb_status_t from_config_error(nvlb_error_t* err, const ConfigError& e) {
    return set_error(err, NVLB_E_CONFIG, e.first().where.file, e.first().where.line, e.what(),
                     static_cast<unsigned>(e.problems().size()));
}

namespace {

NodeState state_of(std::uint8_t raw) {
    return raw <= NVLB_NODE_DRAINED ? static_cast<NodeState>(raw) : NodeState::kDown;
}

// Resizes one of the handle's copies; while tracked, the journal follows it
// to its new address.
template <class T>
void replace_tracked(nvlb_planner* p, std::vector<T>& copy, std::size_t n) {
    ChangeJournal& journal = p->planner.changes();
    if (p->tracking)
        journal.untrack(copy.data());
    copy.resize(n);
    if (p->tracking)
        journal.track(copy.data());
}

} // namespace

// Every node of the caller's states into the handle's copy: the bytes are
// copied as they are (NodeState has the C ABI's values), then checked eight
// at a time; only a word holding a value that is not a node state is
// rewritten byte by byte.
void copy_all_states(nvlb_planner* p, const std::uint8_t* raw, std::size_t n) {
    constexpr std::uint64_t kLow7 = 0x7f7f7f7f7f7f7f7fULL, kHigh = 0x8080808080808080ULL;
    constexpr std::uint64_t kFive = 0x7b7b7b7b7b7b7b7bULL; // bit 7 set in a byte from 5 up
    if (p->states.size() != n)
        replace_tracked(p, p->states, n);
    std::memcpy(p->states.data(), raw, n);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, raw + i, sizeof w);
        if (((((w & kLow7) + kFive) | w) & kHigh) == 0)
            continue;
        for (std::size_t k = i; k < i + 8; ++k)
            p->states[k] = state_of(raw[k]);
    }
    for (; i < n; ++i)
        p->states[i] = state_of(raw[i]);
}

std::span<const NodeState> states_of(nvlb_planner* p, const std::uint8_t* raw, std::size_t n) {
    static_assert(static_cast<int>(NodeState::kFree) == NVLB_NODE_FREE &&
                  static_cast<int>(NodeState::kDrained) == NVLB_NODE_DRAINED && NVLB_NODE_DRAINED == 4);
    copy_all_states(p, raw, n);
    // The caller names the changes between its questions only: this array
    // may differ from the last question's anywhere.
    if (p->tracking)
        p->planner.changes().note_all();
    return p->states;
}

std::span<const NodeState> asked_states_of(nvlb_planner* p, const std::uint8_t* raw, std::size_t n) {
    ChangeJournal& journal = p->planner.changes();
    const auto noted = p->states.size() == n ? p->states_mark.pending(&journal, {p->states.data()}) : std::nullopt;
    if (noted) {
        for (NodeIndex k : *noted)
            if (k < n)
                p->states[k] = state_of(raw[k]);
    } else {
        copy_all_states(p, raw, n);
    }
    p->states_mark.sync(&journal, {p->states.data()});
    return p->states;
}

namespace {

// The caller's map in the handle's copy, read only where the caller named
// a change since the copy was last brought up to date.
std::span<const std::uint8_t> tracked_map(nvlb_planner& p, const std::uint8_t* available, std::size_t n) {
    ChangeJournal& journal = p.planner.changes();
    const auto noted = p.map.size() == n ? p.map_mark.pending(&journal, {p.map.data()}) : std::nullopt;
    if (noted) {
        for (NodeIndex k : *noted)
            if (k < n)
                p.map[k] = available[k];
    } else {
        if (p.map.size() != n)
            replace_tracked(&p, p.map, n);
        std::memcpy(p.map.data(), available, n);
    }
    p.map_mark.sync(&journal, {p.map.data()});
    return p.map;
}

} // namespace

void set_tracking(nvlb_planner_t& p, bool on) {
    ChangeJournal& journal = p.planner.changes();
    p.tracking = on;
    for (const void* a : {static_cast<const void*>(p.states.data()), static_cast<const void*>(p.map.data())})
        on ? journal.track(a) : journal.untrack(a);
    p.states_mark = {};
    p.map_mark = {};
}

// Slurm's facts as the C ABI carries them; core/slurm_request.hpp shapes them.
Request request_of(nvlb_planner_t& p, const nvlb_request_t& request, std::size_t node_count,
                   std::vector<std::uint8_t>& candidates) {
    SlurmJobFacts f;
    f.job_id = request.job_id;
    f.min_nodes = request.min_nodes;
    f.max_nodes = request.max_nodes;
    f.req_nodes = request.req_nodes;
    f.segment_size = request.segment;
    f.whole_topology = request.exclusive_topo;
    f.preemptible = request.preemptible;
    if (request.available)
        f.available = p.tracking ? tracked_map(p, request.available, node_count)
                                 : std::span<const std::uint8_t>(request.available, node_count);
    if (request.required)
        f.nodelist.assign(request.required, request.required + request.required_count);
    f.now = request.now;
    f.eligible_since = request.eligible_since;
    return request_from_slurm(f, p.planner.topology().policy().slurm_release, node_count, candidates);
}

} // namespace nvlblock::capi
