// SPDX-License-Identifier: GPL-2.0-or-later
#include "pending_queue.hpp"

#include <algorithm>

namespace nvlblock::sim {

std::size_t PendingQueue::lower_bound(Key k) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), k,
                                     [](const Entry& e, const Key& key) { return e.key < key; });
    return static_cast<std::size_t>(it - entries_.begin());
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
        // Back in its old place (a requeue keeps its submit time).
        entries_[pos].gone = false;
        entries_[pos].not_before = not_before;
    } else {
        entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(pos), Entry{k, not_before, false});
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
