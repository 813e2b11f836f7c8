// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/reclaim.hpp"

#include <algorithm>

namespace nvlblock {
namespace {

int healthy_nodes_on(const Snapshot& snap, const RunningJob& j, BlockIndex b) {
    const Topology& topo = snap.topology();
    int here = 0;
    for (NodeIndex n : j.nodes)
        here += n < topo.node_count() && topo.block_of(n) == b && is_healthy(snap.state(n));
    return here;
}

} // namespace

std::optional<Reclaim> plan_reclaim(const Snapshot& snap, const RecoveryClaim& claim, const Placement& refusal,
                                    std::span<const RunningJob> running, std::int64_t now, std::int64_t wait_seconds) {
    if (refusal.reason != Reason::kRecoveryWaiting || refusal.shortfalls.empty())
        return std::nullopt;
    const Topology& topo = snap.topology();
    Reclaim plan;
    for (const RecoveryNeed& need : claim.blocks)
        plan.budget_node_seconds += static_cast<std::int64_t>(need.prior_healthy.size()) * wait_seconds;

    struct Candidate {
        const RunningJob* job;
        std::int64_t lost; // node-seconds of run time
        int here;          // healthy nodes on the block
    };
    for (const Shortfall& s : refusal.shortfalls) {
        const Block& block = topo.block(s.block);
        if (s.block_down || block.settings.reserve != SpareReserve::kReclaim)
            return std::nullopt;
        // Its own healthy nodes may still be finishing its last run (busy
        // for a moment): they are its to take back, not missing.
        int releasing = 0;
        for (const RecoveryNeed& need : claim.blocks)
            if (need.block == s.block)
                for (NodeIndex n : need.prior_healthy)
                    releasing += snap.state(n) == NodeState::kBusy || snap.state(n) == NodeState::kLent;
        int missing = static_cast<int>(s.need) - static_cast<int>(s.room) - releasing;
        if (missing > block.settings.spares)
            return std::nullopt; // more than its spares: wait, or fall back, as in an idle-spare block
        std::vector<Candidate> cands;
        for (const RunningJob& j : running) {
            if (j.job_id == claim.job_id || !j.requeueable || j.exempt)
                continue;
            const int here = healthy_nodes_on(snap, j, s.block);
            if (here == 0)
                continue;
            if (std::find(plan.jobs.begin(), plan.jobs.end(), j.job_id) != plan.jobs.end()) {
                missing -= here; // already chosen for another of the job's blocks
                continue;
            }
            const std::int64_t ran = std::max<std::int64_t>(0, now - j.started);
            cands.push_back({&j, static_cast<std::int64_t>(j.nodes.size()) * ran, here});
        }
        // Preemptible work first, then the least work lost, fewest nodes, lowest id.
        std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
            if (a.job->preemptible != b.job->preemptible)
                return a.job->preemptible;
            if (a.lost != b.lost)
                return a.lost < b.lost;
            if (a.job->nodes.size() != b.job->nodes.size())
                return a.job->nodes.size() < b.job->nodes.size();
            return a.job->job_id < b.job->job_id;
        });
        for (const Candidate& c : cands) {
            if (missing <= 0)
                break;
            plan.jobs.push_back(c.job->job_id);
            plan.nodes += static_cast<std::uint32_t>(c.here);
            if (!c.job->preemptible)
                plan.lost_node_seconds += c.lost;
            missing -= c.here;
        }
        if (missing > 0)
            return std::nullopt;
    }
    if (plan.jobs.empty() || plan.lost_node_seconds > plan.budget_node_seconds)
        return std::nullopt;
    return plan;
}

std::string describe_reclaim(const Topology& topo, const RecoveryClaim& claim, const Reclaim& r) {
    std::string blocks;
    for (const RecoveryNeed& need : claim.blocks) {
        if (!blocks.empty())
            blocks += ',';
        blocks += topo.block(need.block).name;
    }
    std::string jobs;
    for (std::uint32_t id : r.jobs)
        jobs += (jobs.empty() ? "" : ",") + std::to_string(id);
    return "JobId=" + std::to_string(claim.job_id) + " reclaiming " + std::to_string(r.nodes) + " spare node" +
           (r.nodes == 1 ? "" : "s") + " on " + blocks + ": requeueing JobId=" + jobs + " (" +
           std::to_string(r.lost_node_seconds) + " node-seconds of run time lost, budget " +
           std::to_string(r.budget_node_seconds) + ")";
}

} // namespace nvlblock
