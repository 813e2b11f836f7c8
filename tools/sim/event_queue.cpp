// SPDX-License-Identifier: GPL-2.0-or-later
#include "event_queue.hpp"

namespace nvlblock::sim {

void EventQueue::push(Event e) {
    e.seq = seq_++;
    heap_.push(e);
}

Event EventQueue::pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
}

} // namespace nvlblock::sim
