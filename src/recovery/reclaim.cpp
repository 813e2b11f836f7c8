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

struct Candidate {
    const RunningJob* job;
    std::int64_t lost; // node-seconds of run time
    int here;          // healthy nodes where they are wanted
};

// Preemptible work first, then the least work lost, fewest nodes, lowest id.
void cheapest_first(std::vector<Candidate>& cands) {
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        if (a.job->preemptible != b.job->preemptible)
            return a.job->preemptible;
        if (a.lost != b.lost)
            return a.lost < b.lost;
        if (a.job->nodes.size() != b.job->nodes.size())
            return a.job->nodes.size() < b.job->nodes.size();
        return a.job->job_id < b.job->job_id;
    });
}

bool may_requeue(const RunningJob& j, const RecoveryClaim& claim) {
    return j.job_id != claim.job_id && j.requeueable && !j.exempt;
}

std::int64_t work_lost(const RunningJob& j, std::int64_t now) {
    return static_cast<std::int64_t>(j.nodes.size()) * std::max<std::int64_t>(0, now - j.started);
}

// Takes candidates, cheapest first, until `missing` nodes are freed.
int choose(std::vector<Candidate>& cands, int missing, Reclaim& plan) {
    cheapest_first(cands);
    for (const Candidate& c : cands) {
        if (missing <= 0)
            break;
        plan.jobs.push_back(c.job->job_id);
        plan.nodes += static_cast<std::uint32_t>(c.here);
        if (!c.job->preemptible)
            plan.lost_node_seconds += c.lost;
        missing -= c.here;
    }
    return missing;
}

// Its own healthy nodes on a block that may still be finishing its last run
// (busy for a moment): they are its to take back, not missing.
int releasing(const Snapshot& snap, const RecoveryNeed& need) {
    int n = 0;
    for (NodeIndex node : need.prior_healthy)
        n += snap.state(node) == NodeState::kBusy || snap.state(node) == NodeState::kLent;
    return n;
}

int releasing_on(const Snapshot& snap, const RecoveryClaim& claim, BlockIndex b) {
    int n = 0;
    for (const RecoveryNeed& need : claim.blocks)
        if (need.block == b)
            n += releasing(snap, need);
    return n;
}

// Each block that cannot take the job back gets its missing nodes from the
// work running there.
std::optional<Reclaim> reclaim_per_block(const Snapshot& snap, const RecoveryClaim& claim, const Placement& refusal,
                                         std::span<const RunningJob> running, std::int64_t now) {
    const Topology& topo = snap.topology();
    Reclaim plan;
    for (const Shortfall& s : refusal.shortfalls) {
        const Block& block = topo.block(s.block);
        int missing = static_cast<int>(s.need) - static_cast<int>(s.room) - releasing_on(snap, claim, s.block);
        if (missing > block.settings.spares)
            return std::nullopt; // more than its spares: wait, or fall back, as in an idle-spare block
        std::vector<Candidate> cands;
        for (const RunningJob& j : running) {
            if (!may_requeue(j, claim))
                continue;
            const int here = healthy_nodes_on(snap, j, s.block);
            if (here == 0)
                continue;
            if (std::find(plan.jobs.begin(), plan.jobs.end(), j.job_id) != plan.jobs.end()) {
                missing -= here; // already chosen for another of the job's blocks
                continue;
            }
            cands.push_back({&j, work_lost(j, now), here});
        }
        if (choose(cands, missing, plan) > 0)
            return std::nullopt;
    }
    return plan;
}

// A job on several blocks without --segment may come back with its nodes
// shifted between its own blocks (rule 5), so the nodes its blocks lack in
// all may be freed on any of them: a job that filled a whole rack itself and
// lost a node there gets it back on another of its racks. At most the
// spares of the blocks that lost nodes, as for one block.
std::optional<Reclaim> reclaim_on_own_blocks(const Snapshot& snap, const RecoveryClaim& claim, const Placement& refusal,
                                             std::span<const RunningJob> running, std::int64_t now) {
    const Topology& topo = snap.topology();
    int missing = static_cast<int>(refusal.own_blocks_short_by), spares = 0;
    for (const Shortfall& s : refusal.shortfalls)
        spares += topo.block(s.block).settings.spares;
    for (const RecoveryNeed& need : claim.blocks)
        missing -= releasing(snap, need);
    if (missing <= 0 || missing > spares)
        return std::nullopt;
    std::vector<Candidate> cands;
    for (const RunningJob& j : running) {
        if (!may_requeue(j, claim))
            continue;
        int here = 0;
        for (const RecoveryNeed& need : claim.blocks)
            if (topo.block(need.block).settings.reserve == SpareReserve::kReclaim)
                here += healthy_nodes_on(snap, j, need.block);
        if (here > 0)
            cands.push_back({&j, work_lost(j, now), here});
    }
    Reclaim plan;
    if (choose(cands, missing, plan) > 0)
        return std::nullopt;
    return plan;
}

} // namespace

std::optional<Reclaim> plan_reclaim(const Snapshot& snap, const Request& req, const Placement& refusal,
                                    std::span<const RunningJob> running, std::int64_t now,
                                    std::int64_t budget_seconds) {
    if (!req.recovery || refusal.reason != Reason::kRecoveryWaiting || refusal.shortfalls.empty())
        return std::nullopt;
    const RecoveryClaim& claim = *req.recovery;
    const Topology& topo = snap.topology();
    for (const Shortfall& s : refusal.shortfalls)
        if (s.block_down || topo.block(s.block).settings.reserve != SpareReserve::kReclaim)
            return std::nullopt;
    std::int64_t budget = 0;
    for (const RecoveryNeed& need : claim.blocks)
        budget += static_cast<std::int64_t>(need.prior_healthy.size()) * budget_seconds;
    const auto affordable = [budget](std::optional<Reclaim> plan) -> std::optional<Reclaim> {
        if (!plan || plan->jobs.empty() || plan->lost_node_seconds > budget)
            return std::nullopt;
        plan->budget_node_seconds = budget;
        return plan;
    };
    if (auto plan = affordable(reclaim_per_block(snap, claim, refusal, running, now)))
        return plan;
    if (claim.blocks.size() > 1 && req.segment <= 1)
        return affordable(reclaim_on_own_blocks(snap, claim, refusal, running, now));
    return std::nullopt;
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
