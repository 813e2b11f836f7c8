// SPDX-License-Identifier: GPL-2.0-or-later
#include "pending_queue.hpp"

#include <algorithm>

namespace nvlblock::sim {

std::size_t PendingQueue::lower_bound(Key k) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), k,
                                     [](const Entry& e, const Key& key) { return e.key < key; });
    return static_cast<std::size_t>(it - entries_.begin());
}

std::size_t PendingQueue::next_live(std::size_t pos) const {
    std::size_t live = pos;
    while (live < entries_.size() && entries_[live].gone)
        live = entries_[live].skip;
    // Every gap passed now skips to the live entry found.
    while (pos < live) {
        const std::size_t next = entries_[pos].skip;
        entries_[pos].skip = static_cast<std::uint32_t>(live);
        pos = next;
    }
    return live;
}

bool PendingQueue::insert(Key k, Seconds not_before) {
    // Most jobs join at the end (a submission, or a requeue behind everyone).
    if (entries_.empty() || entries_.back().key < k) {
        entries_.push_back({k, not_before, false});
        ++live_;
        return true;
    }
    const std::size_t pos = lower_bound(k);
    if (pos < entries_.size() && entries_[pos].key == k) {
        if (!entries_[pos].gone)
            return false; // queued already
        // Back in its old place (a requeue keeps its submit time). Only the
        // run of gaps just before it can skip past it: they stop at it now.
        entries_[pos].gone = false;
        entries_[pos].not_before = not_before;
        for (std::size_t i = pos; i > 0 && entries_[i - 1].gone; --i)
            entries_[i - 1].skip = std::min(entries_[i - 1].skip, static_cast<std::uint32_t>(pos));
    } else {
        entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(pos), Entry{k, not_before, false});
        // Positions moved: every gap skips to its neighbour again.
        for (std::size_t i = 0; i < entries_.size(); ++i)
            entries_[i].skip = static_cast<std::uint32_t>(i + 1);
        ++layout_;
    }
    ++live_;
    head_ = std::min(head_, pos);
    return true;
}

void PendingQueue::hold(Key k, Seconds t) {
    const std::size_t pos = lower_bound(k);
    if (pos < entries_.size() && entries_[pos].key == k && !entries_[pos].gone)
        entries_[pos].not_before = std::max(entries_[pos].not_before, t);
}

bool PendingQueue::contains(Key k) const {
    const std::size_t pos = lower_bound(k);
    return pos < entries_.size() && entries_[pos].key == k && !entries_[pos].gone;
}

bool PendingQueue::erase(Key k) {
    const std::size_t pos = lower_bound(k);
    if (pos == entries_.size() || entries_[pos].key != k || entries_[pos].gone)
        return false;
    entries_[pos].gone = true;
    entries_[pos].skip = static_cast<std::uint32_t>(pos + 1);
    --live_;
    if (pos == head_) // the head left: the next job is the head (each gap is passed once)
        head_ = live_from(pos).at;
    // Closed when they are more than a sixteenth of the jobs (and 64): the
    // backfill starts jobs near the front, which its every walk reads, so
    // gaps gather where the walks are (with "more gaps than jobs" a walk of
    // 500 jobs read thousands of gaps). A close moves every live entry once:
    // about sixteen moves per job that left.
    if (entries_.size() - live_ > live_ / 16 + 64)
        close_gaps();
    return true;
}

void PendingQueue::close_gaps() {
    std::erase_if(entries_, [](const Entry& e) { return e.gone; });
    head_ = 0;
    ++layout_;
}

PendingQueue::Cursor PendingQueue::after(Key k) const {
    std::size_t pos = lower_bound(k);
    if (pos < entries_.size() && entries_[pos].key == k)
        ++pos;
    return live_from(pos);
}

} // namespace nvlblock::sim
