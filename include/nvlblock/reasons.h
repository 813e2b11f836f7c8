/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/reasons.h - the C ABI, reasons face (src/capi/reasons.cpp).
 */
#ifndef NVLBLOCK_REASONS_H
#define NVLBLOCK_REASONS_H

#include "nvlblock/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Pending reasons: the latest refusal nvlb_place gave for a job, as its
 * sentence, kept until the caller drops it. One entry per job, as many as
 * there are jobs. */
void nvlb_reason_forget(nvlb_planner_t* planner, uint32_t job_id);
void nvlb_reasons_clear(nvlb_planner_t* planner);
/* Calls fn for each entry, in job id order; an entry for which fn returns
 * false is dropped. fn must not call back into the planner. Returns the
 * number of entries kept. */
size_t nvlb_reasons_each(nvlb_planner_t* planner, bool (*fn)(void* ctx, uint32_t job_id, const char* text), void* ctx);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_REASONS_H */
