// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/reclaim.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>

namespace nvlblock {
namespace {

// Nodes on which more than one job (heterogeneous jobs counted once) runs:
// OverSubscribe, or shared nodes. Moving one of them frees no such node,
// so no victim is credited with one (a plan never moves work for a node
// that stays taken); sorted.
std::vector<NodeIndex> shared_nodes(std::span<const RunningJob> running) {
    std::map<NodeIndex, std::uint32_t> first_unit;
    std::vector<NodeIndex> shared;
    for (const RunningJob& j : running)
        for (NodeIndex n : j.nodes) {
            const auto [it, fresh] = first_unit.emplace(n, reclaim_unit(j));
            if (!fresh && it->second != reclaim_unit(j))
                shared.push_back(n);
        }
    std::sort(shared.begin(), shared.end());
    shared.erase(std::unique(shared.begin(), shared.end()), shared.end());
    return shared;
}

// The running jobs whose reclaim unit (the job, or its whole heterogeneous
// job) has a node on one of the claim's blocks, in their order: every job
// a plan for the claim could move, or share a node with one that it moves.
std::vector<RunningJob> units_on_blocks(const Topology& topo, const RecoveryClaim& claim,
                                        std::span<const RunningJob> running) {
    auto on_claim = [&](const RunningJob& j) {
        return std::any_of(j.nodes.begin(), j.nodes.end(), [&](NodeIndex n) {
            const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
            return b != kNoBlock && std::any_of(claim.blocks.begin(), claim.blocks.end(),
                                                [&](const RecoveryNeed& need) { return need.block == b; });
        });
    };
    std::vector<std::uint32_t> units;
    for (const RunningJob& j : running)
        if (on_claim(j))
            units.push_back(reclaim_unit(j));
    std::sort(units.begin(), units.end());
    std::vector<RunningJob> out;
    for (const RunningJob& j : running)
        if (std::binary_search(units.begin(), units.end(), reclaim_unit(j)))
            out.push_back(j);
    return out;
}

// The healthy nodes of `j` on block `b` that moving it would free (all of
// them when no node is `shared`).
int freed_nodes_on(const Snapshot& snap, const RunningJob& j, BlockIndex b, std::span<const NodeIndex> shared = {}) {
    const Topology& topo = snap.topology();
    int here = 0;
    for (NodeIndex n : j.nodes)
        here += n < topo.node_count() && topo.block_of(n) == b && is_healthy(snap.state(n)) &&
                !std::binary_search(shared.begin(), shared.end(), n);
    return here;
}

// What goes whole when moved: a job, or every component of a heterogeneous
// job (Slurm preempts and requeues those whole, so they are costed whole).
struct Candidate {
    std::uint32_t id = 0;
    VictimStatus how = VictimStatus::kPreempt;
    bool at_once = false;    // a component's own PreemptMode does not requeue (ReclaimVictim::at_once)
    bool eligible = true;    // every component may lose its nodes
    bool preemptible = true; // every component is `preemptible:` work
    int here = 0;            // healthy nodes where they are wanted
    int size = 0;            // nodes in all
    std::int64_t lost = 0;   // node-seconds of run time
    std::int64_t cost = 0;   // what ranks it (recovery.reclaim_cost; 0 for `preemptible:` work)
};

using NodesWanted = std::function<int(const RunningJob&)>;

std::int64_t run_time(const RunningJob& j, std::int64_t now) {
    return std::max<std::int64_t>(0, now - j.started);
}

void add_component(Candidate& c, const RunningJob& j, VictimStatus status, int here, const ReclaimContext& ctx) {
    const auto nodes = static_cast<std::int64_t>(j.nodes.size());
    const std::int64_t run = run_time(j, ctx.now);
    const std::int64_t wait =
        ctx.policy.reclaim_cost == ReclaimCost::kRunTimeAndWait ? std::max<std::int64_t>(0, j.waited) : 0;
    c.eligible = c.eligible && may_lose_nodes(status);
    if (status == VictimStatus::kRequeue)
        c.how = VictimStatus::kRequeue; // a component only the site named: the whole job is requeued
    c.at_once = c.at_once || j.preempt_mode != PreemptMode::kRequeue;
    c.preemptible = c.preemptible && j.preemptible;
    c.here += here;
    c.size += static_cast<int>(nodes);
    c.lost += nodes * run;
    // `preemptible:` work is there to be moved: it costs nothing to rank.
    if (!j.preemptible)
        c.cost += nodes * (run + wait);
}

// The running work that may lose its nodes and has some where they are
// wanted, one candidate per job (or heterogeneous job); with `slurm_only`,
// only work Slurm's own preemption lets the job preempt.
std::vector<Candidate> gather(std::span<const RunningJob> running, const Reclaimer& for_job, const ReclaimContext& ctx,
                              const NodesWanted& wanted, bool slurm_only) {
    std::vector<Candidate> units;
    std::map<std::uint32_t, std::size_t> index;
    for (const RunningJob& j : running) {
        const auto [it, fresh] = index.emplace(reclaim_unit(j), units.size());
        if (fresh)
            units.push_back({.id = reclaim_unit(j)});
        add_component(units[it->second], j, victim_status(j, for_job, ctx.policy, ctx.history, ctx.now), wanted(j),
                      ctx);
    }
    std::erase_if(units, [&](const Candidate& c) {
        return !c.eligible || c.here == 0 || (slurm_only && c.how != VictimStatus::kPreempt);
    });
    return units;
}

struct Cover {
    std::vector<const Candidate*> picked;
    std::int64_t cost = 0;
};

std::vector<std::uint32_t> ids_of(const Cover& c) {
    std::vector<std::uint32_t> ids;
    for (const Candidate* p : c.picked)
        ids.push_back(p->id);
    std::sort(ids.begin(), ids.end());
    return ids;
}

// Cheaper; then fewer jobs; then the lower job ids (deterministic).
bool better(const Cover& a, const Cover& b) {
    if (a.cost != b.cost)
        return a.cost < b.cost;
    if (a.picked.size() != b.picked.size())
        return a.picked.size() < b.picked.size();
    return ids_of(a) < ids_of(b);
}

// The cheapest set of candidates that frees at least `missing` nodes where
// they are wanted (a 0/1 knapsack over nodes freed: the shortfall is at
// most a block's spares, and a block runs a few dozen jobs at most). With
// `exact`, only sets that free exactly `missing`, every node of every job
// among them: nothing requeued beyond what the job lacks.
std::optional<Cover> cheapest_cover(const std::vector<Candidate>& cands, int missing, bool exact) {
    if (missing <= 0)
        return Cover{};
    int cap = missing;
    for (const Candidate& c : cands)
        if (!exact)
            cap = std::max(cap, missing - 1 + c.here);
    std::vector<std::optional<Cover>> best(static_cast<std::size_t>(cap) + 1);
    best[0] = Cover{};
    for (const Candidate& c : cands) {
        if (exact && c.size != c.here)
            continue;
        for (int f = cap - c.here; f >= 0; --f) {
            if (!best[f])
                continue;
            Cover next = *best[f];
            next.picked.push_back(&c);
            next.cost += c.cost;
            std::optional<Cover>& slot = best[f + c.here];
            if (!slot || better(next, *slot))
                slot = std::move(next);
        }
    }
    if (exact)
        return best[missing];
    std::optional<Cover> out;
    for (int f = missing; f <= cap; ++f)
        if (best[f] && (!out || better(*best[f], *out)))
            out = best[f];
    return out;
}

void add_to_plan(const Cover& cover, Reclaim& plan) {
    std::vector<const Candidate*> picked = cover.picked;
    std::sort(picked.begin(), picked.end(), [](const Candidate* a, const Candidate* b) {
        return a->cost != b->cost ? a->cost < b->cost : a->id < b->id;
    });
    for (const Candidate* c : picked) {
        plan.victims.push_back(
            {c->id, c->how, static_cast<std::uint32_t>(c->size), c->how == VictimStatus::kRequeue && c->at_once});
        plan.nodes += static_cast<std::uint32_t>(c->here);
        if (!c->preemptible)
            plan.lost_node_seconds += c->lost;
        plan.exact = plan.exact && c->size == c->here;
    }
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

int missing_on(const Snapshot& snap, const RecoveryClaim& claim, const Shortfall& s) {
    return static_cast<int>(s.need) - static_cast<int>(s.room) - releasing_on(snap, claim, s.block);
}

// How one attempt at a plan went.
enum class Attempt { kPlanned, kMoreThanSpares, kNoWork };

struct Try {
    const Snapshot& snap;
    const RecoveryClaim& claim;
    const Placement& refusal;
    const Reclaimer& for_job;
    std::span<const RunningJob> running;
    const ReclaimContext& ctx;
    std::span<const NodeIndex> shared; // shared_nodes(running)
    bool segmented = false;            // --segment: segments move whole, never a node between blocks
    bool slurm_only = false;
    bool exact = false;
};

// Each block that cannot take the job back gets its missing nodes from the
// work running there.
Attempt reclaim_per_block(const Try& t, Reclaim& plan) {
    for (const Shortfall& s : t.refusal.shortfalls) {
        int missing = missing_on(t.snap, t.claim, s);
        if (missing > t.snap.topology().block(s.block).settings.spares)
            return Attempt::kMoreThanSpares; // wait, or fall back, as in an idle-spare block
        std::vector<Candidate> cands = gather(
            t.running, t.for_job, t.ctx,
            [&](const RunningJob& j) { return freed_nodes_on(t.snap, j, s.block, t.shared); }, t.slurm_only);
        // Work chosen for another of the job's blocks frees its nodes here too.
        std::erase_if(cands, [&](const Candidate& c) {
            const bool chosen = std::any_of(plan.victims.begin(), plan.victims.end(),
                                            [&](const ReclaimVictim& v) { return v.job_id == c.id; });
            if (chosen)
                missing -= c.here;
            return chosen;
        });
        const std::optional<Cover> cover = cheapest_cover(cands, missing, t.exact);
        if (!cover)
            return Attempt::kNoWork;
        add_to_plan(*cover, plan);
    }
    return Attempt::kPlanned;
}

// A job on several blocks without --segment may come back with its nodes
// shifted between its own blocks (rule 5), so the nodes its blocks lack in
// all may be freed on any of them: a job that filled a whole rack itself and
// lost a node there gets it back on another of its racks. At most the
// spares of the blocks that lost nodes, as for one block.
Attempt reclaim_on_own_blocks(const Try& t, Reclaim& plan) {
    const Topology& topo = t.snap.topology();
    int missing = static_cast<int>(t.refusal.own_blocks_short_by), spares = 0;
    for (const Shortfall& s : t.refusal.shortfalls)
        spares += topo.block(s.block).settings.spares;
    for (const RecoveryNeed& need : t.claim.blocks)
        missing -= releasing(t.snap, need);
    if (missing <= 0)
        return Attempt::kNoWork;
    if (missing > spares)
        return Attempt::kMoreThanSpares;
    const auto wanted = [&](const RunningJob& j) {
        int here = 0;
        for (const RecoveryNeed& need : t.claim.blocks)
            if (topo.block(need.block).settings.reserve == SpareReserve::kReclaim)
                here += freed_nodes_on(t.snap, j, need.block, t.shared);
        return here;
    };
    const std::vector<Candidate> cands = gather(t.running, t.for_job, t.ctx, wanted, t.slurm_only);
    const std::optional<Cover> cover = cheapest_cover(cands, missing, t.exact);
    if (!cover)
        return Attempt::kNoWork;
    add_to_plan(*cover, plan);
    return Attempt::kPlanned;
}

// Running jobs on the blocks that lack room, by status (for the refusal).
void count_statuses(const Snapshot& snap, const Placement& refusal, const Reclaimer& for_job,
                    std::span<const RunningJob> running, const ReclaimContext& ctx, ReclaimRefusal& out) {
    for (const RunningJob& j : running) {
        const bool there = std::any_of(refusal.shortfalls.begin(), refusal.shortfalls.end(),
                                       [&](const Shortfall& s) { return freed_nodes_on(snap, j, s.block) > 0; });
        if (there)
            ++out.jobs_by_status[static_cast<std::size_t>(victim_status(j, for_job, ctx.policy, ctx.history, ctx.now))];
    }
}

// Whole plans, most preferred first: work Slurm's own preemption lets go
// before work only the site named; exact fits before plans that move more
// than the job lacks; freeing the nodes on the blocks that lack them before
// shifting them between the job's own blocks. The first within the budget wins.
ReclaimDecision best_affordable_plan(Try t, std::int64_t budget) {
    ReclaimDecision d;
    bool over_budget = false, spares_everywhere = true;
    const bool may_shift = t.claim.blocks.size() > 1 && !t.segmented;
    for (bool slurm_only : {true, false})
        for (bool exact : {true, false})
            for (bool shift : {false, true}) {
                if (shift && !may_shift)
                    continue;
                t.slurm_only = slurm_only;
                t.exact = exact;
                Reclaim plan;
                const Attempt a = shift ? reclaim_on_own_blocks(t, plan) : reclaim_per_block(t, plan);
                spares_everywhere = spares_everywhere && a == Attempt::kMoreThanSpares;
                if (a != Attempt::kPlanned || plan.victims.empty())
                    continue;
                if (plan.lost_node_seconds > budget) {
                    over_budget = true;
                    continue;
                }
                plan.budget_node_seconds = budget;
                d.plan = std::move(plan);
                return d;
            }
    d.refusal.reason = spares_everywhere ? ReclaimRefusalReason::kMoreThanSpares
                       : over_budget     ? ReclaimRefusalReason::kOverBudget
                                         : ReclaimRefusalReason::kNoEligibleWork;
    return d;
}

// The limits hold for the plan as a whole (`moves` jobs): it is carried out
// whole or not at all.
std::optional<ReclaimRefusalReason> over_limit(std::size_t moves, const Reclaimer& for_job, const ReclaimContext& ctx) {
    const int per_user = ctx.policy.reclaim_per_user_per_day;
    if (ctx.history.moves_for_user_since(for_job.user, ctx.now - ReclaimHistory::kDay + 1) + moves >
        static_cast<std::size_t>(std::max(0, per_user)))
        return ReclaimRefusalReason::kUserLimit;
    if (ctx.history.moves_since(ctx.now - 3600 + 1) + moves > static_cast<std::size_t>(std::max(0, ctx.per_hour)))
        return ReclaimRefusalReason::kClusterLimit;
    return std::nullopt;
}

} // namespace

int reclaim_per_hour(const RecoveryPolicy& policy, std::size_t node_count) {
    if (policy.reclaim_per_hour > 0)
        return policy.reclaim_per_hour;
    return std::max(2, static_cast<int>((node_count + 99) / 100));
}

std::optional<ReclaimRefusalReason> refused_whatever_runs(const Snapshot& snap, const Request& req,
                                                          const Placement& refusal, const Reclaimer& for_job,
                                                          const ReclaimContext& ctx) {
    if (!req.recovery || refusal.reason != Reason::kRecoveryWaiting || refusal.shortfalls.empty())
        return ReclaimRefusalReason::kFitsNow;
    const Topology& topo = snap.topology();
    for (const Shortfall& s : refusal.shortfalls)
        if (s.block_down || topo.block(s.block).settings.reserve != SpareReserve::kReclaim)
            return ReclaimRefusalReason::kNotReclaimed;
    // With no work to move, every attempt says only whether the job lacks
    // more than the spares: the same attempts as a plan, so the same answer.
    const ReclaimDecision spares =
        best_affordable_plan({snap, *req.recovery, refusal, for_job, {}, ctx, {}, req.segment > 1}, 0);
    if (spares.refusal.reason == ReclaimRefusalReason::kMoreThanSpares)
        return ReclaimRefusalReason::kMoreThanSpares;
    // Every plan moves at least one job.
    return over_limit(1, for_job, ctx);
}

ReclaimDecision plan_reclaim(const Snapshot& snap, const Request& req, const Placement& refusal,
                             const Reclaimer& for_job, std::span<const RunningJob> running, const ReclaimContext& ctx) {
    ReclaimDecision d;
    if (!req.recovery || refusal.reason != Reason::kRecoveryWaiting || refusal.shortfalls.empty()) {
        d.refusal.reason = ReclaimRefusalReason::kFitsNow;
        return d;
    }
    const RecoveryClaim& claim = *req.recovery;
    const Topology& topo = snap.topology();
    // Only work on the job's blocks can make room there: the rest of the
    // cluster's jobs (thousands, walked under Slurm's locks) is left out
    // before anything is counted per node.
    const std::vector<RunningJob> near = units_on_blocks(topo, claim, running);
    running = near;
    count_statuses(snap, refusal, for_job, running, ctx, d.refusal);
    if (const auto refused = refused_whatever_runs(snap, req, refusal, for_job, ctx)) {
        d.refusal.reason = *refused;
        return d;
    }
    std::int64_t budget = 0;
    for (const RecoveryNeed& need : claim.blocks)
        budget += static_cast<std::int64_t>(need.prior_healthy.size()) * ctx.policy.reclaim_budget_seconds;
    const std::vector<NodeIndex> shared = shared_nodes(running);
    ReclaimDecision best =
        best_affordable_plan({snap, claim, refusal, for_job, running, ctx, shared, req.segment > 1}, budget);
    best.refusal.jobs_by_status = d.refusal.jobs_by_status;
    if (best.plan)
        if (const auto limit = over_limit(best.plan->victims.size(), for_job, ctx)) {
            best.plan.reset();
            best.refusal.reason = *limit;
        }
    return best;
}

} // namespace nvlblock
