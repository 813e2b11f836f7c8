// SPDX-License-Identifier: GPL-2.0-or-later
//
// The pending jobs in priority order (queued_at, then arrival), as one
// sorted array. The scheduler walks it on every pass, and the backfill up to
// bf_max_job_test jobs of it: as a std::set, a deep queue's walks were mostly
// waits for tree nodes scattered over the heap. Here a walk reads entries
// side by side. A job that leaves (it starts) leaves a gap, stepped over by
// walks (a run of gaps at once: Entry::skip) and closed when gaps pass a
// sixteenth of the jobs, so that a start costs no move of the entries
// behind it; a job that comes back in the middle (a requeue) moves them
// once. Beside each key is the time before which its job may not start
// (World::not_before), so that a walk need not read the job to skip it.
#pragma once

#include "sim_types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nvlblock::sim {

class PendingQueue {
  public:
    using Key = std::pair<Seconds, std::uint32_t>; // (queued_at, job index)

    // Where a walk stands: the key it read last. The walk goes on from there
    // even if jobs came or went since (its array position is found again).
    struct Cursor {
        std::size_t at = 0; // array position of `key`, or where it was
        Key key{};
        Seconds not_before = 0;   // its job's (insert, hold)
        std::uint64_t layout = 0; // layout_ when `at` was found
        bool done = false;
    };

    // As std::set's: false (and no change) where `k` is queued already, or not queued.
    // `not_before`: the job may not start before then (its eligible time), kept
    // beside its key so that a walk need not read the job to skip it.
    bool insert(Key k, Seconds not_before = 0);
    // The queued job `k` may not start before `t` either (it waits for jobs it preempted).
    void hold(Key k, Seconds t);
    bool erase(Key k);
    bool contains(Key k) const;
    std::size_t size() const { return live_; }
    bool empty() const { return live_ == 0; }

    // The first job (done if none), or the first after `k` (which need not be queued).
    Cursor first() const { return live_from(head_); }
    Cursor after(Key k) const;
    // The next job after the cursor's. Where jobs came or went since the
    // cursor was placed, its key is looked up again: as a std::set iterator
    // that was not erased, a job that came in before it is not walked.
    void advance(Cursor& c) const {
        if (!c.done)
            c = c.layout == layout_ ? live_from(c.at + 1) : after(c.key);
    }

    // Every queued job in order.
    template <class F>
    void for_each(F&& f) const {
        for (Cursor c = first(); !c.done; advance(c))
            if (f(c.key))
                return;
    }

  private:
    struct Entry {
        Key key;
        Seconds not_before = 0;
        bool gone = false; // its job left: a gap, keeping its key so the array stays sorted
        // A gap's: an entry after it with only gaps between (no further than
        // the next live entry), so that a walk steps over a run of gaps at
        // once. Shortened as walks pass (path compression, as in a
        // disjoint-set forest): each gap is stepped on about once.
        mutable std::uint32_t skip = 0;
    };
    std::size_t lower_bound(Key k) const;
    // The first live entry at or after `pos` (the end if none).
    std::size_t next_live(std::size_t pos) const;
    // The cursor at the first live entry at or after `pos`.
    Cursor live_from(std::size_t pos) const {
        if (pos < entries_.size() && entries_[pos].gone)
            pos = next_live(pos);
        Cursor c;
        c.at = pos;
        c.layout = layout_;
        c.done = pos == entries_.size();
        if (!c.done) {
            c.key = entries_[pos].key;
            c.not_before = entries_[pos].not_before;
        }
        return c;
    }
    void close_gaps();

    std::vector<Entry> entries_;      // sorted by key
    std::size_t live_ = 0, head_ = 0; // head_: no live entry before it
    std::uint64_t layout_ = 0;        // moves whenever entries move
};

} // namespace nvlblock::sim
