// SPDX-License-Identifier: GPL-2.0-or-later
#include "writers/recovery_log_text.hpp"

#include "model/hostlist.hpp"
#include "model/node_names.hpp"
#include "writers/explain.hpp"

#include <iterator>

namespace nvlblock {
namespace {

std::string job(std::uint32_t id) {
    return "JobId=" + std::to_string(id);
}

void append_clause(std::string& to, const std::string& clause) {
    if (!clause.empty())
        to += (to.empty() ? "" : "; ") + clause;
}

// How Slurm requeued the job ("" for a node failure: the line says so already).
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

// Why the nodes counted as failed and how the job was requeued; nothing for
// a node failure Slurm requeued with every failed node down.
std::string cause_text(const Topology& topo, const FailureCause& c) {
    std::string drained;
    for (const DrainedNode& d : c.drained)
        drained +=
            (drained.empty() ? "" : ", ") + topo.node_name(d.node) + (d.reason.empty() ? "" : " (" + d.reason + ")");
    std::string out = drained.empty() ? "" : "drained: " + drained;
    if (!c.failed_after_end.empty())
        append_clause(out, hostlist_of(topo, c.failed_after_end) + " failed or drained " +
                               std::to_string(c.seconds_after_end) + " s after the job ended");
    append_clause(out, requeued_by(c.path, c.held));
    return out;
}

// Slurm's refusal as the caller found it (plugin/topology/reclaim_eligible.c).
const char* slurm_refusal_text(SlurmStartRefusal r) {
    switch (r) {
    case SlurmStartRefusal::kNoDetails:
        return "it has no details";
    case SlurmStartRefusal::kNotInPartition:
        return "they are not in a partition of it that is up";
    case SlurmStartRefusal::kExcluded:
        return "it excludes some of them";
    case SlurmStartRefusal::kConstraints:
        return "its constraints exclude some of them";
    case SlurmStartRefusal::kReservation:
        return "a reservation keeps some of them";
    case SlurmStartRefusal::kWouldStart:
        break;
    }
    return "it would start";
}

std::string text(const Topology& topo, const NoteReportedAgain& n) {
    return job(n.job_id) + " failure reported again (" + hostlist_of(topo, n.failed) +
           "): the same run, restored by slurmctld; still waiting since " + std::to_string(n.waiting) + " s";
}

std::string text(const Topology& topo, const NoteOpened& n) {
    const std::string where = blocks_of(topo, n.nodes);
    const std::string detail = cause_text(topo, n.cause);
    return job(n.job_id) + " lost " + std::to_string(n.failed.size()) + " of " + std::to_string(n.nodes.size()) +
           " nodes (" + hostlist_of(topo, n.failed) + ") on " + where + "; holding " + where +
           " for an in-place restart (" + std::to_string(n.nodes.size() - n.failed.size()) + " prior nodes + " +
           std::to_string(n.failed.size()) + " spares), fallback after " + std::to_string(n.wait) + " s" +
           (detail.empty() ? "" : "; " + detail);
}

std::string text(const Topology& topo, const NoteLemon& n) {
    return topo.node_name(n.node) + " is a lemon: " + std::to_string(n.failures) + " failures under jobs within " +
           std::to_string(n.window_seconds) +
           " s; the last choice for replacements and slices once it is back in service";
}

std::string text(const Topology& topo, const NoteLemonCleared& n) {
    return "failures of " + topo.node_name(n.node) + " cleared by an operator: no longer a lemon";
}

std::string text(const Topology& topo, const NoteRestarted& n) {
    const std::string had = blocks_of(topo, n.had);
    if (n.in_place)
        return job(n.job_id) + " restarted in place on " + had + ": " + std::to_string(n.reused) + " prior nodes + " +
               std::to_string(n.spares.size()) + " spares (" + hostlist_of(topo, n.spares) + ") " +
               std::to_string(n.seconds) + " s after the failure";
    return job(n.job_id) + " restarted elsewhere on " + blocks_of(topo, n.nodes) + " (had " + had + ") " +
           std::to_string(n.seconds) + " s after the failure";
}

std::string text(const Topology& topo, const NoteLeftQueue& n) {
    return job(n.job_id) + " left the queue before restarting; released the hold on " + blocks_of(topo, n.had);
}

std::string text(const Topology& topo, const NoteReclaimed& n) {
    std::string preempted, requeued;
    for (const ReclaimVictim& v : n.plan.victims) {
        std::string& list = v.how == VictimStatus::kPreempt ? preempted : requeued;
        list += (list.empty() ? "" : ",") + std::to_string(v.job_id) + (v.at_once ? " at once" : "");
    }
    std::string what;
    if (!preempted.empty())
        what += "preempting JobId=" + preempted + " (Slurm's preemption)";
    if (!requeued.empty())
        what += std::string(what.empty() ? "" : ", ") + "requeueing JobId=" + requeued + " (recovery.reclaim_from)";
    const Reclaim& r = n.plan;
    return job(n.claim.job_id) + " reclaiming " + std::to_string(r.nodes) + " spare node" + (r.nodes == 1 ? "" : "s") +
           " on " + claim_blocks(topo, n.claim) + ": " + what + " (" + std::to_string(r.lost_node_seconds) +
           " node-seconds of run time lost, budget " + std::to_string(r.budget_node_seconds) +
           (r.exact ? "" : "; no exact fit, more nodes than it lacks") + ")";
}

std::string text(const Topology& topo, const NoteReclaimRefused& n) {
    if (n.refusal.reason == ReclaimRefusalReason::kSlurmRefuses)
        return job(n.claim.job_id) +
               ": nothing reclaimed: Slurm would not start it on the nodes a reclaim would "
               "free on " +
               claim_blocks(topo, n.claim) + " (" + slurm_refusal_text(n.refusal.slurm) + ")";
    return reclaim_refusal_text(n.claim.job_id, n.refusal);
}

std::string fallback_reason(const Topology& topo, const NoteFallback& n) {
    switch (n.reason) {
    case FallbackReason::kWaitOverSlurmDidNotStart:
        return "its wait is over; Slurm has not started it on " + blocks_of(topo, n.had) +
               ", which can take it and still may";
    case FallbackReason::kBlocksChanged:
        return (n.change ? held_block_change_text(*n.change) : std::string("its blocks changed")) +
               " (the topology changed)";
    case FallbackReason::kRefused:
        break;
    }
    return n.refused.shortfalls.empty() ? explain(topo, n.refused)
                                        : describe_shortfall(topo, n.refused.shortfalls.front());
}

std::string text(const Topology& topo, const NoteFallback& n) {
    return job(n.job_id) + " fallback after " + std::to_string(n.seconds) + " s: " + fallback_reason(topo, n) +
           "; placing it anywhere (had " + blocks_of(topo, n.had) + ")";
}

std::string text(const Topology&, const NoteDropped& n) {
    return job(n.job_id) + (n.on_load ? " dropped from saved state" : " dropped after reconfigure") +
           ": its nodes are no longer in any block";
}

std::string nodes_text(const std::vector<std::string>& nodes) {
    return std::to_string(nodes.size()) + " node" + (nodes.size() == 1 ? "" : "s") + " (" +
           (nodes.empty() ? std::string("-") : hostlist::compress(nodes)) + ")";
}

} // namespace

std::string claim_blocks(const Topology& topo, const RecoveryClaim& claim) {
    std::string blocks;
    for (const RecoveryNeed& need : claim.blocks)
        blocks += (blocks.empty() ? "" : ",") + topo.block(need.block).name;
    return blocks;
}

std::string recovery_log_line(const Topology& topo, const RecoveryNote& note) {
    return "nvlblock: recovery " + std::visit([&](const auto& n) { return text(topo, n); }, note);
}

std::vector<std::string> recovery_log_lines(const std::vector<Planner::LogBatch>& batches) {
    std::vector<std::string> lines;
    for (const Planner::LogBatch& b : batches)
        for (const RecoveryNote& n : b.notes)
            lines.push_back(recovery_log_line(*b.topology, n));
    return lines;
}

std::string held_block_change_text(const HeldBlockChange& c) {
    if (!c.now)
        return "block " + c.held.name + " no longer exists (it had " + nodes_text(c.held.nodes) + ")";
    return "block " + c.held.name + " has " + nodes_text(c.now->nodes) + " now, " + nodes_text(c.held.nodes) +
           " when the job failed";
}

std::string reclaim_refusal_text(std::uint32_t job_id, const ReclaimRefusal& r) {
    static const char* const why[] = {
        "no recovery waits for its block",
        "its block can take it without reclaiming",
        "a block it lacks room on is down or keeps idle spares",
        "it lacks more nodes than the spares of its blocks",
        "not enough work there may lose its nodes",
        "making room would lose more run time than recovery.reclaim_budget",
        "recovery.reclaim_limits.per_user_per_day reached for its user",
        "recovery.reclaim_limits.per_hour reached",
        "it is held (priority 0) and cannot start until it is released",
        "Slurm would not start it on the nodes a reclaim would free",
    };
    static_assert(std::size(why) == kReclaimRefusalReasonCount);
    std::string out = job(job_id) + ": nothing reclaimed: " + why[static_cast<std::size_t>(r.reason)];
    std::string jobs;
    for (std::size_t i = 0; i < r.jobs_by_status.size(); ++i)
        if (r.jobs_by_status[i])
            jobs += (jobs.empty() ? "" : ", ") + std::to_string(r.jobs_by_status[i]) + " " +
                    victim_status_name(static_cast<VictimStatus>(i));
    return jobs.empty() ? out : out + " (jobs there: " + jobs + ")";
}

} // namespace nvlblock
