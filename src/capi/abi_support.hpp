// SPDX-License-Identifier: GPL-2.0-or-later
//
// What every face of the C ABI shares: the planner handle behind the opaque
// nvlb_planner_t, the lock of a call that may change the ledger, and the
// guards that keep every exception inside. Every export catches every
// exception and turns it into a status code and a message (guarded) or a
// fallback value (nothrow_or): an exception escaping into slurmctld would
// abort the controller. scripts/check-architecture holds every export to it.
#ifndef NVLBLOCK_CAPI_ABI_SUPPORT_HPP
#define NVLBLOCK_CAPI_ABI_SUPPORT_HPP

#include "nvlblock/nvlblock.h"

#include "common/diagnostic.hpp"
#include "core/planner.hpp"
#include "placement/request.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <system_error>
#include <vector>

struct nvlb_planner {
    explicit nvlb_planner(nvlblock::Topology t) : planner(std::move(t)) {}
    nvlblock::Planner planner;
    mutable std::mutex mutex;
    // Signalled (under mutex) when the ledger may have changed, or to wake a waiter.
    std::condition_variable changed;
    std::uint64_t wakes = 0;
    std::vector<nvlblock::NodeState> states; // reused between calls
    // While the caller names what changed (nvlb_track_changes): the last
    // availability map, and how far each copy follows the planner's journal.
    bool tracking = false;
    std::vector<std::uint8_t> map;
    nvlblock::JournalMark states_mark, map_mark;
    // Pending reasons by job id: sized by the jobs it holds.
    std::mutex reasons_mutex;
    std::map<std::uint32_t, std::string> reasons;
};

namespace nvlblock::capi {

// The lock of a call that may change the ledger: a thread waiting in
// nvlb_state_wait() is woken when it did.
class ChangingLock {
  public:
    explicit ChangingLock(nvlb_planner_t* p) : p_(p), lock_(p->mutex), before_(p->planner.ledger().version()) {}
    ~ChangingLock() {
        if (p_->planner.ledger().version() != before_)
            p_->changed.notify_all();
    }
    ChangingLock(const ChangingLock&) = delete;
    ChangingLock& operator=(const ChangingLock&) = delete;

  private:
    nvlb_planner_t* p_;
    std::lock_guard<std::mutex> lock_;
    std::uint64_t before_;
};

// src as a NUL-terminated string in dst's cap bytes, cut to fit.
void copy_str(char* dst, std::size_t cap, const std::string& src);

nvlb_status_t set_error(nvlb_error_t* err, nvlb_status_t status, const std::string& file, unsigned line,
                        const std::string& message, unsigned count = 1);

nvlb_status_t from_config_error(nvlb_error_t* err, const ConfigError& e);

// Runs fn, mapping exceptions to status codes.
template <typename Fn>
nvlb_status_t guarded(nvlb_error_t* err, Fn&& fn) {
    try {
        return fn();
    } catch (const ConfigError& e) {
        return from_config_error(err, e);
    } catch (const std::system_error& e) {
        return set_error(err, NVLB_E_IO, "", 0, e.what());
    } catch (const std::bad_alloc&) {
        return set_error(err, NVLB_E_NOMEM, "", 0, "out of memory");
    } catch (const std::exception& e) {
        return set_error(err, NVLB_E_INTERNAL, "", 0, std::string("internal error: ") + e.what());
    } catch (...) {
        return set_error(err, NVLB_E_INTERNAL, "", 0, "internal error");
    }
}

// Exports that answer with a value or return nothing: whatever the core
// throws (an allocation, a mutex or condition variable that fails) ends
// here as `fallback`, never unwinding into slurmctld's C frames. Those that
// return a status report errors through guarded().
template <typename T, typename Fn>
T nothrow_or(T fallback, Fn&& fn) noexcept {
    try {
        return fn();
    } catch (...) {
        return fallback;
    }
}

template <typename Fn>
void nothrow_do(Fn&& fn) noexcept {
    try {
        fn();
    } catch (...) {
    }
}

// The caller's node states as the core's, unknown values as down, in the
// handle's reused buffer (call under p->mutex): every node is read.
std::span<const NodeState> states_of(nvlb_planner_t* p, const std::uint8_t* raw, std::size_t n);
// nvlb_place's states and map (null: none). While changes are tracked,
// both are the handle's copies, read only at the nodes the caller named
// since they were last filled (nvlb_track_changes); otherwise the states
// are read whole and the map is the caller's.
struct AskedArrays {
    std::span<const NodeState> states;
    const std::uint8_t* available = nullptr;
};
AskedArrays asked_arrays(nvlb_planner_t* p, const std::uint8_t* raw, std::size_t n, const std::uint8_t* available);

// Slurm's facts about a job as the C ABI carries them, shaped into the
// core's question (core/slurm_request.hpp) by the release the topology was
// read for. candidates: storage the request's node lists point into.
Request request_of(const nvlb_planner_t& p, const nvlb_request_t& request, std::size_t node_count,
                   std::vector<std::uint8_t>& candidates);

// Tracking on or off (nvlb_track_changes), under p->mutex.
void set_tracking(nvlb_planner_t& p, bool on);

} // namespace nvlblock::capi

#endif
