/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/config.h - the C ABI, configuration face (src/capi/config.cpp):
 * loading and reloading a topology, the process planner, checking a file,
 * the topology and policy a planner holds, topology changes at run time.
 */
#ifndef NVLBLOCK_CONFIG_H
#define NVLBLOCK_CONFIG_H

#include "nvlblock/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Load a topology file (YAML if it ends in .yaml/.yml, else topology.conf
 * block syntax). node_names: slurm.conf's nodes in Slurm's index order, or
 * NULL to number nodes in topology order. slurm_version_number: the Slurm
 * release whose topology/block rules apply where releases differ, for
 * reading the file and for every placement (SLURM_VERSION_NUMBER, e.g.
 * 0x180b05 for 24.11.5; 0: 24.11). */
nvlb_status_t nvlb_planner_load(const char* path, const char* const* node_names, size_t node_count,
                                uint32_t slurm_version_number, nvlb_planner_t** out, nvlb_error_t* err);
/* Reconfigure from a file; on any error the planner keeps its old topology.
 * Pending recoveries are carried over by node name. */
nvlb_status_t nvlb_planner_reload(nvlb_planner_t* planner, const char* path, const char* const* node_names,
                                  size_t node_count, uint32_t slurm_version_number, nvlb_error_t* err);
void nvlb_planner_free(nvlb_planner_t* planner);
/* The planner of this process. The Slurm plugins of one daemon (the
 * topology plugin and the PrEp plugin) are separate shared objects; they share
 * one planner through libnvlblock, which the dynamic loader maps once.
 * nvlb_process_planner_set() takes ownership and frees the previous one. */
void nvlb_process_planner_set(nvlb_planner_t* planner);
nvlb_planner_t* nvlb_process_planner(void);

/* Validate a file without keeping it, as nvlb_planner_load would read it for
 * that release. Warnings (accepted but suspicious) are passed to warn, if
 * given, one "file:line: message" at a time. */
nvlb_status_t nvlb_check_file(const char* path, const char* const* node_names, size_t node_count,
                              uint32_t slurm_version_number, void (*warn)(void* ctx, const char* line), void* ctx,
                              nvlb_error_t* err);

/* Topology queries. */
size_t nvlb_node_count(const nvlb_planner_t* planner);
size_t nvlb_block_count(const nvlb_planner_t* planner);
int32_t nvlb_find_block(const nvlb_planner_t* planner, const char* name);

typedef struct nvlb_block_info {
    const char* name;  /* valid until the planner is reloaded or freed */
    const char* nodes; /* hostlist expression */
    uint32_t size;
    uint32_t slice;
    uint32_t spares;
    bool lending;
    bool reclaim; /* reserve: reclaim (rule 3b) */
} nvlb_block_info_t;

nvlb_status_t nvlb_block_info(const nvlb_planner_t* planner, uint32_t block, nvlb_block_info_t* out);
/* Node indices of a block; returns the block size (copies at most cap). */
size_t nvlb_block_nodes(const nvlb_planner_t* planner, uint32_t block, uint32_t* out, size_t cap);

/* The longest path nvlb_policy_info() copies, with its terminating NUL. */
#define NVLB_PATH_MAX 4096

/* Copies, not pointers into the planner: a topology change at run time
 * (another thread) may replace what they were read from at any moment. */
typedef struct nvlb_policy_info {
    int64_t recovery_wait_s;
    double block_fault_fraction;
    int64_t status_interval_s;
    char status_json[NVLB_PATH_MAX];       /* "" when not set */
    char status_prometheus[NVLB_PATH_MAX]; /* "" when not set */
    bool from_topology_conf;               /* plain topology.conf: behaves as topology/block */
    char source[NVLB_PATH_MAX];            /* the file read */
    char included_conf[NVLB_PATH_MAX];     /* nvlblock.yaml's topology_conf or topology_yaml as written; "" when none */
    char included_conf_path[NVLB_PATH_MAX]; /* ...and the path it was read from */
    int64_t recovery_reclaim_budget_s;      /* recovery.reclaim_budget (reserve: reclaim, rule 3b) */
} nvlb_policy_info_t;

/* NVLB_E_INVALID (and every string "") when a path does not fit NVLB_PATH_MAX. */
nvlb_status_t nvlb_policy_info(const nvlb_planner_t* planner, nvlb_policy_info_t* out);
/* Whether a job in this QOS / partition (either may be NULL) is preemptible
 * work that may borrow spares (the topology file's `preemptible:`). */
bool nvlb_is_preemptible(const nvlb_planner_t* planner, const char* qos, const char* partition);
/* Seconds after a requeued job's end before Slurm lets it start again at
 * the latest: its nodes complete for up to KillWait, then the requeue's
 * cred_expire + 1 (the plugin passes KillWait + cred_expire + 1). The nodes
 * of a failed job stay held at least this long plus the time a scheduling
 * pass may take to reach it, which the core adds. */
void nvlb_set_requeue_delay(nvlb_planner_t* planner, int64_t seconds);

/* ---- Topology changes at run time (Slurm 25.05+ add_rm_node) ---------------
 * A node goes into a block nvlblock knows, out of every block, or back to the
 * block its file gives it; re-applying its block changes nothing; a change
 * that would split a running job's block, or touch a block a job waits to
 * restart on, is refused (core/topology_change.hpp has the whole rule). */
typedef enum nvlb_unit_kind {
    NVLB_UNIT_BLOCK = 0,      /* into the block named `block` */
    NVLB_UNIT_NONE = 1,       /* out of every block */
    NVLB_UNIT_CONFIGURED = 2, /* back to the block of nvlblock's file */
} nvlb_unit_kind_t;

typedef enum nvlb_change {
    NVLB_CHANGE_NONE = 0,    /* it is there already: nothing changed */
    NVLB_CHANGE_APPLIED = 1, /* the topology changed */
    NVLB_CHANGE_REFUSED = 2, /* message says why */
} nvlb_change_t;

/* A job running on the node, with all of its nodes. */
typedef struct nvlb_job_nodes {
    uint32_t job_id;
    const uint32_t* nodes;
    size_t node_count;
} nvlb_job_nodes_t;

/* node: the node's index, node_name: its name (a dynamic node may be new in
 * its slot). restoring: Slurm re-applies the topology it saved for the node
 * (start-up, reconfigure): the job rules are skipped. The outcome and a
 * sentence (what changed, or why not) come back in *outcome and message. */
nvlb_status_t nvlb_node_topology(nvlb_planner_t* planner, uint32_t node, const char* node_name, nvlb_unit_kind_t kind,
                                 const char* block, const nvlb_job_nodes_t* running, size_t running_count,
                                 bool restoring, nvlb_change_t* outcome, char* message, size_t message_cap);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_CONFIG_H */
