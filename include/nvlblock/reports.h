/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/reports.h - the C ABI, reports face (src/capi/reports.cpp):
 * `scontrol show topology`'s data and lines, the status and metrics files.
 */
#ifndef NVLBLOCK_REPORTS_H
#define NVLBLOCK_REPORTS_H

#include "nvlblock/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Structured report data, for `scontrol show topology`: per block and per
 * group of the hierarchy, the figures and the line the core formats. */
typedef enum nvlb_health {
    NVLB_HEALTHY = 0,
    NVLB_DEGRADED = 1, /* more failures than spares */
    NVLB_DOWN = 2,     /* block fault */
} nvlb_health_t;

typedef struct nvlb_block_report {
    const char* name;         /* these strings live as long as the report data */
    const char* nodes;        /* hostlist expression */
    const char* failed_nodes; /* hostlist; "" when none */
    const char* line;         /* "BlockName=... Nodes=... ..." */
    uint32_t size, slice, spares;
    bool lending, reclaim;
    nvlb_health_t health;
    uint32_t healthy, failed, busy, lent, free;
    uint32_t spares_free, spares_used, spares_lent, held, stranded;
} nvlb_block_report_t;

typedef struct nvlb_group_report {
    const char* name;  /* "su01", or a BlockSizes aggregate */
    const char* level; /* its level's name */
    const char* line;  /* "GroupName=... Level=... ..." */
} nvlb_group_report_t;

typedef struct nvlb_report_data nvlb_report_data_t;

/* NULL on error (node_count not the topology's). */
nvlb_report_data_t* nvlb_report_data(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count,
                                     int64_t now);
size_t nvlb_report_block_count(const nvlb_report_data_t* data);
nvlb_status_t nvlb_report_block(const nvlb_report_data_t* data, size_t index, nvlb_block_report_t* out);
size_t nvlb_report_group_count(const nvlb_report_data_t* data);
nvlb_status_t nvlb_report_group(const nvlb_report_data_t* data, size_t index, nvlb_group_report_t* out);
/* The summary line ("nvlblock: Blocks=..."). */
const char* nvlb_report_summary(const nvlb_report_data_t* data);
/* One line per pending and recent recovery ("RecoveryPending JobId=...",
 * "Recovery JobId=..."), newline-separated without a trailing newline; ""
 * when none. */
const char* nvlb_report_recoveries(const nvlb_report_data_t* data);
void nvlb_report_data_free(nvlb_report_data_t* data);

/* Reports, as malloc'd strings to release with nvlb_free(); NULL on error. */
typedef enum nvlb_report_format {
    NVLB_REPORT_TEXT = 0, /* one "BlockName=..." line per block, a summary line, one
                           * "GroupName=..." line per group of the hierarchy, then one line
                           * per pending and recent recovery */
    NVLB_REPORT_JSON = 1,
    NVLB_REPORT_PROMETHEUS = 2,
} nvlb_report_format_t;

char* nvlb_report(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count, int64_t now,
                  nvlb_report_format_t format);
/* Free nodes in block nodes that do not make up a whole slice, counting the
 * nodes with a non-zero byte in free_mask as the free ones. */
uint32_t nvlb_stranded_nodes(nvlb_planner_t* planner, const uint8_t* free_mask, size_t node_count);
void nvlb_free(void* p);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_REPORTS_H */
