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

namespace {

// Brings one of the handle's copies up to date: at the nodes named since
// its mark, or whole (returns false then).
template <class T, class Read>
bool follow(nvlb_planner& p, std::vector<T>& copy, JournalMark& mark, std::size_t n, Read&& read) {
    const auto noted =
        copy.size() == n ? mark.pending(&p.planner.changes(), {static_cast<const void*>(copy.data())}) : std::nullopt;
    if (!noted)
        return false;
    for (NodeIndex k : *noted)
        if (k < n)
            copy[k] = read(k);
    return true;
}

} // namespace

AskedArrays asked_arrays(nvlb_planner* p, const std::uint8_t* raw, std::size_t n, const std::uint8_t* available) {
    ChangeJournal& journal = p->planner.changes();
    AskedArrays out;
    bool whole = false;
    if (!follow(*p, p->states, p->states_mark, n, [&](NodeIndex k) { return state_of(raw[k]); })) {
        copy_all_states(p, raw, n);
        whole = true;
    }
    out.states = p->states;
    out.available = available;
    if (available && p->tracking) {
        if (!follow(*p, p->map, p->map_mark, n, [&](NodeIndex k) { return available[k]; })) {
            if (p->map.size() != n)
                replace_tracked(p, p->map, n);
            std::memcpy(p->map.data(), available, n);
            whole = true;
        }
        out.available = p->map.data();
    }
    // A copy filled whole changed where nothing was named: every copy kept
    // from it (the planner's tallies and room index) is compared whole once.
    if (whole && p->tracking)
        journal.note_all();
    p->states_mark.sync(&journal, {p->states.data()});
    if (available && p->tracking)
        p->map_mark.sync(&journal, {p->map.data()});
    return out;
}

void set_tracking(nvlb_planner_t& p, bool on) {
    ChangeJournal& journal = p.planner.changes();
    p.tracking = on;
    for (const void* a : {static_cast<const void*>(p.states.data()), static_cast<const void*>(p.map.data())})
        on ? journal.track(a) : journal.untrack(a);
    p.states_mark = {};
    p.map_mark = {};
    journal.note_all(); // asked again: every node may have changed
}

// Slurm's facts as the C ABI carries them; core/slurm_request.hpp shapes them.
Request request_of(const nvlb_planner_t& p, const nvlb_request_t& request, std::size_t node_count,
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
        f.available = std::span<const std::uint8_t>(request.available, node_count);
    if (request.required)
        f.nodelist.assign(request.required, request.required + request.required_count);
    f.now = request.now;
    f.eligible_since = request.eligible_since;
    return request_from_slurm(f, p.planner.topology().policy().slurm_release, node_count, candidates);
}

} // namespace nvlblock::capi
