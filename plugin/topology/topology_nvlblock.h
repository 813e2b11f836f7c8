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
#include "src/common/list.h"
#include "src/common/pack.h"
#include "src/interfaces/topology.h"

#include "nvlblock/nvlblock.h"
#include <time.h>

/* topology/nvlblock's plugin_id (defined in topology_nvlblock.c). */
#define NVLBT_PLUGIN_ID 20054
extern const uint32_t plugin_id;

/* What `scontrol show topology` receives: packed by slurmctld, so every
 * client prints the same text. */
typedef struct {
	uint32_t record_count; /* blocks */
	char **names;
	char **nodes;
	char **lines;
	uint32_t group_count; /* groups of the hierarchy above the blocks */
	char **group_names;
	char **group_lines;
	char *summary;    /* the summary line */
	char *recoveries; /* pending and recent recoveries, one per line; may be NULL */
} nvlbt_topoinfo_t;

/* The segments of a job's allocation, as node lists (Slurm 25.11+'s job
 * topology info, read by switch/nvidia_imex for a channel per segment). */
typedef struct {
	list_t *list; /* of char *, hostlist expressions */
} nvlbt_segments_t;

extern int nvlbt_init(void);

/*
 * One topology's state (topology_nvlblock.c): its planner, its blocks as
 * Slurm bitmaps, its evaluation buffers. Every call below that answers for
 * a topology takes the one Slurm named: 25.05+ keep it in the context Slurm
 * passes (tctx->plugin_ctx, ops_25_05.c), 24.11 has one (ops_24_11.c).
 * The first topology built serves recovery: its planner is the process
 * planner that prep's epilog and the status thread use.
 */
typedef struct nvlbt_topo nvlbt_topo_t;
extern nvlbt_topo_t *nvlbt_topo_create(const char *name);
extern void nvlbt_topo_destroy(nvlbt_topo_t *topo);
extern const char *nvlbt_topo_name(const nvlbt_topo_t *topo);

/* topology_conf: Slurm's topology.conf path (read when there is no nvlblock.yaml). */
extern int nvlbt_build_config(nvlbt_topo_t *topo, const char *topology_conf);
extern int nvlbt_eval_nodes(nvlbt_topo_t *topo, topology_eval_t *topo_eval);
/* Slurm 25.05+'s add_rm_node: unit is a block name, "" (out of every block)
 * or NULL (Slurm cleared the node's topology: back to the block nvlblock's
 * file gives it). Needs slurmctld's node write and job read locks. */
extern int nvlbt_add_rm_node(nvlbt_topo_t *topo, node_record_t *node_ptr, const char *unit);
extern int nvlbt_whole_topo(const nvlbt_topo_t *topo, bitstr_t *node_mask);
extern bitstr_t *nvlbt_get_bitmap(const nvlbt_topo_t *topo, const char *name);
extern int nvlbt_block_count(const nvlbt_topo_t *topo);
/* The block a node (slurmctld node index) is in: its index or -1, its name or NULL. */
extern int nvlbt_block_index_of(const nvlbt_topo_t *topo, int node_index);
extern const char *nvlbt_block_name_of(const nvlbt_topo_t *topo, int node_index);
/* topology_p_get: TOPO_DATA_TOPOLOGY_PTR (tagged with our plugin_id),
 * TOPO_DATA_REC_CNT, TOPO_DATA_EXCLUSIVE_TOPO. */
extern int nvlbt_get(const nvlbt_topo_t *topo, topology_data_t type, void *data);
extern nvlbt_topoinfo_t *nvlbt_topoinfo_build(const nvlbt_topo_t *topo);
/* packed_info.c: free, pack, unpack and print the topology info and the
 * segment lists (nothing there needs slurmctld). */
extern void nvlbt_topoinfo_free(nvlbt_topoinfo_t *info);
/* Both refuse protocol versions older than Slurm's oldest supported one. */
extern int nvlbt_topoinfo_pack(nvlbt_topoinfo_t *info, buf_t *buffer, uint16_t protocol_version);
extern int nvlbt_topoinfo_unpack(nvlbt_topoinfo_t **out, buf_t *buffer, uint16_t protocol_version);
/* unit: a block name (Slurm 25.05+'s block=/unit=); nodes_list: a node list,
 * or (24.11's one argument) a block name; either may be NULL. */
extern int nvlbt_topoinfo_print(nvlbt_topoinfo_t *info, const char *nodes_list, const char *unit, char **out);
extern uint32_t nvlbt_fragmentation(const nvlbt_topo_t *topo, bitstr_t *node_mask);
/* Per block of the allocation, runs of segment_size nodes (all of the
 * block's nodes when 0); nodes outside every block form one more segment. */
extern nvlbt_segments_t *nvlbt_segments_build(const nvlbt_topo_t *topo, bitstr_t *nodes, uint16_t segment_size);
extern void nvlbt_segments_free(nvlbt_segments_t *segments);
extern void nvlbt_segments_pack(nvlbt_segments_t *segments, buf_t *buffer);
extern int nvlbt_segments_unpack(nvlbt_segments_t **out, buf_t *buffer);
/* ops_25_11.c (Slurm 25.11+), after an eval_nodes that placed the job: its
 * segments as the job's topology info when it asked for an IMEX channel per
 * segment. */
extern void nvlbt_attach_segments(const nvlbt_topo_t *topo, topology_eval_t *topo_eval);

/* last_good.c: copies of the topology files last accepted, under
 * StateSaveLocation; on a reconfigure that meets a broken file, the copy of
 * `path` to load instead (xmalloc'd), else NULL (a first start). */
extern void nvlbt_keep_last_good(nvlb_planner_t *planner);
extern char *nvlbt_last_good_copy(const char *path);

/* Whether any block reclaims its spares (`reserve: reclaim`). */
extern bool nvlbt_reclaims_spares(const nvlbt_topo_t *topo);
/* reclaim.c: requeue the jobs the core names so that jobs waiting to restart
 * in place get their blocks back. Needs slurmctld's job and node write locks.
 * Returns how many open recoveries it looked at (0: nothing to plan). */
extern size_t nvlbt_reclaim_spares(nvlb_planner_t *planner, time_t now);

/* reclaim_eligible.c: NVLB_SLURM_WOULD_START when Slurm would let job_ptr
 * run on `nodes` (partition, exclusions, constraints, reservations), else
 * why not (nvlb_slurm_start_refusal_t). Needs the job, node and partition
 * locks. */
extern uint8_t nvlbt_slurm_refuses(job_record_t *job_ptr, bitstr_t *nodes, time_t now);

/* The status thread (status_thread.c), slurmctld only. */
/* control.c: whether this slurmctld is the one in control (status thread
 * only: it may read a small file); build_config reports a takeover. */
extern bool nvlbt_in_control(void);
/* Still in control as far as Slurm says (shutting down, standby), without
 * reading nvlblock's claim: cheap enough under Slurm's locks, after
 * nvlbt_in_control() said yes outside them. */
extern bool nvlbt_still_in_control(void);
extern void nvlbt_control_taken(void);
/* Another controller had control since this one last claimed it: its
 * saved state is newer than this one's memory. */
extern bool nvlbt_other_had_control(void);

/* file_writer.c: the thread that writes nvlblock's files. A request hands
 * over the reports (nvlb_report text and xmalloc'd path, taken; NULL: none)
 * and asks for the state to be saved if it changed. */
extern void nvlbt_files_request(bool save, char *json, char *json_path, char *prom, char *prom_path);
extern void nvlbt_files_start(void);
extern void nvlbt_files_stop(void);
/* operator_requests.c: apply and remove the requests an operator left in
 * <StateSaveLocation>/nvlblock-requests (file writer thread, in control). */
extern void nvlbt_take_requests(nvlb_planner_t *planner);

/* The status thread serves one topology, the one recovery is in (its
 * planner is the process planner); stopped before that topology goes. */
extern void nvlbt_status_start(const nvlbt_topo_t *topo);
extern void nvlbt_status_stop(void);

#endif
