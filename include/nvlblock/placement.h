/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nvlblock/placement.h - the C ABI, placement face (src/capi/placement.cpp):
 * a node's Slurm facts as a state, Slurm's question and the core's answer,
 * the segments of an allocation.
 */
#ifndef NVLBLOCK_PLACEMENT_H
#define NVLBLOCK_PLACEMENT_H

#include "nvlblock/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What slurmctld says of one node, as bits: from its node bitmaps, or from
 * the node record read as Slurm derives the bitmaps. nvlb_node_state_of() is
 * the one mapping to a state above (src/core/slurm_node_state.hpp). */
enum {
    NVLB_NODE_FACT_UP = 1u << 0,           /* in up_node_bitmap */
    NVLB_NODE_FACT_AVAIL = 1u << 1,        /* in avail_node_bitmap */
    NVLB_NODE_FACT_IDLE = 1u << 2,         /* in idle_node_bitmap */
    NVLB_NODE_FACT_COMPLETING = 1u << 3,   /* in cg_node_bitmap */
    NVLB_NODE_FACT_FUTURE = 1u << 4,       /* FUTURE */
    NVLB_NODE_FACT_POWERED_DOWN = 1u << 5, /* powered down or powering down */
    NVLB_NODE_FACT_UNREGISTERED = 1u << 6, /* not up, yet not DOWN, drained, failing nor powered off */
    NVLB_NODE_FACT_LENT = 1u << 7,         /* runs only preemptible work */
};
uint8_t nvlb_node_state_of(uint32_t node_facts);

/* Placement. */
typedef enum nvlb_reason {
    NVLB_PLACED = 0,
    NVLB_NOT_IN_TOPOLOGY = 1, /* no block node is usable: schedule without topology */
    NVLB_INVALID_REQUEST = 2,
    NVLB_SEGMENT_NOT_DIVISOR = 3,
    NVLB_SEGMENT_TOO_LARGE = 4,
    NVLB_TOO_LARGE = 5,
    NVLB_REQUIRED_UNAVAILABLE = 6,
    NVLB_SPARES_WITHHELD = 7,
    NVLB_NO_BLOCK_FITS = 8,
    NVLB_EXCLUSIVE_NO_BLOCK = 9,
    NVLB_RECOVERY_WAITING = 10,
    NVLB_NO_GROUP_FITS = 11, /* no group of the job's level above the blocks can take it now */
} nvlb_reason_t;

const char* nvlb_reason_name(nvlb_reason_t reason);

/* What Slurm says of the job, unshaped: the core turns these facts into the
 * question it answers, with the rules of the Slurm release the topology was
 * read for (nvlb_planner_load's slurm_version_number): the -N min-max clamp, --segment,
 * what a --nodelist means for a job of several segments. */
typedef struct nvlb_request {
    uint32_t job_id;
    uint32_t min_nodes;
    uint32_t max_nodes;       /* Slurm's upper bound; 0: min_nodes */
    uint32_t segment;         /* --segment (segment_size); 0: none */
    bool exclusive_topo;      /* --exclusive=topo or ExclusiveTopo=YES */
    bool preemptible;         /* nvlb_is_preemptible() of its QOS and partition */
    const uint8_t* available; /* node_count bytes, non-zero = usable now; NULL: free nodes */
    const uint32_t* required; /* --nodelist node indices */
    size_t required_count;
    int64_t now;            /* seconds (Unix time in the plugin, simulated time in the simulator) */
    int64_t eligible_since; /* when the job could first start (hierarchy.crossing counts from it); 0: now */
    uint32_t req_nodes;     /* the count Slurm asks for within min-max (select's req_nodes); 0: not given */
} nvlb_request_t;

typedef struct nvlb_placement {
    nvlb_reason_t reason;
    uint32_t* nodes;       /* caller's buffer of nodes_capacity entries */
    size_t nodes_capacity; /* in */
    size_t node_count;     /* out: chosen nodes, ascending */
    uint32_t spares_used;  /* recovery: nodes beyond its prior healthy ones */
    bool recovery_in_place;
    uint32_t blocks_if_spares;
    char message[512]; /* a sentence for the user */
    /* Refused for good as asked: Slurm's topology/block refuses such a job at
     * submission (ESLURM_REQUESTED_TOPO_CONFIG_UNAVAILABLE). */
    bool topology_unavailable;
    char group[128];  /* placed: the group above the blocks it was confined to; "" if none */
    uint32_t segment; /* the --segment the answer applied (26.05 ignores one larger than the job); 0: none */
} nvlb_placement_t;

/* The placement question. Decides nothing for later: the planner's state
 * is as it was. A refusal's sentence (out->message; not for
 * NVLB_NOT_IN_TOPOLOGY) is kept as the job's pending reason, the C ABI's
 * memo of its last answer that nvlb_reasons_each shows again and no decision
 * reads (include/nvlblock/reasons.h). */
nvlb_status_t nvlb_place(nvlb_planner_t* planner, const uint8_t* node_states, size_t node_count,
                         const nvlb_request_t* request, nvlb_placement_t* out);

/* Which nodes changed (optional: a decision then reads the nodes named, not
 * every node). After nvlb_track_changes(planner, true), the caller names,
 * before each nvlb_place, every node whose node_states byte differs from what
 * the previous nvlb_place passed, and every node whose available byte differs
 * from the map of the last nvlb_place that passed one (naming a node that did
 * not change is harmless). Other calls that pass node_states read every node
 * and are not counted (the next nvlb_place reads every node once after one). A node not named is read as it was: the
 * answers are those of a caller that names nothing only while every change is named. nvlb_track_changes(planner, true)
 * again says every node may have changed (a caller that cannot list a change); nvlb_track_changes(planner, false):
 * every node is read on every call again. */
nvlb_status_t nvlb_track_changes(nvlb_planner_t* planner, bool on);
nvlb_status_t nvlb_nodes_changed(nvlb_planner_t* planner, const uint32_t* nodes, size_t count);

/* The segments of an allocation: per block (in block order), runs of
 * segment_size of its nodes (all of the block's nodes when 0); nodes outside
 * every block form one more segment. segment_of (count entries, may be NULL)
 * receives each node's segment index. Returns the number of segments. */
size_t nvlb_segments(const nvlb_planner_t* planner, const uint32_t* nodes, size_t count, uint32_t segment_size,
                     uint32_t* segment_of);

#ifdef __cplusplus
}
#endif

#endif /* NVLBLOCK_PLACEMENT_H */
