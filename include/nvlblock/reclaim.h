/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/reclaim.h - the C ABI, reclaim face (src/capi/reclaim.cpp):
 * which running jobs to move so that a job waiting to restart in place fits
 * its blocks, and what the caller did about it.
 */
#ifndef NVLBLOCK_RECLAIM_H
#define NVLBLOCK_RECLAIM_H

#include "nvlblock/base.h"
#include "nvlblock/placement.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reclaiming spares (blocks with `reserve: reclaim`, rule 3b): for a job
 * waiting to restart in place, the running jobs to move so that it fits its
 * block(s) now. Whether a job may be moved is Slurm's preemption
 * configuration's (the caller reports what Slurm says of each job), or the
 * site's recovery.reclaim_from; nvlblock picks which, cheapest first, within
 * the block's spares, the budget, the cooldown and the limits. */
typedef enum nvlb_preempt_mode {
    NVLB_PREEMPT_OFF = 0, /* slurm_job_preempt_mode(): PREEMPT_MODE_OFF (or none) */
    NVLB_PREEMPT_REQUEUE = 1,
    NVLB_PREEMPT_CANCEL = 2,
    NVLB_PREEMPT_SUSPEND = 3, /* SUSPEND or GANG: the job keeps its nodes */
} nvlb_preempt_mode_t;

typedef struct nvlb_running_job {
    uint32_t job_id;
    const uint32_t* nodes; /* node indices */
    size_t node_count;
    int64_t started; /* start of its current run */
    int64_t waited;  /* seconds it waited in the queue before that run */
    uint32_t user;
    uint32_t het_job_id;     /* its heterogeneous job (the leader's job id); 0: none */
    const char* qos;         /* NULL or "" when none */
    const char* partition;   /* NULL or "" when none */
    const char* account;     /* NULL or "" when none */
    const char* reservation; /* NULL or "" when none */
    bool requeueable;        /* a batch job Slurm may requeue */
    bool exempt;             /* PreemptExemptTime protects it now (global or its QOS's) */
    bool preemptible;        /* selected by the topology's `preemptible:` */
    bool slurm_may_preempt;  /* slurm_find_preemptable_jobs(the recovering job) lists it */
    bool being_preempted;    /* Slurm is preempting it already (its GraceTime runs) */
    uint8_t preempt_mode;    /* nvlb_preempt_mode_t */
} nvlb_running_job_t;

/* The job a reclaim is for. */
typedef struct nvlb_reclaimer {
    uint32_t user;
    uint32_t het_job_id;     /* 0: none */
    const char* reservation; /* NULL or "" when none */
    bool held;               /* priority 0 (RequeueExitHold, requeuehold, hold): nothing is moved for it */
} nvlb_reclaimer_t;

typedef enum nvlb_reclaim_action {
    NVLB_RECLAIM_PREEMPT = 1,     /* through Slurm's preemption: its PreemptMode, GraceTime and signal */
    NVLB_RECLAIM_REQUEUE = 2,     /* named by recovery.reclaim_from: requeue it (through Slurm's preemption
                                     with PreemptMode=REQUEUE where it is on: its GraceTime applies) */
    NVLB_RECLAIM_REQUEUE_NOW = 3, /* named by recovery.reclaim_from, its own PreemptMode not REQUEUE: requeue it
                                     at once (after a GraceTime Slurm would apply its own mode, and cancel or
                                     kill it) */
} nvlb_reclaim_action_t;

/* Why Slurm would not start the job on the nodes a reclaim would free
 * (what the caller found asking Slurm before moving anybody). */
typedef enum nvlb_slurm_start_refusal {
    NVLB_SLURM_WOULD_START = 0,
    NVLB_SLURM_NO_DETAILS = 1,       /* the job has no details */
    NVLB_SLURM_NOT_IN_PARTITION = 2, /* the nodes are not in a partition of it that is up */
    NVLB_SLURM_EXCLUDED = 3,         /* it excludes some of them (--exclude) */
    NVLB_SLURM_CONSTRAINTS = 4,      /* its constraints exclude some of them */
    NVLB_SLURM_RESERVATION = 5,      /* a reservation keeps some of them */
} nvlb_slurm_start_refusal_t;

#define NVLB_VICTIM_STATUS_COUNT 10

/* Why nothing is reclaimed for a job, as facts: filled by nvlb_plan_reclaim
 * and nvlb_reclaim_ruled_out, or by the caller when Slurm would not start
 * the job (slurm set, the rest zero); handed to nvlb_reclaim_refused, which
 * words it for the log. */
typedef struct nvlb_reclaim_refusal {
    bool refused;   /* nothing is reclaimed */
    uint8_t reason; /* nvlblock's reason (its own codes; read by nvlb_reclaim_refused) */
    uint8_t slurm;  /* nvlb_slurm_start_refusal_t: Slurm's, when not NVLB_SLURM_WOULD_START */
    uint32_t jobs_by_status[NVLB_VICTIM_STATUS_COUNT]; /* the running jobs there, by what they are to a reclaim */
} nvlb_reclaim_refusal_t;

typedef struct nvlb_reclaim {
    uint32_t* jobs;       /* caller's buffer of jobs_capacity entries */
    uint8_t* actions;     /* caller's buffer of jobs_capacity entries: nvlb_reclaim_action_t per job */
    size_t jobs_capacity; /* in */
    size_t job_count;     /* out: jobs to move, cheapest first; 0: none */
    uint32_t nodes;       /* out: nodes they free where the job lacks room */
    int64_t lost_node_seconds;
    int64_t budget_node_seconds;
    uint32_t* blocks;               /* caller's buffer of blocks_capacity entries */
    size_t blocks_capacity;         /* in */
    size_t block_count;             /* out: the blocks room is made on (block indices, the recovery's order) */
    nvlb_reclaim_refusal_t refusal; /* out, when job_count is 0: why nothing is reclaimed */
} nvlb_reclaim_t;

/* request: the job as for nvlb_place (its job_id names the ledger record).
 * Changes nothing. NVLB_E_INVALID if the buffers are too small (blocks:
 * nvlb_block_count entries always suffice). */
nvlb_status_t nvlb_plan_reclaim(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count,
                                const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                const nvlb_running_job_t* running, size_t running_count, nvlb_reclaim_t* out);
/* Asked before nvlb_plan_reclaim, without the running jobs: whether the
 * core refuses a reclaim for the job whatever runs on its blocks (it fits
 * now, is held, a block it lacks room on keeps idle spares or is down, it
 * lacks more nodes than their spares, a reclaim limit is reached). Then
 * out->refusal says why (as nvlb_plan_reclaim's would) and nothing need be
 * asked of Slurm about the running jobs; out->refusal.refused is false
 * when the answer depends on them. out->job_count is 0. Changes nothing. */
nvlb_status_t nvlb_reclaim_ruled_out(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count,
                                     const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                     nvlb_reclaim_t* out);
/* The caller moved plan->jobs; the last of them releases its nodes by
 * released_by (the end of its GraceTime; now when none): logged ("nvlblock:
 * recovery JobId=... reclaiming ..."), remembered for the cooldown and the
 * limits (and saved with the state), and no new round for the job, whose
 * hold lasts as long, until its requeue delay after that. */
nvlb_status_t nvlb_reclaim_started(nvlb_planner_t* planner, uint32_t job_id, const nvlb_reclaimer_t* for_job,
                                   const nvlb_reclaim_t* plan, int64_t released_by, int64_t now);
/* Nothing could be reclaimed for the job (why: a plan's refusal, or the
 * caller's with slurm set): logged once for each new reason while the job
 * waits. NVLB_E_INVALID for a reason nvlblock does not know. */
nvlb_status_t nvlb_reclaim_refused(nvlb_planner_t* planner, uint32_t job_id, const nvlb_reclaim_refusal_t* why);

/* Job ids a reclaim could be planned for now (rule 3b): waiting for their
 * own blocks, one of them `reserve: reclaim`, no earlier round still
 * releasing nodes. Returns the count (copies at most cap). Asked before the
 * running jobs are walked, so that a pass with nothing to plan walks none. */
size_t nvlb_reclaim_candidates(const nvlb_planner_t* planner, int64_t now, uint32_t* out, size_t cap);
/* The caller held Slurm's locks held_us microseconds for one reclaim pass
 * over `recoveries` candidates, its thread using cpu_us of CPU time
 * meanwhile: counted for the status JSON and the Prometheus file
 * (reclaim_passes), nothing else. */
void nvlb_note_reclaim_pass(nvlb_planner_t* planner, int64_t held_us, int64_t cpu_us, size_t recoveries);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_RECLAIM_H */
