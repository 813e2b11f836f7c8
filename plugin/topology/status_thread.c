/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * status_thread.c - slurmctld's background companion of topology/nvlblock.
 * Every few seconds, holding Slurm's locks only while it reads:
 *   - closes ledger records of jobs that restarted or left (so holds end
 *     even when no placement runs),
 *   - moves the core's clock (nvlb_advance: jobs whose wait is over fall back),
 *   - refreshes which nodes run preemptible work,
 *   - shows nvlblock's reason on pending jobs whose reason Slurm reset;
 *   - requeues what the core names to reclaim spares for jobs waiting to
 *     restart in place (reclaim.c; with the node write lock as well);
 * and at the configured interval renders the JSON status and Prometheus
 * text, then writes them atomically after the locks are released, so the
 * scheduler never waits on file I/O.
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

static void _write(const char *path, const char *text, const char *what)
{
	nvlb_error_t err;

	if (!path || !path[0] || !text)
		return;
	if (nvlb_write_file(path, text, false, &err) != NVLB_OK)
		error("nvlblock: cannot write %s %s: %s", what, path, err.message);
}

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
	if ((nvlb_advance(planner, states, node_record_count, now, &fell_back) == NVLB_OK) && fell_back) {
		nvlbs_save_state(planner);
		nvlbs_flush_log(planner);
	}
	xfree(states);
}

static void *_status_loop(void *arg)
{
	time_t last_files = 0;
	slurmctld_lock_t locks = {.job = WRITE_LOCK, .node = READ_LOCK};
	/* As Slurm's own preemption: slurm_find_preemptable_jobs() reads the
	 * partitions, requeueing writes jobs and nodes. */
	slurmctld_lock_t reclaim_locks = {
		.conf = READ_LOCK, .job = WRITE_LOCK, .node = WRITE_LOCK, .part = READ_LOCK, .fed = READ_LOCK};

	(void) arg;
	for (;;) {
		nvlb_planner_t *planner;
		nvlb_policy_info_t policy;
		char *json = NULL, *prom = NULL, *json_path = NULL, *prom_path = NULL;
		struct timespec until;
		time_t now;

		slurm_mutex_lock(&thread_lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += TICK_SECONDS;
		/* A job's wait for its block ends on time, not at the next tick. */
		if ((planner = nvlb_process_planner())) {
			int64_t deadline = nvlb_next_deadline(planner, until.tv_sec - TICK_SECONDS);

			if (deadline < (int64_t) until.tv_sec) {
				until.tv_sec = (time_t) deadline;
				until.tv_nsec = 0;
			}
		}
		while (!stopping && (pthread_cond_timedwait(&thread_cond, &thread_lock, &until) == 0))
			;
		if (stopping) {
			slurm_mutex_unlock(&thread_lock);
			break;
		}
		slurm_mutex_unlock(&thread_lock);

		if (!(planner = nvlb_process_planner()) || !nvlbt_block_count())
			continue;
		now = time(NULL);
		(void) nvlb_policy_info(planner, &policy);

		lock_slurmctld(locks);
		nvlbs_sync_ledger(planner, now);
		nvlbs_update_lent(planner);
		_advance(planner, now);
		nvlbs_apply_reasons();
		if (now - last_files >= policy.status_interval_s) {
			uint8_t *states = nvlbs_node_states();

			json = nvlb_report(planner, states, node_record_count, now, NVLB_REPORT_JSON);
			if (policy.status_prometheus[0])
				prom = nvlb_report(planner, states, node_record_count, now, NVLB_REPORT_PROMETHEUS);
			xfree(states);
			last_files = now;
		}
		unlock_slurmctld(locks);

		/* Requeueing needs the node write lock too (as scontrol requeue). */
		if (nvlbt_reclaims_spares() && nvlb_pending_jobs(planner, NULL, 0)) {
			lock_slurmctld(reclaim_locks);
			nvlbt_reclaim_spares(planner, now);
			unlock_slurmctld(reclaim_locks);
		}

		if (json) {
			json_path = policy.status_json[0]
					    ? xstrdup(policy.status_json)
					    : xstrdup_printf("%s/nvlblock-status.json", slurm_conf.state_save_location);
			_write(json_path, json, "status");
		}
		if (prom) {
			prom_path = xstrdup(policy.status_prometheus);
			_write(prom_path, prom, "metrics");
		}
		xfree(json_path);
		xfree(prom_path);
		nvlb_free(json);
		nvlb_free(prom);
	}
	return NULL;
}

extern void nvlbt_status_start(void)
{
	slurm_mutex_lock(&thread_lock);
	if (!running) {
		stopping = false;
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
	NVLB_THREAD_JOIN(thread_id);
	slurm_mutex_lock(&thread_lock);
	running = false;
	slurm_mutex_unlock(&thread_lock);
}
