// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, reasons face (include/nvlblock/reasons.h): the latest pending
// reason given for each job (kept by nvlb_place, capi/placement.cpp), until
// the caller drops it.
#include "capi/abi_support.hpp"

using namespace nvlblock;
using namespace nvlblock::capi;

extern "C" {

void nvlb_reason_forget(nvlb_planner_t* p, uint32_t job_id) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->reasons_mutex);
        p->reasons.erase(job_id);
    });
}

void nvlb_reasons_clear(nvlb_planner_t* p) {
    if (!p)
        return;
    nothrow_do([&] {
        std::lock_guard lock(p->reasons_mutex);
        p->reasons.clear();
    });
}

size_t nvlb_reasons_each(nvlb_planner_t* p, bool (*fn)(void*, uint32_t, const char*), void* ctx) {
    if (!p)
        return 0;
    return nothrow_or<size_t>(0, [&]() -> size_t {
        std::lock_guard lock(p->reasons_mutex);
        if (fn)
            for (auto it = p->reasons.begin(); it != p->reasons.end();)
                it = fn(ctx, it->first, it->second.c_str()) ? std::next(it) : p->reasons.erase(it);
        return p->reasons.size();
    });
}

} // extern "C"
