// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/slurm_request.hpp"

#include <algorithm>

namespace nvlblock {

namespace {

// -N min-max: the most nodes the job takes is Slurm's requested count within
// its bounds (select's req_nodes), never more than the cluster has, never
// fewer than its minimum.
std::uint32_t max_nodes_of(const SlurmJobFacts& f, std::size_t node_count) {
    std::uint32_t most = f.max_nodes ? f.max_nodes : f.min_nodes;
    if (f.req_nodes)
        most = std::min(most, std::max(f.req_nodes, f.min_nodes));
    most = static_cast<std::uint32_t>(std::min<std::size_t>(most, node_count));
    return std::max(most, f.min_nodes);
}

// 26.05's topology/block ignores a --segment larger than the job: the job is
// one segment.
std::uint32_t segment_of(const SlurmJobFacts& f, int release) {
    const std::uint32_t job = f.req_nodes ? std::min(f.min_nodes, f.req_nodes) : f.min_nodes;
    if (release >= 2605 && f.segment_size > job)
        return 0;
    return f.segment_size;
}

// From 25.11, the --nodelist of a job of several segments names its
// candidates when it holds at least the job's nodes: topology/block narrows
// the node map to them and places the segments there (eval_nodes_block.c).
// Before 25.11 such a list is refused, as topology/block refuses it. (A list
// longer than the job never reaches a topology plugin: slurmctld turns it into
// an exclusion of every other node at submission.)
bool nodelist_names_candidates(const SlurmJobFacts& f, std::uint32_t segment, int release) {
    return release >= 2511 && segment && f.min_nodes > segment && f.nodelist.size() >= f.min_nodes;
}

} // namespace

Request request_from_slurm(const SlurmJobFacts& facts, int release, std::size_t node_count,
                           std::vector<std::uint8_t>& candidates) {
    Request r;
    r.job_id = facts.job_id;
    r.min_nodes = facts.min_nodes;
    r.max_nodes = max_nodes_of(facts, node_count);
    r.segment = segment_of(facts, release);
    r.exclusive_topo = facts.whole_topology;
    r.preemptible = facts.preemptible;
    r.available = facts.available;
    r.multi_segment_nodelist =
        release >= 2511 ? MultiSegmentNodelist::kMustNameEveryNode : MultiSegmentNodelist::kUnsupported;
    if (nodelist_names_candidates(facts, r.segment, release)) {
        candidates.assign(node_count, 0);
        for (NodeIndex n : facts.nodelist)
            if (n < node_count && (facts.available.empty() || facts.available[n]))
                candidates[n] = 1;
        r.available = candidates;
    } else {
        r.required = facts.nodelist;
    }
    if (facts.eligible_since > 0 && facts.eligible_since < facts.now)
        r.waited = facts.now - facts.eligible_since;
    return r;
}

} // namespace nvlblock
