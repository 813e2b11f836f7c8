// SPDX-License-Identifier: GPL-2.0-or-later
//
// Queue policies. Jobs are considered in priority order (submit time; a
// requeued job queues by its requeue time, as Slurm does, or with
// RequeueOrder::kSubmit keeps its place).
//
// FIFO (Slurm's main scheduler): start jobs in order; stop at the first
// eligible job that cannot start (it blocks the partition).
//
// EASY backfill (Slurm's sched/backfill with one reservation): after the
// FIFO pass, the blocked head job gets a reservation: the earliest time at
// which the Planner would place it if the running jobs ended at their
// expected ends (start + time limit), found by a search over how many of
// them have ended (placement only gets easier as nodes free up: none if the
// head job is not placed even with all of them ended, else strides doubling
// from the fewest jobs whose nodes suffice, then halving back), and the
// nodes it would get then. Then up to bf_max_job_test later jobs are tried:
// one that is expected to end before that time may start anywhere it is
// placed now; a longer one is placed without the reserved nodes and started
// only if the head job would still be placed at its reserved time with that
// job's nodes taken (spares are held back by count, so keeping off the
// reserved nodes alone is not enough). At most one backfill pass runs per
// bf_interval seconds, as in Slurm.
//
// Nothing here decides a placement: every decision, including the what-ifs
// of the reservation, is World::decide -> Planner::place.
//
// Efficiency: a refusal stands until World::epoch() changes (placement is
// monotone in free nodes), per job and per request shape, and a refusal by
// the room bound until jobs ending freed the nodes it lacked; a job needing
// more nodes than are usable at all is not even tried; the reservation is
// computed only when a later job could start at all, and reused until the
// epoch or the head job changes. The backfill's walk reads the queue's
// entries and the per-job Blocked records, not the jobs it skips.
#pragma once

#include "world.hpp"

#include <optional>
#include <set>
#include <unordered_map>

namespace nvlblock::sim {

class Scheduler {
  public:
    explicit Scheduler(World& world) : w_(world) {}

    // One scheduling pass at `now`; returns the number of jobs started.
    int pass(Seconds now);

  private:
    struct Reservation {
        bool valid = false;
        bool exists = false; // the head job can be placed at some expected future
        std::uint32_t head = 0;
        std::uint64_t changes = 0;     // World::other_changes() when made
        std::uint64_t own_changes = 0; // of the changes since, those this backfill's own starts caused
        std::uint64_t starts = 0;      // jobs started when it was made (a start it did not see invalidates it)
        std::uint64_t id = 0;
        Seconds shadow = kNever;
        bool preempt = false;                      // the head job may preempt
        std::vector<nvlblock::NodeIndex> reserved; // nodes the head job would take then
        std::uint64_t reserved_version = 0;        // moves whenever `reserved` is set
        // The cluster at the shadow time and what the head job may use then:
        // the probes' what-if arrays, written in place (the last probe's are the
        // reservation's) and patched, not copied, per backfilled job.
        std::vector<nvlblock::NodeState> states;
        std::vector<std::uint8_t> available;
    };
    struct ShapeVerdict {
        std::uint64_t short_epoch = 0; // refused with all usable nodes at this epoch
        std::uint64_t long_epoch = 0;  // refused without the reserved nodes at this epoch
        std::uint64_t long_reservation = 0;
        std::uint64_t long_reserved = 0; // Reservation::reserved_version then
        // Ruled out by the room bound this many nodes short, when
        // World::other_changes() and World::freed() read as below: it stands
        // while nothing but finishes changed and they freed fewer nodes.
        long shortfall = 0;
        std::uint64_t shortfall_changes = 0, shortfall_freed = 0;
    };

    // Why a job is not asked again (per job, beside the others so that a
    // walk reads no job it skips): refused at `epoch`; through its shape's
    // `verdict` when World::other_changes() read `changes` (nothing but
    // job ends since: the job's shape, and whether it is cached, are the
    // same, so the verdict still speaks for it); or needing more nodes than
    // it could use, or ruled out by the room bound where no shape speaks for
    // it (a recovering job, refused_now), until World::freed() reaches
    // `until_freed` (with `changes` as it was: see lacks_nodes).
    struct Blocked {
        std::uint64_t epoch = 0, changes = 0;
        const ShapeVerdict* verdict = nullptr;
        std::uint64_t until_freed = 0;
    };
    bool blocked(std::uint32_t index) const;
    // Refused now, through `v` where not null.
    void block(std::uint32_t index, const ShapeVerdict* v);
    // Whether the job needs more nodes than it could use now (World::usable_nodes);
    // if so it is blocked until enough are freed.
    bool lacks_nodes(std::uint32_t index, const SimJob& j);

    bool try_start(std::uint32_t index, Seconds now);
    void backfill(std::uint32_t head, Seconds now);
    bool backfill_due(Seconds now);
    void drop_stale_reservation(std::uint32_t head);
    void backfill_job(std::uint32_t head, std::uint32_t index, Seconds now);
    void backfill_long_job(std::uint32_t head, std::uint32_t index, ShapeVerdict* v, Seconds now);
    // `shortfall`: the room bound's (0: a decision refused it).
    void refused_now(std::uint32_t index, ShapeVerdict* v, long shortfall = 0);
    // Whether the shape's last refusal still stands.
    bool still_refused(const ShapeVerdict& v) const;
    void compute_reservation(std::uint32_t head, Seconds now);
    // The head job placed as if the first k running jobs (by expected end) had
    // ended (the room bound answers where it rules the head job out).
    bool probe(std::uint32_t head, std::size_t k, Seconds now, nvlblock::Placement& out);
    // The reservation's what-if arrays as if the first k running jobs had ended.
    void whatif_at(std::size_t k);
    // Whether the head job is placed with every running job ended (the cluster's kept what-if).
    bool fits_after_all_ends(std::uint32_t head, Seconds now);
    // The fewest ended jobs, at least `lo`, with which the head job is placed (nullopt: none).
    std::optional<std::size_t> first_fit(std::uint32_t head, std::size_t lo, Seconds now, nvlblock::Placement& p);
    // The same, knowing that the head job is placed with `placed` (> lo) ended: searched down from there.
    std::size_t first_fit_below(std::uint32_t head, std::size_t lo, std::size_t placed, Seconds now,
                                nvlblock::Placement& p);
    // The fewest in (refused, placed], halving between a refusal and a placement.
    std::size_t halve_back(std::uint32_t head, std::size_t refused, std::size_t placed, Seconds now,
                           nvlblock::Placement& p);
    // How many running jobs are expected to end by `t` (at least `lo`, at most every one).
    std::size_t ended_by(Seconds t, std::size_t lo);
    std::uint64_t shape_key(const SimJob& j, Seconds now) const;
    ShapeVerdict& verdict_of(std::uint32_t index, Seconds now);
    bool cacheable(const SimJob& j);

    World& w_;
    Reservation res_;
    std::uint64_t reservation_ids_ = 0;
    std::unordered_map<std::uint64_t, ShapeVerdict> verdicts_;
    std::vector<std::pair<std::uint64_t, ShapeVerdict*>> verdict_at_; // per job: its shape's key and verdicts
    std::vector<Blocked> blocked_;                                    // per job
    Seconds last_backfill_ = -kNever;
    Seconds tick_at_ = -1; // a backfill tick already scheduled for this time
    // The what-if of node i, its job ended (released) or not.
    void set_whatif(nvlblock::NodeIndex i, bool released);
    // The what-if arrays are the planner's to track: every change is noted
    // (node by node, or, before a whole rewrite, as one note_all).
    void note_whatif(std::size_t i);
    void track_whatif(std::size_t n);

    // Ranks the running jobs by expected end, as far as a search needs them
    // (rank_until): ends_ in order, their nodes from ranked_[rank_begin_[r]].
    // Returns the fewest jobs that must end before `need` healthy nodes are
    // free (more than are running: never).
    std::size_t rank_running(int need);
    int rank_until(std::size_t k);

    std::vector<Seconds> ends_;                                            // expected ends of the ranked jobs, in order
    std::vector<std::size_t> rank_begin_;                                  // ranked_ offsets per rank
    std::vector<nvlblock::NodeIndex> ranked_;                              // nodes of ranked jobs, by their job's rank
    std::set<std::pair<Seconds, std::uint32_t>>::const_iterator unranked_; // the next job to rank
    // The k the reservation's what-if arrays show (kNotProbed: none yet): a
    // probe changes only the nodes of the jobs between it and the next k.
    static constexpr std::size_t kNotProbed = static_cast<std::size_t>(-1);
    std::size_t probed_ = kNotProbed;
    // This search's last probe that placed the head job: its k and placement.
    std::size_t placed_k_ = kNotProbed;
    nvlblock::Placement placed_;
};

// Defined here, inline: the backfill's walk asks them of every job it
// examines, most of which they skip.

// Refused at this epoch; or, with nothing but job ends since (each other
// change moves other_changes(): a crossing of levels, a requeue, a recovery
// opening or closing, so the job's shape key and cacheable() are as they
// were), still short of usable nodes (lacks_nodes) or refused through its
// shape's verdict, which still stands.
inline bool Scheduler::blocked(std::uint32_t index) const {
    if (index >= blocked_.size())
        return false;
    const Blocked& b = blocked_[index];
    return b.epoch == w_.epoch() || (b.changes == w_.other_changes() &&
                                     (w_.freed() < b.until_freed || (b.verdict && still_refused(*b.verdict))));
}

// Refused at this epoch; or ruled out by the room bound, with nothing but
// job ends since, which freed fewer nodes than it lacked: each freed node
// raises every room the bound compares by at most one
// (nvlblock::bound_shortfall), so it still rules the shape out.
inline bool Scheduler::still_refused(const ShapeVerdict& v) const {
    return v.short_epoch == w_.epoch() || (v.shortfall > 0 && v.shortfall_changes == w_.other_changes() &&
                                           w_.freed() - v.shortfall_freed < static_cast<std::uint64_t>(v.shortfall));
}

} // namespace nvlblock::sim
