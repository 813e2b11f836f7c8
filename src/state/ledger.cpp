// SPDX-License-Identifier: GPL-2.0-or-later
#include "state/ledger.hpp"

#include "model/hostlist.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace nvlblock {
namespace {

std::string names_of(const Topology& topo, std::span<const NodeIndex> nodes) {
    std::vector<std::string> names;
    names.reserve(nodes.size());
    for (NodeIndex n : nodes)
        names.push_back(topo.node_name(n));
    return names.empty() ? "-" : hostlist::compress(names);
}

std::vector<NodeIndex> indices_of(const Topology& topo, const std::string& expr, std::size_t& unknown) {
    std::vector<NodeIndex> out;
    if (expr == "-")
        return out;
    for (const auto& name : hostlist::expand(expr)) {
        if (auto n = topo.find_node(name))
            out.push_back(*n);
        else
            ++unknown;
    }
    return out;
}

bool contains(std::span<const NodeIndex> v, NodeIndex n) { return std::find(v.begin(), v.end(), n) != v.end(); }

} // namespace

const char* outcome_name(RecoveryOutcome o) {
    switch (o) {
    case RecoveryOutcome::kInPlace:
        return "in_place";
    case RecoveryOutcome::kElsewhere:
        return "elsewhere";
    case RecoveryOutcome::kAbandoned:
        return "abandoned";
    }
    return "unknown";
}

std::string Ledger::blocks_of(const Topology& topo, std::span<const NodeIndex> nodes) {
    std::set<BlockIndex> seen;
    std::string out;
    for (NodeIndex n : nodes) {
        const BlockIndex b = topo.block_of(n);
        if (b == kNoBlock || !seen.insert(b).second)
            continue;
        if (!out.empty())
            out += ',';
        out += topo.block(b).name;
    }
    return out.empty() ? "-" : out;
}

void Ledger::job_failed(const Topology& topo, std::uint32_t job_id, std::span<const NodeIndex> nodes,
                        std::span<const NodeIndex> failed, std::int64_t now, std::int64_t wait,
                        std::int64_t requeue_delay) {
    RecoveryRecord r;
    r.job_id = job_id;
    for (NodeIndex n : nodes)
        if (n < topo.node_count() && topo.block_of(n) != kNoBlock)
            r.nodes.push_back(n);
    for (NodeIndex n : failed)
        if (contains(r.nodes, n) && !contains(r.failed, n))
            r.failed.push_back(n);
    if (r.nodes.empty() || r.failed.empty())
        return; // nothing of ours was lost: an ordinary requeue
    // A single-node job needs no NVLink domain: holding its block's spares
    // for it would only take them from the multi-node jobs they exist for.
    if (r.nodes.size() < 2)
        return;
    r.failed_at = now;
    r.fallback_at = now + wait;
    r.hold_until = now + std::max(wait, requeue_delay);
    ++counters_.failures;
    const std::string where = blocks_of(topo, r.nodes);
    log("JobId=" + std::to_string(job_id) + " lost " + std::to_string(r.failed.size()) + " of " +
        std::to_string(r.nodes.size()) + " nodes (" + names_of(topo, r.failed) + ") on " + where + "; holding " +
        where + " for an in-place restart (" + std::to_string(r.nodes.size() - r.failed.size()) + " prior nodes + " +
        std::to_string(r.failed.size()) + " spares), fallback after " + std::to_string(wait) + " s");
    records_[job_id] = std::move(r);
}

void Ledger::job_started(const Topology& topo, std::uint32_t job_id, std::span<const NodeIndex> nodes,
                         std::int64_t now) {
    auto it = records_.find(job_id);
    if (it == records_.end())
        return;
    const RecoveryRecord& r = it->second;
    std::set<BlockIndex> before, after;
    for (NodeIndex n : r.nodes)
        before.insert(topo.block_of(n));
    std::uint32_t reused = 0;
    bool in_place = !nodes.empty();
    for (NodeIndex n : nodes) {
        if (n >= topo.node_count())
            continue;
        after.insert(topo.block_of(n));
        if (!before.count(topo.block_of(n)))
            in_place = false;
        if (contains(r.nodes, n))
            ++reused; // a prior node, even one that failed and was repaired since
    }
    RecoveryEvent e;
    e.at = now;
    e.job_id = job_id;
    e.lost = static_cast<std::uint32_t>(r.failed.size());
    e.seconds = now - r.failed_at;
    e.blocks = blocks_of(topo, r.nodes);
    if (in_place) {
        e.outcome = RecoveryOutcome::kInPlace;
        e.spares_used = static_cast<std::uint32_t>(nodes.size()) - reused;
        ++counters_.in_place;
        std::vector<NodeIndex> spares;
        for (NodeIndex n : nodes)
            if (!contains(r.nodes, n))
                spares.push_back(n);
        log("JobId=" + std::to_string(job_id) + " restarted in place on " + e.blocks + ": " + std::to_string(reused) +
            " prior nodes + " + std::to_string(e.spares_used) + " spares (" + names_of(topo, spares) + ") " +
            std::to_string(e.seconds) + " s after the failure");
    } else {
        e.outcome = RecoveryOutcome::kElsewhere;
        ++counters_.elsewhere;
        log("JobId=" + std::to_string(job_id) + " restarted elsewhere on " + blocks_of(topo, nodes) + " (had " +
            e.blocks + ") " + std::to_string(e.seconds) + " s after the failure");
    }
    record_event(std::move(e));
    records_.erase(it);
}

void Ledger::job_gone(const Topology& topo, std::uint32_t job_id, std::int64_t now) {
    auto it = records_.find(job_id);
    if (it == records_.end())
        return;
    RecoveryEvent e;
    e.at = now;
    e.job_id = job_id;
    e.outcome = RecoveryOutcome::kAbandoned;
    e.lost = static_cast<std::uint32_t>(it->second.failed.size());
    e.seconds = now - it->second.failed_at;
    e.blocks = blocks_of(topo, it->second.nodes);
    ++counters_.abandoned;
    log("JobId=" + std::to_string(job_id) + " left the queue before restarting; released the hold on " + e.blocks);
    record_event(std::move(e));
    records_.erase(it);
}

void Ledger::reclaimed(std::uint32_t job_id, std::int64_t until, const std::string& line) {
    auto it = records_.find(job_id);
    if (it == records_.end())
        return;
    it->second.reclaimed_until = until;
    log(line);
}

void Ledger::fall_back(const Topology& topo, std::uint32_t job_id, std::int64_t now, const std::string& why) {
    auto it = records_.find(job_id);
    if (it == records_.end() || it->second.fallback)
        return;
    it->second.fallback = true;
    log("JobId=" + std::to_string(job_id) + " fallback after " + std::to_string(now - it->second.failed_at) +
        " s: " + why + "; placing it anywhere (had " + blocks_of(topo, it->second.nodes) + ")");
}

const RecoveryRecord* Ledger::find(std::uint32_t job_id) const {
    auto it = records_.find(job_id);
    return it == records_.end() ? nullptr : &it->second;
}

RecoveryClaim Ledger::claim_for(const Topology& topo, const RecoveryRecord& r) {
    RecoveryClaim c;
    c.job_id = r.job_id;
    c.deadline = r.hold_until;
    for (NodeIndex n : r.nodes) {
        const BlockIndex b = topo.block_of(n);
        auto it = std::find_if(c.blocks.begin(), c.blocks.end(), [b](const RecoveryNeed& x) { return x.block == b; });
        if (it == c.blocks.end()) {
            c.blocks.push_back({b, 0, 0, {}});
            it = c.blocks.end() - 1;
        }
        ++it->need;
        if (contains(r.failed, n))
            ++it->lost;
        else
            it->prior_healthy.push_back(n);
    }
    return c;
}

std::vector<RecoveryClaim> Ledger::active_claims(const Topology& topo, std::int64_t now) const {
    std::vector<RecoveryClaim> out;
    for (const auto& [id, r] : records_)
        if (!r.fallback && now < r.hold_until)
            out.push_back(claim_for(topo, r));
    return out;
}

std::vector<std::string> Ledger::take_log() {
    std::vector<std::string> out;
    out.swap(log_);
    return out;
}

void Ledger::record_event(RecoveryEvent e) {
    recent_.push_back(std::move(e));
    while (recent_.size() > kRecentEvents)
        recent_.pop_front();
}

// Format, one item per line, fields separated by single spaces:
//   nvlblock-state 1
//   counters <failures> <in_place> <elsewhere> <abandoned>
//   record <job> <failed_at> <fallback_at> <hold_until> <fallback> <nodes> <failed>
//   event <at> <job> <outcome> <lost> <spares_used> <seconds> <blocks>
//   end <records> <events>
// The end line detects truncation; the writer also renames atomically.
std::string Ledger::serialize(const Topology& topo) const {
    std::ostringstream o;
    o << "nvlblock-state 1\n";
    o << "counters " << counters_.failures << ' ' << counters_.in_place << ' ' << counters_.elsewhere << ' '
      << counters_.abandoned << '\n';
    for (const auto& [id, r] : records_)
        o << "record " << id << ' ' << r.failed_at << ' ' << r.fallback_at << ' ' << r.hold_until << ' '
          << (r.fallback ? 1 : 0) << ' ' << names_of(topo, r.nodes) << ' ' << names_of(topo, r.failed) << '\n';
    for (const auto& e : recent_)
        o << "event " << e.at << ' ' << e.job_id << ' ' << outcome_name(e.outcome) << ' ' << e.lost << ' '
          << e.spares_used << ' ' << e.seconds << ' ' << e.blocks << '\n';
    o << "end " << records_.size() << ' ' << recent_.size() << '\n';
    return o.str();
}

void Ledger::deserialize(const Topology& topo, const std::string& text, const std::string& label) {
    std::istringstream in(text);
    std::string line;
    unsigned lineno = 0;
    std::map<std::uint32_t, RecoveryRecord> records;
    std::deque<RecoveryEvent> recent;
    LedgerCounters counters;
    bool header = false, end = false;
    std::size_t record_lines = 0;
    auto bad = [&](const std::string& what) { throw ConfigError({label, lineno}, "corrupt nvlblock state: " + what); };
    while (std::getline(in, line)) {
        ++lineno;
        std::istringstream f(line);
        std::string kind;
        f >> kind;
        if (kind.empty())
            continue;
        if (!header) {
            int version = 0;
            if (kind != "nvlblock-state" || !(f >> version))
                bad("missing header");
            if (version != 1)
                bad("unsupported version " + std::to_string(version));
            header = true;
        } else if (kind == "counters") {
            if (!(f >> counters.failures >> counters.in_place >> counters.elsewhere >> counters.abandoned))
                bad("bad counters line");
        } else if (kind == "record") {
            RecoveryRecord r;
            int fb = 0;
            std::string nodes, failed;
            if (!(f >> r.job_id >> r.failed_at >> r.fallback_at >> r.hold_until >> fb >> nodes >> failed))
                bad("bad record line");
            r.fallback = fb != 0;
            std::size_t unknown = 0;
            try {
                r.nodes = indices_of(topo, nodes, unknown);
                r.failed = indices_of(topo, failed, unknown);
            } catch (const std::exception& e) {
                bad(e.what());
            }
            ++record_lines;
            std::erase_if(r.nodes, [&](NodeIndex n) { return topo.block_of(n) == kNoBlock; });
            std::erase_if(r.failed, [&](NodeIndex n) { return !contains(r.nodes, n); });
            if (r.nodes.empty() || r.failed.empty()) {
                log("JobId=" + std::to_string(r.job_id) + " dropped from saved state: its nodes are no longer in any block");
                continue;
            }
            records[r.job_id] = std::move(r);
        } else if (kind == "event") {
            RecoveryEvent e;
            std::string outcome;
            if (!(f >> e.at >> e.job_id >> outcome >> e.lost >> e.spares_used >> e.seconds >> e.blocks))
                bad("bad event line");
            if (outcome == "in_place")
                e.outcome = RecoveryOutcome::kInPlace;
            else if (outcome == "elsewhere")
                e.outcome = RecoveryOutcome::kElsewhere;
            else if (outcome == "abandoned")
                e.outcome = RecoveryOutcome::kAbandoned;
            else
                bad("unknown outcome '" + outcome + "'");
            recent.push_back(std::move(e));
        } else if (kind == "end") {
            std::size_t nr = 0, ne = 0;
            if (!(f >> nr >> ne) || nr != record_lines || ne != recent.size())
                bad("end line does not match the contents");
            end = true;
            break;
        } else {
            bad("unknown line '" + kind + "'");
        }
    }
    if (!header)
        bad("empty file");
    if (!end)
        bad("truncated (no end line)");
    while (recent.size() > kRecentEvents)
        recent.pop_front();
    records_ = std::move(records);
    recent_ = std::move(recent);
    counters_ = counters;
}

void Ledger::remap(const Topology& from, const Topology& to) {
    std::map<std::uint32_t, RecoveryRecord> moved;
    for (auto& [id, r] : records_) {
        auto map_nodes = [&](const std::vector<NodeIndex>& v) {
            std::vector<NodeIndex> out;
            for (NodeIndex n : v)
                if (auto m = to.find_node(from.node_name(n)); m && to.block_of(*m) != kNoBlock)
                    out.push_back(*m);
            return out;
        };
        RecoveryRecord nr = r;
        nr.nodes = map_nodes(r.nodes);
        nr.failed = map_nodes(r.failed);
        if (nr.nodes.empty() || nr.failed.empty()) {
            log("JobId=" + std::to_string(id) + " dropped after reconfigure: its nodes are no longer in any block");
            continue;
        }
        moved[id] = std::move(nr);
    }
    records_ = std::move(moved);
}

} // namespace nvlblock
