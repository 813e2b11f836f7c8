/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops_25_05.c - the topology plugin API of Slurm 25.05: the 18 symbols of its
 * ops table (src/interfaces/topology.c), each a thin call into
 * topology_nvlblock.c. Slurm 25.11 and 26.05 keep all of them with the same
 * signatures (25.11 renames the four topoinfo ones) and add their own:
 * ops_25_11.c, ops_26_05.c.
 *
 * What changed since 24.11, and what we make of it:
 * - Calls carry a topology context: build_config/destroy_config/add_rm_node/
 *   generate_node_ranking get the topology_ctx_t, the others the plugin's
 *   own tctx->plugin_ctx. nvlblock's state for the topology (its planner,
 *   blocks and buffers: nvlbt_topo_t) lives there, made at build_config
 *   and freed at destroy_config, as Slurm's own block plugin does. One
 *   topology per slurmctld serves recovery (nvlblock's file, state file,
 *   status files and epilog are the process's), and Slurm gives an
 *   out-of-tree plugin only one context anyway (the "default" one built
 *   from slurm.conf: topology.yaml knows only Slurm's built-in types), so a
 *   second topology naming nvlblock is refused with a clear error. From
 *   26.11 Slurm loads a plugin once per type and tells its topologies apart
 *   by context (437fa2397f, a4215a5f09); nvlblock never read the indexes
 *   that change there, and still gets the one default context.
 * - topology.conf's path comes in the context (the global topo_conf is gone).
 * - --exclusive=topo is honoured only for plugins that export
 *   supports_exclusive_topo = true.
 * - topology_p_topology_print gets the block name (scontrol show topology
 *   block=NAME) apart from the node list.
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/plugins/topology/common/common_topo.h"

#include "topology_nvlblock.h"

#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(25, 5, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(27, 5, 0))
#error "ops_25_05.c is the Slurm 25.05 API (also used by 25.11, 26.05 and 26.11); configure against a Slurm 25.05 to 26.11 tree"
#endif

/* 25.11 renamed topology_p_topology_{free,pack,print,unpack} topoinfo_*. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
#define TOPOINFO_OP(op) topology_p_topoinfo_##op
#else
#define TOPOINFO_OP(op) topology_p_topology_##op
#endif

/* plugin_name, plugin_type, plugin_id and plugin_version: topology_nvlblock.c. */
/* cons_tres ignores --exclusive=topo for plugins that do not say this. */
const bool supports_exclusive_topo = true;

/* The topology built, also in its context's plugin_ctx: fini gets no
 * context and must still end it when Slurm did not call destroy_config. */
static nvlbt_topo_t *built = NULL;

extern int init(void)
{
	return nvlbt_init();
}

extern void fini(void)
{
	nvlbt_topo_destroy(built);
	built = NULL;
}

extern int topology_p_build_config(topology_ctx_t *tctx)
{
	nvlbt_topo_t *topo = tctx->plugin_ctx;

	if (!topo) {
		if (built) {
			error("topology/nvlblock: topology '%s' cannot use nvlblock too: nvlblock serves one topology, "
			      "'%s'",
			      tctx->name, nvlbt_topo_name(built));
			return SLURM_ERROR;
		}
		topo = built = nvlbt_topo_create(tctx->name);
		tctx->plugin_ctx = topo;
	}
	return nvlbt_build_config(topo, tctx->topo_conf);
}

extern int topology_p_destroy_config(topology_ctx_t *tctx)
{
	nvlbt_topo_t *topo = tctx->plugin_ctx;

	if (topo == built)
		built = NULL;
	nvlbt_topo_destroy(topo);
	tctx->plugin_ctx = NULL;
	return SLURM_SUCCESS;
}

/*
 * Slurm's way to put a node into a named unit (slurm.conf Topology=, dynamic
 * nodes, scontrol update NodeName=X Topology=<topology>:<block>, and every
 * node's saved topology at start-up): unit is a block name, "" (the topology
 * named without a block: out of every block) or NULL (the node's topology
 * cleared, as for a deleted dynamic node and when Slurm undoes a refused
 * change: back to the block nvlblock's file gives it). The rule is the
 * core's (topology_nvlblock.c, core/topology_change.hpp).
 */
extern int topology_p_add_rm_node(node_record_t *node_ptr, char *unit, topology_ctx_t *tctx)
{
	return nvlbt_add_rm_node(tctx ? tctx->plugin_ctx : NULL, node_ptr, unit);
}

extern int topology_p_eval_nodes(topology_eval_t *topo_eval)
{
	nvlbt_topo_t *topo = topo_eval->tctx ? topo_eval->tctx->plugin_ctx : NULL;
	int rc = nvlbt_eval_nodes(topo, topo_eval);

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
	if (rc == SLURM_SUCCESS)
		nvlbt_attach_segments(topo, topo_eval);
#endif
	return rc;
}

extern int topology_p_whole_topo(bitstr_t *node_mask, void *pctx)
{
	return nvlbt_whole_topo(pctx, node_mask);
}

extern bitstr_t *topology_p_get_bitmap(char *name, void *pctx)
{
	return nvlbt_get_bitmap(pctx, name);
}

/* Node ranks are not ours to change: blocks are not an ordering. */
extern bool topology_p_generate_node_ranking(topology_ctx_t *tctx)
{
	return false;
}

extern int topology_p_get_node_addr(char *node_name, char **paddr, char **ppattern, void *pctx)
{
	return common_topo_get_node_addr(node_name, paddr, ppattern);
}

extern int topology_p_split_hostlist(hostlist_t *hl, hostlist_t ***sp_hl, int *count, uint16_t tree_width, void *pctx)
{
	return common_topo_split_hostlist_treewidth(hl, sp_hl, count, tree_width);
}

extern int topology_p_get(topology_data_t type, void *data, void *pctx)
{
	return nvlbt_get(pctx, type, data);
}

extern int TOPOINFO_OP(free)(void *topoinfo_ptr)
{
	nvlbt_topoinfo_free(topoinfo_ptr);
	return SLURM_SUCCESS;
}

extern int TOPOINFO_OP(pack)(void *topoinfo_ptr, buf_t *buffer, uint16_t protocol_version)
{
	return nvlbt_topoinfo_pack(topoinfo_ptr, buffer, protocol_version);
}

extern int TOPOINFO_OP(print)(void *topoinfo_ptr, char *nodes_list, char *unit, char **out)
{
	return nvlbt_topoinfo_print(topoinfo_ptr, nodes_list, unit, out);
}

extern int TOPOINFO_OP(unpack)(void **topoinfo_pptr, buf_t *buffer, uint16_t protocol_version)
{
	return nvlbt_topoinfo_unpack((nvlbt_topoinfo_t **) topoinfo_pptr, buffer, protocol_version);
}

extern uint32_t topology_p_get_fragmentation(bitstr_t *node_mask, void *pctx)
{
	return nvlbt_fragmentation(pctx, node_mask);
}
