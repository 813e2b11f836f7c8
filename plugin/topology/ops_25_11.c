/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops_25_11.c - what the topology plugin API of Slurm 25.11 adds to 25.05's
 * (ops_25_05.c, which a 25.11 build compiles too): job topology info and
 * the node's topology string; 23 symbols in all. Slurm 26.05 keeps them and
 * adds three more (ops_26_05.c).
 *
 * - jobinfo_* carry the segment node lists that switch/nvidia_imex turns
 *   into one IMEX channel per segment (--network=unique-channel-per-segment).
 * - get_topology_str names a node's block in the form scontrol update node
 *   topology= takes.
 * - the four topology_p_topology_* ops are renamed topoinfo_* (ops_25_05.c
 *   spells them per generation).
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

#include "topology_nvlblock.h"

#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 11, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(27, 5, 0))
#error "ops_25_11.c is the Slurm 25.11 API (also used by 26.05 and 26.11); configure against a Slurm 25.11 to 26.11 tree"
#endif

static int _append_segment(void *x, void *arg)
{
	xstrfmtcat(*(char **) arg, " %s", (char *) x);
	return 0;
}

static void _log_segments(job_record_t *job_ptr, nvlbt_segments_t *segments)
{
	char *text = NULL;

	list_for_each(segments->list, _append_segment, &text);
	log_flag(SELECT_TYPE, "nvlblock: %pJ: %d segments for IMEX channels:%s", job_ptr, list_count(segments->list),
		 text ? text : "");
	xfree(text);
}

extern void nvlbt_attach_segments(const nvlbt_topo_t *topo, topology_eval_t *topo_eval)
{
	job_record_t *job_ptr = topo_eval->job_ptr;
	dynamic_plugin_data_t *info;

	/* Slurm freed the previous jobinfo before eval_nodes. */
	if (!job_ptr || !xstrstr(job_ptr->network, "unique-channel-per-segment"))
		return;
	info = xmalloc(sizeof(*info));
	info->plugin_id = plugin_id;
	info->data =
		nvlbt_segments_build(topo, topo_eval->node_map, job_ptr->details ? job_ptr->details->segment_size : 0);
	job_ptr->topo_jobinfo = info;
	if (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE)
		_log_segments(job_ptr, info->data);
}

extern void topology_p_jobinfo_free(void *topo_jobinfo)
{
	nvlbt_segments_free(topo_jobinfo);
}

extern void topology_p_jobinfo_pack(void *topo_jobinfo, buf_t *buffer, uint16_t protocol_version)
{
	nvlbt_segments_pack(topo_jobinfo, buffer);
}

extern int topology_p_jobinfo_unpack(void **topo_jobinfo, buf_t *buffer, uint16_t protocol_version)
{
	if (protocol_version < SLURM_MIN_PROTOCOL_VERSION)
		return SLURM_ERROR;
	return nvlbt_segments_unpack((nvlbt_segments_t **) topo_jobinfo, buffer);
}

extern int topology_p_jobinfo_get(topology_jobinfo_type_t type, void *topo_jobinfo, void *data)
{
	nvlbt_segments_t *segments = topo_jobinfo;

	if (!segments || (type != TOPO_JOBINFO_SEGMENT_LIST))
		return SLURM_ERROR;
	*(list_t **) data = segments->list;
	return SLURM_SUCCESS;
}

/* "<topology>:<block>", the form scontrol update node topology= takes. */
extern void topology_p_get_topology_str(node_record_t *node_ptr, char **topology_str_ptr, topology_ctx_t *tctx)
{
	const char *block = node_ptr ? nvlbt_block_name_of(tctx->plugin_ctx, node_ptr->index) : NULL;

	if (block)
		xstrfmtcat(*topology_str_ptr, "%s%s:%s", *topology_str_ptr ? "," : "", tctx->name, block);
}
