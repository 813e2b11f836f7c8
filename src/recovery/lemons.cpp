// SPDX-License-Identifier: GPL-2.0-or-later
#include "recovery/lemons.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <limits>

namespace nvlblock {
namespace {

// Failures of `times` (sorted) within the window ending at `now`.
int count_within(const std::vector<std::int64_t>& times, std::int64_t now, const LemonPolicy& policy) {
    const std::int64_t since = now - policy.window_seconds;
    return static_cast<int>(
        std::count_if(times.begin(), times.end(), [&](std::int64_t t) { return t > since && t <= now; }));
}

} // namespace

std::uint64_t FailureHistory::next_version() {
    static std::atomic<std::uint64_t> versions{0};
    return ++versions;
}

void FailureHistory::changed() {
    version_ = next_version();
}

void FailureHistory::unindex(NodeIndex node, const std::vector<std::int64_t>& times) {
    if (times.empty())
        return;
    by_oldest_.erase({times.front(), node});
    auto it = by_count_.find(times.size());
    it->second.erase(node);
    if (it->second.empty())
        by_count_.erase(it);
}

void FailureHistory::index(NodeIndex node, const std::vector<std::int64_t>& times) {
    if (times.empty())
        return;
    by_oldest_.insert({times.front(), node});
    by_count_[times.size()].insert(node);
}

void FailureHistory::reindex_all() {
    by_oldest_.clear();
    by_count_.clear();
    for (const auto& [node, times] : by_node_)
        index(node, times);
}

void FailureHistory::replace(std::map<NodeIndex, std::vector<std::int64_t>> by_node) {
    by_node_ = std::move(by_node);
    std::erase_if(by_node_, [](const auto& entry) { return entry.second.empty(); });
    reindex_all();
    changed();
}

bool FailureHistory::record(NodeIndex node, std::int64_t at, const LemonPolicy& policy) {
    if (policy.failures <= 0)
        return false;
    std::vector<std::int64_t>& times = by_node_[node];
    if (std::find(times.begin(), times.end(), at) != times.end())
        return false;
    unindex(node, times);
    times.insert(std::upper_bound(times.begin(), times.end(), at), at);
    // Only the latest `failures` can ever make the node a lemon.
    const auto keep = static_cast<std::size_t>(policy.failures);
    if (times.size() > keep)
        times.erase(times.begin(), times.end() - static_cast<std::ptrdiff_t>(keep));
    index(node, times);
    changed();
    return true;
}

bool FailureHistory::clear(NodeIndex node) {
    auto it = by_node_.find(node);
    if (it == by_node_.end())
        return false;
    unindex(node, it->second);
    by_node_.erase(it);
    changed();
    return true;
}

int FailureHistory::failures_within(NodeIndex node, std::int64_t now, const LemonPolicy& policy) const {
    auto it = by_node_.find(node);
    return it == by_node_.end() ? 0 : count_within(it->second, now, policy);
}

std::vector<NodeIndex> FailureHistory::lemons(std::int64_t now, const LemonPolicy& policy, std::int64_t* until) const {
    std::vector<NodeIndex> out;
    std::int64_t first_change = std::numeric_limits<std::int64_t>::max();
    if (policy.failures > 0)
        for (auto c = by_count_.lower_bound(static_cast<std::size_t>(policy.failures)); c != by_count_.end(); ++c)
            for (NodeIndex node : c->second) {
                const std::vector<std::int64_t>& times = by_node_.at(node);
                if (count_within(times, now, policy) < policy.failures)
                    continue;
                out.push_back(node);
                // The oldest failure that still makes it one leaves the window then.
                const auto latest = std::upper_bound(times.begin(), times.end(), now);
                first_change = std::min(first_change, *(latest - policy.failures) + policy.window_seconds);
            }
    std::sort(out.begin(), out.end()); // each count's nodes are in order, the counts one after the other
    if (until)
        *until = first_change;
    return out;
}

std::int64_t FailureHistory::last_failure(NodeIndex node) const {
    auto it = by_node_.find(node);
    return it == by_node_.end() || it->second.empty() ? 0 : it->second.back();
}

bool FailureHistory::forget_before(std::int64_t since) {
    bool dropped = false;
    while (!by_oldest_.empty() && by_oldest_.begin()->first <= since) {
        const NodeIndex node = by_oldest_.begin()->second;
        auto it = by_node_.find(node);
        std::vector<std::int64_t>& times = it->second;
        unindex(node, times);
        times.erase(times.begin(), std::upper_bound(times.begin(), times.end(), since));
        dropped = true;
        if (times.empty())
            by_node_.erase(it);
        else
            index(node, times);
    }
    if (dropped)
        changed();
    return dropped;
}

void FailureHistory::remap(const Topology& from, const Topology& to) {
    std::map<NodeIndex, std::vector<std::int64_t>> moved;
    for (auto& [node, times] : by_node_)
        if (node < from.node_count())
            if (auto m = to.find_node(from.node_name(node)))
                moved[*m] = std::move(times);
    by_node_ = std::move(moved);
    reindex_all();
    changed();
}

} // namespace nvlblock
