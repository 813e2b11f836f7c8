// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/recovery.hpp"

#include "model/node_names.hpp"
#include "placement/engine.hpp"
#include "recovery/rules.hpp"

#include <algorithm>
#include <limits>

namespace nvlblock {
namespace {

bool contains(std::span<const NodeIndex> v, NodeIndex n) {
    return std::find(v.begin(), v.end(), n) != v.end();
}

// Why the nodes of an ended job count as failed, and how it was requeued.
// Nothing is added to the log line of a node failure Slurm requeued with
// every failed node down (as before drains counted).
FailureCause cause_at_end(const Topology& topo, const JobEnd& end, RequeuePath path) {
    FailureCause c;
    c.path = path;
    c.trigger = FailureTrigger::kDrained;
    c.held = requeued_held(end.facts);
    for (const EndedNode& n : end.nodes) {
        if (!node_counts_as_failed(n.signs) || n.node >= topo.node_count())
            continue;
        if (trigger_of(n.signs) == FailureTrigger::kDown)
            c.trigger = FailureTrigger::kDown;
        else
            c.drained.push_back({n.node, n.reason});
    }
    return c;
}

// The nodes of `nodes` that are in a block, each once, in their order.
std::vector<NodeIndex> block_nodes(const Topology& topo, std::span<const NodeIndex> nodes) {
    std::vector<NodeIndex> out;
    for (NodeIndex n : nodes)
        if (n < topo.node_count() && topo.block_of(n) != kNoBlock && !contains(out, n))
            out.push_back(n);
    return out;
}

} // namespace

std::int64_t Recovery::hold_delay() const {
    return nvlblock::hold_delay(slurm_requeue_delay_);
}

JobEndOutcome Recovery::job_ended(const Topology& topo, const JobEnd& end) {
    std::vector<NodeIndex> nodes, failed;
    for (const EndedNode& n : end.nodes) {
        nodes.push_back(n.node);
        if (node_counts_as_failed(n.signs))
            failed.push_back(n.node);
    }
    // A job restarting after an earlier failure ran on these nodes: the
    // restart counts before anything else (a new failure would replace the
    // record, and an end would count as abandoned). Only a run known to have
    // begun after the failure: a slurmctld restarted after a crash ends the
    // failed run itself again, and what its record then says of a start is
    // the scheduler's estimate for the requeued job, not a run (the shim
    // reports no start).
    if (ledger_.find(end.job_id) && end.started_at)
        job_started(topo, end.job_id, nodes, end.started_at);
    watches_.erase(end.job_id);
    const RequeuePath path = requeue_path(end.facts);
    if (path == RequeuePath::kNone) {
        // Not requeued, but a node failure ended it: a failure under a job all the same.
        if (end.facts & kEndNodeFail)
            note_failures(topo, block_nodes(topo, failed), end.ended_at);
        return JobEndOutcome::kNothing;
    }
    if (!failed.empty()) {
        job_failed(topo, end.job_id, nodes, failed, end.ended_at, cause_at_end(topo, end, path));
        return ledger_.find(end.job_id) ? JobEndOutcome::kOpened : JobEndOutcome::kNothing;
    }
    FailureWatch w;
    w.job_id = end.job_id;
    w.nodes = block_nodes(topo, nodes);
    w.ended_at = end.ended_at;
    w.until = end.ended_at + failure_window(topo, slurm_requeue_delay_);
    w.path = path;
    w.held = requeued_held(end.facts);
    // As earns_hold: a single-node job needs no NVLink domain.
    if (w.nodes.size() < 2 || w.until <= w.ended_at)
        return JobEndOutcome::kNothing;
    watches_[end.job_id] = std::move(w);
    return JobEndOutcome::kWatching;
}

std::size_t Recovery::settle_watches(std::span<const NodeState> states, const Topology& topo, std::int64_t now) {
    std::vector<std::pair<FailureWatch, std::vector<NodeIndex>>> opening;
    for (auto it = watches_.begin(); it != watches_.end();) {
        std::vector<NodeIndex> failed = failed_since_end(it->second, states);
        if (failed.empty() && now < it->second.until) {
            ++it;
            continue;
        }
        if (!failed.empty())
            opening.emplace_back(std::move(it->second), std::move(failed));
        it = watches_.erase(it);
    }
    for (const auto& [w, failed] : opening) {
        FailureCause c;
        c.path = w.path;
        c.trigger = FailureTrigger::kAfterEnd;
        c.held = w.held;
        c.failed_after_end = failed;
        c.seconds_after_end = now - w.ended_at;
        c.shown_at = now;
        job_failed(topo, w.job_id, w.nodes, failed, w.ended_at, c);
    }
    return opening.size();
}

void Recovery::job_failed(const Topology& topo, std::uint32_t job_id, std::span<const NodeIndex> nodes,
                          std::span<const NodeIndex> failed, std::int64_t now, const FailureCause& cause) {
    RecoveryRecord r;
    r.job_id = job_id;
    r.nodes = block_nodes(topo, nodes);
    for (NodeIndex n : failed)
        if (contains(r.nodes, n) && !contains(r.failed, n))
            r.failed.push_back(n);
    if (const RecoveryRecord* open = ledger_.find(job_id); open && open->nodes == r.nodes) {
        // The same run failing again: slurmctld, restarted after a crash,
        // restored the run from before its requeue and requeued it once more.
        // One failure, one clock: its wait still counts from the first time.
        RecoveryRecord same = *open;
        for (NodeIndex n : r.failed)
            if (!contains(same.failed, n))
                same.failed.push_back(n);
        ledger_.note(NoteReportedAgain{job_id, same.failed, now - same.failed_at});
        ledger_.update(std::move(same));
        return;
    }
    note_failures(topo, r.failed, now);
    if (!earns_hold(r.nodes, r.failed))
        return; // an ordinary requeue, or a single-node job: restarts anywhere
    const std::int64_t hold = hold_delay();
    const std::int64_t wait = wait_after_failure(topo, r.nodes, hold);
    const std::int64_t from = std::max(now, cause.shown_at);
    r.failed_at = now;
    r.blocks = held_blocks(topo, r.nodes);
    r.blocks_same_in = topo.serial(); // taken from it
    r.fallback_at = from + wait;
    r.hold_until = from + std::max(wait, hold);
    r.path = cause.path;
    r.trigger = cause.trigger;
    ledger_.note(NoteOpened{job_id, r.nodes, r.failed, wait, cause});
    ledger_.open(std::move(r));
}

void Recovery::note_failures(const Topology& topo, std::span<const NodeIndex> failed, std::int64_t at) {
    const LemonPolicy& policy = topo.policy().recovery.lemon;
    for (NodeIndex n : failed) {
        const bool was = ledger_.node_failures().failures_within(n, at, policy) >= policy.failures;
        ledger_.note_node_failure(n, at, policy);
        if (!was && policy.failures > 0 && ledger_.node_failures().failures_within(n, at, policy) >= policy.failures)
            ledger_.note(NoteLemon{n, policy.failures, policy.window_seconds});
    }
}

void Recovery::job_started(const Topology& topo, std::uint32_t job_id, std::span<const NodeIndex> nodes,
                           std::int64_t started) {
    watches_.erase(job_id);
    const RecoveryRecord* r = ledger_.find(job_id);
    if (!r || started < r->failed_at)
        return;
    RecoveryEvent e;
    e.at = started;
    e.job_id = job_id;
    e.lost = static_cast<std::uint32_t>(r->failed.size());
    e.seconds = started - r->failed_at;
    e.blocks = block_names(topo, r->nodes);
    NoteRestarted note{job_id, false, r->nodes, {nodes.begin(), nodes.end()}, {}, 0, e.seconds};
    for (NodeIndex n : nodes) {
        if (contains(r->nodes, n))
            ++note.reused; // a prior node, even one that failed and was repaired since
        else
            note.spares.push_back(n);
    }
    if (restarted_in_place(topo, r->nodes, nodes)) {
        e.outcome = RecoveryOutcome::kInPlace;
        e.spares_used = static_cast<std::uint32_t>(note.spares.size());
        note.in_place = true;
    } else {
        e.outcome = RecoveryOutcome::kElsewhere;
    }
    ledger_.note(std::move(note));
    ledger_.close(job_id, std::move(e));
}

void Recovery::job_gone(const Topology& topo, std::uint32_t job_id, std::int64_t now) {
    watches_.erase(job_id);
    const RecoveryRecord* r = ledger_.find(job_id);
    if (!r)
        return;
    RecoveryEvent e;
    e.at = now;
    e.job_id = job_id;
    e.outcome = RecoveryOutcome::kAbandoned;
    e.lost = static_cast<std::uint32_t>(r->failed.size());
    e.seconds = now - r->failed_at;
    e.blocks = block_names(topo, r->nodes);
    ledger_.note(NoteLeftQueue{job_id, r->nodes});
    ledger_.close(job_id, std::move(e));
}

void Recovery::reclaim_started(const Topology& topo, std::uint32_t job_id, const Reclaim& plan,
                               const Reclaimer& for_job, std::int64_t released_by, std::int64_t now) {
    const RecoveryRecord* r = ledger_.find(job_id);
    if (!r)
        return;
    ledger_.note(NoteReclaimed{claim_for(topo, *r, {}), plan});
    std::vector<std::uint32_t> victims;
    for (const ReclaimVictim& v : plan.victims)
        victims.push_back(v.job_id);
    ledger_.note_reclaim(victims, for_job.user, now, topo.policy().recovery.reclaim_cooldown_seconds);
    ledger_.mark_reclaimed(job_id, std::max(now, released_by) + std::max<std::int64_t>(hold_delay(), 1));
}

void Recovery::reclaim_refused(const Topology& topo, std::uint32_t job_id, const ReclaimRefusal& why) {
    const RecoveryRecord* r = ledger_.find(job_id);
    if (!r || r->reclaim_refusal == why)
        return;
    ledger_.note(NoteReclaimRefused{claim_for(topo, *r, {}), why});
    RecoveryRecord same = *r;
    same.reclaim_refusal = why;
    ledger_.update(std::move(same));
}

void Recovery::fall_back(const RecoveryRecord& r, std::int64_t now, NoteFallback why) {
    why.job_id = r.job_id;
    why.seconds = now - r.failed_at;
    why.had = r.nodes;
    ledger_.note(std::move(why));
    ledger_.mark_fallback(r.job_id);
}

std::size_t Recovery::end_changed(const Topology& topo, std::int64_t now) {
    std::vector<std::pair<const RecoveryRecord*, NoteFallback>> falling;
    ledger_.for_each_waiting([&](const RecoveryRecord& r) {
        if (r.blocks_same_in != topo.serial())
            if (auto change = held_blocks_changed(topo, r.blocks)) {
                NoteFallback why;
                why.reason = FallbackReason::kBlocksChanged;
                why.change = std::move(change);
                falling.emplace_back(&r, std::move(why));
            }
    });
    for (auto& [r, why] : falling)
        fall_back(*r, now, std::move(why));
    return falling.size();
}

bool Recovery::blocks_changed(const Topology& topo, const RecoveryRecord& r) {
    return r.blocks_same_in != topo.serial() && !held_blocks_unchanged(topo, r.blocks);
}

std::size_t Recovery::advance(const Snapshot& snap, std::int64_t now) {
    const Topology& topo = snap.topology();
    // A node of a watched job failed since its end: its recovery opens,
    // and is then asked the same questions as every other.
    const std::size_t opened = settle_watches(snap.states(), topo, now);
    // Jobs whose blocks changed under them (a reconfigure, a node moved)
    // end their wait first, whatever their clock says.
    const std::size_t changed = end_changed(topo, now);
    // Decide first, then change: falling back changes the records walked.
    std::vector<std::pair<const RecoveryRecord*, NoteFallback>> falling;
    ledger_.for_each_waiting([&](const RecoveryRecord& r) {
        RecoveryClaim claim = claim_for(topo, r, snap.states());
        if (!wait_over(r, now) && !any_block_down(snap, claim))
            return; // still waiting for its block
        Request in_place;
        in_place.job_id = r.job_id;
        in_place.min_nodes = in_place.max_nodes = claim.total_need();
        in_place.recovery = std::move(claim);
        const Placement p = place(snap, in_place);
        // Its block can take it: until Slurm could have started it (the
        // hold), it restarts in place when Slurm asks. Past that the wait is
        // the bound whatever the reason Slurm has not started it (priority,
        // a limit, backfill's plan): from then on the job may go anywhere,
        // its own block first while that can take it (Planner::place).
        if (p.placed() && now < r.hold_until)
            return;
        NoteFallback why;
        why.reason = p.placed() ? FallbackReason::kWaitOverSlurmDidNotStart : FallbackReason::kRefused;
        if (!p.placed())
            why.refused = p;
        falling.emplace_back(&r, std::move(why));
    });
    for (auto& [r, why] : falling)
        fall_back(*r, now, std::move(why));
    return opened + changed + falling.size();
}

std::int64_t Recovery::next_deadline(std::int64_t now) const {
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    ledger_.for_each_waiting([&](const RecoveryRecord& r) {
        for (std::int64_t t : {r.fallback_at, r.hold_until})
            if (t > now)
                next = std::min(next, t);
    });
    return next;
}

std::vector<std::uint32_t> Recovery::reclaim_candidates(const Topology& topo, std::int64_t now) const {
    std::vector<std::uint32_t> out;
    ledger_.for_each_waiting([&](const RecoveryRecord& r) {
        if (now < r.reclaimed_until || blocks_changed(topo, r))
            return;
        const bool on_reclaim_block = std::any_of(r.nodes.begin(), r.nodes.end(), [&](NodeIndex n) {
            const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
            return b != kNoBlock && topo.block(b).settings.reserve == SpareReserve::kReclaim;
        });
        if (on_reclaim_block)
            out.push_back(r.job_id);
    });
    return out;
}

bool Recovery::any_waiting() const {
    return !watches_.empty() || ledger_.any_waiting();
}

const RecoveryRecord* Recovery::waiting_in_place(std::uint32_t job_id) const {
    const RecoveryRecord* r = ledger_.find(job_id);
    return r && !r->fallback ? r : nullptr;
}

std::vector<RecoveryClaim> Recovery::active_claims(const Topology& topo, std::span<const NodeState> states,
                                                   std::int64_t now) const {
    std::vector<RecoveryClaim> out = held_claims(topo, states, now);
    add_watch_claims(topo, states, now, out);
    return out;
}

std::vector<RecoveryClaim> Recovery::held_claims(const Topology& topo, std::span<const NodeState> states,
                                                 std::int64_t now) const {
    std::vector<RecoveryClaim> out;
    ledger_.for_each_waiting([&](const RecoveryRecord& r) {
        if (holds_at(r, now) && !blocks_changed(topo, r))
            out.push_back(claim_for(topo, r, states));
    });
    return out;
}

void Recovery::add_watch_claims(const Topology& topo, std::span<const NodeState> states, std::int64_t now,
                                std::vector<RecoveryClaim>& out) const {
    for (const auto& [id, w] : watches_)
        if (watch_holds(w, states, now))
            out.push_back(watch_claim(topo, w, states));
}

} // namespace nvlblock
