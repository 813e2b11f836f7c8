// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, state face (include/nvlblock/state.h): saving and loading the
// ledger, waiting for it to change, and writing report files.
#include "capi/abi_support.hpp"

#include "state/atomic_file.hpp"

#include <chrono>

using namespace nvlblock;
using namespace nvlblock::capi;

extern "C" {

nvlb_status_t nvlb_state_save(nvlb_planner_t* p, const char* path, nvlb_error_t* err) {
    if (!p || !path)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_state_save: planner and path are required");
    return guarded(err, [&] {
        std::string text;
        {
            std::lock_guard lock(p->mutex);
            text = p->planner.save_state();
        }
        write_file_atomically(path, text, kPrivateFileMode);
        return NVLB_OK;
    });
}

uint64_t nvlb_state_version(const nvlb_planner_t* p) {
    if (!p)
        return 0;
    return nothrow_or<uint64_t>(0, [&]() -> uint64_t {
        std::lock_guard lock(p->mutex);
        return p->planner.ledger().version();
    });
}

bool nvlb_state_wait(nvlb_planner_t* p, uint64_t seen, int64_t until_ms) {
    if (!p)
        return false;
    return nothrow_or<bool>(false, [&]() -> bool {
        const auto until = std::chrono::system_clock::time_point(std::chrono::milliseconds(until_ms));
        std::unique_lock lock(p->mutex);
        const std::uint64_t wakes = p->wakes;
        p->changed.wait_until(lock, until, [&] { return p->planner.ledger().version() != seen || p->wakes != wakes; });
        return p->planner.ledger().version() != seen;
    });
}

void nvlb_state_wake(nvlb_planner_t* p) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->mutex);
        ++p->wakes;
        p->changed.notify_all();
    });
}

nvlb_status_t nvlb_state_load(nvlb_planner_t* p, const char* path, nvlb_error_t* err) {
    if (!p || !path)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_state_load: planner and path are required");
    nvlb_status_t rc = guarded(err, [&] {
        auto text = read_file_if_exists(path);
        if (!text)
            return NVLB_OK;
        ChangingLock lock(p);
        p->planner.load_state(*text, path);
        return NVLB_OK;
    });
    if (rc == NVLB_E_CONFIG) { // a malformed state file, not a configuration problem
        rc = NVLB_E_STATE;
        if (err)
            err->status = rc;
    }
    return rc;
}

nvlb_status_t nvlb_write_file(const char* path, const char* text, bool durable, nvlb_error_t* err) {
    if (!path || !text)
        return set_error(err, NVLB_E_INVALID, "", 0, "nvlb_write_file: path and text are required");
    return guarded(err, [&] {
        write_file_atomically(path, text, kReportFileMode, durable);
        return NVLB_OK;
    });
}

} // extern "C"
