// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/ledger.hpp"

#include <algorithm>

namespace nvlblock {

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
    ++version_;
    ++counters_.failures;
    ++counters_.by_trigger[static_cast<std::size_t>(r.trigger)];
    ++counters_.by_path[static_cast<std::size_t>(r.path)];
    const std::uint32_t id = r.job_id;
    records_[id] = std::move(r);
    note_index(id);
}

namespace {

// Keeps the sorted `ids` listing `job_id` or not, as `listed` says.
void keep_listed(std::vector<std::uint32_t>& ids, std::uint32_t job_id, bool listed) {
    const auto at = std::lower_bound(ids.begin(), ids.end(), job_id);
    const bool there = at != ids.end() && *at == job_id;
    if (listed && !there)
        ids.insert(at, job_id);
    else if (!listed && there)
        ids.erase(at);
}

} // namespace

void Ledger::note_index(std::uint32_t job_id) {
    const auto it = records_.find(job_id);
    keep_listed(ids_, job_id, it != records_.end());
    keep_listed(waiting_, job_id, it != records_.end() && !it->second.fallback);
}

void Ledger::index_all() {
    ids_.clear();
    waiting_.clear();
    for (const auto& [id, r] : records_) {
        ids_.push_back(id);
        if (!r.fallback)
            waiting_.push_back(id);
    }
}

void Ledger::note_blocks_same(const Topology& topo) {
    for (auto& [id, r] : records_)
        r.blocks_same_in = held_blocks_unchanged(topo, r.blocks) ? topo.serial() : 0;
}

void Ledger::update(RecoveryRecord r) {
    ++version_;
    const std::uint32_t id = r.job_id;
    if (auto it = records_.find(id); it != records_.end())
        it->second = std::move(r);
    note_index(id);
}

void Ledger::close(std::uint32_t job_id, RecoveryEvent e) {
    ++version_;
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
    note_index(job_id);
}

void Ledger::mark_fallback(std::uint32_t job_id) {
    ++version_;
    if (auto it = records_.find(job_id); it != records_.end())
        it->second.fallback = true;
    note_index(job_id);
}

void Ledger::mark_reclaimed(std::uint32_t job_id, std::int64_t until) {
    ++version_;
    if (auto it = records_.find(job_id); it != records_.end()) {
        RecoveryRecord& r = it->second;
        r.reclaimed_until = until;
        r.hold_until = std::max(r.hold_until, until);
        r.fallback_at = std::max(r.fallback_at, until);
    }
}

void Ledger::note_reclaim(std::span<const std::uint32_t> victims, std::uint32_t for_user, std::int64_t now,
                          std::int64_t keep_seconds) {
    ++version_;
    ++counters_.reclaims;
    counters_.reclaimed_jobs += victims.size();
    for (std::uint32_t v : victims)
        reclaims_.record({v, now, for_user}, keep_seconds);
}

void Ledger::restore(LedgerContents c) {
    ++version_;
    records_ = std::move(c.records);
    index_all();
    recent_ = std::move(c.recent);
    while (recent_.size() > kRecentEvents)
        recent_.pop_front();
    counters_ = c.counters;
    reclaims_.replace(std::move(c.moves));
    node_failures_.replace(std::move(c.node_failures));
}

const RecoveryRecord* Ledger::find(std::uint32_t job_id) const {
    // Asked of every job a pass examines, most of which have no record: the
    // ids side by side answer those without walking the tree.
    if (!std::binary_search(ids_.begin(), ids_.end(), job_id))
        return nullptr;
    auto it = records_.find(job_id);
    return it == records_.end() ? nullptr : &it->second;
}

void Ledger::note_node_failure(NodeIndex node, std::int64_t at, const LemonPolicy& policy) {
    if (node_failures_.record(node, at, policy))
        ++version_;
}

bool Ledger::clear_node_failures(NodeIndex node) {
    if (!node_failures_.clear(node))
        return false;
    ++version_;
    return true;
}

void Ledger::forget_node_failures_before(std::int64_t since) {
    if (node_failures_.forget_before(since))
        ++version_;
}

std::vector<RecoveryNote> Ledger::take_notes() {
    std::vector<RecoveryNote> out;
    out.swap(notes_);
    return out;
}

void Ledger::remap(const Topology& from, const Topology& to) {
    ++version_;
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
            note(NoteDropped{id, false});
            continue;
        }
        moved[id] = std::move(nr);
    }
    records_ = std::move(moved);
    index_all();
    node_failures_.remap(from, to);
}

} // namespace nvlblock
