// SPDX-License-Identifier: GPL-2.0-or-later
//
// The ledger remembers what Slurm forgets: which nodes a job had when a node
// failure requeued it (Slurm clears the node list on requeue), so that the job
// can restart on the same block, and what became of each recovery. It also
// keeps the counters operators watch, and is saved across slurmctld restarts
// (state/ledger_file.hpp writes and reads it). It holds data
// only: the rules are recovery/rules.hpp's, the clock recovery/recovery.hpp's.
// Spare accounting is derived from node states and the held claims, so it
// cannot drift.
#pragma once

#include "model/topology.hpp"
#include "placement/request.hpp"
#include "recovery/held_blocks.hpp"
#include "recovery/job_end.hpp"
#include "recovery/lemons.hpp"
#include "recovery/reclaim_history.hpp"
#include "recovery/recovery_note.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace nvlblock {

struct RecoveryRecord {
    std::uint32_t job_id = 0;
    std::vector<NodeIndex> nodes;  // its allocation when the failure hit
    std::vector<NodeIndex> failed; // those of them that failed
    std::int64_t failed_at = 0;
    std::int64_t fallback_at = 0; // from then on, if its block cannot take it, it goes anywhere
    std::int64_t hold_until = 0;  // its nodes are held for it until then
    bool fallback = false;
    // Its blocks as they were when the failure hit (empty in state saved
    // before they were kept): it waits for them only while each still
    // exists with the same nodes (held_blocks.hpp).
    std::vector<HeldBlock> blocks;
    // The topology (Topology::serial) in which `blocks` were last found as
    // they are, 0 for none: asked on every decision that sees the record, the
    // question is answered once per topology (not saved).
    std::uint64_t blocks_same_in = 0;
    // Spares were reclaimed for it (jobs preempted or requeued): no new round
    // until then, while their nodes are released. Not saved: after a restart
    // at most one more round runs (the moves themselves are saved, so the
    // victims' cooldown and the limits hold).
    std::int64_t reclaimed_until = 0;
    std::optional<ReclaimRefusal> reclaim_refusal; // why nothing was reclaimed, as last logged (not saved)
    // How it was requeued and why its nodes counted as failed (counted when
    // it opens; not saved).
    RequeuePath path = RequeuePath::kNodeFail;
    FailureTrigger trigger = FailureTrigger::kDown;
};

enum class RecoveryOutcome { kInPlace, kElsewhere, kAbandoned };
const char* outcome_name(RecoveryOutcome o);

struct RecoveryEvent {
    std::int64_t at = 0;
    std::uint32_t job_id = 0;
    RecoveryOutcome outcome = RecoveryOutcome::kInPlace;
    std::uint32_t lost = 0;
    std::uint32_t spares_used = 0;
    std::int64_t seconds = 0;        // from failure to restart
    std::vector<std::string> blocks; // names of the blocks it had
};

struct LedgerCounters {
    std::uint64_t failures = 0; // jobs requeued after losing nodes
    std::uint64_t in_place = 0;
    std::uint64_t elsewhere = 0;      // fallbacks that restarted elsewhere
    std::uint64_t abandoned = 0;      // left the queue before restarting
    std::uint64_t reclaims = 0;       // rounds of reclaiming spares (rule 3b)
    std::uint64_t reclaimed_jobs = 0; // jobs preempted or requeued by them
    // The failures by why their nodes counted as failed, and by how Slurm
    // requeued the job (indexed by FailureTrigger and RequeuePath).
    std::array<std::uint64_t, kFailureTriggerCount> by_trigger{};
    std::array<std::uint64_t, kRequeuePathCount> by_path{};
};

// Everything the ledger saves, as a whole (state/ledger_file.hpp).
struct LedgerContents {
    std::map<std::uint32_t, RecoveryRecord> records;
    std::deque<RecoveryEvent> recent;
    LedgerCounters counters;
    std::deque<ReclaimMove> moves;
    std::map<NodeIndex, std::vector<std::int64_t>> node_failures;
};

// The records themselves; recovery.hpp applies the rules and moves the clock.
class Ledger {
  public:
    static constexpr std::size_t kRecentEvents = 32;

    // A job's recovery starts (a new failure replaces an older record of it).
    void open(RecoveryRecord r);
    // An open record changes (not a new failure: no counter moves).
    void update(RecoveryRecord r);
    // It ends: restarted (in place or elsewhere) or left the queue.
    void close(std::uint32_t job_id, RecoveryEvent e);
    // From now on the job is placed like any other job.
    void mark_fallback(std::uint32_t job_id);
    // Notes, for every record, whether its blocks are as they are in `topo`
    // (RecoveryRecord::blocks_same_in): after the topology changed, or the
    // ledger was loaded.
    void note_blocks_same(const Topology& topo);
    // Spares were reclaimed for it: no new round until `until`, and its hold
    // and wait last at least as long (the victims' GraceTime may run first).
    void mark_reclaimed(std::uint32_t job_id, std::int64_t until);
    // A round of reclaiming moved these jobs for one of `for_user`'s jobs.
    void note_reclaim(std::span<const std::uint32_t> victims, std::uint32_t for_user, std::int64_t now,
                      std::int64_t keep_seconds);
    const ReclaimHistory& reclaims() const { return reclaims_; }

    // Nodes that failed under jobs (lemons.hpp): saved with the rest.
    void note_node_failure(NodeIndex node, std::int64_t at, const LemonPolicy& policy);
    // An operator cleared the node. Returns whether it had failures kept.
    bool clear_node_failures(NodeIndex node);
    // Failures at or before `since` are forgotten.
    void forget_node_failures_before(std::int64_t since);
    const FailureHistory& node_failures() const { return node_failures_; }

    const RecoveryRecord* find(std::uint32_t job_id) const;
    bool empty() const { return records_.empty(); }
    const std::map<std::uint32_t, RecoveryRecord>& records() const { return records_; }
    // The records still waiting for their blocks (not fallen back), in job
    // order as records() lists them. Asked on every decision and every pass,
    // while a deep queue may keep hundreds of fallen-back records: those are
    // not walked.
    bool any_waiting() const { return !waiting_.empty(); }
    template <class F>
    void for_each_waiting(F&& f) const {
        // Where most records wait, one walk of the tree costs less than a
        // lookup for each (a cluster of thousands of racks, few fallbacks).
        if (waiting_.size() * 4 >= records_.size()) {
            for (const auto& [id, r] : records_)
                if (!r.fallback)
                    f(r);
            return;
        }
        for (std::uint32_t id : waiting_)
            f(records_.find(id)->second);
    }
    const std::deque<RecoveryEvent>& recent() const { return recent_; }
    const LedgerCounters& counters() const { return counters_; }

    // What a decision did, for the operator's log (recovery_note.hpp; worded
    // by writers/recovery_log_text.hpp); taken by the caller.
    void note(RecoveryNote n) { notes_.push_back(std::move(n)); }
    std::vector<RecoveryNote> take_notes();

    // Changes with every change to what the saved state holds (and, harmlessly,
    // some that do not): whoever saves the state saves it when this moved.
    std::uint64_t version() const { return version_; }

    // Replaces the contents, as saved state read back (state/ledger_file.hpp
    // reads and writes it).
    void restore(LedgerContents contents);
    // After a reconfigure: carry records over to the new topology by name.
    void remap(const Topology& from, const Topology& to);

  private:
    // Keeps the id lists as the record of `job_id` now is (or as its absence).
    void note_index(std::uint32_t job_id);
    void index_all(); // after the records were replaced

    std::map<std::uint32_t, RecoveryRecord> records_;
    std::vector<std::uint32_t> ids_;     // job ids of the records, ascending
    std::vector<std::uint32_t> waiting_; // of those, the records not fallen back
    std::deque<RecoveryEvent> recent_;
    LedgerCounters counters_;
    ReclaimHistory reclaims_;
    FailureHistory node_failures_;
    std::uint64_t version_ = 0;
    std::vector<RecoveryNote> notes_;
};

} // namespace nvlblock
