// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/recovery.hpp"

#include "placement/engine.hpp"
#include "recovery/rules.hpp"
#include "writers/explain.hpp"

#include <algorithm>
#include <limits>

namespace nvlblock {
namespace {

bool contains(std::span<const NodeIndex> v, NodeIndex n) {
    return std::find(v.begin(), v.end(), n) != v.end();
}

// How Slurm requeued the job, for the log line ("" for a node failure:
// the line says so already).
std::string requeued_by(RequeuePath path, bool held) {
    switch (path) {
    case RequeuePath::kExitCode:
        return held ? "requeued held by its exit status (RequeueExitHold)"
                    : "requeued by its exit status (RequeueExit)";
    case RequeuePath::kRequested:
        return "requeued by scontrol requeue (or by Slurm)";
    case RequeuePath::kNodeFail:
    case RequeuePath::kNone:
        break;
    }
    return "";
}

void append_clause(std::string& to, const std::string& clause) {
    if (!clause.empty())
        to += (to.empty() ? "" : "; ") + clause;
}

// Why the nodes of an ended job count as failed, and how it was requeued.
// Nothing is added to the log line of a node failure Slurm requeued with
// every failed node down (as before drains counted).
FailureCause cause_at_end(const Topology& topo, const JobEnd& end, RequeuePath path) {
    FailureCause c;
    c.path = path;
    c.trigger = FailureTrigger::kDrained;
    std::string drained;
    for (const EndedNode& n : end.nodes) {
        if (!node_counts_as_failed(n.signs) || n.node >= topo.node_count())
            continue;
        if (trigger_of(n.signs) == FailureTrigger::kDown) {
            c.trigger = FailureTrigger::kDown;
            continue;
        }
        drained +=
            (drained.empty() ? "" : ", ") + topo.node_name(n.node) + (n.reason.empty() ? "" : " (" + n.reason + ")");
    }
    if (!drained.empty())
        c.detail = "drained: " + drained;
    append_clause(c.detail, requeued_by(path, requeued_held(end.facts)));
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
    // record, and an end would count as abandoned).
    if (ledger_.find(end.job_id))
        job_started(topo, end.job_id, nodes, end.started_at ? end.started_at : end.ended_at);
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
        c.detail = hostlist_of(topo, failed) + " failed or drained " + std::to_string(now - w.ended_at) +
                   " s after the job ended";
        c.shown_at = now;
        append_clause(c.detail, requeued_by(w.path, w.held));
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
        ledger_.log("JobId=" + std::to_string(job_id) + " failure reported again (" + hostlist_of(topo, same.failed) +
                    "): the same run, restored by slurmctld; still waiting since " +
                    std::to_string(now - same.failed_at) + " s");
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
    r.fallback_at = from + wait;
    r.hold_until = from + std::max(wait, hold);
    r.path = cause.path;
    r.trigger = cause.trigger;
    const std::string where = blocks_of(topo, r.nodes);
    ledger_.log("JobId=" + std::to_string(job_id) + " lost " + std::to_string(r.failed.size()) + " of " +
                std::to_string(r.nodes.size()) + " nodes (" + hostlist_of(topo, r.failed) + ") on " + where +
                "; holding " + where + " for an in-place restart (" + std::to_string(r.nodes.size() - r.failed.size()) +
                " prior nodes + " + std::to_string(r.failed.size()) + " spares), fallback after " +
                std::to_string(wait) + " s" + (cause.detail.empty() ? "" : "; " + cause.detail));
    ledger_.open(std::move(r));
}

void Recovery::note_failures(const Topology& topo, std::span<const NodeIndex> failed, std::int64_t at) {
    const LemonPolicy& policy = topo.policy().recovery.lemon;
    for (NodeIndex n : failed) {
        const bool was = ledger_.node_failures().failures_within(n, at, policy) >= policy.failures;
        ledger_.note_node_failure(n, at, policy);
        if (!was && policy.failures > 0 && ledger_.node_failures().failures_within(n, at, policy) >= policy.failures)
            ledger_.log(topo.node_name(n) + " is a lemon: " + std::to_string(policy.failures) +
                        " failures under jobs within " + std::to_string(policy.window_seconds) +
                        " s; the last choice for replacements and slices once it is back in service");
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
    e.blocks = blocks_of(topo, r->nodes);
    std::uint32_t reused = 0;
    std::vector<NodeIndex> spares;
    for (NodeIndex n : nodes) {
        if (contains(r->nodes, n))
            ++reused; // a prior node, even one that failed and was repaired since
        else
            spares.push_back(n);
    }
    if (restarted_in_place(topo, r->nodes, nodes)) {
        e.outcome = RecoveryOutcome::kInPlace;
        e.spares_used = static_cast<std::uint32_t>(spares.size());
        ledger_.log("JobId=" + std::to_string(job_id) + " restarted in place on " + e.blocks + ": " +
                    std::to_string(reused) + " prior nodes + " + std::to_string(e.spares_used) + " spares (" +
                    hostlist_of(topo, spares) + ") " + std::to_string(e.seconds) + " s after the failure");
    } else {
        e.outcome = RecoveryOutcome::kElsewhere;
        ledger_.log("JobId=" + std::to_string(job_id) + " restarted elsewhere on " + blocks_of(topo, nodes) + " (had " +
                    e.blocks + ") " + std::to_string(e.seconds) + " s after the failure");
    }
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
    e.blocks = blocks_of(topo, r->nodes);
    ledger_.log("JobId=" + std::to_string(job_id) + " left the queue before restarting; released the hold on " +
                e.blocks);
    ledger_.close(job_id, std::move(e));
}

void Recovery::reclaim_started(const Topology& topo, std::uint32_t job_id, const Reclaim& plan,
                               const Reclaimer& for_job, std::int64_t released_by, std::int64_t now) {
    const RecoveryRecord* r = ledger_.find(job_id);
    if (!r)
        return;
    ledger_.log(describe_reclaim(topo, claim_for(topo, *r, {}), plan));
    std::vector<std::uint32_t> victims;
    for (const ReclaimVictim& v : plan.victims)
        victims.push_back(v.job_id);
    ledger_.note_reclaim(victims, for_job.user, now, topo.policy().recovery.reclaim_cooldown_seconds);
    ledger_.mark_reclaimed(job_id, std::max(now, released_by) + std::max<std::int64_t>(hold_delay(), 1));
}

void Recovery::reclaim_refused(std::uint32_t job_id, const std::string& why) {
    const RecoveryRecord* r = ledger_.find(job_id);
    if (!r || r->reclaim_refusal == why)
        return;
    RecoveryRecord same = *r;
    same.reclaim_refusal = why;
    ledger_.update(std::move(same));
    ledger_.log(why);
}

void Recovery::fall_back(const Topology& topo, const RecoveryRecord& r, std::int64_t now, const std::string& why) {
    ledger_.log("JobId=" + std::to_string(r.job_id) + " fallback after " + std::to_string(now - r.failed_at) +
                " s: " + why + "; placing it anywhere (had " + blocks_of(topo, r.nodes) + ")");
    ledger_.mark_fallback(r.job_id);
}

std::size_t Recovery::end_changed(const Topology& topo, std::int64_t now) {
    std::vector<std::pair<const RecoveryRecord*, std::string>> falling;
    for (const auto& [id, r] : ledger_.records())
        if (!r.fallback)
            if (std::string why = held_blocks_changed(topo, r.blocks); !why.empty())
                falling.emplace_back(&r, std::move(why) + " (the topology changed)");
    for (const auto& [r, why] : falling)
        fall_back(topo, *r, now, why);
    return falling.size();
}

bool Recovery::blocks_changed(const Topology& topo, const RecoveryRecord& r) {
    return !held_blocks_unchanged(topo, r.blocks);
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
    std::vector<std::pair<const RecoveryRecord*, std::string>> falling;
    for (const auto& [id, r] : ledger_.records()) {
        if (r.fallback)
            continue;
        RecoveryClaim claim = claim_for(topo, r, snap.states());
        if (!wait_over(r, now) && !any_block_down(snap, claim))
            continue; // still waiting for its block
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
            continue;
        falling.emplace_back(&r, p.placed() ? "its wait is over; Slurm has not started it on " +
                                                  blocks_of(topo, r.nodes) + ", which can take it and still may"
                                 : p.shortfalls.empty() ? explain(topo, p)
                                                        : describe_shortfall(topo, p.shortfalls.front()));
    }
    for (const auto& [r, why] : falling)
        fall_back(topo, *r, now, why);
    return opened + changed + falling.size();
}

std::int64_t Recovery::next_deadline(std::int64_t now) const {
    std::int64_t next = std::numeric_limits<std::int64_t>::max();
    for (const auto& [id, r] : ledger_.records())
        if (!r.fallback)
            for (std::int64_t t : {r.fallback_at, r.hold_until})
                if (t > now)
                    next = std::min(next, t);
    return next;
}

std::vector<std::uint32_t> Recovery::reclaim_candidates(const Topology& topo, std::int64_t now) const {
    std::vector<std::uint32_t> out;
    for (const auto& [id, r] : ledger_.records()) {
        if (r.fallback || now < r.reclaimed_until || blocks_changed(topo, r))
            continue;
        const bool on_reclaim_block = std::any_of(r.nodes.begin(), r.nodes.end(), [&](NodeIndex n) {
            const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
            return b != kNoBlock && topo.block(b).settings.reserve == SpareReserve::kReclaim;
        });
        if (on_reclaim_block)
            out.push_back(id);
    }
    return out;
}

bool Recovery::any_waiting() const {
    return !watches_.empty() || std::any_of(ledger_.records().begin(), ledger_.records().end(),
                                            [](const auto& kv) { return !kv.second.fallback; });
}

const RecoveryRecord* Recovery::waiting_in_place(std::uint32_t job_id) const {
    const RecoveryRecord* r = ledger_.find(job_id);
    return r && !r->fallback ? r : nullptr;
}

std::vector<RecoveryClaim> Recovery::active_claims(const Topology& topo, std::span<const NodeState> states,
                                                   std::int64_t now) const {
    std::vector<RecoveryClaim> out;
    for (const auto& [id, r] : ledger_.records())
        if (holds_at(r, now) && !blocks_changed(topo, r))
            out.push_back(claim_for(topo, r, states));
    for (const auto& [id, w] : watches_)
        if (watch_holds(w, states, now))
            out.push_back(watch_claim(topo, w, states));
    return out;
}

} // namespace nvlblock
