// SPDX-License-Identifier: GPL-2.0-or-later
//
// A few entries of a node-sized array changed for one decision and put back
// when the patch goes out of scope. The backfill asks about "the cluster,
// except these nodes" many times per pass; patching the nodes that differ
// costs their number, where building a node-sized array per question cost
// the cluster's size (docs/performance.md, "The simulator at 8,192 racks").
#pragma once

#include "model/topology.hpp"
#include "placement/change_journal.hpp"

#include <utility>
#include <vector>

namespace nvlblock::sim {

template <class T>
class Patch {
  public:
    // `journal`: where each node set and put back is noted (the planner's,
    // when the array is one it tracks; null: none).
    explicit Patch(std::vector<T>& array, nvlblock::ChangeJournal* journal = nullptr)
        : array_(array), journal_(journal) {}
    Patch(const Patch&) = delete;
    Patch& operator=(const Patch&) = delete;
    // Undone in reverse order, so a node set twice gets its first value back.
    ~Patch() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
            array_[it->first] = it->second;
            if (journal_)
                journal_->note(it->first);
        }
    }

    // A node that has the value already is left alone (nothing to note or put back).
    void set(nvlblock::NodeIndex n, T value) {
        if (array_[n] == value)
            return;
        saved_.emplace_back(n, array_[n]);
        array_[n] = value;
        if (journal_)
            journal_->note(n);
    }
    // The changes stay: nothing is put back.
    void keep() { saved_.clear(); }
    const std::vector<T>& array() const { return array_; }

  private:
    std::vector<T>& array_;
    nvlblock::ChangeJournal* journal_;
    std::vector<std::pair<nvlblock::NodeIndex, T>> saved_;
};

} // namespace nvlblock::sim
