/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slurm_bridge.c - Slurm structures in, core C ABI calls, nothing decided.
 */
#include <pthread.h>
#include <string.h>

/* First: it maps Slurm's function names onto libslurmfull's exports. */
#include "src/common/slurm_xlator.h"

#include "slurm_bridge.h"

#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

/*
 * Which Slurm release this build targets, for `nvlblock-check --plugins`
 * (tools/check/plugin_build.hpp): Slurm loads a plugin only into the exact
 * release it was built for, and a site must be able to tell before it
 * upgrades Slurm. Read from the file's bytes, never called.
 */
__attribute__((used)) static const char nvlb_build_line[] =
	"nvlblock-build: nvlblock=" NVLBLOCK_VERSION " slurm=" NVLBLOCK_SLURM_RELEASE;

/*
 * job_list exists only in slurmctld. A weak reference keeps this plugin
 * loadable in slurmd and the client commands, which resolve data symbols
 * when the plugin is loaded (functions bind lazily, data does not).
 */
extern list_t *job_list __attribute__((weak));

/* Nodes found running preemptible work at the last nvlbs_update_lent(). */
static bitstr_t *lent_cache = NULL;

/* slurmctld's node-state bitmaps; weak for the same reason as job_list. */
extern bitstr_t *avail_node_bitmap __attribute__((weak));
extern bitstr_t *cg_node_bitmap __attribute__((weak));
extern bitstr_t *future_node_bitmap __attribute__((weak));
extern bitstr_t *idle_node_bitmap __attribute__((weak));
extern bitstr_t *power_down_node_bitmap __attribute__((weak));
extern bitstr_t *up_node_bitmap __attribute__((weak));

/*
 * Node states kept between calls. Slurm asks the plugin many times per
 * scheduling pass (every job, test-only and will-run evaluations, backfill)
 * while only the nodes of the jobs that started or ended change. Slurm's own
 * change stamps (last_node_update) count seconds, and many changes fall in
 * one second, so they cannot say whether a state read earlier still holds.
 * Instead the bitmaps the states are read from are kept as they were last
 * read: a call compares them (a word at a time, inside Slurm's bitstring
 * code) and reads again only the nodes whose bits changed. The result is the
 * same as reading every node on every call.
 */
enum { UP, AVAIL, IDLE, COMPLETING, FUTURE, POWERED_DOWN, LENT, STATE_BITMAPS };

static struct {
	int count;                     /* node_record_count the cache is for; 0: none */
	uint8_t *states;               /* one NVLB_NODE_* per node */
	bitstr_t *seen[STATE_BITMAPS]; /* the bitmaps as last read */
	bitstr_t *changed, *scratch;
	bitstr_t *unregistered; /* read as _unregistered(): read again on every call */
} cache = {0};
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static bool _bit(bitstr_t *b, int i)
{
	return b && (i < bit_size(b)) && bit_test(b, i);
}

/*
 * A node slurmctld has not heard from since it started, of which nothing
 * says it failed. slurmctld restores only DOWN, DRAIN and FAIL from its state
 * file: every other node is UNKNOWN, out of up_node_bitmap, until its slurmd
 * registers (a few seconds), and Slurm marks it DOWN itself if it never
 * answers (SlurmdTimeout). The nodes of a job restored COMPLETING (killed in
 * a requeue) leave UNKNOWN at once: releasing them makes them IDLE+COMPLETING,
 * still out of up_node_bitmap. Read as failed, a rack whose job was requeued
 * just before a slurmctld restart looked wholly failed for a moment, and the
 * core declared a block fault on it and let the job waiting there fall back
 * (seen with UNKNOWN nodes, and, with the COMPLETING ones, in the kill storm
 * of cluster.reliability). So such a node reads as busy: not usable, not
 * failed. `up`: whether it is in up_node_bitmap (or would be).
 */
static bool _unregistered(node_record_t *node_ptr, bool up)
{
	return node_ptr && !up && !IS_NODE_DOWN(node_ptr) && !IS_NODE_DRAIN(node_ptr) && !IS_NODE_FAIL(node_ptr) &&
	       !IS_NODE_FUTURE(node_ptr) && !IS_NODE_POWERED_DOWN(node_ptr) && !IS_NODE_POWERING_DOWN(node_ptr) &&
	       !IS_NODE_INVALID_REG(node_ptr);
}

/* A node record's facts as slurmctld derives its bitmaps from it (read_config.c,
 * node_mgr.c): used where the bitmaps are not there yet. */
static uint32_t _facts_of_record(node_record_t *node_ptr)
{
	uint32_t facts = 0;

	if (!node_ptr)
		return 0; /* not up: down */
	if (!IS_NODE_DOWN(node_ptr) && !IS_NODE_UNKNOWN(node_ptr))
		facts |= NVLB_NODE_FACT_UP;
	if (_unregistered(node_ptr, facts & NVLB_NODE_FACT_UP))
		facts |= NVLB_NODE_FACT_UNREGISTERED;
	if (!IS_NODE_DRAIN(node_ptr) && !IS_NODE_FAIL(node_ptr) && !IS_NODE_NO_RESPOND(node_ptr) &&
	    !IS_NODE_INVALID_REG(node_ptr))
		facts |= NVLB_NODE_FACT_AVAIL;
	if (!IS_NODE_ALLOCATED(node_ptr) && !IS_NODE_MIXED(node_ptr) && !IS_NODE_BLOCKED(node_ptr))
		facts |= NVLB_NODE_FACT_IDLE;
	if (IS_NODE_COMPLETING(node_ptr))
		facts |= NVLB_NODE_FACT_COMPLETING;
	if (IS_NODE_FUTURE(node_ptr))
		facts |= NVLB_NODE_FACT_FUTURE;
	if (IS_NODE_POWERED_DOWN(node_ptr) || IS_NODE_POWERING_DOWN(node_ptr))
		facts |= NVLB_NODE_FACT_POWERED_DOWN;
	return facts;
}

static bool _have_bitmaps(void)
{
	return avail_node_bitmap && idle_node_bitmap && up_node_bitmap;
}

static bitstr_t *_current(int which)
{
	switch (which) {
	case UP:
		return up_node_bitmap;
	case AVAIL:
		return avail_node_bitmap;
	case IDLE:
		return idle_node_bitmap;
	case COMPLETING:
		return cg_node_bitmap;
	case FUTURE:
		return future_node_bitmap;
	case POWERED_DOWN:
		return power_down_node_bitmap;
	default:
		return lent_cache;
	}
}

/* One node's facts from slurmctld's bitmaps. */
static uint32_t _facts_of_bitmaps(int i)
{
	uint32_t facts = 0;

	if (bit_test(up_node_bitmap, i))
		facts |= NVLB_NODE_FACT_UP;
	if (_unregistered(node_record_table_ptr[i], facts & NVLB_NODE_FACT_UP))
		facts |= NVLB_NODE_FACT_UNREGISTERED;
	if (bit_test(avail_node_bitmap, i))
		facts |= NVLB_NODE_FACT_AVAIL;
	if (bit_test(idle_node_bitmap, i))
		facts |= NVLB_NODE_FACT_IDLE;
	if (_bit(cg_node_bitmap, i))
		facts |= NVLB_NODE_FACT_COMPLETING;
	if (_bit(future_node_bitmap, i))
		facts |= NVLB_NODE_FACT_FUTURE;
	if (_bit(power_down_node_bitmap, i))
		facts |= NVLB_NODE_FACT_POWERED_DOWN;
	return facts;
}

/* One node's state: its facts (bitmaps, else its record); the core decides. */
static uint8_t _read_state(int i)
{
	uint32_t facts = _have_bitmaps() ? _facts_of_bitmaps(i) : _facts_of_record(node_record_table_ptr[i]);

	if (_bit(lent_cache, i))
		facts |= NVLB_NODE_FACT_LENT;
	/* Its registration (UNKNOWN -> IDLE or DOWN) need not change a bitmap
	 * kept here: such a node is read again until it is known. */
	if (facts & NVLB_NODE_FACT_UNREGISTERED)
		bit_set(cache.unregistered, i);
	else
		bit_clear(cache.unregistered, i);
	return nvlb_node_state_of(facts);
}

static void _set_state(int i, uint8_t st)
{
	cache.states[i] = st;
}

static void _forget_states(void)
{
	xfree(cache.states);
	for (int b = 0; b < STATE_BITMAPS; b++)
		FREE_NULL_BITMAP(cache.seen[b]);
	FREE_NULL_BITMAP(cache.changed);
	FREE_NULL_BITMAP(cache.scratch);
	FREE_NULL_BITMAP(cache.unregistered);
	cache.count = 0;
}

/* Copy what a bitmap says now into its `seen` copy (absent: all clear). */
static void _remember(int which)
{
	bitstr_t *now = _current(which);

	if (now && (bit_size(now) == cache.count))
		bit_copybits(cache.seen[which], now);
	else
		bit_clear_all(cache.seen[which]);
}

static void _read_all_states(void)
{
	_forget_states();
	cache.count = node_record_count;
	cache.states = xcalloc(node_record_count + 1, 1);
	cache.changed = bit_alloc(node_record_count);
	cache.scratch = bit_alloc(node_record_count);
	cache.unregistered = bit_alloc(node_record_count);
	for (int b = 0; b < STATE_BITMAPS; b++) {
		cache.seen[b] = bit_alloc(node_record_count);
		_remember(b);
	}
	for (int i = 0; i < node_record_count; i++)
		_set_state(i, _read_state(i));
}

/* Mark in cache.changed the nodes whose bit in `which` differs from when it was last read. */
static void _note_changes(int which)
{
	bitstr_t *now = _current(which), *seen = cache.seen[which];

	if (now && (bit_size(now) != cache.count))
		now = NULL; /* not what we read from: treat as absent */
	if (now ? bit_equal(now, seen) : (bit_ffs(seen) < 0))
		return;
	if (!now) {
		bit_or(cache.changed, seen);
		bit_clear_all(seen);
		return;
	}
	bit_copybits(cache.scratch, now); /* set now, clear before */
	bit_and_not(cache.scratch, seen);
	bit_or(cache.changed, cache.scratch);
	bit_and_not(seen, now); /* clear now, set before */
	bit_or(cache.changed, seen);
	bit_copybits(seen, now);
}

/* Bring cache.states up to date; cache_lock held. */
static void _refresh_states(void)
{
	if (!_have_bitmaps() || (cache.count != node_record_count) || !cache.states) {
		/* Without the bitmaps every record is read, every time. */
		_read_all_states();
		return;
	}
	bit_copybits(cache.changed, cache.unregistered);
	for (int b = 0; b < STATE_BITMAPS; b++)
		_note_changes(b);
	for (int i = 0; (i = bit_ffs_from_bit(cache.changed, i)) >= 0; i++)
		_set_state(i, _read_state(i));
}

extern uint8_t *nvlbs_node_states(void)
{
	uint8_t *states = xcalloc(node_record_count ? node_record_count : 1, 1);

	slurm_mutex_lock(&cache_lock);
	_refresh_states();
	memcpy(states, cache.states, node_record_count);
	slurm_mutex_unlock(&cache_lock);
	return states;
}

extern void nvlbs_node_states_into(uint8_t *out)
{
	slurm_mutex_lock(&cache_lock);
	_refresh_states();
	memcpy(out, cache.states, node_record_count);
	slurm_mutex_unlock(&cache_lock);
}

extern void nvlbs_forget_node_states(void)
{
	slurm_mutex_lock(&cache_lock);
	_forget_states();
	FREE_NULL_BITMAP(lent_cache);
	slurm_mutex_unlock(&cache_lock);
}

extern bool nvlbs_job_preemptible(nvlb_planner_t *planner, job_record_t *job_ptr)
{
	const char *qos = NULL, *part = NULL;

	if (!planner || !job_ptr)
		return false;
	if (job_ptr->qos_ptr)
		qos = job_ptr->qos_ptr->name;
	if (job_ptr->part_ptr)
		part = job_ptr->part_ptr->name;
	else
		part = job_ptr->partition;
	return nvlb_is_preemptible(planner, qos, part);
}

extern void nvlbs_request_facts(nvlb_planner_t *planner, job_record_t *job_ptr, time_t now, nvlb_request_t *req,
				uint32_t **nodelist)
{
	job_details_t *details = job_ptr->details;

	*nodelist = NULL;
	req->job_id = job_ptr->job_id;
	req->preemptible = nvlbs_job_preemptible(planner, job_ptr);
	req->now = now;
	if (!details)
		return;
	req->segment = details->segment_size;
	req->exclusive_topo = IS_JOB_WHOLE_TOPO(job_ptr);
	req->eligible_since = details->begin_time ? details->begin_time : details->submit_time;
	if (details->req_node_bitmap) {
		size_t count;

		*nodelist = nvlbs_bitmap_indices(details->req_node_bitmap, &count);
		req->required = *nodelist;
		req->required_count = count;
	}
}

typedef struct {
	nvlb_planner_t *planner;
	bitstr_t *lent;
} lent_args_t;

static int _mark_lent(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	lent_args_t *args = arg;

	if (!(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr) || IS_JOB_COMPLETING(job_ptr)) ||
	    !job_ptr->node_bitmap)
		return 0;
	if (nvlbs_job_preemptible(args->planner, job_ptr))
		bit_or(args->lent, job_ptr->node_bitmap);
	return 0;
}

extern void nvlbs_update_lent(nvlb_planner_t *planner)
{
	lent_args_t args = {.planner = planner};

	if (!planner || !job_list || !node_record_count)
		return;
	args.lent = bit_alloc(node_record_count);
	list_for_each(job_list, _mark_lent, &args);
	/* The state cache notices the change at its next read. */
	slurm_mutex_lock(&cache_lock);
	FREE_NULL_BITMAP(lent_cache);
	lent_cache = args.lent;
	slurm_mutex_unlock(&cache_lock);
}

extern uint32_t *nvlbs_bitmap_indices(bitstr_t *bitmap, size_t *count)
{
	uint32_t *out;
	size_t n = 0;

	*count = 0;
	if (!bitmap)
		return NULL;
	out = xcalloc(bit_set_count(bitmap) + 1, sizeof(*out));
	for (int i = 0; (i = bit_ffs_from_bit(bitmap, i)) >= 0; i++)
		out[n++] = (uint32_t) i;
	*count = n;
	return out;
}

extern char *nvlbs_state_path(void)
{
	return xstrdup_printf("%s/nvlblock_state", slurm_conf.state_save_location);
}

extern bool nvlbs_save_state(nvlb_planner_t *planner)
{
	nvlb_error_t err;
	char *path = nvlbs_state_path();
	bool ok = nvlb_state_save(planner, path, &err) == NVLB_OK;

	if (!ok)
		error("nvlblock: cannot save state to %s: %s", path, err.message);
	xfree(path);
	return ok;
}

static void _log_line(void *ctx, const char *line)
{
	(void) ctx;
	info("%s", line);
}

extern void nvlbs_flush_log(nvlb_planner_t *planner)
{
	nvlb_drain_log(planner, _log_line, NULL);
}

extern void nvlbs_sync_ledger(nvlb_planner_t *planner, time_t now)
{
	uint32_t *ids;
	size_t n, changed = 0;

	if (!planner || !(n = nvlb_pending_jobs(planner, NULL, 0)))
		return;
	/* Every open record, however many: sized by what the ledger holds. */
	ids = xcalloc(n, sizeof(*ids));
	n = MIN(n, nvlb_pending_jobs(planner, ids, n));
	for (size_t i = 0; i < n; i++) {
		job_record_t *job_ptr = find_job_record(ids[i]);

		if (!job_ptr || (IS_JOB_FINISHED(job_ptr) && !IS_JOB_COMPLETING(job_ptr))) {
			nvlb_job_gone(planner, ids[i], now);
			changed++;
		} else if ((IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) && job_ptr->node_bitmap) {
			size_t count;
			uint32_t *nodes = nvlbs_bitmap_indices(job_ptr->node_bitmap, &count);

			/* When its run began: a run from before the failure
			 * (restored after a crash) is not a restart. */
			nvlb_job_started(planner, ids[i], nodes, count,
					 job_ptr->start_time ? job_ptr->start_time : now);
			xfree(nodes);
			if (!nvlb_is_recovering(planner, ids[i]))
				changed++;
		}
	}
	xfree(ids);
	if (changed)
		nvlbs_flush_log(planner);
}

/*
 * Pending reasons. Slurm's schedulers reset state_desc after a failed
 * placement, so the reason nvlblock gave is kept (by the core, one entry per
 * job however many jobs pend) and shown again by nvlbs_apply_reasons()
 * (called with the job write lock held).
 */
#define REASON_PREFIX "nvlblock: "

extern void nvlbs_show_reason(job_record_t *job_ptr, const char *reason)
{
	if (!job_ptr || !reason || !reason[0])
		return;
	if (!job_ptr->state_desc || !xstrncmp(job_ptr->state_desc, REASON_PREFIX, strlen(REASON_PREFIX))) {
		xfree(job_ptr->state_desc);
		job_ptr->state_desc = xstrdup_printf(REASON_PREFIX "%s", reason);
	}
}

extern void nvlbs_clear_reason(uint32_t job_id)
{
	nvlb_planner_t *planner = nvlb_process_planner();

	if (planner)
		nvlb_reason_forget(planner, job_id);
}

/* Shows the kept reason again; drops the entries of jobs no longer pending. */
static bool _apply_reason(void *ctx, uint32_t job_id, const char *text)
{
	job_record_t *job_ptr = find_job_record(job_id);

	(void) ctx;
	if (!job_ptr || !IS_JOB_PENDING(job_ptr))
		return false;
	if (job_ptr->state_reason != WAIT_RESOURCES)
		return true;
	if (!job_ptr->state_desc)
		job_ptr->state_desc = xstrdup_printf(REASON_PREFIX "%s", text);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	/* Slurm's own topology reason ("No suitable topology unit found",
	 * for the code the plugin returned) stays first, for scripts that
	 * match it; nvlblock's sentence follows. */
	else if (!xstrstr(job_ptr->state_desc, REASON_PREFIX))
		xstrfmtcat(job_ptr->state_desc, "; " REASON_PREFIX "%s", text);
#endif
	return true;
}

extern void nvlbs_apply_reasons(void)
{
	nvlb_planner_t *planner = nvlb_process_planner();

	if (planner)
		nvlb_reasons_each(planner, _apply_reason, NULL);
}

extern void nvlbs_forget_reasons(void)
{
	nvlb_planner_t *planner = nvlb_process_planner();

	if (planner)
		nvlb_reasons_clear(planner);
}
