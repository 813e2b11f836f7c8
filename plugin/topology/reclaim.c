/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reclaim.c - carries out the core's reclaim plans (docs/placement.md rule 3b,
 * `reserve: reclaim`): for each job waiting to restart in place, the core
 * names the running jobs to requeue so that the job gets its block back; this
 * file lists the running jobs for it and requeues the ones it names, as an
 * operator's `scontrol requeue` would. Runs in the status thread, between
 * scheduling passes, holding slurmctld's job and node write locks.
 */
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "../common/slurm_bridge.h"
#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

/* job_list exists only in slurmctld (see slurm_bridge.c). */
extern list_t *job_list __attribute__((weak));

typedef struct {
	nvlb_planner_t *planner;
	time_t now;
	nvlb_running_job_t *jobs;
	size_t count, cap;
} running_args_t;

static int _add_running(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	running_args_t *args = arg;
	nvlb_running_job_t *r;
	size_t count;

	if (!(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) || !job_ptr->node_bitmap)
		return 0;
	if (args->count == args->cap) {
		args->cap = args->cap ? 2 * args->cap : 64;
		xrecalloc(args->jobs, args->cap, sizeof(*args->jobs));
	}
	r = &args->jobs[args->count++];
	r->job_id = job_ptr->job_id;
	r->nodes = nvlbs_bitmap_indices(job_ptr->node_bitmap, &count);
	r->node_count = count;
	r->started = job_ptr->start_time;
	/* What Slurm's own requeue accepts: batch jobs that allow it. */
	r->requeueable = job_ptr->batch_flag && job_ptr->details && job_ptr->details->requeue;
	r->exempt = slurm_conf.preempt_exempt_time &&
		    (args->now < job_ptr->start_time + (time_t) slurm_conf.preempt_exempt_time);
	r->preemptible = nvlbs_job_preemptible(args->planner, job_ptr);
	return 0;
}

static void _free_running(running_args_t *args)
{
	for (size_t i = 0; i < args->count; i++)
		xfree(args->jobs[i].nodes);
	xfree(args->jobs);
}

/* Jobs requeued for one restart are no longer candidates for the next. */
static void _forget(running_args_t *args, uint32_t job_id)
{
	for (size_t i = 0; i < args->count; i++)
		if (args->jobs[i].job_id == job_id)
			args->jobs[i].requeueable = false;
}

extern void nvlbt_reclaim_spares(nvlb_planner_t *planner, time_t now)
{
	running_args_t running = {.planner = planner, .now = now};
	size_t pending = nvlb_pending_jobs(planner, NULL, 0);
	uint32_t *ids, *victims;
	uint8_t *states;

	if (!pending || !job_list)
		return;
	ids = xcalloc(pending, sizeof(*ids));
	pending = nvlb_pending_jobs(planner, ids, pending);
	list_for_each(job_list, _add_running, &running);
	states = nvlbs_node_states();
	victims = xcalloc(running.count + 1, sizeof(*victims));
	for (size_t i = 0; i < pending; i++) {
		job_record_t *job_ptr = find_job_record(ids[i]);
		job_details_t *details;
		nvlb_request_t req = {0};
		nvlb_reclaim_t plan = {.jobs = victims, .jobs_capacity = running.count};

		if (!job_ptr || !IS_JOB_PENDING(job_ptr) || !(details = job_ptr->details))
			continue;
		req.job_id = job_ptr->job_id;
		req.min_nodes = details->min_nodes;
		req.max_nodes = MAX(details->min_nodes, details->max_nodes);
		req.segment = details->segment_size;
		req.preemptible = nvlbs_job_preemptible(planner, job_ptr);
		req.now = now;
		if ((nvlb_plan_reclaim(planner, states, node_record_count, &req, running.jobs, running.count, &plan) !=
		     NVLB_OK) ||
		    !plan.job_count)
			continue;
		for (size_t v = 0; v < plan.job_count; v++) {
			/* As preempted, so accounting says why the job ran again. */
			int rc = job_requeue(slurm_conf.slurm_user_id, victims[v], NULL, true, 0);

			if (rc != SLURM_SUCCESS)
				error("nvlblock: recovery JobId=%u: cannot requeue JobId=%u to reclaim its spares: %s",
				      job_ptr->job_id, victims[v], slurm_strerror(rc));
			_forget(&running, victims[v]);
		}
		(void) nvlb_reclaim_started(planner, job_ptr->job_id, &plan, now);
	}
	nvlbs_flush_log(planner);
	xfree(victims);
	xfree(states);
	xfree(ids);
	_free_running(&running);
}
