/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurm_bridge.h - translation between Slurm's structures and the nvlblock
 * C ABI, shared by topology/nvlblock and prep/nvlblock (compiled into each;
 * their one shared planner lives in libnvlblock). No scheduling decision is
 * made here: this file only reads Slurm state and hands it to the core.
 */
#ifndef NVLBLOCK_SLURM_BRIDGE_H
#define NVLBLOCK_SLURM_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "src/common/bitstring.h"
#include "src/slurmctld/slurmctld.h"

#include "nvlblock/nvlblock.h"

/* Node states as the core sees them, one byte per Slurm node index (an
 * xmalloc'd array of node_record_count bytes). Nodes running preemptible work
 * are NVLB_NODE_LENT only when lent_cache says so (see nvlbs_update_lent).
 * Kept between calls and read again only where slurmctld's node bitmaps
 * changed; callers hold slurmctld's node lock (read or write). */
extern uint8_t *nvlbs_node_states(void);

/*
 * The same into `out` (node_record_count bytes), for a placement: no
 * allocation per evaluation. Failed nodes Slurm offers (when it asks whether
 * a job could ever run) are the core's question (Planner::place answers them
 * as healthy); they are copied here as they are.
 */
extern void nvlbs_node_states_into(uint8_t *out);

/* Drop the kept node states (the plugin is unloading). */
extern void nvlbs_forget_node_states(void);

/* Recompute which nodes run preemptible work. Walks the job list, so only
 * with the job read lock held (eval, epilog, the status thread). */
extern void nvlbs_update_lent(nvlb_planner_t *planner);

/* Set bits of a Slurm bitmap as an xmalloc'd array of node indices. */
extern uint32_t *nvlbs_bitmap_indices(bitstr_t *bitmap, size_t *count);

/* Whether the job is preemptible work that may borrow spares. */
extern bool nvlbs_job_preemptible(nvlb_planner_t *planner, job_record_t *job_ptr);

/* What Slurm says of job_ptr for a placement or reclaim question, unshaped
 * (the core applies every rule, core/slurm_request.hpp): id, --segment,
 * --exclusive=topo, preemptible, times, and the --nodelist as indices, which
 * the request points to and the caller xfree()s (*nodelist). The node counts
 * are the caller's: topology_eval_t's for an evaluation, the job's details
 * for a reclaim. */
extern void nvlbs_request_facts(nvlb_planner_t *planner, job_record_t *job_ptr, time_t now, nvlb_request_t *req,
				uint32_t **nodelist);

/* Close ledger records of jobs that started again or left the queue.
 * Needs the job read lock. Writes no file: the status thread saves the
 * state once the locks are released. */
extern void nvlbs_sync_ledger(nvlb_planner_t *planner, time_t now);

/* <StateSaveLocation>/nvlblock_state, xmalloc'd. */
extern char *nvlbs_state_path(void);
/* Writes it (fsync, rename): only ever with none of Slurm's locks held
 * (the status thread). False, logged, when it could not. */
extern bool nvlbs_save_state(nvlb_planner_t *planner);
/* Log the core's queued decision lines through Slurm's log. */
extern void nvlbs_flush_log(nvlb_planner_t *planner);

/* Show the reason nvlblock refused a pending job as its state_desc ("nvlblock:
 * ..."), unless Slurm's own reason is there; nvlb_place kept the sentence,
 * which nvlbs_apply_reasons shows again where Slurm's scheduler cleared it. */
extern void nvlbs_show_reason(job_record_t *job_ptr, const char *reason);
extern void nvlbs_clear_reason(uint32_t job_id);
extern void nvlbs_apply_reasons(void);
extern void nvlbs_forget_reasons(void);

#endif
