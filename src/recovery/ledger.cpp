// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/ledger.hpp"

#include "model/hostlist.hpp"
#include "recovery/rules.hpp"

#include <algorithm>
#include <sstream>

namespace nvlblock {
namespace {

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

bool contains(std::span<const NodeIndex> v, NodeIndex n) {
    return std::find(v.begin(), v.end(), n) != v.end();
}

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

void Ledger::open(RecoveryRecord r) {
    ++counters_.failures;
    const std::uint32_t id = r.job_id;
    records_[id] = std::move(r);
}

void Ledger::update(RecoveryRecord r) {
    if (auto it = records_.find(r.job_id); it != records_.end())
        it->second = std::move(r);
}

void Ledger::close(std::uint32_t job_id, RecoveryEvent e) {
    auto it = records_.find(job_id);
    if (it == records_.end())
        return;
    switch (e.outcome) {
    case RecoveryOutcome::kInPlace:
        ++counters_.in_place;
        break;
    case RecoveryOutcome::kElsewhere:
        ++counters_.elsewhere;
        break;
    case RecoveryOutcome::kAbandoned:
        ++counters_.abandoned;
        break;
    }
    recent_.push_back(std::move(e));
    while (recent_.size() > kRecentEvents)
        recent_.pop_front();
    records_.erase(it);
}

void Ledger::mark_fallback(std::uint32_t job_id) {
    if (auto it = records_.find(job_id); it != records_.end())
        it->second.fallback = true;
}

void Ledger::mark_reclaimed(std::uint32_t job_id, std::int64_t until) {
    if (auto it = records_.find(job_id); it != records_.end())
        it->second.reclaimed_until = until;
}

const RecoveryRecord* Ledger::find(std::uint32_t job_id) const {
    auto it = records_.find(job_id);
    return it == records_.end() ? nullptr : &it->second;
}

std::vector<std::string> Ledger::take_log() {
    std::vector<std::string> out;
    out.swap(log_);
    return out;
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
          << (r.fallback ? 1 : 0) << ' ' << hostlist_of(topo, r.nodes) << ' ' << hostlist_of(topo, r.failed) << '\n';
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
                log("JobId=" + std::to_string(r.job_id) +
                    " dropped from saved state: its nodes are no longer in any block");
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
