/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock.h - the C ABI of the nvlblock core.
 *
 * This is the whole contract between the Slurm plugins (C, compiled against
 * Slurm's tree) and the C++ core: opaque handles, explicit status codes and
 * messages, plain integers and arrays. No exception and no C++ type crosses
 * it. Nodes are indices 0..node_count-1; when a planner is loaded with Slurm's
 * node names in Slurm's order, the indices are Slurm's node indices.
 *
 * Every function that takes a planner is safe to call from several threads:
 * the handle serialises calls internally.
 */
#ifndef NVLBLOCK_NVLBLOCK_H
#define NVLBLOCK_NVLBLOCK_H

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

/* What slurmctld says of one node, as bits: from its node bitmaps, or from
 * the node record read as Slurm derives the bitmaps. nvlb_node_state_of() is
 * the one mapping to a state above (src/core/slurm_node_state.hpp). */
enum {
    NVLB_NODE_FACT_UP = 1u << 0,           /* in up_node_bitmap */
    NVLB_NODE_FACT_AVAIL = 1u << 1,        /* in avail_node_bitmap */
    NVLB_NODE_FACT_IDLE = 1u << 2,         /* in idle_node_bitmap */
    NVLB_NODE_FACT_COMPLETING = 1u << 3,   /* in cg_node_bitmap */
    NVLB_NODE_FACT_FUTURE = 1u << 4,       /* FUTURE */
    NVLB_NODE_FACT_POWERED_DOWN = 1u << 5, /* powered down or powering down */
    NVLB_NODE_FACT_UNREGISTERED = 1u << 6, /* UNKNOWN, not drained, failing or powered off */
    NVLB_NODE_FACT_LENT = 1u << 7,         /* runs only preemptible work */
};
uint8_t nvlb_node_state_of(uint32_t node_facts);

typedef struct nvlb_planner nvlb_planner_t;

/* Load a topology file (YAML if it ends in .yaml/.yml, else topology.conf
 * block syntax). node_names: slurm.conf's nodes in Slurm's index order, or
 * NULL to number nodes in topology order. slurm_version_number: the Slurm
 * release whose topology/block rules apply where releases differ, for
 * reading the file and for every placement (SLURM_VERSION_NUMBER, e.g.
 * 0x180b05 for 24.11.5; 0: 24.11). */
nvlb_status_t nvlb_planner_load(const char* path, const char* const* node_names, size_t node_count,
                                uint32_t slurm_version_number, nvlb_planner_t** out, nvlb_error_t* err);
/* Reconfigure from a file; on any error the planner keeps its old topology.
 * Pending recoveries are carried over by node name. */
nvlb_status_t nvlb_planner_reload(nvlb_planner_t* planner, const char* path, const char* const* node_names,
                                  size_t node_count, uint32_t slurm_version_number, nvlb_error_t* err);
void nvlb_planner_free(nvlb_planner_t* planner);
/* The planner of this process. The Slurm plugins of one daemon (the
 * topology plugin and the PrEp plugin) are separate shared objects; they share
 * one planner through libnvlblock, which the dynamic loader maps once.
 * nvlb_process_planner_set() takes ownership and frees the previous one. */
void nvlb_process_planner_set(nvlb_planner_t* planner);
nvlb_planner_t* nvlb_process_planner(void);

/* Validate a file without keeping it, as nvlb_planner_load would read it for
 * that release. Warnings (accepted but suspicious) are passed to warn, if
 * given, one "file:line: message" at a time. */
nvlb_status_t nvlb_check_file(const char* path, const char* const* node_names, size_t node_count,
                              uint32_t slurm_version_number, void (*warn)(void* ctx, const char* line), void* ctx,
                              nvlb_error_t* err);

/* Topology queries. */
size_t nvlb_node_count(const nvlb_planner_t* planner);
size_t nvlb_block_count(const nvlb_planner_t* planner);
int32_t nvlb_block_of(const nvlb_planner_t* planner, uint32_t node); /* -1: outside every block */
int32_t nvlb_find_block(const nvlb_planner_t* planner, const char* name);

typedef struct nvlb_block_info {
    const char* name;  /* valid until the planner is reloaded or freed */
    const char* nodes; /* hostlist expression */
    uint32_t size;
    uint32_t slice;
    uint32_t spares;
    bool lending;
    bool reclaim; /* reserve: reclaim (rule 3b) */
} nvlb_block_info_t;

nvlb_status_t nvlb_block_info(const nvlb_planner_t* planner, uint32_t block, nvlb_block_info_t* out);
/* Node indices of a block; returns the block size (copies at most cap). */
size_t nvlb_block_nodes(const nvlb_planner_t* planner, uint32_t block, uint32_t* out, size_t cap);

/* The longest path nvlb_policy_info() copies, with its terminating NUL. */
#define NVLB_PATH_MAX 4096

/* Copies, not pointers into the planner: a topology change at run time
 * (another thread) may replace what they were read from at any moment. */
typedef struct nvlb_policy_info {
    int64_t recovery_wait_s;
    double block_fault_fraction;
    int64_t status_interval_s;
    char status_json[NVLB_PATH_MAX];       /* "" when not set */
    char status_prometheus[NVLB_PATH_MAX]; /* "" when not set */
    bool from_topology_conf;               /* plain topology.conf: behaves as topology/block */
    char source[NVLB_PATH_MAX];            /* the file read */
    char included_conf[NVLB_PATH_MAX];     /* nvlblock.yaml's topology_conf or topology_yaml as written; "" when none */
    char included_conf_path[NVLB_PATH_MAX]; /* ...and the path it was read from */
    int64_t recovery_reclaim_budget_s;      /* recovery.reclaim_budget (reserve: reclaim, rule 3b) */
} nvlb_policy_info_t;

/* NVLB_E_INVALID (and every string "") when a path does not fit NVLB_PATH_MAX. */
nvlb_status_t nvlb_policy_info(const nvlb_planner_t* planner, nvlb_policy_info_t* out);
/* Whether a job in this QOS / partition (either may be NULL) is preemptible
 * work that may borrow spares (the topology file's `preemptible:`). */
bool nvlb_is_preemptible(const nvlb_planner_t* planner, const char* qos, const char* partition);
/* Seconds after a requeue before Slurm lets the job start again
 * (cred_expire + 1). The nodes of a failed job stay held at least this long
 * plus the time a scheduling pass may take to reach it, which the core adds. */
void nvlb_set_requeue_delay(nvlb_planner_t* planner, int64_t seconds);

/* Placement. */
typedef enum nvlb_reason {
    NVLB_PLACED = 0,
    NVLB_NOT_IN_TOPOLOGY = 1, /* no block node is usable: schedule without topology */
    NVLB_INVALID_REQUEST = 2,
    NVLB_SEGMENT_NOT_DIVISOR = 3,
    NVLB_SEGMENT_TOO_LARGE = 4,
    NVLB_TOO_LARGE = 5,
    NVLB_REQUIRED_UNAVAILABLE = 6,
    NVLB_SPARES_WITHHELD = 7,
    NVLB_NO_BLOCK_FITS = 8,
    NVLB_EXCLUSIVE_NO_BLOCK = 9,
    NVLB_RECOVERY_WAITING = 10,
    NVLB_NO_GROUP_FITS = 11, /* no group of the job's level above the blocks can take it now */
} nvlb_reason_t;

const char* nvlb_reason_name(nvlb_reason_t reason);

/* What Slurm says of the job, unshaped: the core turns these facts into the
 * question it answers, with the rules of the Slurm release the topology was
 * read for (nvlb_planner_load's slurm_version_number): the -N min-max clamp, --segment,
 * what a --nodelist means for a job of several segments. */
typedef struct nvlb_request {
    uint32_t job_id;
    uint32_t min_nodes;
    uint32_t max_nodes;       /* Slurm's upper bound; 0: min_nodes */
    uint32_t segment;         /* --segment (segment_size); 0: none */
    bool exclusive_topo;      /* --exclusive=topo or ExclusiveTopo=YES */
    bool preemptible;         /* nvlb_is_preemptible() of its QOS and partition */
    const uint8_t* available; /* node_count bytes, non-zero = usable now; NULL: free nodes */
    const uint32_t* required; /* --nodelist node indices */
    size_t required_count;
    int64_t now;            /* seconds (Unix time in the plugin, simulated time in the simulator) */
    int64_t eligible_since; /* when the job could first start (hierarchy.crossing counts from it); 0: now */
    uint32_t req_nodes;     /* the count Slurm asks for within min-max (select's req_nodes); 0: not given */
} nvlb_request_t;

typedef struct nvlb_placement {
    nvlb_reason_t reason;
    uint32_t* nodes;       /* caller's buffer of nodes_capacity entries */
    size_t nodes_capacity; /* in */
    size_t node_count;     /* out: chosen nodes, ascending */
    uint32_t spares_used;  /* recovery: nodes beyond its prior healthy ones */
    bool recovery_in_place;
    uint32_t blocks_if_spares;
    char message[512]; /* a sentence for the user */
    /* Refused for good as asked: Slurm's topology/block refuses such a job at
     * submission (ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE). */
    bool topology_unavailable;
    char group[128];  /* placed: the group above the blocks it was confined to; "" if none */
    uint32_t segment; /* the --segment the answer applied (26.05 ignores one larger than the job); 0: none */
} nvlb_placement_t;

nvlb_status_t nvlb_place(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count,
                         const nvlb_request_t* request, nvlb_placement_t* out);

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

typedef struct nvlb_reclaim {
    uint32_t* jobs;       /* caller's buffer of jobs_capacity entries */
    uint8_t* actions;     /* caller's buffer of jobs_capacity entries: nvlb_reclaim_action_t per job */
    size_t jobs_capacity; /* in */
    size_t job_count;     /* out: jobs to move, cheapest first; 0: none */
    uint32_t nodes;       /* out: nodes they free where the job lacks room */
    int64_t lost_node_seconds;
    int64_t budget_node_seconds;
    char blocks[128];  /* out: the blocks room is made on, comma-separated */
    char message[256]; /* out, when job_count is 0: why nothing is reclaimed */
} nvlb_reclaim_t;

/* request: the job as for nvlb_place (its job_id names the ledger record).
 * Changes nothing. NVLB_E_INVALID if the buffers are too small. */
nvlb_status_t nvlb_plan_reclaim(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count,
                                const nvlb_request_t* request, const nvlb_reclaimer_t* for_job,
                                const nvlb_running_job_t* running, size_t running_count, nvlb_reclaim_t* out);
/* Asked before nvlb_plan_reclaim, without the running jobs: whether the
 * core refuses a reclaim for the job whatever runs on its blocks (it fits
 * now, is held, a block it lacks room on keeps idle spares or is down, it
 * lacks more nodes than their spares, a reclaim limit is reached). Then
 * out->message says why (as nvlb_plan_reclaim's would) and nothing need be
 * asked of Slurm about the running jobs; out->message is empty when the
 * answer depends on them. out->job_count is 0. Changes nothing. */
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
/* Nothing could be reclaimed for the job (why: plan->message): logged once
 * for each new reason while the job waits. */
nvlb_status_t nvlb_reclaim_refused(nvlb_planner_t* planner, uint32_t job_id, const char* why);

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
    int64_t started_at; /* when the run that ended began (start_time); 0 when unknown */
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
nvlb_status_t nvlb_job_failed(nvlb_planner_t* planner, uint32_t job_id, const uint32_t* nodes, size_t node_count,
                              const uint32_t* failed, size_t failed_count, int64_t now);
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
/* Hands each queued decision line ("nvlblock: recovery JobId=...") to fn. */
size_t nvlb_drain_log(nvlb_planner_t* planner, void (*fn)(void* ctx, const char* line), void* ctx);

/* Persistence: atomic (write, fsync, rename), mode 0600, written as
 * nvlb_write_file writes (below). Loading a missing file is OK; a symlink or
 * anything but a regular file in its place is NVLB_E_IO. */
nvlb_status_t nvlb_state_save(nvlb_planner_t* planner, const char* path, nvlb_error_t* err);
/* Moves with every change to the state nvlb_state_save writes: a caller
 * that saved at version v saves again when it differs. */
uint64_t nvlb_state_version(const nvlb_planner_t* planner);
/* Waits until the state version differs from `seen`, nvlb_state_wake() is
 * called, or the Unix time until_ms (milliseconds) passes. Returns true when
 * the version differs. For the one thread that saves the state (slurmctld's
 * status thread), so that saving never happens under Slurm's locks and
 * still follows a change at once. */
bool nvlb_state_wait(nvlb_planner_t* planner, uint64_t seen, int64_t until_ms);
/* Ends every nvlb_state_wait() now (the waiter is stopping). */
void nvlb_state_wake(nvlb_planner_t* planner);
nvlb_status_t nvlb_state_load(nvlb_planner_t* planner, const char* path, nvlb_error_t* err);

/* Replace a report file (status, metrics) atomically, mode 0644: a
 * temporary file with an unpredictable name, created exclusively without
 * following symlinks in the target's directory, then renamed over the
 * target (a symlink there is replaced, never followed); with durable, fsync
 * of the file and its directory too. Readers see the old or the new file.
 * NVLB_E_IO, naming the directory, when it is writable by every user and has
 * no sticky bit: nothing is written there. */
nvlb_status_t nvlb_write_file(const char* path, const char* text, bool durable, nvlb_error_t* err);

/* The segments of an allocation: per block (in block order), runs of
 * segment_size of its nodes (all of the block's nodes when 0); nodes outside
 * every block form one more segment. segment_of (count entries, may be NULL)
 * receives each node's segment index. Returns the number of segments. */
size_t nvlb_segments(const nvlb_planner_t* planner, const uint32_t* nodes, size_t count, uint32_t segment_size,
                     uint32_t* segment_of);

/* Pending reasons: the latest sentence nvlblock gave for a job, kept until
 * the caller drops it. One entry per job, as many as there are jobs. */
void nvlb_reason_note(nvlb_planner_t* planner, uint32_t job_id, const char* text);
void nvlb_reason_forget(nvlb_planner_t* planner, uint32_t job_id);
void nvlb_reasons_clear(nvlb_planner_t* planner);
/* Calls fn for each entry, in job id order; an entry for which fn returns
 * false is dropped. fn must not call back into the planner. Returns the
 * number of entries kept. */
size_t nvlb_reasons_each(nvlb_planner_t* planner, bool (*fn)(void* ctx, uint32_t job_id, const char* text), void* ctx);

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

/* ---- Topology changes at run time (Slurm 25.05+ add_rm_node) ---------------
 * A node goes into a block nvlblock knows, out of every block, or back to the
 * block its file gives it; re-applying its block changes nothing; a change
 * that would split a running job's block, or touch a block a job waits to
 * restart on, is refused (core/topology_change.hpp has the whole rule). */
typedef enum nvlb_unit_kind {
    NVLB_UNIT_BLOCK = 0,      /* into the block named `block` */
    NVLB_UNIT_NONE = 1,       /* out of every block */
    NVLB_UNIT_CONFIGURED = 2, /* back to the block of nvlblock's file */
} nvlb_unit_kind_t;

typedef enum nvlb_change {
    NVLB_CHANGE_NONE = 0,    /* it is there already: nothing changed */
    NVLB_CHANGE_APPLIED = 1, /* the topology changed */
    NVLB_CHANGE_REFUSED = 2, /* message says why */
} nvlb_change_t;

/* A job running on the node, with all of its nodes. */
typedef struct nvlb_job_nodes {
    uint32_t job_id;
    const uint32_t* nodes;
    size_t node_count;
} nvlb_job_nodes_t;

/* node: the node's index, node_name: its name (a dynamic node may be new in
 * its slot). restoring: Slurm re-applies the topology it saved for the node
 * (start-up, reconfigure): the job rules are skipped. The outcome and a
 * sentence (what changed, or why not) come back in *outcome and message. */
nvlb_status_t nvlb_node_topology(nvlb_planner_t* planner, uint32_t node, const char* node_name, nvlb_unit_kind_t kind,
                                 const char* block, const nvlb_job_nodes_t* running, size_t running_count,
                                 bool restoring, nvlb_change_t* outcome, char* message, size_t message_cap);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_NVLBLOCK_H */
