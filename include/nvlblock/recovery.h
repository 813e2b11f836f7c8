/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/recovery.h - the C ABI, recovery face (src/capi/recovery.cpp):
 * the facts of a job's end, start and departure, time passing, and the
 * decision lines the ledger queues.
 */
#ifndef NVLBLOCK_RECOVERY_H
#define NVLBLOCK_RECOVERY_H

#include "nvlblock/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In-place recovery (docs/placement.md rules 3b, 5-7; src/recovery). */

/* A job's nodes are being released (slurmctld's epilog_slurmctld): what
 * Slurm says of the job and of each of its nodes, in one call; the core
 * decides (src/recovery/job_end.hpp, docs/placement.md rule 5): a run that
 * restarted after a failure counts as that restart; a requeue (after a node
 * failure, by RequeueExit or RequeueExitHold, by scontrol requeue) of a
 * multi-node job with a failed node (down, not responding, failing, drained
 * or draining) opens its recovery; one with every node healthy is watched
 * for a node that fails or drains within recovery.failure_window (its
 * released nodes held while the others still complete); anything else,
 * preemption included, changes nothing. */
enum {
    NVLB_END_BATCH = 1u << 0,
    NVLB_END_REQUEUE_ALLOWED = 1u << 1, /* details->requeue */
    NVLB_END_PENDING = 1u << 2,         /* base state PENDING: requeued already */
    NVLB_END_NODE_FAIL = 1u << 3,       /* base state NODE_FAIL */
    NVLB_END_COMPLETING = 1u << 4,      /* the COMPLETING flag */
    NVLB_END_PREEMPTED = 1u << 5,       /* preempt_time set */
    NVLB_END_CANCELLED = 1u << 6,       /* base state CANCELLED */
    NVLB_END_EXIT_REQUEUES = 1u << 7,   /* RequeueExit lists its exit status */
    NVLB_END_EXIT_HOLDS = 1u << 8,      /* RequeueExitHold lists its exit status */
};
enum {
    NVLB_NODE_SIGN_MISSING = 1u << 0,        /* no such node record */
    NVLB_NODE_SIGN_DOWN = 1u << 1,           /* DOWN (or powered off) */
    NVLB_NODE_SIGN_NOT_RESPONDING = 1u << 2, /* NO_RESPOND */
    NVLB_NODE_SIGN_FAILING = 1u << 3,        /* FAIL */
    NVLB_NODE_SIGN_NAMED_FAILED = 1u << 4,   /* the node Slurm named when it requeued the job */
    NVLB_NODE_SIGN_DRAIN = 1u << 5,          /* DRAIN or DRAINING */
};
typedef struct nvlb_ended_node {
    uint32_t node;      /* its index */
    uint32_t signs;     /* NVLB_NODE_SIGN_* */
    const char* reason; /* Slurm's reason for its state (the drain reason); NULL when none */
} nvlb_ended_node_t;
typedef struct nvlb_job_end {
    uint32_t job_id;
    uint32_t facts;     /* NVLB_END_* */
    int64_t ended_at;   /* now */
    int64_t started_at; /* when the run that ended began (start_time); 0 when unknown: no restart is counted */
    const nvlb_ended_node_t* nodes;
    size_t node_count;
} nvlb_job_end_t;
typedef enum nvlb_end_outcome {
    NVLB_END_NOTHING = 0,  /* the ledger keeps no record of it (a restart may have been counted) */
    NVLB_END_OPENED = 1,   /* its recovery opened: its block(s) are held */
    NVLB_END_WATCHING = 2, /* requeued with every node healthy: watched */
} nvlb_end_outcome_t;
/* outcome may be NULL. Logs through nvlb_drain_log(); the state version
 * moves when the ledger changed. */
nvlb_status_t nvlb_job_ended(nvlb_planner_t* planner, const nvlb_job_end_t* end, nvlb_end_outcome_t* outcome);

/* Whether the job has an open recovery record (it failed and has not run
 * again nor left the queue). O(log n) in the open records. */
bool nvlb_is_recovering(const nvlb_planner_t* planner, uint32_t job_id);

/* Time passes: every job whose wait for its block is over (or whose block is
 * down) and whose block cannot take it on these node states falls back: it
 * is placed like any other job from then on, and its holds end (one log line
 * each). Until then nvlb_place() keeps it waiting for its block: nvlb_place()
 * never changes anything, so this is the only call that moves time. Call it
 * regularly and at nvlb_next_deadline() (slurmctld's nvlblock thread does).
 * fell_back (may be NULL): how many fell back. */
nvlb_status_t nvlb_advance(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count, int64_t now,
                           size_t* fell_back);
/* Block health over time: the seconds each block could not host a whole
 * slice (fewer healthy nodes than its slice, or a block fault) accrue
 * between two calls to the blocks short at the first. Call it every pass
 * of the caller's clock (slurmctld's nvlblock thread does); the reports show
 * it (ShortOfSliceSeconds=, nvlblock_block_short_of_slice_seconds_total).
 * Node failures older than recovery.lemon.window are forgotten here. */
nvlb_status_t nvlb_observe_health(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count, int64_t now);
/* An operator cleared a node's failures under jobs (it had its part
 * replaced): it is no longer a lemon (docs/placement.md rule 5a). Logged
 * (nvlb_drain_log). cleared (may be NULL): whether it had failures kept.
 * NVLB_E_INVALID: no such node. */
nvlb_status_t nvlb_clear_lemon(nvlb_planner_t* planner, const char* node_name, bool* cleared);
/* When, after now, nvlb_advance() next has something to do by time alone (a
 * wait ending); INT64_MAX when none. */
int64_t nvlb_next_deadline(const nvlb_planner_t* planner, int64_t now);

/* The ledger of jobs restarting after failures. */
/* The job runs on these nodes, a run that began at `started` (Slurm's
 * start_time). A run that began before the failure is not a restart (after a
 * crash slurmctld may restore the failed run from state saved before the
 * requeue): the record stays open. */
nvlb_status_t nvlb_job_started(nvlb_planner_t* planner, uint32_t job_id, const uint32_t* nodes, size_t node_count,
                               int64_t started);
nvlb_status_t nvlb_job_gone(nvlb_planner_t* planner, uint32_t job_id, int64_t now);
/* Job ids the core follows, ascending: those with an open recovery record
 * and requeued jobs watched for a late failure (nvlb_job_ended); returns
 * the count (copies at most cap). */
size_t nvlb_pending_jobs(const nvlb_planner_t* planner, uint32_t* out, size_t cap);
/* Hands each queued decision line ("nvlblock: recovery JobId=...") to fn. */
size_t nvlb_drain_log(nvlb_planner_t* planner, void (*fn)(void* ctx, const char* line), void* ctx);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_RECOVERY_H */
