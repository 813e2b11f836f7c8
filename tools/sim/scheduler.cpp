// SPDX-License-Identifier: GPL-2.0-or-later
#include "scheduler.hpp"

#include "patch.hpp"

#include <algorithm>
#include <optional>

namespace nvlblock::sim {

using nvlblock::NodeIndex;
using nvlblock::NodeState;
using nvlblock::Placement;

namespace {

// What the head job may use at the shadow time on a node in state `s`
// running preemptible work (`pre`) then.
std::uint8_t whatif_available(NodeState s, bool pre, bool preempt) {
    return s == NodeState::kFree || (preempt && pre && nvlblock::is_healthy(s)) ? 1 : 0;
}

} // namespace

std::uint64_t Scheduler::shape_key(const SimJob& j, Seconds now) const {
    return static_cast<std::uint64_t>(j.shape.nodes) | (static_cast<std::uint64_t>(j.shape.segment) << 24) |
           (static_cast<std::uint64_t>(j.preemptible) << 48) |
           (static_cast<std::uint64_t>(w_.crosses_levels(j, now)) << 49);
}

// The verdicts of the job's shape now, found once per job and shape
// (the backfill asks for them of every job it walks, every pass).
Scheduler::ShapeVerdict& Scheduler::verdict_of(std::uint32_t index, Seconds now) {
    const std::uint64_t key = shape_key(w_.job(index), now);
    if (index >= verdict_at_.size())
        verdict_at_.resize(w_.jobs().size());
    auto& [known, verdict] = verdict_at_[index];
    if (!verdict || known != key) {
        known = key;
        verdict = &verdicts_[key]; // an unordered_map's elements stay where they are
    }
    return *verdict;
}

// Jobs restarting in place are decided by their own ledger record, not by their shape.
bool Scheduler::cacheable(const SimJob& j) {
    return !w_.policy().recovery ||
           !w_.planner().recovery().recovering(World::job_id(static_cast<std::uint32_t>(&j - w_.jobs().data())));
}

int Scheduler::pass(Seconds now) {
    Counters& c = w_.counters();
    ++c.passes;
    const std::uint64_t started_before = c.started;
    auto& pending = w_.pending();
    bool blocked = false;
    std::uint32_t head = 0;
    // The recovery clock first (jobs whose wait is over fall back), then
    // jobs waiting to restart in place reclaim spares on their blocks (rule
    // 3b), as the plugin's background thread does between passes.
    // Watched jobs (a fault with the node up) too: a drain since their end opens their recovery there.
    if (w_.policy().recovery && (!w_.planner().ledger().empty() || !w_.planner().recovery().watches().empty()))
        w_.advance(now);
    if (w_.policy().recovery && w_.reclaims() && w_.planner().ledger().any_waiting()) {
        std::vector<std::uint32_t> waiting;
        w_.planner().ledger().for_each_waiting([&](const nvlblock::RecoveryRecord& rec) {
            const SimJob& j = w_.job(rec.job_id - 1);
            if (j.state == SimJob::State::kPending && j.eligible_at <= now)
                waiting.push_back(rec.job_id - 1);
        });
        for (std::uint32_t index : waiting)
            w_.reclaim_for(w_.job(index), now);
    }
    for (PendingQueue::Cursor c = pending.first(); !c.done;) {
        const std::uint32_t index = c.key.second;
        pending.advance(c); // before a start erases this entry
        if (w_.job(index).eligible_at > now)
            continue;
        if (try_start(index, now))
            continue;
        blocked = true;
        head = index;
        break;
    }
    if (blocked && w_.options().queue == QueueMode::kEasy)
        backfill(head, now);
    return static_cast<int>(c.started - started_before);
}

bool Scheduler::try_start(std::uint32_t index, Seconds now) {
    SimJob& j = w_.job(index);
    const bool caching = w_.options().cache_refusals;
    if (World::preempting(j, now) || (caching && blocked(index)))
        return false;
    ShapeVerdict* v = caching && cacheable(j) ? &verdict_of(index, now) : nullptr;
    if (v && still_refused(*v)) {
        block(index, v);
        return false;
    }
    if (lacks_nodes(index, j))
        return false;
    long shortfall = 0;
    Placement p = w_.attempt(j, now, nullptr, &shortfall);
    if (p.placed()) {
        if (w_.start(index, p, now))
            return true;
        block(index, nullptr); // waits for the jobs it preempted: not a refusal of its shape
        return false;
    }
    refused_now(index, v, shortfall);
    return false;
}

// At most one pass per bf_interval: a pass asked for sooner schedules a
// tick for when it is due.
bool Scheduler::backfill_due(Seconds now) {
    const SimOptions& opt = w_.options();
    if (opt.bf_interval > 0 && now < last_backfill_ + opt.bf_interval) {
        const Seconds at = last_backfill_ + opt.bf_interval;
        if (tick_at_ != at) {
            w_.timer(at, false);
            tick_at_ = at;
        }
        return false;
    }
    last_backfill_ = now;
    return true;
}

// The reservation stands while the head job is the same, no job started
// behind its back, nothing but job ends happened, and every job that ended
// was expected to end strictly before the reserved time: the what-if state
// at that time is then the same, no earlier time can have become feasible
// (each such state is contained in one that was refused), and so a new
// search would find the same time and nodes. test/sim checks this.
// Changes caused by this backfill's own starts (preemptions) count too,
// from the next pass on.
void Scheduler::drop_stale_reservation(std::uint32_t head) {
    const SimOptions& opt = w_.options();
    if (res_.valid &&
        (!opt.reuse_reservation || res_.head != head || res_.own_changes != 0 || res_.changes != w_.other_changes() ||
         res_.starts != w_.counters().started || w_.finished_expected_end_max() >= res_.shadow))
        res_.valid = false;
}

void Scheduler::backfill(std::uint32_t head, Seconds now) {
    if (!backfill_due(now))
        return;
    ++w_.counters().backfill_passes;
    drop_stale_reservation(head);
    auto& pending = w_.pending();
    const PendingQueue::Key head_key{w_.job(head).queued_at, head};
    if (!pending.contains(head_key))
        return;
    int examined = 0;
    for (PendingQueue::Cursor c = pending.after(head_key); !c.done;) {
        const std::uint32_t index = c.key.second;
        const Seconds not_before = c.not_before; // not eligible yet, or waiting for the jobs it preempted
        pending.advance(c);                      // before a start erases this entry
        if (not_before > now)
            continue;
        if (++examined > w_.options().bf_max_job_test)
            break;
        // Most jobs a walk examines are skipped here (inlined: a call per job cost more than the test).
        if (w_.options().cache_refusals && blocked(index))
            continue;
        backfill_job(head, index, now);
    }
}

// One job behind the head, not blocked (the walk tests that): started now
// if it fits and leaves the head job's reservation intact (or is gone by then).
void Scheduler::backfill_job(std::uint32_t head, std::uint32_t index, Seconds now) {
    const SimOptions& opt = w_.options();
    SimJob& j = w_.job(index);
    ShapeVerdict* v = opt.cache_refusals && cacheable(j) ? &verdict_of(index, now) : nullptr;
    if (v && still_refused(*v)) {
        block(index, v);
        return;
    }
    if (lacks_nodes(index, j))
        return;
    const Seconds expected_end = now + j.limit;
    // The refusal without the reserved nodes stands while they are the same
    // nodes: a long start behind the head job may move them (head_then in
    // backfill_long_job), which can offer nodes it withheld.
    if (v && res_.valid && res_.exists && expected_end > res_.shadow && v->long_epoch == w_.epoch() &&
        v->long_reservation == res_.id && v->long_reserved == res_.reserved_version)
        return;
    // A long job while the reservation stands is asked without the reserved
    // nodes alone (once the room bound lets its start attempt through): its
    // start attempt would place it wherever that does (backfill_long_job).
    if (opt.long_first && res_.valid && res_.exists && expected_end > res_.shadow &&
        res_.changes + res_.own_changes == w_.other_changes()) {
        if (const long shortfall = w_.attempt_shortfall(j, now); shortfall == 0)
            backfill_long_job(head, index, v, now);
        else
            refused_now(index, v, shortfall);
        return;
    }
    long shortfall = 0;
    Placement p = w_.attempt(j, now, nullptr, &shortfall);
    if (!p.placed()) {
        refused_now(index, v, shortfall);
        return;
    }
    // Within a pass the reservation stands unless something other than
    // this pass's own starts changed (a job's wait for its block ended
    // inside an attempt, releasing its holds): then search again.
    if (res_.valid && res_.changes + res_.own_changes != w_.other_changes())
        res_.valid = false;
    if (!res_.valid)
        compute_reservation(head, now);
    if (!res_.exists || expected_end <= res_.shadow) {
        // Gone again by the reserved time: the reservation is unchanged.
        const std::uint64_t before = w_.other_changes();
        w_.start(index, p, now); // or waits for the jobs it preempted
        res_.starts = w_.counters().started;
        res_.own_changes += w_.other_changes() - before;
        return;
    }
    backfill_long_job(head, index, v, now);
}

// The start attempt refused the job: it and its shape wait for the epoch to
// change, or, ruled out by the room bound, for enough nodes to be freed.
void Scheduler::refused_now(std::uint32_t index, ShapeVerdict* v, long shortfall) {
    block(index, v);
    if (!v) {
        // A job its shape does not speak for (a recovering one) keeps the
        // bound's refusal itself, as lacks_nodes does.
        if (shortfall > 0 && w_.options().keep_bound_refusals)
            blocked_[index].until_freed = w_.freed() + static_cast<std::uint64_t>(shortfall);
        return;
    }
    v->short_epoch = w_.epoch();
    v->shortfall = w_.options().keep_bound_refusals ? shortfall : 0;
    v->shortfall_changes = w_.other_changes();
    v->shortfall_freed = w_.freed();
}

void Scheduler::block(std::uint32_t index, const ShapeVerdict* v) {
    if (index >= blocked_.size())
        blocked_.resize(w_.jobs().size());
    blocked_[index] = {w_.epoch(), w_.other_changes(), v, 0};
}

// The nodes a job could use (free, or running work it may preempt, or
// every healthy node for a job restarting in place) grow only as jobs end,
// by at most the nodes their ends freed, while nothing else changes
// (failures, repairs, holds, recoveries opening or closing all move
// World::other_changes()). So a job short by `s` of them stays short until
// jobs ending freed `s` nodes: its walk need not read it before then.
bool Scheduler::lacks_nodes(std::uint32_t index, const SimJob& j) {
    const int shortfall = static_cast<int>(j.shape.nodes) - w_.usable_nodes(j);
    if (shortfall <= 0)
        return false;
    block(index, nullptr);
    blocked_[index].until_freed = w_.freed() + static_cast<std::uint64_t>(shortfall);
    return true;
}

// A long job: it must leave the head job's reservation intact. Asked
// without the reserved nodes; its start attempt (on every node it may use)
// is not asked: placed on fewer nodes, it is placed on more (placement is
// monotone in free nodes, which the refusal cache relies on too), and the
// start attempt's placement is not used. Test
// Determinism.AskingLongJobsWithoutTheReservedNodesFirstChangesNoDecision
// runs the order that asks it first.
void Scheduler::backfill_long_job(std::uint32_t head, std::uint32_t index, ShapeVerdict* v, Seconds now) {
    SimJob& j = w_.job(index);
    Placement q = w_.attempt(j, now, &res_.reserved);
    if (q.placed()) {
        // The reservation's what-if with the job's nodes busy: patched for
        // the head job's question, and kept if the job starts.
        const NodeState busy = w_.running_state(j);
        const std::uint8_t usable = whatif_available(busy, j.preemptible, res_.preempt);
        Patch<NodeState> states(res_.states, w_.changes());
        Patch<std::uint8_t> available(res_.available, w_.changes());
        for (NodeIndex n : q.nodes) {
            states.set(n, busy);
            available.set(n, usable);
        }
        const Placement head_then =
            w_.decide(res_.states, w_.request_for(w_.job(head), now), &res_.available, now, true);
        if (head_then.placed()) {
            const std::uint64_t before = w_.other_changes();
            const bool started = w_.start(index, q, now);
            res_.own_changes += w_.other_changes() - before;
            if (!started)
                return; // it waits for the jobs it preempted (the what-if is put back)
            states.keep();
            available.keep();
            // The head job keeps its time; its nodes are where it would now be placed then.
            res_.reserved = head_then.nodes;
            ++res_.reserved_version;
            res_.starts = w_.counters().started;
            return;
        }
    }
    // Remembered only where the job was not placed without the reserved
    // nodes: that refusal stands while only starts happen and the reserved
    // nodes stay (placement is monotone in free nodes). A refusal of the head
    // job's question does not: after other starts the same shape may be
    // placed elsewhere (on preemptible work the head job may take too) and
    // leave the head job its place.
    if (v && !q.placed()) { // found once per job: an unordered_map's elements stay where they are
        v->long_epoch = w_.epoch();
        v->long_reservation = res_.id;
        v->long_reserved = res_.reserved_version;
    }
}

void Scheduler::set_whatif(NodeIndex i, bool released) {
    const NodeState now = w_.cluster().states()[i];
    const NodeState s = released && nvlblock::is_healthy(now) ? NodeState::kFree : now;
    res_.states[i] = s;
    const bool pre = !released && w_.cluster().runs_preemptible(i);
    res_.available[i] = whatif_available(s, pre, res_.preempt);
}

void Scheduler::note_whatif(std::size_t i) {
    if (nvlblock::ChangeJournal* j = w_.changes())
        j->note(static_cast<NodeIndex>(i));
}

// Before the what-if arrays are rewritten whole: every node counts as
// changed (one note_all, not a note per node).
void Scheduler::track_whatif(std::size_t n) {
    nvlblock::ChangeJournal* j = w_.changes();
    if (j && res_.states.size() == n && j->tracks(res_.states.data()) && j->tracks(res_.available.data())) {
        j->note_all();
        return;
    }
    if (j) {
        j->untrack(res_.states.data());
        j->untrack(res_.available.data());
    }
    res_.states.resize(n);
    res_.available.resize(n);
    if (j) {
        j->track(res_.states.data());
        j->track(res_.available.data());
    }
}

bool Scheduler::probe(std::uint32_t head, std::size_t k, Seconds now, Placement& out) {
    whatif_at(k);
    // The same arrays as a probe that placed the head job earlier in this
    // search: the same answer (the searches end with the count they found).
    if (k == placed_k_) {
        out = placed_;
        return true;
    }
    const nvlblock::Request r = w_.request_for(w_.job(head), now);
    out = w_.may_place(res_.states, r, &res_.available, now) ? w_.decide(res_.states, r, &res_.available, now, true)
                                                             : Placement{};
    if (out.placed()) {
        placed_k_ = k;
        placed_ = out;
    }
    return out.placed();
}

void Scheduler::whatif_at(std::size_t k) {
    // Nodes whose job is among the first k to end are free (if healthy) in
    // this what-if. Only nodes of the jobs ranked between the last probe's k
    // and this one differ from the last probe's arrays (the cluster does not
    // change during a search), so only they are rewritten.
    rank_until(k);
    if (probed_ == kNotProbed) {
        // With no job ended the what-if is the cluster as it is: its states,
        // and what the head job may use now, which is the map the cluster
        // keeps for it (free nodes; with preemption also the healthy nodes of
        // preemptible work). Copied, then the ended jobs' nodes rewritten.
        const ClusterState& cl = w_.cluster();
        track_whatif(cl.size());
        std::copy(cl.states().begin(), cl.states().end(), res_.states.begin());
        const std::vector<std::uint8_t>& map = res_.preempt ? cl.preemptor_map() : cl.free_map();
        std::copy(map.begin(), map.end(), res_.available.begin());
        for (std::size_t r = 0; r < rank_begin_[k]; ++r)
            set_whatif(ranked_[r], true);
    } else {
        const std::size_t from = std::min(probed_, k), to = std::max(probed_, k);
        for (std::size_t r = rank_begin_[from]; r < rank_begin_[to]; ++r) {
            set_whatif(ranked_[r], probed_ < k);
            note_whatif(ranked_[r]);
        }
    }
    probed_ = k;
}

std::size_t Scheduler::rank_running(int need) {
    ends_.clear();
    ranked_.clear();
    rank_begin_.assign(1, 0);
    unranked_ = w_.running_by_end().begin();
    // The fewest jobs whose ends free `need` healthy nodes (more than are running: never).
    int free_nodes = w_.cluster().free_count();
    std::size_t ranked = 0;
    while (free_nodes < need && ranked < w_.running_by_end().size())
        free_nodes += rank_until(++ranked);
    return free_nodes < need ? w_.running_by_end().size() + 1 : ranked;
}

// Ranks running jobs by expected end until the first k are ranked (their
// nodes from ranked_[rank_begin_[r]]); returns the healthy nodes of the
// jobs it ranked. A search needs the jobs that end before its answer, not
// every running job: ranking them all cost a visit to every node and job
// per reservation.
int Scheduler::rank_until(std::size_t k) {
    const ClusterState& cl = w_.cluster();
    int healthy = 0;
    while (ends_.size() < k && unranked_ != w_.running_by_end().end()) {
        const auto [end, index] = *unranked_++;
        ends_.push_back(end);
        // A running job's nodes are the nodes whose job it is.
        for (NodeIndex n : w_.job(index).nodes)
            if (cl.job_on(n) == static_cast<std::int32_t>(index)) {
                ranked_.push_back(n);
                healthy += cl.healthy(n) ? 1 : 0;
            }
        rank_begin_.push_back(ranked_.size());
    }
    return healthy;
}

// Whether the head job is placed once every running job has ended: asked of
// the arrays the cluster keeps for that what-if (ClusterState::ended_states),
// so a head job that nothing ending would let start (failed nodes, holds)
// costs one decision, not a search over every running job.
bool Scheduler::fits_after_all_ends(std::uint32_t head, Seconds now) {
    const ClusterState& cl = w_.cluster();
    return w_.decide(cl.ended_states(), w_.request_for(w_.job(head), now), &cl.ended_map(), now, true).placed();
}

// The fewest ended jobs, at least `lo`, with which the head job is placed.
// Placement only gets easier as jobs end, so the answer is the end of the
// refusals: the probes step out from `lo` by doubling strides, then halve
// back between the last refusal and the first placement. A probe rewrites
// only the nodes of the jobs between it and the previous one, and ranks
// jobs only that far, so a search costs what lies before its answer, which
// is usually among the first few percent of the running jobs (Philly on 128
// racks: 80 of about 1,600 on average; the saturating mix on 8,192 racks:
// 816 of 21,000), where halving down from "every job ended" rewrote most of
// the cluster at every step and ranked every job.
std::optional<std::size_t> Scheduler::first_fit(std::uint32_t head, std::size_t lo, Seconds now, Placement& p) {
    const std::size_t all = w_.running_by_end().size();
    std::size_t refused = lo - 1, k = lo, stride = 1;
    while (!probe(head, k, now, p)) {
        if (k == all)
            return std::nullopt;
        refused = k;
        k = std::min(all, k + stride);
        stride *= 2;
    }
    return halve_back(head, refused, k, now, p);
}

// The fewest ended jobs in (refused, placed] with which the head job is
// placed, given that it is refused with `refused` ended and placed with
// `placed`: the interval halved until one count is left.
std::size_t Scheduler::halve_back(std::uint32_t head, std::size_t refused, std::size_t placed, Seconds now,
                                  Placement& p) {
    std::size_t from = refused + 1;
    while (from < placed) {
        const std::size_t mid = from + (placed - from) / 2;
        if (probe(head, mid, now, p))
            placed = mid;
        else
            from = mid + 1;
    }
    return placed;
}

// The fewest ended jobs, at least `lo`, with which the head job is placed,
// given that it is placed with `placed` ended: the probes step down from
// there by doubling strides to a refusal (or `lo`), then halve back.
std::size_t Scheduler::first_fit_below(std::uint32_t head, std::size_t lo, std::size_t placed, Seconds now,
                                       Placement& p) {
    std::size_t refused = lo - 1, stride = 1;
    while (placed > lo) {
        const std::size_t k = placed - std::min(stride, placed - lo);
        if (!probe(head, k, now, p)) {
            refused = k;
            break;
        }
        placed = k;
        stride *= 2;
    }
    return halve_back(head, refused, placed, now, p);
}

std::size_t Scheduler::ended_by(Seconds t, std::size_t lo) {
    const std::size_t all = w_.running_by_end().size();
    std::size_t k = lo;
    while (k < all) {
        rank_until(k + 1);
        if (ends_[k] > t)
            break;
        ++k;
    }
    return k;
}

void Scheduler::compute_reservation(std::uint32_t head, Seconds now) {
    Counters& c = w_.counters();
    ++c.reservations;
    // The head job's last reserved time, if it had one: where the new
    // search starts. The answer is usually the same time (a job that ended
    // early rarely moves the head job's), found by two probes, where a
    // search stepping out from the fewest jobs whose nodes suffice takes a
    // dozen. Only the probes asked change: the answer is the fewest ended
    // jobs with which the head job is placed either way.
    const std::optional<Seconds> last = w_.options().warm_search && res_.head == head && res_.exists
                                            ? std::optional<Seconds>(res_.shadow)
                                            : std::nullopt;
    res_.valid = true;
    res_.exists = false;
    res_.head = head;
    res_.changes = w_.other_changes();
    res_.own_changes = 0;
    res_.starts = c.started;
    w_.reset_finished_expected_end_max();
    res_.id = ++reservation_ids_;
    res_.shadow = kNever;
    res_.preempt = w_.may_preempt(w_.job(head));
    probed_ = placed_k_ = kNotProbed;
    // The head job needs at least its node count free, which bounds the search below.
    const SimJob& h = w_.job(head);
    const ClusterState& cl = w_.cluster();
    const int need = static_cast<int>(h.shape.nodes) - (w_.may_preempt(h) ? cl.busy_preemptible_count() : 0);
    const std::size_t running = w_.running_by_end().size();
    const std::size_t lo = std::max<std::size_t>(rank_running(need), 1);
    if (running == 0)
        return; // nothing will free up: the head job cannot start before something changes
    Placement p;
    std::optional<std::size_t> found;
    const std::size_t warm = last && lo <= running ? ended_by(*last, lo) : 0;
    if (warm > lo && probe(head, warm, now, p)) {
        found = first_fit_below(head, lo, warm, now, p);
    } else {
        if (lo > running || !fits_after_all_ends(head, now))
            return; // not even with every running job gone (failures, holds): no reservation
        if (warm > lo && warm == running)
            return; // refused with every running job ended: the what-if arrays and the kept ones disagree
        found = first_fit(head, warm > lo ? warm + 1 : lo, now, p);
    }
    if (!found)
        return; // the cluster's what-if arrays and its kept "all ended" arrays disagree: no reservation
    std::size_t k = *found;
    for (; k < running; ++k) { // jobs ending in the same second as the k-th end with it
        rank_until(k + 1);
        if (ends_[k] != ends_[k - 1])
            break;
    }
    probe(head, k, now, p);
    res_.exists = p.placed();
    if (!res_.exists)
        return;
    res_.shadow = ends_[k - 1];
    res_.reserved = p.nodes; // res_.states and res_.available are the last probe's
    ++res_.reserved_version;
    // The probes may have given up a hold (a change): keep the reservation for this pass.
    res_.changes = w_.other_changes();
    res_.own_changes = 0;
    w_.reset_finished_expected_end_max();
}

} // namespace nvlblock::sim
