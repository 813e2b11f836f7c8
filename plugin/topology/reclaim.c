/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * reclaim.c - carries out the core's reclaim plans (docs/placement.md rule 3b,
 * `reserve: reclaim`). For each job waiting to restart in place, this file
 * asks the core first whether a reclaim is ruled out whatever runs there
 * (a limit, a hold, more than the spares: no question to Slurm then); else
 * tells the core what Slurm says of the running jobs (which ones Slurm's
 * preemption lets that job preempt: slurm_find_preemptable_jobs(); their
 * PreemptMode, PreemptExemptTime, --no-requeue, reservation, heterogeneous
 * job), the core names the jobs to move, and this file moves them the way
 * Slurm itself would: slurm_job_preempt() with the job's own PreemptMode,
 * GraceTime and warning signal; a job named only by nvlblock.yaml's
 * recovery.reclaim_from is requeued through the same call (so it gets its
 * GraceTime too) where Slurm's preemption is configured, else with the
 * release's requeue call. Each moved job's SystemComment says why. Runs in
 * the status thread, between scheduling passes, holding slurmctld's job,
 * node and partition locks.
 */
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/preempt.h"
#include "src/slurmctld/acct_policy.h"
#include "src/slurmctld/slurmctld.h"

#include "../common/slurm_bridge.h"
#include "../common/slurm_compat.h"
#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

/* job_list exists only in slurmctld (see slurm_bridge.c), and so does
 * preempt_send_user_signal (slurmctld.h). */
extern list_t *job_list __attribute__((weak));
extern bool preempt_send_user_signal __attribute__((weak));

/*
 * Whether slurm_job_preempt() sends the victim's own --signal warning:
 * Slurm derives the flag from PreemptParameters=send_user_signal (or
 * SlurmctldParameters=preempt_send_user_signal) only when its own scheduler
 * preempts (node_scheduler.c, every release 24.11-26.11), so a reclaim
 * before any such preemption would skip the warning the user asked for.
 * Derived here the same way, before each reclaim.
 */
static void _sync_send_user_signal(void)
{
	if (&preempt_send_user_signal)
		preempt_send_user_signal = xstrcasestr(slurm_conf.preempt_params, "send_user_signal") ||
					   xstrcasestr(slurm_conf.slurmctld_params, "preempt_send_user_signal");
}

/* An entry of running_args_t's index: a job id and its entry. */
typedef struct {
	uint32_t job_id;
	size_t entry;
} by_id_t;

/*
 * What Slurm says of the running jobs, gathered once per pass and only when
 * a candidate needs it (the core rules most out first, nvlb_reclaim_ruled_out).
 */
typedef struct {
	nvlb_planner_t *planner;
	time_t now;
	bool gathered;
	nvlb_running_job_t *jobs;
	job_record_t **records; /* the job record of each entry */
	size_t count, cap;
	by_id_t *by_id;    /* the entries by job id, for _mark_preemptable */
	uint32_t *victims; /* a plan's buffers, count entries each */
	uint8_t *actions;
	uint32_t *blocks; /* and the blocks it makes room on, one entry per block */
	size_t block_cap;
} running_args_t;

static uint8_t _preempt_mode(job_record_t *job_ptr)
{
	switch (slurm_job_preempt_mode(job_ptr) & ~PREEMPT_MODE_GANG) {
	case PREEMPT_MODE_REQUEUE:
		return NVLB_PREEMPT_REQUEUE;
	case PREEMPT_MODE_CANCEL:
		return NVLB_PREEMPT_CANCEL;
	case PREEMPT_MODE_SUSPEND:
		return NVLB_PREEMPT_SUSPEND;
	default:
		return NVLB_PREEMPT_OFF;
	}
}

static const char *_name_or_null(const char *s)
{
	return (s && s[0]) ? s : NULL;
}

/* What Slurm says of one running job that holds nodes. */
static int _add_running(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	running_args_t *args = arg;
	job_details_t *details = job_ptr->details;
	nvlb_running_job_t *r;
	size_t count;
	time_t eligible;

	if (!(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) || !job_ptr->node_bitmap)
		return 0;
	if (args->count == args->cap) {
		args->cap = args->cap ? 2 * args->cap : 64;
		xrecalloc(args->jobs, args->cap, sizeof(*args->jobs));
		xrecalloc(args->records, args->cap, sizeof(*args->records));
	}
	args->records[args->count] = job_ptr;
	r = &args->jobs[args->count++];
	r->job_id = job_ptr->job_id;
	r->nodes = nvlbs_bitmap_indices(job_ptr->node_bitmap, &count);
	r->node_count = count;
	r->started = job_ptr->start_time;
	eligible = details ? (details->begin_time ? details->begin_time : details->submit_time) : 0;
	r->waited = (eligible && (job_ptr->start_time > eligible)) ? job_ptr->start_time - eligible : 0;
	r->user = job_ptr->user_id;
	r->het_job_id = job_ptr->het_job_id;
	r->qos = job_ptr->qos_ptr ? _name_or_null(job_ptr->qos_ptr->name) : NULL;
	r->partition = _name_or_null(job_ptr->part_ptr ? job_ptr->part_ptr->name : job_ptr->partition);
	r->account = _name_or_null(job_ptr->account);
	r->reservation = _name_or_null(job_ptr->resv_name);
	/* What Slurm's own requeue accepts: batch jobs that allow it. */
	r->requeueable = job_ptr->batch_flag && details && details->requeue;
	/* PreemptExemptTime, the global one or the job's QOS's. */
	r->exempt = acct_policy_is_job_preempt_exempt(job_ptr);
	r->preemptible = nvlbs_job_preemptible(args->planner, job_ptr);
	/* A suspended job (preempted with SUSPEND, or scontrol suspend) keeps
	 * its nodes and is not moved here (_reclaim_for moves running jobs
	 * only): for the core it is one Slurm is preempting already, never a
	 * victim, so no plan counts on its nodes. */
	r->being_preempted = (job_ptr->preempt_time != 0) || IS_JOB_SUSPENDED(job_ptr);
	r->preempt_mode = _preempt_mode(job_ptr);
	return 0;
}

static int _by_id_order(const void *a, const void *b)
{
	const by_id_t *x = a, *y = b;

	return (x->job_id > y->job_id) - (x->job_id < y->job_id);
}

/* Walks Slurm's job list once per pass, on the first candidate that needs it. */
static void _gather_running(running_args_t *args)
{
	if (args->gathered)
		return;
	args->gathered = true;
	list_for_each(job_list, _add_running, args);
	args->by_id = xcalloc(args->count + 1, sizeof(*args->by_id));
	for (size_t i = 0; i < args->count; i++)
		args->by_id[i] = (by_id_t){.job_id = args->jobs[i].job_id, .entry = i};
	qsort(args->by_id, args->count, sizeof(*args->by_id), _by_id_order);
	args->victims = xcalloc(args->count + 1, sizeof(*args->victims));
	args->actions = xcalloc(args->count + 1, sizeof(*args->actions));
	args->block_cap = nvlb_block_count(args->planner);
	args->blocks = xcalloc(args->block_cap + 1, sizeof(*args->blocks));
}

static void _free_running(running_args_t *args)
{
	for (size_t i = 0; i < args->count; i++)
		xfree(args->jobs[i].nodes);
	xfree(args->jobs);
	xfree(args->records);
	xfree(args->by_id);
	xfree(args->victims);
	xfree(args->actions);
	xfree(args->blocks);
}

/* Marks one job of Slurm's preemptable list: found by id, in one lookup. */
static int _mark_one(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	running_args_t *running = arg;
	by_id_t key = {.job_id = job_ptr->job_id};
	by_id_t *found = bsearch(&key, running->by_id, running->count, sizeof(key), _by_id_order);

	if (found && (running->records[found->entry] == job_ptr))
		running->jobs[found->entry].slurm_may_preempt = true;
	return 0;
}

/* Which of the running jobs Slurm's preemption lets job_ptr preempt: one
 * walk of Slurm's answer (not a search of it per running job). */
static void _mark_preemptable(running_args_t *running, job_record_t *job_ptr)
{
	list_t *preemptable = NULL;

	for (size_t i = 0; i < running->count; i++)
		running->jobs[i].slurm_may_preempt = false;
	if (slurm_preemption_enabled() && job_ptr->part_ptr)
		preemptable = slurm_find_preemptable_jobs(job_ptr);
	if (preemptable)
		list_for_each(preemptable, _mark_one, running);
	FREE_NULL_LIST(preemptable);
}

/* The release's own requeue, as an operator's `scontrol requeue` would
 * (marked as preempted, so accounting says why the job ran again). */
static int _requeue(job_record_t *victim)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	return job_requeue_internal(slurm_conf.slurm_user_id, victim, true, 0);
#else
	return job_requeue(slurm_conf.slurm_user_id, victim->job_id, NULL, true, 0);
#endif
}

/*
 * Moves one victim for job_ptr. Returns when its nodes will be free: now,
 * or the end of the GraceTime Slurm's preemption gave it (Slurm's own
 * periodic check completes the preemption then).
 */
static time_t _move(job_record_t *victim, uint8_t action, job_record_t *job_ptr, const char *blocks, time_t now)
{
	uint16_t mode = (action == NVLB_RECLAIM_PREEMPT) ? slurm_job_preempt_mode(victim) : PREEMPT_MODE_REQUEUE;
	const char *how =
		(action == NVLB_RECLAIM_PREEMPT) ? "by Slurm's preemption" : "as recovery.reclaim_from allows";

	/* SystemComment for scontrol show job and the log; AdminComment too,
	 * the one slurmdbd stores (no release sends system_comment to it),
	 * set before Slurm writes the run's record in the calls below. An
	 * administrator's own comment is kept. */
	xstrfmtcat(victim->system_comment, "%snvlblock: %s %s for the in-place restart of JobId=%u on %s",
		   victim->system_comment ? "; " : "", (mode == PREEMPT_MODE_CANCEL) ? "cancelled" : "requeued", how,
		   job_ptr->job_id, blocks);
	xstrfmtcat(victim->admin_comment, "%snvlblock: %s %s for the in-place restart of JobId=%u on %s",
		   victim->admin_comment ? "; " : "", (mode == PREEMPT_MODE_CANCEL) ? "cancelled" : "requeued", how,
		   job_ptr->job_id, blocks);
	if ((action == NVLB_RECLAIM_PREEMPT) || ((action == NVLB_RECLAIM_REQUEUE) && slurm_preemption_enabled())) {
		/* As Slurm's own preemption calls it (node_scheduler.c): the
		 * warning signal at once. SLURM_ERROR while its GraceTime
		 * runs is not a failure. */
		(void) slurm_job_preempt(victim, job_ptr, mode, true);
		if (IS_JOB_RUNNING(victim) && victim->preempt_time && (victim->end_time > now))
			return victim->end_time;
	} else {
		int rc = _requeue(victim);

		if (rc != SLURM_SUCCESS)
			error("nvlblock: recovery JobId=%u: cannot requeue JobId=%u: %s", job_ptr->job_id,
			      victim->job_id, slurm_strerror(rc));
	}
	return now;
}

/* The plan's blocks by name, comma-separated, for the victims' comments
 * (xfree it). */
static char *_plan_block_names(nvlb_planner_t *planner, const nvlb_reclaim_t *plan)
{
	char *names = NULL;

	for (size_t i = 0; i < plan->block_count; i++) {
		nvlb_block_info_t info;

		if (nvlb_block_info(planner, plan->blocks[i], &info) == NVLB_OK)
			xstrfmtcat(names, "%s%s", names ? "," : "", info.name);
	}
	return names;
}

/* The nodes the plan's victims hold on the blocks it makes room on: those
 * the recovering job would take. */
static bitstr_t *_freed_on_plan_blocks(nvlb_planner_t *planner, const nvlb_reclaim_t *plan)
{
	bitstr_t *freed = bit_alloc(node_record_count);
	bitstr_t *on_blocks = bit_alloc(node_record_count);

	for (size_t b = 0; b < plan->block_count; b++) {
		size_t count = nvlb_block_nodes(planner, plan->blocks[b], NULL, 0);
		uint32_t *nodes = xcalloc(count + 1, sizeof(*nodes));

		count = MIN(count, nvlb_block_nodes(planner, plan->blocks[b], nodes, count));
		for (size_t i = 0; i < count; i++)
			if (nodes[i] < (uint32_t) node_record_count)
				bit_set(on_blocks, nodes[i]);
		xfree(nodes);
	}
	for (size_t v = 0; v < plan->job_count; v++) {
		job_record_t *victim = find_job_record(plan->jobs[v]);

		if (victim && victim->node_bitmap)
			bit_or(freed, victim->node_bitmap);
	}
	bit_and(freed, on_blocks);
	FREE_NULL_BITMAP(on_blocks);
	return freed;
}

/* One recovering job: ask the core, then carry the plan out whole. */
static void _reclaim_for(nvlb_planner_t *planner, job_record_t *job_ptr, running_args_t *running, const uint8_t *states,
			 time_t now)
{
	nvlb_reclaim_t reclaim = {0}, *plan = &reclaim;
	job_details_t *details = job_ptr->details;
	nvlb_request_t req = {0};
	nvlb_reclaimer_t who = {
		.user = job_ptr->user_id,
		.het_job_id = job_ptr->het_job_id,
		.reservation = _name_or_null(job_ptr->resv_name),
		.held = (job_ptr->priority == 0),
	};
	time_t released_by = now;
	char *names;

	uint32_t *nodelist;
	nvlb_status_t asked;

	nvlbs_request_facts(planner, job_ptr, now, &req, &nodelist);
	req.min_nodes = details->min_nodes;
	req.max_nodes = details->max_nodes;
	/* A refusal no running job can change (a limit, held, more than the
	 * spares) costs no question to Slurm about the running jobs. */
	asked = nvlb_reclaim_ruled_out(planner, states, node_record_count, &req, &who, plan);
	if ((asked == NVLB_OK) && !plan->refusal.refused) {
		_gather_running(running);
		_mark_preemptable(running, job_ptr);
		reclaim = (nvlb_reclaim_t){.jobs = running->victims,
					   .actions = running->actions,
					   .jobs_capacity = running->count,
					   .blocks = running->blocks,
					   .blocks_capacity = running->block_cap};
		asked = nvlb_plan_reclaim(planner, states, node_record_count, &req, &who, running->jobs, running->count,
					  plan);
	}
	xfree(nodelist);
	if (asked != NVLB_OK) {
		error("nvlblock: %pJ: reclaim question failed: %s", job_ptr, nvlb_status_name(asked));
		return;
	}
	if (!plan->job_count) {
		(void) nvlb_reclaim_refused(planner, job_ptr->job_id, &plan->refusal);
		return;
	}
	/* Nobody is moved for a restart Slurm would not start on those nodes. */
	{
		bitstr_t *freed = _freed_on_plan_blocks(planner, plan);
		nvlb_reclaim_refusal_t why = {.refused = true, .slurm = nvlbt_slurm_refuses(job_ptr, freed, now)};

		FREE_NULL_BITMAP(freed);
		if (why.slurm != NVLB_SLURM_WOULD_START) {
			(void) nvlb_reclaim_refused(planner, job_ptr->job_id, &why);
			return;
		}
	}
	/* Every victim is running (the list was made under the same locks):
	 * the plan is carried out whole. */
	names = _plan_block_names(planner, plan);
	_sync_send_user_signal();
	for (size_t v = 0; v < plan->job_count; v++) {
		job_record_t *victim = find_job_record(plan->jobs[v]);
		time_t until;

		if (!victim || !IS_JOB_RUNNING(victim))
			continue;
		until = _move(victim, plan->actions[v], job_ptr, names, now);
		released_by = MAX(released_by, until);
		for (size_t i = 0; i < running->count; i++)
			if (running->jobs[i].job_id == victim->job_id ||
			    (victim->het_job_id && (running->jobs[i].het_job_id == victim->het_job_id)))
				running->jobs[i].being_preempted = true; /* not a victim twice */
	}
	xfree(names);
	(void) nvlb_reclaim_started(planner, job_ptr->job_id, &who, plan, released_by, now);
}

/* The candidates, in one call of the core when they fit a first guess. */
static size_t _candidates(nvlb_planner_t *planner, time_t now, uint32_t **ids)
{
	size_t cap = 64, count;

	*ids = xcalloc(cap, sizeof(**ids));
	count = nvlb_reclaim_candidates(planner, now, *ids, cap);
	if (count > cap) {
		xrecalloc(*ids, count, sizeof(**ids));
		count = MIN(count, nvlb_reclaim_candidates(planner, now, *ids, count));
	}
	return count;
}

extern size_t nvlbt_reclaim_spares(nvlb_planner_t *planner, time_t now)
{
	running_args_t running = {.planner = planner, .now = now};
	uint32_t *ids = NULL;
	uint8_t *states;
	/* The core says first whether any job could use a reclaim now: a
	 * pass with none walks no job (watched jobs, fallen-back records and
	 * rounds still releasing nodes need none). */
	size_t pending = job_list ? _candidates(planner, now, &ids) : 0;

	if (!pending) {
		xfree(ids);
		return 0;
	}
	states = nvlbs_node_states();
	for (size_t i = 0; i < pending; i++) {
		job_record_t *job_ptr = find_job_record(ids[i]);

		if (job_ptr && IS_JOB_PENDING(job_ptr) && job_ptr->details)
			_reclaim_for(planner, job_ptr, &running, states, now);
	}
	nvlbs_flush_log(planner);
	xfree(states);
	xfree(ids);
	_free_running(&running);
	return pending;
}
