/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * file_writer.c - the one thread of slurmctld that writes nvlblock's files:
 * the saved state (<StateSaveLocation>/nvlblock_state) and the status JSON
 * and Prometheus text. The status thread (and so the scheduler) never waits
 * on them: it hands over what is to be written and goes on, so a slow or
 * hung StateSaveLocation (an NFS server away, a frozen file system) delays
 * these files and nothing else. Each request replaces the one before it
 * that is not written yet: only the newest state and reports matter.
 */
#include <pthread.h>

#include "src/common/slurm_xlator.h"

#include "src/common/log.h"
#include "src/common/xmalloc.h"

#include "../common/slurm_bridge.h"
#include "../common/slurm_compat.h"
#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t id;
	bool running, stopping;
	bool save;         /* the state is to be saved (if it changed since) */
	char *json, *prom; /* reports to write (nvlb_report text), or NULL */
	char *json_path, *prom_path;
} box = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void _write(const char *path, const char *text, const char *what)
{
	nvlb_error_t err;

	if (nvlb_write_file(path, text, false, &err) != NVLB_OK)
		error("nvlblock: cannot write %s %s: %s", what, path, err.message);
}

static void *_writer_loop(void *arg)
{
	uint64_t saved = 0;
	bool ever_saved = false;

	(void) arg;
	for (;;) {
		bool save;
		char *json, *prom, *json_path, *prom_path;

		slurm_mutex_lock(&box.lock);
		while (!box.stopping && !box.save && !box.json && !box.prom)
			slurm_cond_wait(&box.cond, &box.lock);
		if (box.stopping && !box.save && !box.json && !box.prom) {
			slurm_mutex_unlock(&box.lock);
			break;
		}
		save = box.save;
		json = box.json;
		prom = box.prom;
		json_path = box.json_path;
		prom_path = box.prom_path;
		box.save = false;
		box.json = box.prom = box.json_path = box.prom_path = NULL;
		slurm_mutex_unlock(&box.lock);

		if (save) {
			nvlb_planner_t *planner = nvlb_process_planner();
			uint64_t version;

			/* Saves come only from a controller in control:
			 * an operator's requests are taken then, and what
			 * they change saved at once. */
			if (planner)
				nvlbt_take_requests(planner);
			version = nvlb_state_version(planner);

			if (planner && (!ever_saved || (version != saved)) && nvlbs_save_state(planner)) {
				saved = version;
				ever_saved = true;
			}
		}
		/* Reports only while still in control: one asked for just
		 * before a backup gives control back (Slurm sets shutdown_time
		 * at the primary's REQUEST_CONTROL) is dropped rather than
		 * written over the primary's (netns.failover). */
		if ((json || prom) && nvlbt_still_in_control()) {
			if (json)
				_write(json_path, json, "status");
			if (prom)
				_write(prom_path, prom, "metrics");
		}
		nvlb_free(json);
		nvlb_free(prom);
		xfree(json_path);
		xfree(prom_path);
	}
	return NULL;
}

extern void nvlbt_files_request(bool save, char *json, char *json_path, char *prom, char *prom_path)
{
	slurm_mutex_lock(&box.lock);
	box.save = box.save || save;
	if (json) {
		nvlb_free(box.json);
		xfree(box.json_path);
		box.json = json;
		box.json_path = json_path;
	} else {
		xfree(json_path);
	}
	if (prom) {
		nvlb_free(box.prom);
		xfree(box.prom_path);
		box.prom = prom;
		box.prom_path = prom_path;
	} else {
		xfree(prom_path);
	}
	slurm_cond_signal(&box.cond);
	slurm_mutex_unlock(&box.lock);
}

extern void nvlbt_files_start(void)
{
	slurm_mutex_lock(&box.lock);
	if (!box.running) {
		box.stopping = false;
		NVLB_THREAD_CREATE("nvlb_files", &box.id, _writer_loop, NULL);
		box.running = true;
	}
	slurm_mutex_unlock(&box.lock);
}

/* Writes what is pending, then ends the thread. */
extern void nvlbt_files_stop(void)
{
	slurm_mutex_lock(&box.lock);
	if (!box.running) {
		slurm_mutex_unlock(&box.lock);
		return;
	}
	box.stopping = true;
	slurm_cond_signal(&box.cond);
	slurm_mutex_unlock(&box.lock);
	NVLB_THREAD_JOIN(box.id);
	slurm_mutex_lock(&box.lock);
	box.running = false;
	slurm_mutex_unlock(&box.lock);
}
