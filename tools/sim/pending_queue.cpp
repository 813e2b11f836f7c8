// SPDX-License-Identifier: GPL-2.0-or-later
#include "pending_queue.hpp"

#include <algorithm>

namespace nvlblock::sim {

std::size_t PendingQueue::lower_bound(Key k) const {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), k,
                                     [](const Entry& e, const Key& key) { return e.key < key; });
    return static_cast<std::size_t>(it - entries_.begin());
}

bool PendingQueue::insert(Key k) {
    // Most jobs join at the end (a submission, or a requeue behind everyone).
    if (entries_.empty() || entries_.back().key < k) {
        entries_.push_back({k, false});
        ++live_;
        return true;
    }
    const std::size_t pos = lower_bound(k);
    if (pos < entries_.size() && entries_[pos].key == k) {
        if (!entries_[pos].gone)
            return false;           // queued already
        entries_[pos].gone = false; // back in its old place (a requeue keeps its submit time)
    } else {
        entries_.insert(entries_.begin() + static_cast<std::ptrdiff_t>(pos), Entry{k, false});
        ++layout_;
    }
    ++live_;
    head_ = std::min(head_, pos);
    return true;
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
    // Gaps outnumber jobs: closed, so a walk never reads more than twice
    // the queue, and the cost is one move per job that left.
    if (entries_.size() - live_ > live_ + 64)
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
