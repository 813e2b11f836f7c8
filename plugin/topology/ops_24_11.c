/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops_24_11.c - the topology plugin API of Slurm 24.11: the 14 symbols of its
 * ops table (src/interfaces/topology.c) with 24.11's signatures, each a thin
 * call into topology_nvlblock.c. Each API generation has such a file, chosen
 * at build time (ops_26_05.c: contexts, topoinfo_*, jobinfo_*, get_rank...).
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/plugins/topology/common/common_topo.h"

#include "topology_nvlblock.h"

#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 11, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0))
#error "ops_24_11.c is the Slurm 24.11 API; configure against a Slurm 24.11 tree"
#endif

/* plugin_name, plugin_type, plugin_id and plugin_version: topology_nvlblock.c. */

/* 24.11 passes no topology context: it has one topology, this. */
static nvlbt_topo_t *topo = NULL;

extern int init(void)
{
	topo = nvlbt_topo_create("default");
	return nvlbt_init();
}

extern int fini(void)
{
	nvlbt_topo_destroy(topo);
	topo = NULL;
	return SLURM_SUCCESS;
}

extern int topology_p_build_config(void)
{
	return nvlbt_build_config(topo, topo_conf);
}

extern int topology_p_eval_nodes(topology_eval_t *topo_eval)
{
	return nvlbt_eval_nodes(topo, topo_eval);
}

extern int topology_p_whole_topo(bitstr_t *node_mask)
{
	return nvlbt_whole_topo(topo, node_mask);
}

extern bitstr_t *topology_p_get_bitmap(char *name)
{
	return nvlbt_get_bitmap(topo, name);
}

/* Node ranks are not ours to change: blocks are not an ordering. */
extern bool topology_p_generate_node_ranking(void)
{
	return false;
}

extern int topology_p_get_node_addr(char *node_name, char **paddr, char **ppattern)
{
	return common_topo_get_node_addr(node_name, paddr, ppattern);
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl, int *count, uint16_t tree_width)
{
	return common_topo_split_hostlist_treewidth(hl, sp_hl, count, tree_width);
}

extern int topology_p_topology_free(void *topoinfo_ptr)
{
	nvlbt_topoinfo_free(topoinfo_ptr);
	return SLURM_SUCCESS;
}

extern int topology_p_get(topology_data_t type, void *data)
{
	return nvlbt_get(topo, type, data);
}

extern int topology_p_topology_pack(void *topoinfo_ptr, buf_t *buffer, uint16_t protocol_version)
{
	return nvlbt_topoinfo_pack(topoinfo_ptr, buffer, protocol_version);
}

extern int topology_p_topology_print(void *topoinfo_ptr, char *nodes_list, char **out)
{
	return nvlbt_topoinfo_print(topoinfo_ptr, nodes_list, NULL, out);
}

extern int topology_p_topology_unpack(void **topoinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
	return nvlbt_topoinfo_unpack((nvlbt_topoinfo_t **) topoinfo_pptr, buffer, protocol_version);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask)
{
	return nvlbt_fragmentation(topo, node_mask);
}
