/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * topology_nvlblock.h - what topology/nvlblock does, independent of the Slurm
 * API generation. Each generation's ops file (ops_24_11.c, ...) exports the
 * topology_p_* symbols with that generation's signatures and calls these.
 */
#ifndef NVLBLOCK_TOPOLOGY_NVLBLOCK_H
#define NVLBLOCK_TOPOLOGY_NVLBLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "src/common/bitstring.h"
#include "src/common/pack.h"
#include "src/interfaces/topology.h"

/* What `scontrol show topology` receives: packed by slurmctld, so every
 * client prints the same text. */
typedef struct {
	uint32_t record_count;
	char **names;
	char **nodes;
	char **lines;
	char *summary;
} nvlbt_topoinfo_t;

extern int nvlbt_init(void);
extern void nvlbt_fini(void);
extern int nvlbt_build_config(void);
extern int nvlbt_eval_nodes(topology_eval_t *topo_eval);
extern int nvlbt_whole_topo(bitstr_t *node_mask);
extern bitstr_t *nvlbt_get_bitmap(const char *name);
extern int nvlbt_block_count(void);
extern nvlbt_topoinfo_t *nvlbt_topoinfo_build(void);
extern void nvlbt_topoinfo_free(nvlbt_topoinfo_t *info);
extern void nvlbt_topoinfo_pack(nvlbt_topoinfo_t *info, buf_t *buffer);
extern int nvlbt_topoinfo_unpack(nvlbt_topoinfo_t **out, buf_t *buffer);
extern int nvlbt_topoinfo_print(nvlbt_topoinfo_t *info, const char *nodes_list, char **out);
extern uint32_t nvlbt_fragmentation(bitstr_t *node_mask);

/* The status thread (status_thread.c), slurmctld only. */
extern void nvlbt_status_start(void);
extern void nvlbt_status_stop(void);

#endif
