/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology_nvlblock.c - topology/nvlblock: NVLink domains as blocks, carved
 * into slices with spares held for in-place recovery. Every decision is the
 * core's (libnvlblock, through include/nvlblock/nvlblock.h); this file reads
 * Slurm's state, asks the core, and applies the answer with Slurm's own
 * helpers so core and GRES accounting stay Slurm's.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/interfaces/cred.h"
#include "src/plugins/topology/common/common_topo.h"
#include "src/slurmctld/slurmctld.h"

#include "../common/slurm_bridge.h"
#include "nvlblock/nvlblock.h"
#include "topology_nvlblock.h"

/* Identity, read by Slurm's plugin loader; the same in every API generation. */
const char plugin_name[] = "topology nvlblock plugin";
const char plugin_type[] = "topology/nvlblock";
/* Far from Slurm's own topology ids (100-104): the id travels in packed
 * topology and job data, and a client must never mistake ours for another. */
const uint32_t plugin_id = NVLBT_PLUGIN_ID;
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * One topology's state: what nvlblock keeps for the topology Slurm names in
 * a context (25.05+ pass it back as tctx->plugin_ctx; 24.11 has one and
 * ops_24_11.c keeps it). Nothing here is shared between two of them.
 */
struct nvlbt_topo {
	char *name; /* Slurm's name for the topology ("default" from slurm.conf) */
	/* The core's planner. The topology that serves recovery registers it
	 * as the process planner too, where prep's epilog and the status
	 * thread find it (nvlb_process_planner_set: the core then owns it). */
	nvlb_planner_t *planner;
	bitstr_t **block_bitmaps;
	int block_bitmap_cnt;
	char **block_names;
	/* Block index per slurmctld node index, -1 outside every block. */
	int32_t *node_block;
	int node_block_cnt;
	bool reclaim_anywhere;
	/* The thread of the last build_config: slurmctld's read_slurm_conf,
	 * which then re-applies the node topology Slurm saved (add_rm_node
	 * from that thread is a restore; scontrol update and dynamic nodes
	 * come from RPC threads). */
	pthread_t config_thread;
	bool config_thread_set;
	/*
	 * Buffers of one evaluation, kept between evaluations: Slurm evaluates
	 * many times per scheduling pass, and node-sized allocations per
	 * evaluation cost more than the decision (eval_lock: evaluations are
	 * serialised by slurmctld's node write lock already; this keeps the
	 * buffers safe anyway).
	 */
	struct {
		int count;       /* node_record_count they are sized for */
		uint8_t *avail;  /* nodes the job may use */
		uint8_t *states; /* node states for this evaluation */
		uint32_t *nodes; /* the core's answer */
		/* The previous evaluation's arrays, the nodes that differ from
		 * them, and the planner they were named to (_name_changes). */
		uint8_t *last_avail;
		uint8_t *last_states;
		uint32_t *changed;
		const nvlb_planner_t *named_to;
	} eval_buf;
	pthread_mutex_t eval_lock;
};

extern nvlbt_topo_t *nvlbt_topo_create(const char *name)
{
	nvlbt_topo_t *topo = xmalloc(sizeof(*topo));

	topo->name = xstrdup(name);
	slurm_mutex_init(&topo->eval_lock);
	return topo;
}

extern const char *nvlbt_topo_name(const nvlbt_topo_t *topo)
{
	return topo ? topo->name : NULL;
}

static void _free_eval_buffers(nvlbt_topo_t *topo)
{
	xfree(topo->eval_buf.avail);
	xfree(topo->eval_buf.states);
	xfree(topo->eval_buf.nodes);
	xfree(topo->eval_buf.last_avail);
	xfree(topo->eval_buf.last_states);
	xfree(topo->eval_buf.changed);
	topo->eval_buf.named_to = NULL;
	topo->eval_buf.count = 0;
}

static void _size_eval_buffers(nvlbt_topo_t *topo)
{
	if (topo->eval_buf.count == node_record_count)
		return;
	_free_eval_buffers(topo);
	/* The byte arrays are padded to whole words for _name_changes. */
	topo->eval_buf.avail = xcalloc(node_record_count + 8, 1);
	topo->eval_buf.states = xcalloc(node_record_count + 8, 1);
	topo->eval_buf.last_avail = xcalloc(node_record_count + 8, 1);
	topo->eval_buf.last_states = xcalloc(node_record_count + 8, 1);
	topo->eval_buf.nodes = xcalloc(node_record_count + 1, sizeof(uint32_t));
	topo->eval_buf.changed = xcalloc(node_record_count + 1, sizeof(uint32_t));
	topo->eval_buf.count = node_record_count;
}

/* Whether eight bytes from a and b differ. */
static bool _word_differs(const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x != y;
}

/*
 * Names to the planner the nodes whose state or availability differs from
 * the previous evaluation's (nvlb_nodes_changed), so that the core reads
 * only those instead of every node three times: one word-wise comparison
 * here. A planner not named to yet (the first evaluation, or one loaded
 * since) starts tracking, which reads every node once.
 */
static void _name_changes(nvlbt_topo_t *topo, nvlb_planner_t *planner)
{
	const uint8_t *s = topo->eval_buf.states, *a = topo->eval_buf.avail;
	uint8_t *was_s = topo->eval_buf.last_states, *was_a = topo->eval_buf.last_avail;
	size_t n = 0;

	if (topo->eval_buf.named_to != planner) {
		nvlb_track_changes(planner, true);
		topo->eval_buf.named_to = planner;
	} else {
		for (int i = 0; i < node_record_count; i += 8) {
			if (!_word_differs(s + i, was_s + i) && !_word_differs(a + i, was_a + i))
				continue;
			for (int k = i; (k < i + 8) && (k < node_record_count); k++)
				if ((s[k] != was_s[k]) || (a[k] != was_a[k]))
					topo->eval_buf.changed[n++] = k;
		}
		nvlb_nodes_changed(planner, topo->eval_buf.changed, n);
	}
	memcpy(was_s, s, node_record_count);
	memcpy(was_a, a, node_record_count);
}

static void _free_block_bitmaps(nvlbt_topo_t *topo)
{
	for (int i = 0; i < topo->block_bitmap_cnt; i++) {
		FREE_NULL_BITMAP(topo->block_bitmaps[i]);
		xfree(topo->block_names[i]);
	}
	xfree(topo->block_bitmaps);
	xfree(topo->block_names);
	xfree(topo->node_block);
	topo->block_bitmap_cnt = 0;
	topo->node_block_cnt = 0;
}

static void _build_block_bitmaps(nvlbt_topo_t *topo)
{
	nvlb_planner_t *planner = topo->planner;
	size_t blocks = nvlb_block_count(planner);
	uint32_t *nodes = xcalloc(node_record_count + 1, sizeof(uint32_t));

	_free_block_bitmaps(topo);
	topo->reclaim_anywhere = false;
	topo->block_bitmaps = xcalloc(blocks + 1, sizeof(bitstr_t *));
	topo->block_names = xcalloc(blocks + 1, sizeof(char *));
	topo->node_block = xcalloc(node_record_count + 1, sizeof(int32_t));
	for (int i = 0; i < node_record_count; i++)
		topo->node_block[i] = -1;
	topo->node_block_cnt = node_record_count;
	for (size_t b = 0; b < blocks; b++) {
		nvlb_block_info_t info;
		size_t n = nvlb_block_nodes(planner, b, nodes, node_record_count);

		topo->block_bitmaps[b] = bit_alloc(node_record_count);
		for (size_t i = 0; (i < n) && (i < (size_t) node_record_count); i++) {
			bit_set(topo->block_bitmaps[b], nodes[i]);
			topo->node_block[nodes[i]] = (int32_t) b;
		}
		if (nvlb_block_info(planner, b, &info) == NVLB_OK) {
			topo->block_names[b] = xstrdup(info.name);
			if (info.reclaim)
				topo->reclaim_anywhere = true;
		}
	}
	topo->block_bitmap_cnt = blocks;
	xfree(nodes);
}

extern bool nvlbt_reclaims_spares(const nvlbt_topo_t *topo)
{
	return topo && topo->reclaim_anywhere;
}

extern int nvlbt_init(void)
{
	verbose("topology/nvlblock %s loaded (core %s)", SLURM_VERSION_STRING, nvlb_version());
	return SLURM_SUCCESS;
}

/* What the process serves for this topology (the status thread, the kept
 * node states and pending reasons, the process planner) goes with it. */
extern void nvlbt_topo_destroy(nvlbt_topo_t *topo)
{
	if (!topo)
		return;
	if (topo->planner && (topo->planner == nvlb_process_planner())) {
		nvlbt_status_stop();
		nvlbs_forget_node_states();
		nvlbs_forget_reasons();
		nvlb_process_planner_set(NULL); /* frees the planner */
	} else {
		nvlb_planner_free(topo->planner);
	}
	topo->planner = NULL;
	_free_block_bitmaps(topo);
	slurm_mutex_lock(&topo->eval_lock);
	_free_eval_buffers(topo);
	slurm_mutex_unlock(&topo->eval_lock);
	slurm_mutex_destroy(&topo->eval_lock);
	xfree(topo->name);
	xfree(topo);
}

/* The file to read: nvlblock.yaml beside slurm.conf, else topology.conf. */
static char *_config_path(const char *topology_conf)
{
	char *yaml = get_extra_conf_path("nvlblock.yaml");

	if (yaml && !access(yaml, R_OK))
		return yaml;
	xfree(yaml);
	return topology_conf ? xstrdup(topology_conf) : get_extra_conf_path("topology.conf");
}

static void _log_problems(const char *prefix, const nvlb_error_t *err)
{
	char *copy = xstrdup(err->message), *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		error("%s%s", prefix, line);
	xfree(copy);
}

static void _log_warning(void *ctx, const char *line)
{
	(void) ctx;
	warning("nvlblock: %s", line);
}

static void _load_saved_state(nvlb_planner_t *planner)
{
	nvlb_error_t err;
	char *path = nvlbs_state_path();

	if (nvlb_state_load(planner, path, &err) != NVLB_OK) {
		char *aside = xstrdup_printf("%s.unreadable", path);

		error("nvlblock: saved state %s is unusable: %s", path, err.message);
		error("nvlblock: moving it to %s and starting with no pending recoveries", aside);
		(void) rename(path, aside);
		xfree(aside);
	}
	xfree(path);
	nvlbs_flush_log(planner);
}

/*
 * build_config runs when this slurmctld takes control (a backup taking over,
 * a restart, a reconfigure), whether or not the topology file still loads:
 * a backup whose nvlblock.yaml no longer loads keeps serving the topology
 * it has, and must still take control with the other controller's saved
 * state, not its own older memory (issue 36).
 */
static void _take_control(nvlb_planner_t *planner)
{
	if (nvlbt_other_had_control()) {
		/* What it remembers is older than what the other controller
		 * saved since. */
		info("nvlblock: another slurmctld had control since: reading its saved state");
		_load_saved_state(planner);
	}
	nvlbt_control_taken();
}

/*
 * The file to load, checked: `*path` itself, or, where it is broken and no
 * topology is loaded yet (a reconfigure re-executed slurmctld), the copy kept
 * when it was last accepted (last_good.c; `*last_good` set, SLURM_ERROR). A
 * broken file beside a loaded topology keeps that topology: false.
 */
static bool _checked_file(nvlbt_topo_t *topo, char **path, const char **names, bool *last_good, int *rc)
{
	nvlb_error_t err;
	char *copy;

	if (nvlb_check_file(*path, names, node_record_count, SLURM_VERSION_NUMBER, _log_warning, NULL, &err) == NVLB_OK)
		return true;
	_log_problems("nvlblock: ", &err);
	*rc = SLURM_ERROR;
	if (topo->planner) {
		error("nvlblock: keeping the previous topology; fix %s and reconfigure", *path);
		_take_control(topo->planner);
		return false;
	}
	if (!(copy = nvlbt_last_good_copy(*path)) ||
	    (nvlb_check_file(copy, names, node_record_count, SLURM_VERSION_NUMBER, NULL, NULL, NULL) != NVLB_OK))
		fatal("nvlblock: invalid topology configuration in %s (%u problem%s, first at %s:%u)", *path,
		      err.problem_count, (err.problem_count == 1) ? "" : "s", err.file, err.line);
	error("nvlblock: keeping the previous topology (%s, kept when it was last accepted); fix %s and reconfigure",
	      copy, *path);
	xfree(*path);
	*path = copy;
	*last_good = true;
	return true;
}

/* The planner from `path`: loaded at start (a failure stops slurmctld, as a
 * broken topology.conf stops topology/block), reloaded at a reconfigure (a
 * failure keeps the previous one: false). */
static bool _load_or_reload(nvlbt_topo_t *topo, const char *path, const char **names)
{
	nvlb_error_t err;

	if (!topo->planner) {
		if (nvlb_planner_load(path, names, node_record_count, SLURM_VERSION_NUMBER, &topo->planner, &err) !=
		    NVLB_OK) {
			_log_problems("nvlblock: ", &err);
			fatal("nvlblock: cannot load %s", path);
		}
		/* The one topology a slurmctld recovers in: prep's epilog and
		 * the status thread reach its planner as the process planner. */
		if (!nvlb_process_planner())
			nvlb_process_planner_set(topo->planner);
		_load_saved_state(topo->planner);
		nvlbt_control_taken();
		return true;
	}
	if (nvlb_planner_reload(topo->planner, path, names, node_record_count, SLURM_VERSION_NUMBER, &err) != NVLB_OK) {
		_log_problems("nvlblock: ", &err);
		error("nvlblock: keeping the previous topology");
		_take_control(topo->planner);
		return false;
	}
	_take_control(topo->planner);
	return true;
}

extern int nvlbt_build_config(nvlbt_topo_t *topo, const char *topology_conf)
{
	nvlb_planner_t *planner;
	const char **names;
	char *path;
	nvlb_policy_info_t policy;
	int rc = SLURM_SUCCESS;
	bool last_good = false;

	/* Only slurmctld places jobs; other daemons and clients only print. */
	if (!running_in_slurmctld())
		return SLURM_SUCCESS;
	topo->config_thread = pthread_self();
	topo->config_thread_set = true;

	path = _config_path(topology_conf);
	names = xcalloc(node_record_count + 1, sizeof(char *));
	for (int i = 0; i < node_record_count; i++)
		names[i] = node_record_table_ptr[i] ? node_record_table_ptr[i]->name : "";
	if (!_checked_file(topo, &path, names, &last_good, &rc) || !_load_or_reload(topo, path, names)) {
		xfree(names);
		xfree(path);
		return SLURM_ERROR;
	}
	planner = topo->planner;
	/* When Slurm lets a requeued job start again, counted from its end
	 * (epilog_slurmctld): its nodes complete for up to KillWait (SIGTERM,
	 * then SIGKILL), then Slurm requeues it (cleanup_completing ->
	 * batch_requeue_fini) with begin_time cred_expire + 1 later. The core
	 * adds the time a scheduling pass may take to reach it. */
	nvlb_set_requeue_delay(planner, (int64_t) slurm_conf.kill_wait + cred_expiration() + 1);
	if (!last_good)
		nvlbt_keep_last_good(planner);
	_build_block_bitmaps(topo);
	if (planner == nvlb_process_planner())
		nvlbt_status_start(topo);
	(void) nvlb_policy_info(planner, &policy);
	info("nvlblock: %zu blocks, %zu nodes from %s%s; recovery wait %" PRId64 " s, reclaim budget %" PRId64
	     " s, block fault at %.0f%% failed",
	     nvlb_block_count(planner), nvlb_node_count(planner), path,
	     policy.from_topology_conf ? " (topology.conf syntax: slices of the base block size, no spares)" : "",
	     policy.recovery_wait_s, policy.recovery_reclaim_budget_s, 100.0 * policy.block_fault_fraction);
	xfree(names);
	xfree(path);
	return rc;
}

extern int nvlbt_block_count(const nvlbt_topo_t *topo)
{
	return topo ? topo->block_bitmap_cnt : 0;
}

extern int nvlbt_block_index_of(const nvlbt_topo_t *topo, int node_index)
{
	if (!topo || !topo->node_block || (node_index < 0) || (node_index >= topo->node_block_cnt))
		return -1;
	return topo->node_block[node_index];
}

extern const char *nvlbt_block_name_of(const nvlbt_topo_t *topo, int node_index)
{
	int b = nvlbt_block_index_of(topo, node_index);

	return (b >= 0) ? topo->block_names[b] : NULL;
}

/* Nodes this job could use now: Slurm's node_map less nodes without CPUs
 * for it (the same pre-filter common_topo_choose_nodes applies). Visits the
 * nodes of node_map only. */
static void _available(topology_eval_t *topo_eval, uint8_t *avail)
{
	memset(avail, 0, node_record_count);
	for (int i = 0; (i = bit_ffs_from_bit(topo_eval->node_map, i)) >= 0; i++) {
		avail_res_t *res = topo_eval->avail_res_array ? topo_eval->avail_res_array[i] : NULL;

		if (i >= node_record_count)
			break;
		if (res && res->avail_cpus < 1)
			continue;
		avail[i] = 1;
	}
}

/*
 * The return code slurmctld gets for a refusal: the one topology/block
 * returns in the same case, so sbatch, squeue and scripts see the same.
 * - A request the core refuses for good as asked (--segment not dividing
 *   the node count or larger than any slice, an unsupported --nodelist, a
 *   BlockSizes level that cannot exist): ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE,
 *   which sbatch reports as "Requested topology configuration is not available".
 * - From 26.05, a job that does not fit now: Slurm's topology codes, for
 *   which slurmctld shows its own reason text ("No suitable topology unit
 *   found"); nvlbs_apply_reasons() adds nvlblock's sentence after it.
 */
static int _refusal_rc(const nvlb_placement_t *out)
{
	if (out->topology_unavailable)
		return ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	switch (out->reason) {
	case NVLB_REQUIRED_UNAVAILABLE:
		return ESLURM_TOPO_REQ_NODES_NOT_AVAIL;
	case NVLB_TOO_LARGE:
	case NVLB_SPARES_WITHHELD:
	case NVLB_NO_BLOCK_FITS:
	case NVLB_EXCLUSIVE_NO_BLOCK:
	case NVLB_RECOVERY_WAITING:
	case NVLB_NO_GROUP_FITS:
		return out->segment ? ESLURM_TOPO_SEGMENT_NO_FIT : ESLURM_TOPO_NO_FIT;
	default:
		break;
	}
#endif
	return SLURM_ERROR;
}

/* The core placed the job: narrow node_map to exactly its nodes and let
 * Slurm's common code lay out cores and GRES on them. The reason noted at
 * the last refusal stays until the job leaves the queue
 * (nvlbs_apply_reasons): most successful evaluations of a pending job are
 * Slurm's test-only and will-run ones, and clearing it there made the reason
 * flip between nvlblock's sentence and a bare "Resources". */
static int _choose_placed(topology_eval_t *topo_eval, const nvlb_placement_t *out)
{
	int rc;

	bit_clear_all(topo_eval->node_map);
	for (size_t i = 0; i < out->node_count; i++)
		bit_set(topo_eval->node_map, out->nodes[i]);
	topo_eval->min_nodes = out->node_count;
	topo_eval->req_nodes = out->node_count;
	topo_eval->max_nodes = out->node_count;
	topo_eval->eval_nodes = NULL;
	topo_eval->trump_others = false;
	rc = common_topo_choose_nodes(topo_eval);
	if ((rc == SLURM_SUCCESS) && out->recovery_in_place)
		log_flag(SELECT_TYPE, "nvlblock: %pJ: %s", topo_eval->job_ptr, out->message);
	return rc;
}

/* What slurmctld gets for the core's answer. */
static int _answer(topology_eval_t *topo_eval, const nvlb_placement_t *out)
{
	job_record_t *job_ptr = topo_eval->job_ptr;

	if (out->reason == NVLB_NOT_IN_TOPOLOGY) /* servers outside every block: as topology/block does */
		return common_topo_choose_nodes(topo_eval);
	if (out->reason == NVLB_PLACED)
		return _choose_placed(topo_eval, out);
	log_flag(SELECT_TYPE, "nvlblock: %pJ: %s: %s", job_ptr, nvlb_reason_name(out->reason), out->message);
	nvlbs_show_reason(job_ptr, out->message); /* nvlb_place kept it for the status thread */
	return _refusal_rc(out);
}

/* Slurm's question, translated: its facts to the core (which shapes them
 * into a request, core/slurm_request.hpp), the core's answer back. A question
 * changes nothing: the ledger and the lent marks are kept current by the
 * status thread (every tick, and at once when a failure is recorded). Failed
 * nodes Slurm offers (it asks whether the job could ever run) are answered
 * as healthy by the core (Planner::place). */
extern int nvlbt_eval_nodes(nvlbt_topo_t *topo, topology_eval_t *topo_eval)
{
	nvlb_planner_t *planner = topo ? topo->planner : NULL;
	nvlb_request_t req = {0};
	nvlb_placement_t out = {0};
	uint32_t *nodelist;
	int rc;

	if (!planner || !topo->block_bitmap_cnt || (nvlb_node_count(planner) != (size_t) node_record_count))
		return common_topo_choose_nodes(topo_eval);

	slurm_mutex_lock(&topo->eval_lock);
	_size_eval_buffers(topo);
	_available(topo_eval, topo->eval_buf.avail);
	nvlbs_node_states_into(topo->eval_buf.states);
	_name_changes(topo, planner);
	nvlbs_request_facts(planner, topo_eval->job_ptr, time(NULL), &req, &nodelist);
	req.min_nodes = topo_eval->min_nodes;
	req.max_nodes = topo_eval->max_nodes;
	req.req_nodes = topo_eval->req_nodes;
	req.available = topo->eval_buf.avail;
	out.nodes = topo->eval_buf.nodes;
	out.nodes_capacity = node_record_count;
	if (nvlb_place(planner, topo->eval_buf.states, node_record_count, &req, &out) != NVLB_OK) {
		error("nvlblock: %pJ: placement failed: %s", topo_eval->job_ptr, out.message);
		rc = SLURM_ERROR;
	} else {
		rc = _answer(topo_eval, &out);
	}
	slurm_mutex_unlock(&topo->eval_lock);
	nvlbs_flush_log(planner);
	xfree(nodelist);
	return rc;
}

extern int nvlbt_whole_topo(const nvlbt_topo_t *topo, bitstr_t *node_mask)
{
	for (int b = 0; topo && (b < topo->block_bitmap_cnt); b++)
		if (bit_overlap_any(topo->block_bitmaps[b], node_mask))
			bit_or(node_mask, topo->block_bitmaps[b]);
	return SLURM_SUCCESS;
}

extern bitstr_t *nvlbt_get_bitmap(const nvlbt_topo_t *topo, const char *name)
{
	int32_t b;

	if (!topo || !topo->planner || !name)
		return NULL;
	b = nvlb_find_block(topo->planner, name);
	return ((b >= 0) && (b < topo->block_bitmap_cnt)) ? topo->block_bitmaps[b] : NULL;
}

extern uint32_t nvlbt_fragmentation(const nvlbt_topo_t *topo, bitstr_t *node_mask)
{
	nvlb_planner_t *planner = topo ? topo->planner : NULL;
	uint8_t *mask;
	uint32_t stranded;

	if (!planner || !node_mask || (nvlb_node_count(planner) != (size_t) node_record_count))
		return 0;
	mask = xcalloc(node_record_count + 1, 1);
	for (int i = 0; (i = bit_ffs_from_bit(node_mask, i)) >= 0 && i < node_record_count; i++)
		mask[i] = 1;
	stranded = nvlb_stranded_nodes(planner, mask, node_record_count);
	xfree(mask);
	return stranded;
}

extern nvlbt_topoinfo_t *nvlbt_topoinfo_build(const nvlbt_topo_t *topo)
{
	nvlb_planner_t *planner = topo ? topo->planner : NULL;
	nvlbt_topoinfo_t *info = xmalloc(sizeof(*info));
	nvlb_report_data_t *data;
	uint8_t *states;
	const char *recoveries;

	if (!planner || (nvlb_node_count(planner) != (size_t) node_record_count))
		return info;
	states = nvlbs_node_states();
	data = nvlb_report_data(planner, states, node_record_count, time(NULL));
	xfree(states);
	if (!data)
		return info;
	info->record_count = nvlb_report_block_count(data);
	info->names = xcalloc(info->record_count + 1, sizeof(char *));
	info->nodes = xcalloc(info->record_count + 1, sizeof(char *));
	info->lines = xcalloc(info->record_count + 1, sizeof(char *));
	for (uint32_t i = 0; i < info->record_count; i++) {
		nvlb_block_report_t b;

		if (nvlb_report_block(data, i, &b) != NVLB_OK)
			continue;
		info->names[i] = xstrdup(b.name);
		info->nodes[i] = xstrdup(b.nodes);
		info->lines[i] = xstrdup(b.line);
	}
	info->group_count = nvlb_report_group_count(data);
	info->group_names = xcalloc(info->group_count + 1, sizeof(char *));
	info->group_lines = xcalloc(info->group_count + 1, sizeof(char *));
	for (uint32_t i = 0; i < info->group_count; i++) {
		nvlb_group_report_t g;

		if (nvlb_report_group(data, i, &g) != NVLB_OK)
			continue;
		info->group_names[i] = xstrdup(g.name);
		info->group_lines[i] = xstrdup(g.line);
	}
	info->summary = xstrdup(nvlb_report_summary(data));
	recoveries = nvlb_report_recoveries(data);
	info->recoveries = recoveries[0] ? xstrdup(recoveries) : NULL;
	nvlb_report_data_free(data);
	return info;
}

extern int nvlbt_get(const nvlbt_topo_t *topo, topology_data_t type, void *data)
{
	switch (type) {
	case TOPO_DATA_TOPOLOGY_PTR: {
		dynamic_plugin_data_t **pptr = data;

		*pptr = xmalloc(sizeof(dynamic_plugin_data_t));
		(*pptr)->plugin_id = plugin_id;
		(*pptr)->data = nvlbt_topoinfo_build(topo);
		return SLURM_SUCCESS;
	}
	case TOPO_DATA_REC_CNT:
		*(int *) data = nvlbt_block_count(topo);
		return SLURM_SUCCESS;
	case TOPO_DATA_EXCLUSIVE_TOPO:
		/* 24.11's cons_tres ignores --exclusive=topo unless this says 1
		 * (25.05 and later read supports_exclusive_topo instead). */
		*(int *) data = 1;
		return SLURM_SUCCESS;
	default:
		error("topology/nvlblock: unsupported topology_p_get type %d", type);
		return SLURM_ERROR;
	}
}

extern nvlbt_segments_t *nvlbt_segments_build(const nvlbt_topo_t *topo, bitstr_t *nodes, uint16_t segment_size)
{
	nvlb_planner_t *planner = topo ? topo->planner : NULL;
	nvlbt_segments_t *segments = xmalloc(sizeof(*segments));
	uint32_t *indices, *segment_of;
	size_t count, nsegs;

	segments->list = list_create(xfree_ptr);
	if (!nodes || !planner)
		return segments;
	/* The segments are the core's (src/placement/segments.cpp): per
	 * block, runs of segment_size nodes; the rest one more. */
	indices = nvlbs_bitmap_indices(nodes, &count);
	segment_of = xcalloc(count + 1, sizeof(uint32_t));
	nsegs = nvlb_segments(planner, indices, count, segment_size, segment_of);
	for (size_t s = 0; s < nsegs; s++) {
		bitstr_t *run = bit_alloc(bit_size(nodes));

		for (size_t i = 0; i < count; i++)
			if (segment_of[i] == s)
				bit_set(run, indices[i]);
		list_append(segments->list, bitmap2node_name(run));
		FREE_NULL_BITMAP(run);
	}
	xfree(segment_of);
	xfree(indices);
	return segments;
}

/* job_list exists only in slurmctld (see slurm_bridge.c). */
extern list_t *job_list __attribute__((weak));

/* The jobs running on node `index`, each with all its nodes (xfree each
 * .nodes, then the array). Needs the job read lock. */
static nvlb_job_nodes_t *_jobs_on_node(int index, size_t *count)
{
	list_itr_t *it;
	job_record_t *job_ptr;
	nvlb_job_nodes_t *jobs = NULL;
	size_t n = 0, cap = 0;

	*count = 0;
	if (!job_list)
		return NULL;
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!(IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) || !job_ptr->node_bitmap ||
		    (index >= bit_size(job_ptr->node_bitmap)) || !bit_test(job_ptr->node_bitmap, index))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 4;
			xrecalloc(jobs, cap, sizeof(*jobs));
		}
		jobs[n].job_id = job_ptr->job_id;
		jobs[n].nodes = nvlbs_bitmap_indices(job_ptr->node_bitmap, &jobs[n].node_count);
		n++;
	}
	list_iterator_destroy(it);
	*count = n;
	return jobs;
}

extern int nvlbt_add_rm_node(nvlbt_topo_t *topo, node_record_t *node_ptr, const char *unit)
{
	nvlb_planner_t *planner = topo ? topo->planner : NULL;
	nvlb_unit_kind_t kind = !unit ? NVLB_UNIT_CONFIGURED : (!unit[0] ? NVLB_UNIT_NONE : NVLB_UNIT_BLOCK);
	bool restoring = topo && topo->config_thread_set && pthread_equal(pthread_self(), topo->config_thread);
	nvlb_job_nodes_t *jobs;
	nvlb_change_t outcome = NVLB_CHANGE_REFUSED;
	char message[512];
	size_t count = 0;
	nvlb_status_t rc;
	const char *what = (kind == NVLB_UNIT_BLOCK) ? unit : ((kind == NVLB_UNIT_NONE) ? "no block" : "its block");

	if (!running_in_slurmctld() || !node_ptr)
		return SLURM_SUCCESS;
	if (!planner) {
		error("topology/nvlblock: node %s: topology '%s' before nvlblock read its topology; ignored",
		      node_ptr->name, unit ? unit : "(none)");
		return SLURM_SUCCESS;
	}
	/* The core decides (core/topology_change.hpp); this only gathers the
	 * jobs on the node and prints the answer. */
	jobs = _jobs_on_node(node_ptr->index, &count);
	rc = nvlb_node_topology(planner, (uint32_t) node_ptr->index, node_ptr->name, kind, unit, jobs, count, restoring,
				&outcome, message, sizeof(message));
	for (size_t i = 0; i < count; i++)
		xfree(jobs[i].nodes);
	xfree(jobs);
	if (rc != NVLB_OK) {
		error("topology/nvlblock: cannot put node %s into %s%s%s: %s", node_ptr->name,
		      (kind == NVLB_UNIT_BLOCK) ? "'" : "", what, (kind == NVLB_UNIT_BLOCK) ? "'" : "", message);
		return restoring ? SLURM_SUCCESS : SLURM_ERROR;
	}
	switch (outcome) {
	case NVLB_CHANGE_NONE:
		debug("topology/nvlblock: %s: nothing changed", message);
		return SLURM_SUCCESS;
	case NVLB_CHANGE_APPLIED:
		_build_block_bitmaps(topo);
		info("nvlblock: %s%s", message, restoring ? " (Slurm's saved node topology)" : "");
		return SLURM_SUCCESS;
	default:
		break;
	}
	if (restoring) {
		/* slurmctld stops if a saved node topology is refused here. */
		error("topology/nvlblock: cannot restore node %s's saved topology (%s): %s; it stays in %s",
		      node_ptr->name, unit ? unit : "none", message,
		      nvlbt_block_name_of(topo, node_ptr->index) ? nvlbt_block_name_of(topo, node_ptr->index)
								 : "no block");
		return SLURM_SUCCESS;
	}
	error("topology/nvlblock: cannot put node %s into %s%s%s: %s", node_ptr->name,
	      (kind == NVLB_UNIT_BLOCK) ? "'" : "", what, (kind == NVLB_UNIT_BLOCK) ? "'" : "", message);
	return SLURM_ERROR;
}
