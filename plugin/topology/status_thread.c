/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status_thread.c - slurmctld's background companion of topology/nvlblock.
 * Every few seconds, and at once when the core's state changes (a failure
 * the epilog recorded), holding Slurm's locks only while it reads:
 *   - closes ledger records of jobs that restarted or left (so holds end
 *     even when no placement runs),
 *   - moves the core's clock (nvlb_advance: jobs whose wait is over fall back),
 *   - refreshes which nodes run preemptible work,
 *   - shows nvlblock's reason on pending jobs whose reason Slurm reset;
 *   - requeues what the core names to reclaim spares for jobs waiting to
 *     restart in place (reclaim.c; with the node write lock as well);
 * then, after the locks are released, hands the file writer (file_writer.c)
 * the state to save and the JSON status and Prometheus text rendered at the
 * configured interval: neither the scheduler nor this thread waits on file
 * I/O. It does all of this only while this slurmctld is the one in control
 * (control.c).
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "../common/slurm_bridge.h"
#include "../common/slurm_compat.h"
#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

#define TICK_SECONDS 2

static pthread_t thread_id;
static bool running = false;
static bool stopping = false;
static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t thread_cond = PTHREAD_COND_INITIALIZER;
/* The topology served (nvlbt_status_start); it outlives the thread. */
static const nvlbt_topo_t *served = NULL;
/* Whether this slurmctld was in control at the thread's last pass: only
 * then does stopping save the state once more (shutdown). */
static bool acted_in_control = false;

/* Time moves for the core here, and only here (and in the simulator's own
 * loop): jobs whose wait for their block is over fall back. Placement never
 * changes the core's state, so Slurm's test-only and will-run evaluations
 * change nothing. */
static void _advance(nvlb_planner_t *planner, time_t now)
{
	size_t fell_back = 0;
	uint8_t *states;

	if (!nvlb_pending_jobs(planner, NULL, 0))
		return;
	states = nvlbs_node_states();
	if ((nvlb_advance(planner, states, node_record_count, now, &fell_back) == NVLB_OK) && fell_back)
		nvlbs_flush_log(planner);
	xfree(states);
}

/* Every pass: the time each block could not host a whole slice accrues
 * (the reports show it). */
static void _observe_health(nvlb_planner_t *planner, time_t now)
{
	uint8_t *states = nvlbs_node_states();

	(void) nvlb_observe_health(planner, states, node_record_count, now);
	xfree(states);
}

/*
 * Until the next tick (or the next recovery deadline, or at once when the
 * core's state changes: a failure recorded by the epilog is saved and acted
 * on without waiting for the tick). False when the thread is to stop.
 */
static bool _wait(nvlb_planner_t *planner, uint64_t seen)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += TICK_SECONDS;
	if (planner) {
		/* A job's wait for its block ends on time, not at the next tick. */
		int64_t deadline = nvlb_next_deadline(planner, until.tv_sec - TICK_SECONDS);

		if (deadline < (int64_t) until.tv_sec) {
			until.tv_sec = (time_t) deadline;
			until.tv_nsec = 0;
		}
		(void) nvlb_state_wait(planner, seen, (int64_t) until.tv_sec * 1000 + until.tv_nsec / 1000000);
	} else {
		slurm_mutex_lock(&thread_lock);
		if (!stopping)
			(void) pthread_cond_timedwait(&thread_cond, &thread_lock, &until);
		slurm_mutex_unlock(&thread_lock);
	}
	slurm_mutex_lock(&thread_lock);
	stop = stopping;
	slurm_mutex_unlock(&thread_lock);
	return !stop;
}

/* Under Slurm's locks: read what changed, move the core's clock, render the
 * reports (returned, written later). */
static void _tick(nvlb_planner_t *planner, time_t now, bool reports, char **json, char **prom,
		  const nvlb_policy_info_t *policy)
{
	slurmctld_lock_t locks = {.job = WRITE_LOCK, .node = READ_LOCK};

	lock_slurmctld(locks);
	nvlbs_sync_ledger(planner, now);
	nvlbs_update_lent(planner);
	_advance(planner, now);
	_observe_health(planner, now);
	nvlbs_apply_reasons();
	if (reports) {
		uint8_t *states = nvlbs_node_states();

		*json = nvlb_report(planner, states, node_record_count, now, NVLB_REPORT_JSON);
		if (policy->status_prometheus[0])
			*prom = nvlb_report(planner, states, node_record_count, now, NVLB_REPORT_PROMETHEUS);
		xfree(states);
	}
	unlock_slurmctld(locks);
}

static int64_t _monotonic_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* CPU time this thread has used, in microseconds. */
static int64_t _thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The status files' paths (xmalloc'd), for the file writer. */
static char *_json_path(const nvlb_policy_info_t *policy)
{
	return policy->status_json[0] ? xstrdup(policy->status_json)
				      : xstrdup_printf("%s/nvlblock-status.json", slurm_conf.state_save_location);
}

static void *_status_loop(void *arg)
{
	time_t last_files = 0;
	/* As Slurm's own preemption: slurm_find_preemptable_jobs() reads the
	 * partitions, requeueing writes jobs and nodes. */
	slurmctld_lock_t reclaim_locks = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK};
	uint64_t seen = 0;

	(void) arg;
	while (_wait(nvlb_process_planner(), seen)) {
		nvlb_planner_t *planner = nvlb_process_planner();
		nvlb_policy_info_t policy;
		char *json = NULL, *prom = NULL;
		time_t now = time(NULL);
		bool reports;

		if (!planner || !nvlbt_block_count(served))
			continue;
		if (!nvlbt_in_control()) {
			/* A controller in standby (or going down): its job
			 * list no longer changes. Nothing is written, no job
			 * moved; changes wake it no more. */
			seen = nvlb_state_version(planner);
			acted_in_control = false;
			continue;
		}
		acted_in_control = true;
		(void) nvlb_policy_info(planner, &policy);
		reports = now - last_files >= policy.status_interval_s;
		_tick(planner, now, reports, &json, &prom, &policy);
		if (reports)
			last_files = now;
		if (nvlbt_reclaims_spares(served) && nvlb_reclaim_candidates(planner, now, NULL, 0)) {
			size_t looked_at = 0;
			int64_t held_from, cpu_from;

			lock_slurmctld(reclaim_locks);
			held_from = _monotonic_us();
			cpu_from = _thread_cpu_us();
			/* Control may have gone while the locks were free
			 * (a shutdown, a backup giving it back): moving jobs
			 * is the controller's only. */
			if (nvlbt_still_in_control())
				looked_at = nvlbt_reclaim_spares(planner, now);
			cpu_from = _thread_cpu_us() - cpu_from;
			unlock_slurmctld(reclaim_locks);
			/* What holding Slurm's write locks cost it, for the
			 * reports (docs/performance.md "The reclaim pass"). */
			nvlb_note_reclaim_pass(planner, _monotonic_us() - held_from, cpu_from, looked_at);
		}
		/* Every file is written by the file writer (file_writer.c),
		 * never here: a slow StateSaveLocation stalls that thread,
		 * not this one, and never the scheduler. */
		seen = nvlb_state_version(planner);
		nvlbt_files_request(true, json, json ? _json_path(&policy) : NULL, prom,
				    prom ? xstrdup(policy.status_prometheus) : NULL);
	}
	return NULL;
}

extern void nvlbt_status_start(const nvlbt_topo_t *topo)
{
	nvlbt_files_start();
	slurm_mutex_lock(&thread_lock);
	if (!running) {
		stopping = false;
		served = topo;
		NVLB_THREAD_CREATE("nvlb_status", &thread_id, _status_loop, NULL);
		running = true;
	}
	slurm_mutex_unlock(&thread_lock);
}

extern void nvlbt_status_stop(void)
{
	slurm_mutex_lock(&thread_lock);
	if (!running) {
		slurm_mutex_unlock(&thread_lock);
		return;
	}
	stopping = true;
	pthread_cond_broadcast(&thread_cond);
	slurm_mutex_unlock(&thread_lock);
	nvlb_state_wake(nvlb_process_planner());
	NVLB_THREAD_JOIN(thread_id);
	slurm_mutex_lock(&thread_lock);
	running = false;
	served = NULL;
	slurm_mutex_unlock(&thread_lock);
	/* A job end recorded after the last pass (the epilog runs up to the
	 * end) is saved before the writer stops: it writes what is pending
	 * first, and only if the state changed since it last saved. A
	 * controller that was not in control writes nothing. */
	if (acted_in_control)
		nvlbt_files_request(true, NULL, NULL, NULL, NULL);
	acted_in_control = false;
	nvlbt_files_stop();
}
