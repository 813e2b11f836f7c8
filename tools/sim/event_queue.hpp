// SPDX-License-Identifier: GPL-2.0-or-later
//
// The discrete-event queue. Events are ordered by time, then by kind (the
// order in which the world changes within one second: repairs, job ends,
// failures, submissions, timers, ends of grace times, ends of killed jobs'
// completions, drains by health checks, jobs failing on a faulty node),
// then by insertion,
// so a run is the same on every machine. The simulator takes all events of
// one second, applies them, and then runs one scheduling pass, as slurmctld
// does after a batch of state changes.
#pragma once

#include "sim_types.hpp"

#include <cstdint>
#include <queue>
#include <vector>

namespace nvlblock::sim {

enum class EventKind : std::uint8_t {
    kCauseUp = 0,       // a failure cause ends (node repaired, rack fault over)
    kJobEnd = 1,        // a run completes (stale if the run was killed meanwhile)
    kCauseDown = 2,     // a failure cause starts
    kSubmit = 3,        // a job arrives
    kTimer = 4,         // something time-based changes (requeue delay over, hold expiry, backfill tick)
    kGraceEnd = 5,      // a reclaimed job's grace time is over: it is requeued (stale if its run ended)
    kCompletionEnd = 6, // killed jobs' nodes are done completing (the kill wait): free unless down or killed again
    kDrain = 7,         // a health check drains a node with a hidden fault (stale if that fault was found already)
    kFaultHit = 8,      // a job started on a node with a hidden fault fails on it (stale if its run ended)
};

struct Event {
    Seconds at = 0;
    EventKind kind = EventKind::kTimer;
    std::uint32_t a = 0; // job index, node, rack or failure process
    std::uint32_t b = 0; // run number for kJobEnd; flags for causes
    std::uint32_t c = 0;
    std::uint64_t seq = 0; // insertion order, set by the queue
};

class EventQueue {
  public:
    void push(Event e);
    bool empty() const { return heap_.empty(); }
    std::size_t size() const { return heap_.size(); }
    const Event& top() const { return heap_.top(); }
    Event pop();
    Seconds next_time() const { return heap_.empty() ? kNever : heap_.top().at; }

  private:
    struct Later {
        bool operator()(const Event& x, const Event& y) const {
            if (x.at != y.at)
                return x.at > y.at;
            if (x.kind != y.kind)
                return x.kind > y.kind;
            return x.seq > y.seq;
        }
    };
    std::priority_queue<Event, std::vector<Event>, Later> heap_;
    std::uint64_t seq_ = 0;
};

} // namespace nvlblock::sim
