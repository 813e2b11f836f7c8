/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ops_26_05.c - what the topology plugin API of Slurm 26.05 adds to 25.11's
 * (ops_25_11.c, which a 26.05 build compiles too): allow_one_node,
 * eval_node and get_rank; 26 symbols in all.
 *
 * - cons_tres may place a one-node job without eval_nodes, calling eval_node
 *   per node, when allow_one_node says so: that would hand spares to ordinary
 *   single-node work, so it says no.
 * - get_rank gives MPI ranks and steps the block order.
 * - topology_eval_t gained a field in the middle (eval_action); it matters
 *   only to plugins that install their own eval_nodes callback, which
 *   nvlblock does not: compiling against 26.05's headers is enough.
 */
#include "src/common/slurm_xlator.h"

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/xmalloc.h"

#include "topology_nvlblock.h"

#if (SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(26, 5, 0)) || (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(27, 5, 0))
#error "ops_26_05.c is the Slurm 26.05 API (also used by 26.11); configure against a Slurm 26.05 or 26.11 tree"
#endif

extern bool topology_p_allow_one_node(void *pctx)
{
	return false;
}

/* Reached only through allow_one_node, which says no: refuse rather than
 * place a node outside nvlblock's policy. */
extern int topology_p_eval_node(topology_eval_t *topo_eval, int node_inx)
{
	return SLURM_ERROR;
}

/*
 * A rank per allocated node, in node_bitmap order: the block's index in the
 * unit bits, so that Slurm lays out tasks block by block and starts steps
 * within one NVLink domain. Nodes outside every block form a unit of their
 * own after the blocks.
 */
extern int topology_p_get_rank(bitstr_t *node_bitmap, uint32_t **node_rank, uint32_t *size, void *pctx)
{
	int count = node_bitmap ? bit_set_count(node_bitmap) : 0;
	uint32_t outside = (uint32_t) nvlbt_block_count(pctx);
	int n = 0;

	*node_rank = NULL;
	*size = 0;
	if (count <= 0)
		return SLURM_SUCCESS;
	*node_rank = xcalloc(count, sizeof(uint32_t));
	for (int i = 0; (i = bit_ffs_from_bit(node_bitmap, i)) >= 0 && (n < count); i++) {
		int b = nvlbt_block_index_of(pctx, i);

		(*node_rank)[n++] = ((b >= 0) ? (uint32_t) b : outside) << TOPO_RANK_ID_SHIFT;
	}
	*size = n;
	return SLURM_SUCCESS;
}
