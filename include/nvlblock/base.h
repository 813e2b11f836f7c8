/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/base.h - what every face of the C ABI shares: its version, status
 * codes and errors, the opaque planner, node states.
 */
#ifndef NVLBLOCK_BASE_H
#define NVLBLOCK_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: nvlb_request_t.req_nodes, nvlb_placement_t.segment.
 * 3: the Slurm release is a parameter of nvlb_planner_load, nvlb_planner_reload
 *    and nvlb_check_file; nvlb_set_slurm_release (process-wide) is gone. */
#define NVLB_ABI_VERSION 3

typedef enum nvlb_status {
    NVLB_OK = 0,
    NVLB_E_INVALID = 1, /* a bad argument (NULL handle, index out of range) */
    NVLB_E_CONFIG = 2,  /* a configuration problem: see the error's file/line */
    NVLB_E_IO = 3,      /* a file could not be read or written */
    NVLB_E_STATE = 4,   /* saved state is corrupt */
    NVLB_E_NOMEM = 5,
    NVLB_E_INTERNAL = 6, /* a bug in nvlblock; the message says where */
} nvlb_status_t;

/* Filled on failure by functions that take one (may be NULL). `message`
 * holds every problem, one "file:line: what is wrong" per line (truncated to
 * fit); `file` and `line` repeat the first one. */
typedef struct nvlb_error {
    nvlb_status_t status;
    char file[512];
    unsigned line;
    unsigned problem_count;
    char message[4096];
} nvlb_error_t;

const char* nvlb_status_name(nvlb_status_t status);
const char* nvlb_version(void);

/* Node states, one byte per node. */
enum {
    NVLB_NODE_FREE = 0,    /* healthy and idle */
    NVLB_NODE_BUSY = 1,    /* running or finishing ordinary work (or blocked) */
    NVLB_NODE_LENT = 2,    /* running preemptible work */
    NVLB_NODE_DOWN = 3,    /* failed: down, not responding, powered off */
    NVLB_NODE_DRAINED = 4, /* drained or draining by an operator */
};

typedef struct nvlb_planner nvlb_planner_t;

typedef struct nvlb_planner nvlb_planner_t;

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_BASE_H */
