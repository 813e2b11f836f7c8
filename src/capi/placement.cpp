// SPDX-License-Identifier: GPL-2.0-or-later
//
// The C ABI, placement face (include/nvlblock/placement.h): a node's
// Slurm facts as a state, and Slurm's question with the core's answer.
#include "capi/abi_support.hpp"

#include "core/slurm_node_state.hpp"
#include "placement/segments.hpp"
#include "writers/explain.hpp"

#include <algorithm>
#include <map>

using namespace nvlblock;
using namespace nvlblock::capi;

namespace {

constexpr bool same_fact(SlurmNodeFact core, unsigned abi) {
    return static_cast<unsigned>(core) == abi;
}

// A refusal's sentence, kept as the job's pending reason (reasons.h): a
// memo of the answer, which no decision reads. Out of memory, it is not
// kept; nothing else changes.
void keep_reason(nvlb_planner& p, std::uint32_t job_id, const char* text) {
    try {
        std::lock_guard lock(p.reasons_mutex);
        p.reasons[job_id] = text;
    } catch (...) {
    }
}

} // namespace

static_assert(same_fact(kNodeUp, NVLB_NODE_FACT_UP) && same_fact(kNodeAvail, NVLB_NODE_FACT_AVAIL) &&
              same_fact(kNodeIdle, NVLB_NODE_FACT_IDLE) && same_fact(kNodeCompleting, NVLB_NODE_FACT_COMPLETING) &&
              same_fact(kNodeFuture, NVLB_NODE_FACT_FUTURE) &&
              same_fact(kNodePoweredDown, NVLB_NODE_FACT_POWERED_DOWN) &&
              same_fact(kNodeUnregistered, NVLB_NODE_FACT_UNREGISTERED) && same_fact(kNodeLent, NVLB_NODE_FACT_LENT));

extern "C" {

uint8_t nvlb_node_state_of(uint32_t facts) {
    return static_cast<uint8_t>(node_state_from_slurm(facts));
}

const char* nvlb_reason_name(nvlb_reason_t r) {
    if (r < NVLB_PLACED || r > NVLB_NO_GROUP_FITS)
        return "unknown";
    return reason_name(static_cast<Reason>(r));
}

nvlb_status_t nvlb_place(nvlb_planner_t* p, const uint8_t* node_states, size_t node_count,
                         const nvlb_request_t* request, nvlb_placement_t* out) {
    if (!p || !node_states || !request || !out)
        return NVLB_E_INVALID;
    out->node_count = 0;
    out->spares_used = 0;
    out->recovery_in_place = false;
    out->blocks_if_spares = 0;
    out->message[0] = '\0';
    out->topology_unavailable = false;
    out->group[0] = '\0';
    out->segment = 0;
    return guarded(nullptr, [&] {
        std::lock_guard lock(p->mutex);
        if (node_count != p->planner.topology().node_count()) {
            copy_str(out->message, sizeof out->message, "node count does not match the topology");
            return NVLB_E_INVALID;
        }
        const AskedArrays arrays = asked_arrays(p, node_states, node_count, request->available);
        nvlb_request_t facts = *request;
        facts.available = arrays.available;
        std::vector<std::uint8_t> candidates;
        const Request asked = request_of(*p, facts, node_count, candidates);
        out->segment = asked.segment;
        Placement pl = p->planner.place(arrays.states, asked, request->now);
        out->reason = static_cast<nvlb_reason_t>(pl.reason);
        out->spares_used = pl.spares_used;
        out->recovery_in_place = pl.recovery_in_place;
        out->blocks_if_spares = pl.blocks_if_spares;
        copy_str(out->message, sizeof out->message, explain(p->planner.topology(), pl));
        out->topology_unavailable = pl.topology_unavailable;
        copy_str(out->group, sizeof out->group, pl.group);
        if (pl.nodes.size() > out->nodes_capacity || (!out->nodes && !pl.nodes.empty())) {
            out->reason = NVLB_INVALID_REQUEST;
            copy_str(out->message, sizeof out->message, "placement buffer too small");
            return NVLB_E_INVALID;
        }
        std::copy(pl.nodes.begin(), pl.nodes.end(), out->nodes);
        out->node_count = pl.nodes.size();
        if (!pl.placed() && pl.reason != Reason::kNotInTopology && out->message[0])
            keep_reason(*p, request->job_id, out->message);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_track_changes(nvlb_planner_t* p, bool on) {
    if (!p)
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        std::lock_guard lock(p->mutex);
        set_tracking(*p, on);
        return NVLB_OK;
    });
}

nvlb_status_t nvlb_nodes_changed(nvlb_planner_t* p, const uint32_t* nodes, size_t count) {
    if (!p || (!nodes && count))
        return NVLB_E_INVALID;
    return guarded(nullptr, [&] {
        std::lock_guard lock(p->mutex);
        p->planner.changes().note(std::span<const NodeIndex>(nodes, count));
        return NVLB_OK;
    });
}

size_t nvlb_segments(const nvlb_planner_t* p, const uint32_t* nodes, size_t count, uint32_t segment_size,
                     uint32_t* segment_of) {
    if (!p || (!nodes && count))
        return 0;
    try {
        std::vector<std::vector<NodeIndex>> segs;
        {
            std::lock_guard lock(p->mutex);
            segs = segments_of(p->planner.topology(), {nodes, count}, segment_size);
        }
        if (segment_of) {
            std::map<NodeIndex, std::uint32_t> index;
            for (std::size_t s = 0; s < segs.size(); ++s)
                for (NodeIndex n : segs[s])
                    index[n] = static_cast<std::uint32_t>(s);
            for (std::size_t i = 0; i < count; ++i)
                segment_of[i] = index[nodes[i]];
        }
        return segs.size();
    } catch (...) {
        return 0;
    }
}

} // extern "C"
