// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/eviction.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstdio>

namespace nvlblock {

std::optional<Eviction> plan_eviction(const Snapshot& snap, const RecoveryClaim& claim, const Placement& refusal,
                                      std::span<const RunningJob> running, std::int64_t now,
                                      std::int64_t wait_seconds) {
    if (refusal.reason != Reason::kRecoveryWaiting || refusal.shortfalls.empty())
        return std::nullopt;
    const Topology& topo = snap.topology();
    Eviction plan;
    const char* per = std::getenv("NVLB_EXP_BUDGET_S");
    for (const RecoveryNeed& need : claim.blocks)
        plan.budget_node_seconds += per ? static_cast<std::int64_t>(need.need) * std::atol(per) : static_cast<std::int64_t>(need.prior_healthy.size()) * wait_seconds;

    struct Candidate {
        const RunningJob* job;
        std::int64_t lost;
    };
    std::vector<std::uint32_t> chosen;
    for (const Shortfall& s : refusal.shortfalls) {
        if (s.block_down)
            return std::nullopt;
        // Nodes the chosen jobs already free on this block count towards it.
        int missing = static_cast<int>(s.need) - static_cast<int>(s.room);
        std::vector<Candidate> cands;
        for (const RunningJob& j : running) {
            if (j.job_id == claim.job_id || !j.requeueable || j.exempt)
                continue;
            int here = 0;
            for (NodeIndex n : j.nodes)
                here += n < topo.node_count() && topo.block_of(n) == s.block && is_healthy(snap.state(n));
            if (here == 0)
                continue;
            if (std::find(chosen.begin(), chosen.end(), j.job_id) != chosen.end()) {
                missing -= here;
                continue;
            }
            const std::int64_t ran = std::max<std::int64_t>(0, now - j.started);
            cands.push_back({&j, static_cast<std::int64_t>(j.nodes.size()) * ran});
        }
        // Cheapest first: least work lost, then fewest nodes, then the lowest id.
        std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
            if (a.lost != b.lost)
                return a.lost < b.lost;
            if (a.job->nodes.size() != b.job->nodes.size())
                return a.job->nodes.size() < b.job->nodes.size();
            return a.job->job_id < b.job->job_id;
        });
        for (const Candidate& c : cands) {
            if (missing <= 0)
                break;
            int here = 0;
            for (NodeIndex n : c.job->nodes)
                here += topo.block_of(n) == s.block && is_healthy(snap.state(n));
            chosen.push_back(c.job->job_id);
            plan.lost_node_seconds += c.lost;
            missing -= here;
        }
        if (std::getenv("NVLB_DBG"))
            std::fprintf(stderr, "  plan: block %d missing %d cands %zu lost %lld budget %lld\n", s.block, missing, cands.size(), (long long)plan.lost_node_seconds, (long long)plan.budget_node_seconds);
        if (missing > 0)
            return std::nullopt;
    }
    if (std::getenv("NVLB_EXP_NOBUDGET") == nullptr && plan.lost_node_seconds > plan.budget_node_seconds)
        return std::nullopt;
    plan.jobs = std::move(chosen);
    return plan;
}

} // namespace nvlblock
