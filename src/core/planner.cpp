// SPDX-License-Identifier: GPL-2.0-or-later
#include "core/planner.hpp"

#include "placement/byte_words.hpp"
#include "recovery/rules.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace nvlblock {

namespace {

using byte_words::kHigh;
using byte_words::kOnes;
using byte_words::load8;
using byte_words::nonzero;

// Bit 7 of each byte set where the byte is a failed node's state (down or
// drained: s ^ 3 or s ^ 4 is zero there).
std::uint64_t failed_bytes(std::uint64_t s) {
    static_assert(sizeof(NodeState) == 1 && static_cast<int>(NodeState::kFree) == 0 &&
                      static_cast<int>(NodeState::kDown) == 3 && static_cast<int>(NodeState::kDrained) == 4,
                  "the word tests here read these values");
    return ~(nonzero(s ^ (kOnes * 3)) & nonzero(s ^ (kOnes * 4))) & kHigh;
}

// The first node that Slurm offers and that has failed, or states.size().
// Asked on every decision over every node: eight nodes (one word of each
// byte array) per step, exact for any byte value, so this is the same test
// as is_failed() per node.
std::size_t first_offered_failed(std::span<const NodeState> states, std::span<const std::uint8_t> available) {
    const auto* st = reinterpret_cast<const unsigned char*>(states.data());
    const std::size_t n = states.size();
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        if (failed_bytes(load8(st + i)) & nonzero(load8(available.data() + i)))
            break; // the node is in this word: found below
    }
    for (; i < n; ++i)
        if (available[i] && is_failed(states[i]))
            return i;
    return n;
}

} // namespace

std::span<const NodeState> offered_as_healthy(std::span<const NodeState> states,
                                              std::span<const std::uint8_t> available,
                                              std::vector<NodeState>& scratch) {
    if (available.size() != states.size())
        return states;
    std::size_t i = first_offered_failed(states, available);
    if (i == states.size())
        return states;
    scratch.assign(states.begin(), states.end());
    // From the first one on, eight nodes per step: the offered failed bytes
    // are cleared (kFree is 0). On a cluster with failures this runs on
    // nearly every decision Slurm asks with a map.
    auto* out = reinterpret_cast<unsigned char*>(scratch.data());
    const std::size_t n = scratch.size();
    for (; i + 8 <= n; i += 8) {
        const std::uint64_t s = load8(out + i);
        const std::uint64_t m = failed_bytes(s) & nonzero(load8(available.data() + i));
        if (m) {
            const std::uint64_t cleared = s & ~((m >> 7) * 0xff); // 0xff in each marked byte
            std::memcpy(out + i, &cleared, sizeof cleared);
        }
    }
    for (; i < n; ++i)
        if (available[i] && is_failed(scratch[i]))
            scratch[i] = NodeState::kFree;
    return scratch;
}

std::span<const std::uint8_t> without_busy_nodes(std::span<const NodeState> states,
                                                 std::span<const std::uint8_t> available, const RecoveryClaim& claim,
                                                 std::vector<std::uint8_t>& scratch) {
    if (available.size() != states.size())
        return available; // none given: the engine takes free nodes only
    auto its_own = [&](std::size_t i) {
        for (const RecoveryNeed& need : claim.blocks)
            if (std::find(need.prior_healthy.begin(), need.prior_healthy.end(), i) != need.prior_healthy.end())
                return true;
        return false;
    };
    auto offered_busy = [&](std::size_t i) { return available[i] && states[i] == NodeState::kBusy && !its_own(i); };
    std::size_t i = 0;
    while (i < states.size() && !offered_busy(i))
        ++i;
    if (i == states.size())
        return available;
    scratch.assign(available.begin(), available.end());
    for (; i < scratch.size(); ++i)
        if (offered_busy(i))
            scratch[i] = 0;
    return scratch;
}

Planner::Planner(Topology topology)
    : topology_(std::make_shared<const Topology>(std::move(topology))), configured_(topology_) {
    restart_journal();
}

void Planner::restart_journal() {
    // Past about an eighth of the nodes, a pass over every node costs no more.
    changes_.set_limit(std::max<std::size_t>(64, topology_->node_count() / 8));
    changes_.note_all();
}

void Planner::load_state(const std::string& text, const std::string& label) {
    load_ledger_state(recovery_.ledger(), *topology_, text, label);
    recovery_.ledger().note_blocks_same(*topology_);
}

Snapshot Planner::snapshot(std::span<const NodeState> states, std::int64_t now) const {
    std::shared_ptr<const Tallies> counted = tallies(states);
    std::shared_ptr<const Holds> holds = holds_at(states, now, counted.get());
    Snapshot snap(*topology_, states, std::move(counted), std::move(holds));
    snap.set_last_choice(lemons(now));
    return snap;
}

std::shared_ptr<const Holds> Planner::holds_at(std::span<const NodeState> states, std::int64_t now,
                                               const Tallies* counted) const {
    ClaimsMemo& held = held_claims(states, now);
    auto count = [&](std::span<const RecoveryClaim> claims) {
        return count_holds(*topology_, states, counted ? *counted : *tallies(states), claims);
    };
    if (recovery_.watches().empty()) {
        // The holds follow the claims and the states: kept with the claims.
        if (!held.holds_counted) {
            held.holds = count(held.claims);
            held.holds_counted = true;
        }
        return held.holds;
    }
    claims_cache_ = held.claims;
    recovery_.add_watch_claims(*topology_, states, now, claims_cache_);
    return count(claims_cache_);
}

const HeldOffers* Planner::held_offers_for(std::span<const NodeState> states, std::span<const std::uint8_t> available,
                                           const RoomIndex& index, std::int64_t now) const {
    if (!recovery_.any_waiting() && recovery_.watches().empty())
        return nullptr; // no claim: nothing held
    std::shared_ptr<const Holds> holds = holds_at(states, now);
    if (!holds)
        return nullptr;
    const std::uint64_t rooms = room_cache_.generation();
    for (const HeldOffersMemo& m : held_offers_memo_)
        if (m.index == &index && m.rooms == rooms && m.holds == holds)
            return &m.offers;
    HeldOffersMemo& m = held_offers_memo_[next_held_offers_++ % held_offers_memo_.size()];
    m.offers = held_offers(*topology_, index, *tallies(states), *holds, available);
    m.index = &index;
    m.rooms = rooms;
    m.holds = std::move(holds);
    return &m.offers;
}

Planner::ClaimsMemo& Planner::held_claims(std::span<const NodeState> states, std::int64_t now) const {
    const auto same = [&](const ClaimsMemo& m) {
        return m.states == states.data() && m.size == states.size() && m.journal == changes_.end() &&
               m.ledger == recovery_.ledger().version() && m.topology == topology_->serial() && m.now == now;
    };
    const bool tracked = changes_.tracks(states.data());
    if (tracked)
        for (ClaimsMemo& m : claims_memo_)
            if (same(m))
                return m;
    // An array nobody notes changes of is answered afresh every time (a
    // slot no lookup matches).
    ClaimsMemo& m = tracked ? claims_memo_[next_claims_memo_++ % claims_memo_.size()] : untracked_claims_;
    m = {tracked ? states.data() : nullptr,
         states.size(),
         changes_.end(),
         recovery_.ledger().version(),
         topology_->serial(),
         now,
         recovery_.held_claims(*topology_, states, now),
         nullptr,
         false};
    return m;
}

const std::vector<NodeIndex>& Planner::lemons(std::int64_t now) const {
    // Asked on every decision: the list is recounted only when the failure
    // history or the lemon policy changed, or a lemon's failures aged out (a
    // cache: the same answer).
    LemonCache& c = lemon_cache_;
    const FailureHistory& history = ledger().node_failures();
    const LemonPolicy& policy = topology_->policy().recovery.lemon;
    if (c.version != history.version() || c.policy != policy || now < c.from || now >= c.until) {
        c.nodes = history.lemons(now, policy, &c.until);
        c.version = history.version();
        c.policy = policy;
        c.from = now;
    }
    return c.nodes;
}

bool Planner::clear_lemon(NodeIndex node) {
    if (!recovery_.ledger().clear_node_failures(node))
        return false;
    recovery_.ledger().note(NoteLemonCleared{node});
    return true;
}

void Planner::observe_health(std::span<const NodeState> states, std::int64_t now) {
    health_.observe(*topology_, *tallies(states), now);
    // Failures older than the lemon window can no longer count (lemons.hpp).
    recovery_.ledger().forget_node_failures_before(now - topology_->policy().recovery.lemon.window_seconds);
}

Placement Planner::place(std::span<const NodeState> raw_states, Request request, std::int64_t now) const {
    const Topology& topo = *topology_;
    std::vector<NodeState> shaped;
    const std::span<const NodeState> states = answered_states(raw_states, request.available, shaped);
    // Slurm asks whether the job could ever run: other jobs' holds do not count.
    const bool holds = shaped.empty();
    const RecoveryRecord* record = recovery_.ledger().find(request.job_id);
    if (record && !Recovery::blocks_changed(topo, *record)) {
        RecoveryClaim claim = claim_for(topo, *record, states);
        const std::uint32_t need = claim.total_need();
        // Back on its own block(s), or it keeps waiting until advance() says
        // its wait is over; after that (a fallback) its own block(s) first
        // while they can take it with what Slurm offers, else anywhere. A
        // job whose node count changed since cannot restart as it ran: it
        // is placed like any other job.
        if (need >= request.min_nodes && need <= request.max_nodes) {
            Request in_place = request;
            std::vector<std::uint8_t> offered;
            in_place.available = without_busy_nodes(states, request.available, claim, offered);
            in_place.recovery = std::move(claim);
            Placement p = decide(states, in_place, now, holds);
            if (!record->fallback || p.placed())
                return p;
        }
    }
    // A restart elsewhere prefers the groups of the blocks it had.
    if (record && request.prefer_blocks.empty())
        for (NodeIndex n : record->nodes) {
            const BlockIndex b = n < topo.node_count() ? topo.block_of(n) : kNoBlock;
            if (b != kNoBlock &&
                std::find(request.prefer_blocks.begin(), request.prefer_blocks.end(), b) == request.prefer_blocks.end())
                request.prefer_blocks.push_back(b);
        }
    return decide(states, request, now, holds);
}

long Planner::bound_shortfall(std::span<const NodeState> raw_states, const Request& request, std::int64_t now) const {
    const RecoveryRecord* record = recovery_.ledger().find(request.job_id);
    if (record && !record->fallback)
        return 0; // it waits for its own block(s): always asked
    const long anywhere = room_shortfall(raw_states, request, now);
    if (!record || anywhere == 0 || Recovery::blocks_changed(*topology_, *record))
        return anywhere;
    // A fallen-back job is placed back on its own block(s) where they take
    // it (place()), else anywhere: refused while both are short.
    // Its claim needs one node per node it had (claim_for).
    const std::size_t need = record->nodes.size();
    if (need < request.min_nodes || need > request.max_nodes)
        return anywhere; // not asked in place
    std::vector<NodeState> shaped;
    const std::span<const NodeState> states = answered_states(raw_states, request.available, shaped);
    return std::min(anywhere, in_place_shortfall(*topology_, record->nodes, states, request.available));
}

long Planner::room_shortfall(std::span<const NodeState> raw_states, const Request& request, std::int64_t now) const {
    // Other jobs' holds count where place() counts them: not where Slurm
    // asks whether the job could ever run (failed nodes offered).
    auto bound = [&](std::span<const NodeState> states, const RoomIndex& index) {
        const HeldOffers* held = held_offers_for(states, request.available, index, now);
        return nvlblock::bound_shortfall(*topology_, index, request,
                                         held ? held->for_job(request.job_id) : std::span<const OfferCut>{});
    };
    if (const RoomIndex* index = remembered_index(raw_states, request.available))
        return bound(raw_states, *index); // remembered only for arrays answered as they are
    std::vector<NodeState> shaped;
    const std::span<const NodeState> states = answered_states(raw_states, request.available, shaped);
    // Null for a map of another length, which the engine refuses.
    const std::shared_ptr<const RoomIndex> index =
        room_cache_.index(*topology_, states, *tallies(states), request.available, &changes_);
    if (!index)
        return 0;
    // Remembered only where the journal vouches for both arrays and they are
    // answered as they are: then nothing noted and no cache change means the
    // same index.
    const bool tracked =
        changes_.tracks(raw_states.data()) && (request.available.empty() || changes_.tracks(request.available.data()));
    if (tracked && states.data() == raw_states.data())
        bound_memo_[next_memo_++ % bound_memo_.size()] = {raw_states.data(),
                                                          raw_states.size(),
                                                          request.available.data(),
                                                          request.available.size(),
                                                          changes_.end(),
                                                          room_cache_.generation(),
                                                          index.get()};
    if (states.data() != raw_states.data())
        return nvlblock::bound_shortfall(*topology_, *index, request);
    return bound(states, *index);
}

const RoomIndex* Planner::remembered_index(std::span<const NodeState> states,
                                           std::span<const std::uint8_t> available) const {
    // Read once: the entries' pointers could alias them for the compiler.
    const ChangeJournal::Position journal = changes_.end();
    const std::uint64_t rooms = room_cache_.generation();
    for (const BoundMemo& m : bound_memo_)
        if (m.map == available.data() && m.states == states.data() && m.journal == journal && m.rooms == rooms &&
            m.index && m.size == states.size() && m.map_size == available.size())
            return m.index;
    return nullptr;
}

std::span<const NodeState> Planner::answered_states(std::span<const NodeState> states,
                                                    std::span<const std::uint8_t> available,
                                                    std::vector<NodeState>& scratch) const {
    if (available.size() != states.size())
        return states;
    // With tracked arrays the room index of these arrays counts the offered
    // failed nodes as it is brought up to date from the noted changes.
    if (changes_.tracks(states.data()) && changes_.tracks(available.data()) &&
        room_cache_.index(*topology_, states, *tallies(states), available, &changes_)->offered_failed() == 0)
        return states;
    return offered_as_healthy(states, available, scratch);
}

Placement Planner::decide(std::span<const NodeState> states, const Request& request, std::int64_t now,
                          bool holds) const {
    Snapshot snap = holds ? snapshot(states, now) : Snapshot(*topology_, states, tallies(states), nullptr);
    if (!holds)
        snap.set_last_choice(lemons(now));
    // The cache gives no index for a map of another length (the engine refuses it).
    if (auto index = room_cache_.index(*topology_, states, snap.tallies(), request.available, &changes_))
        snap.attach_room_index(std::move(index), request.available);
    return nvlblock::place(snap, request);
}

std::size_t Planner::advance(std::span<const NodeState> states, std::int64_t now) {
    if (!recovery_.any_waiting())
        return 0;
    return recovery_.advance(snapshot(states, now), now);
}

bool Planner::can_ever_run(Request request) const {
    const std::vector<NodeState> idle(topology_->node_count(), NodeState::kFree);
    request.available = {};
    request.required.clear();
    request.recovery.reset();
    request.waited = std::numeric_limits<std::int32_t>::max(); // every level may be crossed in the end
    const Snapshot snap(*topology_, idle, {});
    return nvlblock::place(snap, request).placed();
}

// The start both reclaim questions share: the job's open record, its
// claim and its refusal in place; `then` answers the rest, or the refusal
// that ends it here.
template <class Then>
ReclaimDecision Planner::ask_reclaim(std::span<const NodeState> states, Request request, const Reclaimer& for_job,
                                     std::int64_t now, Then&& then) const {
    ReclaimDecision none;
    const RecoveryRecord* record = recovery_.waiting_in_place(request.job_id);
    if (!record || now < record->reclaimed_until || Recovery::blocks_changed(*topology_, *record))
        return none; // kNotWaiting
    request.recovery = claim_for(*topology_, *record, states);
    const Snapshot snap = snapshot(states, now);
    const Placement refusal = nvlblock::place(snap, request);
    if (refusal.placed()) {
        none.refusal.reason = ReclaimRefusalReason::kFitsNow;
        return none;
    }
    if (for_job.held) {
        none.refusal.reason = ReclaimRefusalReason::kHeld;
        return none;
    }
    const RecoveryPolicy& policy = topology_->policy().recovery;
    const ReclaimContext ctx{policy, recovery_.ledger().reclaims(), now,
                             reclaim_per_hour(policy, topology_->node_count())};
    Reclaimer who = for_job;
    who.job_id = request.job_id;
    return then(snap, request, refusal, who, ctx);
}

ReclaimDecision Planner::plan_reclaim(std::span<const NodeState> states, Request request, const Reclaimer& for_job,
                                      std::span<const RunningJob> running, std::int64_t now) const {
    return ask_reclaim(
        states, std::move(request), for_job, now,
        [&](const Snapshot& snap, const Request& req, const Placement& refusal, const Reclaimer& who,
            const ReclaimContext& ctx) { return nvlblock::plan_reclaim(snap, req, refusal, who, running, ctx); });
}

std::optional<ReclaimRefusal> Planner::reclaim_ruled_out(std::span<const NodeState> states, Request request,
                                                         const Reclaimer& for_job, std::int64_t now) const {
    bool ruled_out = true;
    const ReclaimDecision d = ask_reclaim(states, std::move(request), for_job, now,
                                          [&](const Snapshot& snap, const Request& req, const Placement& refusal,
                                              const Reclaimer& who, const ReclaimContext& ctx) {
                                              ReclaimDecision out;
                                              if (const auto why = refused_whatever_runs(snap, req, refusal, who, ctx))
                                                  out.refusal.reason = *why;
                                              else
                                                  ruled_out = false;
                                              return out;
                                          });
    return ruled_out ? std::optional<ReclaimRefusal>(d.refusal) : std::nullopt;
}

void Planner::reclaim_started(std::uint32_t job_id, const Reclaim& plan, const Reclaimer& for_job,
                              std::int64_t released_by, std::int64_t now) {
    recovery_.reclaim_started(*topology_, job_id, plan, for_job, released_by, now);
}

void Planner::job_failed(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::span<const NodeIndex> failed,
                         std::int64_t now) {
    recovery_.job_failed(*topology_, job_id, nodes, failed, now);
}

void Planner::job_started(std::uint32_t job_id, std::span<const NodeIndex> nodes, std::int64_t started) {
    recovery_.job_started(*topology_, job_id, nodes, started);
}

void Planner::job_gone(std::uint32_t job_id, std::int64_t now) {
    recovery_.job_gone(*topology_, job_id, now);
}

void Planner::replace_topology(Topology topology) {
    auto next = std::make_shared<const Topology>(std::move(topology));
    recovery_.remap(*topology_, *next);
    tally_cache_.reset(); // counted for the old blocks
    room_cache_.reset();
    health_.reset();
    lemon_cache_ = {}; // the lemon settings may have changed
    set_topology(std::move(next));
    configured_ = topology_;
}

void Planner::set_topology(std::shared_ptr<const Topology> next) {
    if (std::vector<RecoveryNote> notes = recovery_.ledger().take_notes(); !notes.empty())
        earlier_log_.push_back({topology_, std::move(notes)});
    topology_ = std::move(next);
    recovery_.ledger().note_blocks_same(*topology_);
    restart_journal();
}

std::vector<Planner::LogBatch> Planner::take_log() {
    std::vector<LogBatch> out;
    out.swap(earlier_log_);
    if (std::vector<RecoveryNote> notes = recovery_.ledger().take_notes(); !notes.empty())
        out.push_back({topology_, std::move(notes)});
    return out;
}

TopologyChange Planner::change_node_block(const NodeAssignment& asked, std::span<const JobNodes> running,
                                          bool restoring) {
    TopologyChange c =
        nvlblock::change_node_block(*topology_, *configured_, asked, running, recovery_.ledger(), restoring);
    if (c.outcome == TopologyChange::Outcome::kChanged && c.topology) {
        tally_cache_.reset(); // counted for the old blocks
        room_cache_.reset();
        health_.reset();
        set_topology(std::make_shared<const Topology>(std::move(*c.topology)));
        c.topology.reset();
    }
    return c;
}

} // namespace nvlblock
