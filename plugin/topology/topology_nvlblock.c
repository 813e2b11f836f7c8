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
 * Seconds a scheduling pass may take to reach a requeued job once Slurm lets
 * it run again (cred_expire + 1 s after the requeue): the failed job's nodes
 * stay held at least this much longer.
 */
#define REQUEUE_SCHEDULING_SLACK 30

static bitstr_t **block_bitmaps = NULL;
static int block_bitmap_cnt = 0;
static char **block_names = NULL;
/* Block index per slurmctld node index, -1 outside every block. */
static int32_t *node_block = NULL;
static int node_block_cnt = 0;
static bool lending_anywhere = false;
static bool reclaim_anywhere = false;

/*
 * Buffers of one evaluation, kept between evaluations: Slurm evaluates many
 * times per scheduling pass, and node-sized allocations per evaluation cost
 * more than the decision (eval_lock: evaluations are serialised by
 * slurmctld's node write lock already; this keeps the buffers safe anyway).
 */
static struct {
	int count;       /* node_record_count they are sized for */
	uint8_t *avail;  /* nodes the job may use */
	uint8_t *states; /* node states for this evaluation */
	uint32_t *nodes; /* the core's answer */
} eval_buf = { 0 };
static pthread_mutex_t eval_lock = PTHREAD_MUTEX_INITIALIZER;

static void _free_eval_buffers(void)
{
	xfree(eval_buf.avail);
	xfree(eval_buf.states);
	xfree(eval_buf.nodes);
	eval_buf.count = 0;
}

static void _size_eval_buffers(void)
{
	if (eval_buf.count == node_record_count)
		return;
	_free_eval_buffers();
	eval_buf.avail = xcalloc(node_record_count + 1, 1);
	eval_buf.states = xcalloc(node_record_count + 1, 1);
	eval_buf.nodes = xcalloc(node_record_count + 1, sizeof(uint32_t));
	eval_buf.count = node_record_count;
}

static void _free_block_bitmaps(void)
{
	for (int i = 0; i < block_bitmap_cnt; i++) {
		FREE_NULL_BITMAP(block_bitmaps[i]);
		xfree(block_names[i]);
	}
	xfree(block_bitmaps);
	xfree(block_names);
	xfree(node_block);
	block_bitmap_cnt = 0;
	node_block_cnt = 0;
}

static void _build_block_bitmaps(nvlb_planner_t *planner)
{
	size_t blocks = nvlb_block_count(planner);
	uint32_t *nodes = xcalloc(node_record_count + 1, sizeof(uint32_t));

	_free_block_bitmaps();
	lending_anywhere = false;
	reclaim_anywhere = false;
	block_bitmaps = xcalloc(blocks + 1, sizeof(bitstr_t *));
	block_names = xcalloc(blocks + 1, sizeof(char *));
	node_block = xcalloc(node_record_count + 1, sizeof(int32_t));
	for (int i = 0; i < node_record_count; i++)
		node_block[i] = -1;
	node_block_cnt = node_record_count;
	for (size_t b = 0; b < blocks; b++) {
		nvlb_block_info_t info;
		size_t n = nvlb_block_nodes(planner, b, nodes, node_record_count);

		block_bitmaps[b] = bit_alloc(node_record_count);
		for (size_t i = 0; (i < n) && (i < (size_t) node_record_count); i++) {
			bit_set(block_bitmaps[b], nodes[i]);
			node_block[nodes[i]] = (int32_t) b;
		}
		if (nvlb_block_info(planner, b, &info) == NVLB_OK) {
			block_names[b] = xstrdup(info.name);
			if (info.lending)
				lending_anywhere = true;
			if (info.reclaim)
				reclaim_anywhere = true;
		}
	}
	block_bitmap_cnt = blocks;
	xfree(nodes);
}

extern bool nvlbt_reclaims_spares(void)
{
	return reclaim_anywhere;
}

extern int nvlbt_init(void)
{
	verbose("topology/nvlblock %s loaded (core %s)", SLURM_VERSION_STRING, nvlb_version());
	/* Where topology/block's rules differ between releases, follow ours. */
	nvlb_set_slurm_release(SLURM_VERSION_NUMBER);
	return SLURM_SUCCESS;
}

extern void nvlbt_fini(void)
{
	nvlbt_status_stop();
	_free_block_bitmaps();
	slurm_mutex_lock(&eval_lock);
	_free_eval_buffers();
	slurm_mutex_unlock(&eval_lock);
	nvlbs_forget_node_states();
	nvlbs_forget_reasons();
	nvlb_process_planner_set(NULL);
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

extern int nvlbt_build_config(const char *topology_conf)
{
	nvlb_planner_t *planner = nvlb_process_planner();
	const char **names;
	char *path;
	nvlb_error_t err;
	nvlb_policy_info_t policy;
	int rc = SLURM_SUCCESS;

	/* Only slurmctld places jobs; other daemons and clients only print. */
	if (!running_in_slurmctld())
		return SLURM_SUCCESS;

	path = _config_path(topology_conf);
	names = xcalloc(node_record_count + 1, sizeof(char *));
	for (int i = 0; i < node_record_count; i++)
		names[i] = node_record_table_ptr[i] ? node_record_table_ptr[i]->name : "";

	if (nvlb_check_file(path, names, node_record_count, _log_warning, NULL, &err) != NVLB_OK) {
		_log_problems("nvlblock: ", &err);
		if (!planner)
			fatal("nvlblock: invalid topology configuration in %s (%u problem%s, first at %s:%u)", path,
			      err.problem_count, (err.problem_count == 1) ? "" : "s", err.file, err.line);
		error("nvlblock: keeping the previous topology; fix %s and reconfigure", path);
		rc = SLURM_ERROR;
		goto done;
	}
	if (!planner) {
		if (nvlb_planner_load(path, names, node_record_count, &planner, &err) != NVLB_OK) {
			_log_problems("nvlblock: ", &err);
			fatal("nvlblock: cannot load %s", path);
		}
		nvlb_process_planner_set(planner);
		_load_saved_state(planner);
	} else if (nvlb_planner_reload(planner, path, names, node_record_count, &err) != NVLB_OK) {
		_log_problems("nvlblock: ", &err);
		error("nvlblock: keeping the previous topology");
		rc = SLURM_ERROR;
		goto done;
	}
	nvlb_set_requeue_delay(planner, cred_expiration() + 1 + REQUEUE_SCHEDULING_SLACK);
	_build_block_bitmaps(planner);
	nvlbt_status_start();
	(void) nvlb_policy_info(planner, &policy);
	info("nvlblock: %zu blocks, %zu nodes from %s%s; recovery wait %" PRId64 " s, block fault at %.0f%% failed",
	     nvlb_block_count(planner), nvlb_node_count(planner), path,
	     policy.from_topology_conf ? " (topology.conf syntax: slices of the base block size, no spares)" : "",
	     policy.recovery_wait_s, 100.0 * policy.block_fault_fraction);
done:
	xfree(names);
	xfree(path);
	return rc;
}

extern int nvlbt_block_count(void)
{
	return block_bitmap_cnt;
}

extern int nvlbt_block_index_of(int node_index)
{
	if (!node_block || (node_index < 0) || (node_index >= node_block_cnt))
		return -1;
	return node_block[node_index];
}

extern const char *nvlbt_block_name_of(int node_index)
{
	int b = nvlbt_block_index_of(node_index);

	return (b >= 0) ? block_names[b] : NULL;
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
 * --segment with --nodelist. Up to 25.05 Slurm's topology/block refuses a
 * nodelist with more than one segment (the core refuses it too). From 25.11
 * the nodelist of such a job names its candidates instead: when it holds at
 * least the job's nodes, topology/block narrows its node map to them and
 * places the segments there as usual (eval_nodes_block.c), so each segment
 * still lies in one block. The same question, in the core's terms: the
 * listed nodes are the only available ones, and none is forced. (A list
 * longer than the job never gets here: slurmctld turns it into an exclusion
 * of every other node at submission.)
 */
static bool _nodelist_names_candidates(const job_details_t *details, uint32_t segment, uint32_t min_nodes)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	return details && details->req_node_bitmap && segment && (min_nodes > segment) &&
	       ((uint32_t) bit_set_count(details->req_node_bitmap) >= min_nodes);
#else
	return false;
#endif
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
static int _refusal_rc(const nvlb_placement_t *out, uint32_t segment)
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
		return segment ? ESLURM_TOPO_SEGMENT_NO_FIT : ESLURM_TOPO_NO_FIT;
	default:
		break;
	}
#else
	(void) segment;
#endif
	return SLURM_ERROR;
}

extern int nvlbt_eval_nodes(topology_eval_t *topo_eval)
{
	nvlb_planner_t *planner = nvlb_process_planner();
	job_record_t *job_ptr = topo_eval->job_ptr;
	job_details_t *details = job_ptr->details;
	nvlb_request_t req = { 0 };
	nvlb_placement_t out = { 0 };
	uint32_t *required = NULL;
	time_t now = time(NULL);
	int rc;

	if (!planner || !block_bitmap_cnt || (nvlb_node_count(planner) != (size_t) node_record_count))
		return common_topo_choose_nodes(topo_eval);

	slurm_mutex_lock(&eval_lock);
	_size_eval_buffers();
	_available(topo_eval, eval_buf.avail);
	nvlbs_sync_ledger(planner, now);
	if (lending_anywhere)
		nvlbs_update_lent(planner);
	nvlbs_node_states_into(eval_buf.states, topo_eval->node_map, eval_buf.avail);

	req.job_id = job_ptr->job_id;
	req.min_nodes = topo_eval->min_nodes;
	req.max_nodes = MIN(topo_eval->max_nodes, MAX(topo_eval->req_nodes, topo_eval->min_nodes));
	if (req.max_nodes > (uint32_t) node_record_count)
		req.max_nodes = node_record_count;
	if (req.max_nodes < req.min_nodes)
		req.max_nodes = req.min_nodes;
	req.segment = details ? details->segment_size : 0;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	/* Slurm 26.05 ignores a --segment larger than the job (one segment). */
	if (req.segment > MIN(req.min_nodes, topo_eval->req_nodes))
		req.segment = 0;
#endif
	/* --exclusive=topo, or a partition with ExclusiveTopo=YES. */
	req.exclusive_topo = details && IS_JOB_WHOLE_TOPO(job_ptr);
	req.preemptible = nvlbs_job_preemptible(planner, job_ptr);
	req.available = eval_buf.avail;
	if (_nodelist_names_candidates(details, req.segment, req.min_nodes)) {
		for (int i = 0; i < node_record_count; i++)
			if (!bit_test(details->req_node_bitmap, i))
				eval_buf.avail[i] = 0;
	} else if (details && details->req_node_bitmap) {
		size_t count;

		required = nvlbs_bitmap_indices(details->req_node_bitmap, &count);
		req.required = required;
		req.required_count = count;
	}
	req.now = now;
	if (details)
		req.eligible_since = details->begin_time ? details->begin_time : details->submit_time;
	out.nodes = eval_buf.nodes;
	out.nodes_capacity = node_record_count;

	if (nvlb_place(planner, eval_buf.states, node_record_count, &req, &out) != NVLB_OK) {
		error("nvlblock: %pJ: placement failed: %s", job_ptr, out.message);
		rc = SLURM_ERROR;
	} else if (out.reason == NVLB_NOT_IN_TOPOLOGY) {
		/* Ordinary servers outside every block: as topology/block does. */
		rc = common_topo_choose_nodes(topo_eval);
	} else if (out.reason != NVLB_PLACED) {
		log_flag(SELECT_TYPE, "nvlblock: %pJ: %s: %s", job_ptr, nvlb_reason_name(out.reason), out.message);
		nvlbs_note_reason(job_ptr, out.message);
		rc = _refusal_rc(&out, req.segment);
	} else {
		/* Narrow node_map to exactly the chosen nodes and let Slurm's
		 * common code lay out cores and GRES on them. */
		bit_clear_all(topo_eval->node_map);
		for (size_t i = 0; i < out.node_count; i++)
			bit_set(topo_eval->node_map, out.nodes[i]);
		topo_eval->min_nodes = out.node_count;
		topo_eval->req_nodes = out.node_count;
		topo_eval->max_nodes = out.node_count;
		topo_eval->eval_nodes = NULL;
		topo_eval->trump_others = false;
		rc = common_topo_choose_nodes(topo_eval);
		/* The reason noted at the last refusal stays until the job
		 * leaves the queue (nvlbs_apply_reasons): most successful
		 * evaluations of a pending job are Slurm's test-only and
		 * will-run ones, and clearing it there made the reason flip
		 * between nvlblock's sentence and a bare "Resources". */
		if ((rc == SLURM_SUCCESS) && out.recovery_in_place)
			log_flag(SELECT_TYPE, "nvlblock: %pJ: %s", job_ptr, out.message);
	}
	slurm_mutex_unlock(&eval_lock);
	nvlbs_flush_log(planner);
	xfree(required);
	return rc;
}

extern int nvlbt_whole_topo(bitstr_t *node_mask)
{
	for (int b = 0; b < block_bitmap_cnt; b++)
		if (bit_overlap_any(block_bitmaps[b], node_mask))
			bit_or(node_mask, block_bitmaps[b]);
	return SLURM_SUCCESS;
}

extern bitstr_t *nvlbt_get_bitmap(const char *name)
{
	nvlb_planner_t *planner = nvlb_process_planner();
	int32_t b;

	if (!planner || !name)
		return NULL;
	b = nvlb_find_block(planner, name);
	return ((b >= 0) && (b < block_bitmap_cnt)) ? block_bitmaps[b] : NULL;
}

extern uint32_t nvlbt_fragmentation(bitstr_t *node_mask)
{
	nvlb_planner_t *planner = nvlb_process_planner();
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

extern nvlbt_topoinfo_t *nvlbt_topoinfo_build(void)
{
	nvlb_planner_t *planner = nvlb_process_planner();
	nvlbt_topoinfo_t *info = xmalloc(sizeof(*info));
	uint8_t *states;
	char *text, *save = NULL, *line;
	uint32_t n = 0, blocks;

	if (!planner || (nvlb_node_count(planner) != (size_t) node_record_count))
		return info;
	blocks = nvlb_block_count(planner);
	states = nvlbs_node_states();
	text = nvlb_report(planner, states, node_record_count, time(NULL), NVLB_REPORT_TEXT);
	xfree(states);
	if (!text)
		return info;
	info->names = xcalloc(blocks + 1, sizeof(char *));
	info->nodes = xcalloc(blocks + 1, sizeof(char *));
	info->lines = xcalloc(blocks + 1, sizeof(char *));
	/* The report lists blocks in index order, then the summary and recoveries. */
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		nvlb_block_info_t b;

		if ((n < blocks) && (nvlb_block_info(planner, n, &b) == NVLB_OK)) {
			info->names[n] = xstrdup(b.name);
			info->nodes[n] = xstrdup(b.nodes);
			info->lines[n] = xstrdup(line);
			n++;
		} else {
			/* The summary line and the recovery lines after it. */
			xstrfmtcat(info->summary, "%s%s", info->summary ? "\n" : "", line);
		}
	}
	info->record_count = n;
	nvlb_free(text);
	return info;
}

extern void nvlbt_topoinfo_free(nvlbt_topoinfo_t *info)
{
	if (!info)
		return;
	for (uint32_t i = 0; i < info->record_count; i++) {
		xfree(info->names[i]);
		xfree(info->nodes[i]);
		xfree(info->lines[i]);
	}
	xfree(info->names);
	xfree(info->nodes);
	xfree(info->lines);
	xfree(info->summary);
	xfree(info);
}

extern int nvlbt_get(topology_data_t type, void *data)
{
	switch (type) {
	case TOPO_DATA_TOPOLOGY_PTR: {
		dynamic_plugin_data_t **pptr = data;

		*pptr = xmalloc(sizeof(dynamic_plugin_data_t));
		(*pptr)->plugin_id = plugin_id;
		(*pptr)->data = nvlbt_topoinfo_build();
		return SLURM_SUCCESS;
	}
	case TOPO_DATA_REC_CNT:
		*(int *) data = nvlbt_block_count();
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

extern int nvlbt_topoinfo_pack(nvlbt_topoinfo_t *info, buf_t *buffer, uint16_t protocol_version)
{
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		return SLURM_ERROR;
	pack32(info->record_count, buffer);
	for (uint32_t i = 0; i < info->record_count; i++) {
		packstr(info->names[i], buffer);
		packstr(info->nodes[i], buffer);
		packstr(info->lines[i], buffer);
	}
	packstr(info->summary, buffer);
	return SLURM_SUCCESS;
}

/* Bound on what a client accepts: a corrupt count must not make it allocate
 * without limit. */
#define MAX_PACKED_BLOCKS (1u << 20)

extern int nvlbt_topoinfo_unpack(nvlbt_topoinfo_t **out, buf_t *buffer, uint16_t protocol_version)
{
	nvlbt_topoinfo_t *info;
	uint32_t count;

	*out = NULL;
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		return SLURM_ERROR;
	info = xmalloc(sizeof(*info));
	*out = info;
	safe_unpack32(&count, buffer);
	if (count > MAX_PACKED_BLOCKS)
		goto unpack_error;
	info->names = xcalloc(count + 1, sizeof(char *));
	info->nodes = xcalloc(count + 1, sizeof(char *));
	info->lines = xcalloc(count + 1, sizeof(char *));
	for (uint32_t i = 0; i < count; i++) {
		info->record_count = i + 1;
		safe_unpackstr(&info->names[i], buffer);
		safe_unpackstr(&info->nodes[i], buffer);
		safe_unpackstr(&info->lines[i], buffer);
	}
	info->record_count = count;
	safe_unpackstr(&info->summary, buffer);
	return SLURM_SUCCESS;

unpack_error:
	nvlbt_topoinfo_free(info);
	*out = NULL;
	return SLURM_ERROR;
}

/* The core's "GroupName=<name> ..." line (a scalable unit, a BlockSizes
 * aggregate) among the lines after the blocks, appended to out. */
static bool _print_group(nvlbt_topoinfo_t *info, const char *name, char **out)
{
	char *copy, *save = NULL, *prefix;
	bool found = false;

	if (!info->summary || !name || !name[0])
		return false;
	copy = xstrdup(info->summary);
	prefix = xstrdup_printf("GroupName=%s ", name);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!xstrncmp(line, prefix, strlen(prefix))) {
			xstrfmtcat(*out, "%s\n", line);
			found = true;
			break;
		}
	}
	xfree(prefix);
	xfree(copy);
	return found;
}

extern int nvlbt_topoinfo_print(nvlbt_topoinfo_t *info, const char *nodes_list, const char *unit, char **out)
{
	bool by_unit = unit && unit[0], by_nodes = nodes_list && nodes_list[0];
	int matches = 0;

	*out = NULL;
	if (!info || !info->record_count) {
		error("No topology information available");
		return SLURM_SUCCESS;
	}
	if (!by_unit && !by_nodes) {
		for (uint32_t i = 0; i < info->record_count; i++)
			xstrfmtcat(*out, "%s\n", info->lines[i]);
		if (info->summary)
			xstrfmtcat(*out, "%s\n", info->summary);
		return SLURM_SUCCESS;
	}
	/* 24.11's scontrol passes its one argument as the node list: a block
	 * name there selects that block. */
	if (!by_unit) {
		for (uint32_t i = 0; i < info->record_count; i++) {
			if (!xstrcmp(info->names[i], nodes_list)) {
				xstrfmtcat(*out, "%s\n", info->lines[i]);
				return SLURM_SUCCESS;
			}
		}
		if (_print_group(info, nodes_list, out))
			return SLURM_SUCCESS;
	} else if (!by_nodes && _print_group(info, unit, out)) {
		return SLURM_SUCCESS; /* block=<group name> */
	}
	for (uint32_t i = 0; i < info->record_count; i++) {
		hostset_t *hs;
		bool within;

		if (by_unit && xstrcmp(info->names[i], unit))
			continue;
		if (by_nodes) {
			if (!info->nodes[i] || !info->nodes[i][0] || !(hs = hostset_create(info->nodes[i])))
				continue;
			within = hostset_within(hs, nodes_list);
			hostset_destroy(hs);
			if (!within)
				continue;
		}
		xstrfmtcat(*out, "%s\n", info->lines[i]);
		matches++;
	}
	if (matches)
		return SLURM_SUCCESS;
	if (by_unit && by_nodes)
		error("Topology information contains no block %s holding %s", unit, nodes_list);
	else if (by_unit)
		error("Topology information contains no block named %s", unit);
	else
		error("Topology information contains no block or node named %s", nodes_list);
	return SLURM_SUCCESS;
}

extern nvlbt_segments_t *nvlbt_segments_build(bitstr_t *nodes, uint16_t segment_size)
{
	nvlbt_segments_t *segments = xmalloc(sizeof(*segments));
	bitstr_t *rest, *run;

	segments->list = list_create(xfree_ptr);
	if (!nodes)
		return segments;
	rest = bit_copy(nodes);
	run = bit_alloc(bit_size(nodes));
	for (int b = 0; b < block_bitmap_cnt; b++) {
		int in_run = 0;

		if (bit_size(block_bitmaps[b]) != bit_size(nodes) || !bit_overlap_any(block_bitmaps[b], nodes))
			continue;
		bit_clear_all(run);
		for (int i = 0; (i = bit_ffs_from_bit(nodes, i)) >= 0; i++) {
			if (!bit_test(block_bitmaps[b], i))
				continue;
			bit_set(run, i);
			bit_clear(rest, i);
			if (segment_size && (++in_run == segment_size)) {
				list_append(segments->list, bitmap2node_name(run));
				bit_clear_all(run);
				in_run = 0;
			}
		}
		if (bit_set_count(run))
			list_append(segments->list, bitmap2node_name(run));
	}
	if (bit_set_count(rest))
		list_append(segments->list, bitmap2node_name(rest));
	FREE_NULL_BITMAP(run);
	FREE_NULL_BITMAP(rest);
	return segments;
}

extern void nvlbt_segments_free(nvlbt_segments_t *segments)
{
	if (!segments)
		return;
	FREE_NULL_LIST(segments->list);
	xfree(segments);
}

/* Our own layout, versioned: job state written by one nvlblock release may
 * be read by the next. */
#define SEGMENTS_FORMAT 1
#define MAX_PACKED_SEGMENTS (1u << 20)

static int _pack_segment(void *x, void *arg)
{
	packstr(x, arg);
	return 0;
}

extern void nvlbt_segments_pack(nvlbt_segments_t *segments, buf_t *buffer)
{
	uint32_t count = (segments && segments->list) ? list_count(segments->list) : 0;

	pack16(SEGMENTS_FORMAT, buffer);
	pack32(count, buffer);
	if (count)
		list_for_each(segments->list, _pack_segment, buffer);
}

extern int nvlbt_segments_unpack(nvlbt_segments_t **out, buf_t *buffer)
{
	nvlbt_segments_t *segments = xmalloc(sizeof(*segments));
	uint16_t format;
	uint32_t count;

	*out = NULL;
	segments->list = list_create(xfree_ptr);
	safe_unpack16(&format, buffer);
	if (format != SEGMENTS_FORMAT)
		goto unpack_error;
	safe_unpack32(&count, buffer);
	if (count > MAX_PACKED_SEGMENTS)
		goto unpack_error;
	for (uint32_t i = 0; i < count; i++) {
		char *nodes = NULL;

		safe_unpackstr(&nodes, buffer);
		list_append(segments->list, nodes);
	}
	*out = segments;
	return SLURM_SUCCESS;

unpack_error:
	nvlbt_segments_free(segments);
	return SLURM_ERROR;
}
