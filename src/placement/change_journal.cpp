// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/change_journal.hpp"

#include <algorithm>

namespace nvlblock {
namespace {

bool tracks_all(const ChangeJournal* journal, std::initializer_list<const void*> arrays) {
    if (!journal)
        return false;
    return std::all_of(arrays.begin(), arrays.end(), [&](const void* a) { return !a || journal->tracks(a); });
}

} // namespace

// Both forget what was noted: a copy synced before an array was tracked
// (or while it was, then not) may differ from it anywhere.
void ChangeJournal::track(const void* array) {
    if (array && !tracks(array)) {
        tracked_.push_back(array);
        note_all();
    }
}

void ChangeJournal::untrack(const void* array) {
    if (!tracks(array))
        return;
    tracked_.erase(std::remove(tracked_.begin(), tracked_.end(), array), tracked_.end());
    note_all();
}

bool ChangeJournal::tracks(const void* array) const {
    return std::find(tracked_.begin(), tracked_.end(), array) != tracked_.end();
}

void ChangeJournal::note(NodeIndex node) {
    if (entries_.size() >= limit_) {
        // Full: the older half is forgotten. A copy synced before it compares
        // every node (as after note_all); one synced since keeps its list.
        const std::size_t drop = std::max<std::size_t>(1, entries_.size() / 2);
        entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(drop));
        base_ += drop;
    }
    entries_.push_back(node);
    ++end_;
}

void ChangeJournal::note_all() {
    entries_.clear();
    base_ = ++end_;
}

std::optional<std::span<const NodeIndex>> ChangeJournal::since(Position from) const {
    if (from < base_ || from > end_)
        return std::nullopt;
    return std::span<const NodeIndex>(entries_.data() + (from - base_), static_cast<std::size_t>(end_ - from));
}

std::optional<std::span<const NodeIndex>> JournalMark::pending(const ChangeJournal* journal,
                                                               std::initializer_list<const void*> arrays) const {
    if (!synced || !tracks_all(journal, arrays))
        return std::nullopt;
    return journal->since(seen);
}

void JournalMark::sync(const ChangeJournal* journal, std::initializer_list<const void*> arrays) {
    synced = tracks_all(journal, arrays);
    seen = journal ? journal->end() : 0;
}

} // namespace nvlblock
