// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/engine.hpp"

#include "placement/availability_counts.hpp"
#include "placement/block_choice.hpp"
#include "placement/block_limits.hpp"
#include "placement/level_choice.hpp"
#include "placement/room_index.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace nvlblock {
namespace {

// One block as seen by one request: counts only. Node lists are gathered
// for the chosen blocks alone (gather_nodes), which keeps a decision
// allocation-free per block: it must stay far below a scheduling cycle.
struct BlockView {
    BlockIndex block = kNoBlock;
    int usable = 0;                    // nodes this request may use (available, healthy, not held for others)
    int limit = 0;                     // nodes it may take now
    int spare_limit = 0;               // nodes it could take if spares were not withheld
    int preempted = 0;                 // of `usable`, nodes Slurm would free by preemption
    int room_if_empty = 0;             // nodes it could take on an idle block with today's failures
    int available = 0;                 // nodes node_available() says yes to, held or not (also on a faulted block)
    bool exclusive_ok = false;         // every healthy node available and nothing held: --exclusive=topo may take it
    bool fits_segment = true;          // segment <= slice
    const RecoveryNeed* own = nullptr; // recovery: what the job needs back here
    std::uint32_t prior_usable = 0;    // of its prior healthy nodes, how many it can use
};

bool node_available(const Snapshot& snap, const Request& req, NodeIndex n) {
    const NodeState s = snap.state(n);
    if (req.available.empty())
        return s == NodeState::kFree;
    return (req.available[n] != 0) & is_healthy(s);
}

bool usable_by(const Snapshot& snap, const Request& req, NodeIndex n) {
    const std::uint32_t holder = snap.held_for(n);
    return node_available(snap, req, n) && (holder == 0 || holder == req.job_id);
}

const RecoveryNeed* own_need(const Request& req, BlockIndex b) {
    if (!req.recovery)
        return nullptr;
    for (const auto& need : req.recovery->blocks)
        if (need.block == b)
            return &need;
    return nullptr;
}

// Whether the request's --segment fits the block's slice (none given: yes).
bool fits_segment(const Block& block, const Request& req) {
    return req.segment == 0 || static_cast<int>(req.segment) <= block.settings.slice;
}

int segment_cap(int limit, int segment, bool fits) {
    if (!fits)
        return 0;
    if (segment <= 1)
        return limit;
    // Most rooms hold less than two segments: no division (this runs for
    // every block, several times per decision).
    if (limit >= 0 && limit < 2 * segment)
        return limit < segment ? 0 : segment;
    return limit / segment * segment;
}

// Nodes a request could take on the block were it idle with today's
// failures (0 on a faulted block, which offers nothing).
int room_if_empty(const Block& block, const BlockTally& t, bool may_take_spares) {
    if (t.fault)
        return 0;
    const int n = t.size, f = t.failed;
    const bool reclaim = block.settings.reserve == SpareReserve::kReclaim;
    return std::max(0, (may_take_spares || reclaim) ? n - f : n - std::max(f, t.spares_configured));
}

// Fills `v` (default-constructed, `block` set by the caller) for `block`;
// `cached`: the block's counts under the request's map, when the room index
// has them. Inlined into view_blocks(): it runs for every block looked at.
[[gnu::always_inline]] inline void view_block(const Snapshot& snap, const Request& req, const Block& block,
                                              const BlockTally& t, const AvailabilityCounts* cached, BlockView& v) {
    const BlockIndex b = v.block;
    const bool lending = block.settings.lending && req.preemptible;

    v.own = own_need(req, b);
    v.fits_segment = fits_segment(block, req);

    int held_others = 0, held_nodes_others = 0;
    for (const auto& h : snap.holds(b)) {
        if (h.job_id == req.job_id)
            continue;
        held_others += static_cast<int>(h.need);
        held_nodes_others += static_cast<int>(h.held_nodes);
    }
    // Nodes this request may use, from the tallies where it takes only
    // free nodes, else counted over the block (availability_counts.hpp).
    int available = 0, lent_unavailable = 0;
    if (req.available.empty()) {
        available = t.free;
        lent_unavailable = block.settings.lending ? t.lent : 0; // elsewhere lent nodes count as busy
    } else {
        const AvailabilityCounts c = cached ? *cached : count_available(block, snap.states(), req.available);
        available = c.available;
        v.preempted = c.preempted;
        lent_unavailable = block.settings.lending ? c.lent_unavailable : 0;
    }
    v.available = available;
    if (t.fault) {
        v.preempted = 0; // a faulted block offers nothing
        return;
    }
    if (!snap.has_held_nodes(b)) {
        v.usable = available; // no node here is held: every available node is usable
    } else {
        // Held nodes are free nodes: only the free ones held for others drop out.
        v.usable = 0;
        v.preempted = 0;
        for (NodeIndex n : block.nodes) {
            if (!node_available(snap, req, n))
                continue;
            const std::uint32_t holder = snap.held_for(n);
            if (holder == 0 || holder == req.job_id) {
                ++v.usable;
                v.preempted += snap.state(n) != NodeState::kFree;
            }
        }
    }
    if (v.own)
        for (NodeIndex n : v.own->prior_healthy)
            v.prior_usable += snap.topology().block_of(n) == b && usable_by(snap, req, n);

    const int by_nodes = beside_holds(v.usable, held_others, held_nodes_others);
    // A recovering job may use the spares it lost; lending lets preemptible work use them.
    const BlockLimits l = block_limits(block, t, by_nodes, lent_unavailable, v.own || lending);
    v.limit = l.limit;
    v.spare_limit = l.spare_limit;
    v.room_if_empty = room_if_empty(block, t, v.own || lending);
    v.exclusive_ok = available == t.size - t.failed && held_others == 0;
}

// The blocks as one request sees them. Either every block is listed, or
// (with a room index) only those where the request may take a node now or
// whose view depends on the job (holds, its own recovery blocks): every
// other block has no room for it now (limit 0), and what the rules ask of
// those blocks (whether any has an available node, how many would hold the
// job were spares not withheld, their room if idle) is read from the index
// and the tallies instead.
struct Views {
    std::vector<BlockView> list;      // in block order
    const RoomIndex* index = nullptr; // null: every block is in `list`
    int at_least = 1;                 // with an index: blocks offering fewer nodes are not listed

    // The view of a listed block (every block when index is null).
    const BlockView& of(BlockIndex b) const {
        if (!index)
            return list[static_cast<std::size_t>(b)];
        const auto it =
            std::lower_bound(list.begin(), list.end(), b, [](const BlockView& v, BlockIndex x) { return v.block < x; });
        return *it;
    }
};

// Which blocks a request looks at closely, given the room index
// (view_scope, best_unheld_block).
struct ViewScope {
    int at_least = 1; // blocks offering fewer nodes offer this request nothing
    // > 0: a request for this many nodes in one block that no rule but best
    // fit reads other blocks for: of the blocks without holds, only the one
    // best fit would choose is looked at.
    int best_fit_alone = 0;
};

// Whether the blocks of a request's view may depend on the job itself.
bool has_holds(const Snapshot& snap, BlockIndex b) {
    return !snap.holds(b).empty() || snap.has_held_nodes(b);
}

// For a request of need nodes in one block (ViewScope::best_fit_alone), the
// block best fit (block_choice.cpp) would choose among those without holds,
// found from the index's offers without viewing any block: rooms are asked
// smallest first, and once the best so far takes no node by preemption, no
// larger room can rank before it. A room shared by many blocks is read in
// best fit's order (smallest spare_limit first, then block order), where
// the first block that takes no node by preemption ranks before every other
// of that room and before the rooms asked before it (none of theirs took no
// node so): the search stops there. nullopt: none holds the job.
std::optional<BlockIndex> best_unheld_block(const Snapshot& snap, const Request& req, const RoomIndex& index,
                                            int need) {
    std::optional<BlockRoom> best;
    auto consider = [&](BlockIndex b) {
        const Block& block = snap.topology().block(b);
        if (!fits_segment(block, req) || has_holds(snap, b))
            return false;
        const BlockOffer& o = index.offer(b);
        const BlockRoom r{b, o.limit, segment_cap(o.limit, need, true), o.spare_limit,
                          std::min(o.counts.preempted, o.limit)};
        if (!best || fits_better(r, *best, need))
            best = r;
        return preempted_for(r, need) == 0;
    };
    // Past this many blocks in one room, reading them in best fit's order
    // (a pass over the index's words per spare_limit value) costs less than
    // looking at each.
    constexpr long kInOrderFrom = 64;
    for (int limit = need; limit <= index.largest_block(); ++limit) {
        if (best && preempted_for(*best, need) == 0)
            break;
        const long blocks = index.blocks_with_limit(limit);
        if (blocks > kInOrderFrom)
            index.for_each_with_limit_by_spare(limit, consider);
        else if (blocks > 0)
            index.for_each_with_limit(limit, consider);
    }
    return best ? std::optional<BlockIndex>(best->block) : std::nullopt;
}

// The blocks a request must look at closely, given the room index: in block
// order, once each.
std::vector<BlockIndex> blocks_to_view(const Snapshot& snap, const Request& req, const RoomIndex& index,
                                       const ViewScope& scope) {
    std::vector<BlockIndex> out;
    const std::optional<BlockIndex> alone =
        scope.best_fit_alone ? best_unheld_block(snap, req, index, scope.best_fit_alone) : std::nullopt;
    if (alone)
        out.push_back(*alone);
    else
        index.for_each_with_room(req.preemptible, scope.at_least, [&](BlockIndex b) { out.push_back(b); });
    const std::size_t with_room = out.size();
    const auto blocks = static_cast<BlockIndex>(snap.topology().block_count());
    auto add = [&](BlockIndex b) {
        if (b >= 0 && b < blocks)
            out.push_back(b);
    };
    for (BlockIndex b : snap.hold_blocks())
        add(b);
    for (BlockIndex b : snap.held_blocks())
        add(b);
    if (req.recovery)
        for (const RecoveryNeed& need : req.recovery->blocks)
            add(need.block);
    if (out.size() != with_room) {
        // The blocks with room are already in order and may be most of the
        // cluster; the others are a handful: sort those, then merge.
        const auto mid = out.begin() + static_cast<std::ptrdiff_t>(with_room);
        std::sort(mid, out.end());
        std::inplace_merge(out.begin(), mid, out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }
    return out;
}

// Every block as one request sees it, or (with a room index) the blocks
// that matter. Runs on every decision: the common case (no holds, no
// recovery) reads only the block's tally, its settings and, with an
// availability map and no index, its nodes.
Views view_all_blocks(const Snapshot& snap, const Request& req) {
    const std::vector<Block>& blocks = snap.topology().blocks();
    Views views;
    views.list.resize(blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        views.list[i].block = static_cast<BlockIndex>(i);
        view_block(snap, req, blocks[i], snap.tally(views.list[i].block), nullptr, views.list[i]);
    }
    return views;
}

Views view_blocks(const Snapshot& snap, const Request& req, const ViewScope& scope) {
    const std::vector<Block>& blocks = snap.topology().blocks();
    Views views;
    views.index = snap.room_index(req.available);
    if (!views.index)
        return view_all_blocks(snap, req);
    views.at_least = scope.at_least;
    const std::vector<BlockIndex> look = blocks_to_view(snap, req, *views.index, scope);
    views.list.resize(look.size());
    const bool mapped = !req.available.empty();
    for (std::size_t i = 0; i < look.size(); ++i) {
        const BlockIndex b = look[i];
        views.list[i].block = b;
        const AvailabilityCounts* cached = mapped ? &views.index->offer(b).counts : nullptr;
        view_block(snap, req, blocks[static_cast<std::size_t>(b)], snap.tally(b), cached, views.list[i]);
    }
    return views;
}

// `count` nodes of a block in preference order: required nodes, the job's
// own prior nodes (recovery), truly free nodes, then nodes Slurm offers
// through preemption (lent before busy, so preemption hits preemptible work
// first). Preemptible work borrowing spares takes free nodes from the end of
// the block, so ordinary work keeps packing from the start. Within each of
// those passes lemons come last (rule 5a): never taken while another node of
// the pass would do, never traded for a preemption either.
void gather_nodes(const Snapshot& snap, const Request& req, const BlockView& v, int count,
                  std::vector<NodeIndex>& out) {
    const Block& block = snap.topology().block(v.block);
    const bool from_end = block.settings.lending && req.preemptible && !v.own;
    int taken = 0, named = 0; // named: the required and prior nodes, taken first (out[start, +named))
    const std::size_t start = out.size();
    // A block with no held node needs no holder looked up per node (most blocks, most decisions).
    const bool held = snap.has_held_nodes(v.block);
    // The passes below visit disjoint nodes; only a node taken by name may come again.
    // Inlined into each sweep (a dozen of them): called for every node gathered, a
    // call each cost more than its work.
    auto take = [&](NodeIndex n) __attribute__((always_inline)) {
        if (taken >= count || !(held ? usable_by(snap, req, n) : node_available(snap, req, n)))
            return;
        const auto first = out.begin() + static_cast<std::ptrdiff_t>(start);
        if (named == 0 || std::find(first, first + named, n) == first + named) {
            out.push_back(n);
            ++taken;
        }
    };
    // A name may come twice (a --nodelist node the job had): looked for among every node named so far.
    auto take_named = [&](NodeIndex n) {
        if (snap.topology().block_of(n) != v.block)
            return;
        take(n);
        named = taken;
    };
    for (NodeIndex n : req.required)
        take_named(n);
    if (v.own)
        for (NodeIndex n : v.own->prior_healthy)
            take_named(n);
    auto sweep = [&](auto pred) {
        if (from_end) {
            for (auto it = block.nodes.rbegin(); it != block.nodes.rend() && taken < count; ++it)
                if (pred(*it))
                    take(*it);
        } else {
            for (auto it = block.nodes.begin(); it != block.nodes.end() && taken < count; ++it)
                if (pred(*it))
                    take(*it);
        }
    };
    auto pass = [&](auto pred) {
        if (snap.last_choice().empty())
            return sweep(pred);
        sweep([&](NodeIndex n) { return pred(n) && !snap.last_choice(n); });
        sweep([&](NodeIndex n) { return pred(n) && snap.last_choice(n); });
    };
    pass([&](NodeIndex n) { return snap.state(n) == NodeState::kFree; });
    pass([&](NodeIndex n) { return snap.state(n) == NodeState::kLent; });
    pass([&](NodeIndex n) { return snap.state(n) != NodeState::kFree && snap.state(n) != NodeState::kLent; });
}

// A refusal: the reason and the facts (writers/explain.hpp words them).
Placement refuse(Reason r, Refusal why) {
    Placement p;
    p.reason = r;
    p.why = std::move(why);
    return p;
}

Placement refuse(Reason r, Refusal::Kind kind) {
    Refusal why;
    why.kind = kind;
    return refuse(r, std::move(why));
}

// The request's shape, as most refusals cite it.
Refusal shaped(Refusal::Kind kind, const Request& req) {
    Refusal why;
    why.kind = kind;
    why.min_nodes = req.min_nodes;
    why.max_nodes = req.max_nodes;
    why.segment = req.segment;
    return why;
}

// A job on several blocks that cannot get its old count back on each may
// restart with whole segments (nodes, without --segment) shifted between its
// own blocks: it stays on the same NVLink domains. Prior nodes first. When
// its blocks cannot hold it even so, `short_by` says how many nodes they lack
// in all (what reclaiming on any of them must free, rule 3b).
std::optional<Placement> shift_within_own_blocks(const Snapshot& snap, const Request& req, const Views& views,
                                                 std::uint32_t& short_by) {
    const int unit = req.segment > 1 ? static_cast<int>(req.segment) : 1;
    std::vector<int> room, take;
    int total = 0, rem = 0;
    for (const RecoveryNeed& need : req.recovery->blocks) {
        if (snap.tally(need.block).fault)
            return std::nullopt;
        const BlockView& v = views.of(need.block);
        room.push_back(v.limit / unit * unit);
        take.push_back(std::min(static_cast<int>(need.need), room.back()));
        total += static_cast<int>(need.need);
        rem += static_cast<int>(need.need) - take.back();
    }
    for (std::size_t i = 0; i < take.size() && rem > 0; ++i) {
        const int more = std::min(rem, room[i] - take[i]);
        take[i] += more;
        rem -= more;
    }
    if (rem > 0 || total == 0) {
        short_by = static_cast<std::uint32_t>(std::max(rem, 0));
        return std::nullopt;
    }
    Placement p;
    for (std::size_t i = 0; i < take.size(); ++i) {
        const BlockView& v = views.of(req.recovery->blocks[i].block);
        gather_nodes(snap, req, v, take[i], p.nodes);
        p.spares_used +=
            static_cast<std::uint32_t>(take[i]) - std::min(v.prior_usable, static_cast<std::uint32_t>(take[i]));
    }
    return p;
}

int largest_block_of(const Topology& topo) {
    int largest = 0;
    for (const Block& b : topo.blocks())
        largest = std::max(largest, b.size());
    return largest;
}

// Refused for good, as topology/block refuses it at submission.
Placement refuse_unavailable(Reason r, Refusal why) {
    Placement p = refuse(r, std::move(why));
    p.topology_unavailable = true;
    return p;
}

Placement place_recovery(const Snapshot& snap, const Request& req, const Views& views) {
    Placement p;
    std::uint32_t spares = 0;
    std::vector<Shortfall> short_blocks;
    for (const RecoveryNeed& need : req.recovery->blocks) {
        const Block& block = snap.topology().block(need.block);
        const BlockTally& t = snap.tally(need.block);
        const BlockView& v = views.of(need.block);
        Shortfall sf;
        sf.block = need.block;
        sf.need = need.need;
        sf.size = static_cast<std::uint32_t>(t.size);
        sf.failed = static_cast<std::uint32_t>(t.failed);
        sf.spares = static_cast<std::uint32_t>(block.settings.spares);
        sf.lent = static_cast<std::uint32_t>(t.lent);
        if (t.fault) {
            sf.block_down = true;
            short_blocks.push_back(sf);
            continue;
        }
        if (v.limit < static_cast<int>(need.need)) {
            sf.room = static_cast<std::uint32_t>(v.limit);
            short_blocks.push_back(sf);
            continue;
        }
        gather_nodes(snap, req, v, static_cast<int>(need.need), p.nodes);
        spares += need.need - std::min(v.prior_usable, need.need);
    }
    std::uint32_t short_by = 0;
    if (!short_blocks.empty() && req.recovery->blocks.size() > 1)
        if (auto shifted = shift_within_own_blocks(snap, req, views, short_by)) {
            p = std::move(*shifted);
            spares = p.spares_used;
            short_blocks.clear();
        }
    if (!short_blocks.empty()) {
        // Every block that cannot take it back, in the claim's order (the
        // sentence names the first).
        Placement w = refuse(Reason::kRecoveryWaiting, Refusal::Kind::kRecoveryWaiting);
        w.shortfalls = std::move(short_blocks);
        w.own_blocks_short_by = short_by;
        return w;
    }
    std::sort(p.nodes.begin(), p.nodes.end());
    p.reason = Reason::kPlaced;
    p.recovery_in_place = true;
    p.spares_used = spares;
    return p;
}

// Blocks holding --nodelist nodes are forced into the choice and filled
// first; the rest goes by best fit. With segments only a single segment may
// carry required nodes (as in topology/block), so they must share one block.
std::optional<std::vector<BlockTake>>
choose_with_required(const std::vector<BlockRoom>& rooms, const std::vector<int>& required_in, int count, int segment) {
    std::vector<BlockTake> forced;
    std::vector<BlockRoom> rest;
    std::vector<int> caps;
    int rem = count;
    for (const BlockRoom& r : rooms) {
        const int need = required_in[static_cast<std::size_t>(r.block)];
        if (need == 0) {
            rest.push_back(r);
            continue;
        }
        const int take = segment > 1 ? segment : need;
        if (take < need || take > r.segment_cap || take > rem)
            return std::nullopt;
        forced.push_back({r.block, take});
        caps.push_back(r.segment_cap);
        rem -= take;
    }
    // Top up the forced blocks before touching any other block.
    for (std::size_t i = 0; i < forced.size() && rem > 0 && segment <= 1; ++i) {
        const int more = std::min(rem, caps[i] - forced[i].count);
        forced[i].count += more;
        rem -= more;
    }
    int forced_required = 0;
    for (const BlockTake& f : forced)
        forced_required += required_in[static_cast<std::size_t>(f.block)];
    if (forced_required != std::accumulate(required_in.begin(), required_in.end(), 0))
        return std::nullopt; // a required node's block is not eligible (e.g. --exclusive=topo)
    if (rem > 0) {
        auto more = choose_blocks(rest, rem, segment);
        if (!more)
            return std::nullopt;
        forced.insert(forced.end(), more->begin(), more->end());
    }
    return forced;
}

} // namespace

const char* reason_name(Reason r) {
    switch (r) {
    case Reason::kPlaced:
        return "placed";
    case Reason::kNotInTopology:
        return "not_in_topology";
    case Reason::kInvalidRequest:
        return "invalid_request";
    case Reason::kSegmentNotDivisor:
        return "segment_not_divisor";
    case Reason::kSegmentTooLarge:
        return "segment_too_large";
    case Reason::kTooLarge:
        return "too_large";
    case Reason::kRequiredUnavailable:
        return "required_unavailable";
    case Reason::kSparesWithheld:
        return "spares_withheld";
    case Reason::kNoBlockFits:
        return "no_block_fits";
    case Reason::kExclusiveNoBlock:
        return "exclusive_no_block";
    case Reason::kRecoveryWaiting:
        return "recovery_waiting";
    case Reason::kNoGroupFits:
        return "no_group_fits";
    }
    return "unknown";
}

namespace {

// The unit a count is carved in: --segment if given; a job that fits in a
// slice stays in one block (as topology/block keeps a job within one
// block); a larger one spans as few blocks as it can.
int carving_unit(const Request& req, std::uint32_t count, int largest_slice) {
    if (req.segment)
        return static_cast<int>(req.segment);
    return static_cast<int>(count) <= largest_slice ? static_cast<int>(count) : 1;
}

// The level question for one node count of the request (place_largest_count
// adds its --nodelist and preferred blocks).
LevelQuery level_query(const Request& req, std::uint32_t count, int largest_slice) {
    LevelQuery q;
    q.nodes = static_cast<int>(count);
    q.unit = carving_unit(req, count, largest_slice);
    q.segmented = req.segment != 0;
    q.waited = req.waited;
    return q;
}

// The request's own faults, before any block is looked at.
std::optional<Placement> invalid_request(const Topology& topo, const Request& req) {
    if (req.min_nodes == 0 || req.max_nodes < req.min_nodes)
        return refuse(Reason::kInvalidRequest, shaped(Refusal::Kind::kNodeCount, req));
    if (!req.available.empty() && req.available.size() != topo.node_count())
        return refuse(Reason::kInvalidRequest, Refusal::Kind::kMapSize);
    for (NodeIndex n : req.required)
        if (n >= topo.node_count())
            return refuse(Reason::kInvalidRequest, Refusal::Kind::kRequiredOutOfRange);
    return std::nullopt;
}

// Like topology/block: work that can use no block node is scheduled without
// topology; a --nodelist is wholly inside the blocks or wholly outside.
std::optional<Placement> outside_topology(const Topology& topo, const Request& req, const Views& views) {
    const bool any_block_node = views.index ? views.index->any_available()
                                            : std::any_of(views.list.begin(), views.list.end(),
                                                          [](const BlockView& v) { return v.available > 0; });
    bool required_outside = false, required_inside = false;
    for (NodeIndex n : req.required)
        (topo.block_of(n) == kNoBlock ? required_outside : required_inside) = true;
    if (required_outside && !required_inside)
        return refuse(Reason::kNotInTopology, Refusal::Kind::kRequiredOutside);
    if (required_outside) {
        Refusal why;
        why.kind = Refusal::Kind::kNodelistMixed;
        return refuse_unavailable(Reason::kInvalidRequest, why);
    }
    if (!any_block_node && !req.recovery && !required_inside)
        return refuse(Reason::kNotInTopology, Refusal::Kind::kNoBlockNode);
    return std::nullopt;
}

// Node counts to try, largest first (-N min-max takes the most it can), each
// a multiple of --segment.
std::vector<std::uint32_t> counts_to_try(const Request& req) {
    std::vector<std::uint32_t> counts;
    for (std::uint32_t c = req.max_nodes; c >= req.min_nodes && c > 0; --c) {
        if (req.segment == 0 || c % req.segment == 0)
            counts.push_back(c);
        if (c == req.min_nodes)
            break;
    }
    return counts;
}

std::optional<Placement> unusable_segment(const Topology& topo, const Request& req,
                                          const std::vector<std::uint32_t>& counts) {
    if (counts.empty())
        return refuse_unavailable(Reason::kSegmentNotDivisor, shaped(Refusal::Kind::kSegmentNotDivisor, req));
    if (req.segment && static_cast<int>(req.segment) > topo.largest_slice()) {
        Refusal why = shaped(Refusal::Kind::kSegmentTooLarge, req);
        why.offered = topo.largest_slice();
        return refuse_unavailable(Reason::kSegmentTooLarge, why);
    }
    return std::nullopt;
}

// The blocks of use to the request. The least room: a room below one unit
// of every count tried holds no whole unit (its segment_cap is 0), so no
// rule takes a node there, and refusals read such blocks from the index.
// And a request for one count in one block (its unit is the count) that is
// not --exclusive=topo is best fit's alone (best_unheld_block). Neither
// where a rule reads other rooms: a recovery's own blocks, a --nodelist's,
// the hierarchy's groups; nor for preemptible work, whose room on a lending
// block includes its spares.
ViewScope view_scope(const Topology& topo, const Request& req, const std::vector<std::uint32_t>& counts) {
    ViewScope scope;
    if (req.recovery || !req.required.empty() || req.preemptible || counts.empty())
        return scope;
    int least = std::numeric_limits<int>::max();
    for (std::uint32_t count : counts) {
        const LevelQuery q = level_query(req, count, topo.largest_slice());
        if (levels_may_confine(topo, q))
            return scope;
        least = std::min(least, q.unit);
    }
    scope.at_least = std::max(1, least);
    if (counts.size() == 1 && static_cast<std::uint32_t>(least) == counts.front() && !req.exclusive_topo)
        scope.best_fit_alone = least;
    return scope;
}

// Required nodes: each must be usable; per block, how many it holds (its
// block is forced into the choice).
std::optional<Placement> unusable_required(const Snapshot& snap, const Request& req, std::vector<int>& required_in) {
    const Topology& topo = snap.topology();
    for (NodeIndex n : req.required) {
        if (!usable_by(snap, req, n)) {
            Refusal why;
            why.kind = Refusal::Kind::kRequiredUnavailable;
            why.node = n;
            why.node_failed = !is_healthy(snap.state(n));
            return refuse(Reason::kRequiredUnavailable, why);
        }
        ++required_in[static_cast<std::size_t>(topo.block_of(n))];
    }
    if (!req.required.empty() && req.segment && req.min_nodes > req.segment) {
        Refusal why = shaped(Refusal::Kind::kNodelistSegments, req);
        why.nodelist = req.multi_segment_nodelist;
        return refuse_unavailable(Reason::kInvalidRequest, why);
    }
    return std::nullopt;
}

// How a request's node counts are carved into blocks.
struct Carving {
    const Request& req;
    const Views& views;
    int largest_slice = 0;

    int unit_for(std::uint32_t count) const { return carving_unit(req, count, largest_slice); }
    bool fits(const BlockView& v) const { return req.segment == 0 || v.fits_segment; }
    // Blocks with no room for this request are left out: no rule takes a node
    // from a room of 0 (and a cluster-sized list of empty rooms would cost
    // every decision on a busy cluster). An explicit segment must fit the
    // block's slice; an implicit one only its room.
    std::vector<BlockRoom> rooms_for(bool use_spares, int unit) const {
        std::vector<BlockRoom> rooms;
        rooms.reserve(views.list.size());
        for (const BlockView& v : views.list) {
            if (req.exclusive_topo && !v.exclusive_ok)
                continue;
            const int lim = use_spares ? v.spare_limit : v.limit;
            if (lim > 0)
                rooms.push_back(
                    {v.block, lim, segment_cap(lim, unit, fits(v)), v.spare_limit, std::min(v.preempted, lim)});
        }
        return rooms;
    }
};

// The first count, largest first, that fits the blocks (within the group of
// the hierarchy the job is confined to); a level's refusal is kept in
// `level_refusal` for the explanation.
std::optional<Placement> place_largest_count(const Snapshot& snap, const Carving& carve,
                                             const std::vector<std::uint32_t>& counts,
                                             const std::vector<int>& required_in,
                                             std::optional<Placement>& level_refusal) {
    const Request& req = carve.req;
    for (std::uint32_t count : counts) {
        const int c = static_cast<int>(count);
        LevelQuery q = level_query(req, count, carve.largest_slice);
        q.prefer = req.prefer_blocks;
        if (!req.required.empty())
            q.required_in = required_in;
        const int unit = q.unit;
        std::vector<BlockRoom> rooms = carve.rooms_for(false, unit);
        LevelScope scope = confine_to_levels(snap.topology(), rooms, q);
        if (scope.verdict == LevelScope::Verdict::kRefused) {
            Refusal why = shaped(Refusal::Kind::kLevel, req);
            why.level = std::move(scope.refusal);
            if (scope.topology_unavailable)
                return refuse_unavailable(scope.reason, std::move(why));
            level_refusal = refuse(scope.reason, std::move(why));
            continue;
        }
        if (scope.verdict == LevelScope::Verdict::kConfined)
            rooms = std::move(scope.rooms);
        std::optional<std::vector<BlockTake>> takes =
            req.required.empty() ? choose_blocks(rooms, c, unit) : choose_with_required(rooms, required_in, c, unit);
        if (!takes)
            continue;
        Placement p;
        p.reason = Reason::kPlaced;
        // Gathered in block order, the nodes are usually sorted already
        // (blocks of ascending nodes, taken from the start): then not sorted again.
        std::sort(takes->begin(), takes->end(),
                  [](const BlockTake& a, const BlockTake& b) { return a.block < b.block; });
        std::size_t total = 0;
        for (const BlockTake& t : *takes)
            total += static_cast<std::size_t>(t.count);
        p.nodes.reserve(total); // gathered block by block: one allocation, not one per doubling
        for (const BlockTake& t : *takes)
            gather_nodes(snap, req, carve.views.of(t.block), t.count, p.nodes);
        if (!std::is_sorted(p.nodes.begin(), p.nodes.end()))
            std::sort(p.nodes.begin(), p.nodes.end());
        p.blocks = static_cast<std::uint32_t>(takes->size());
        p.group = std::move(scope.group);
        return p;
    }
    return std::nullopt;
}

// Blocks left out of the views (no room now: limit 0) that would hold
// `unit` nodes if spares were not withheld: the index counts every block,
// less the listed ones, which the caller counts from their views.
long unlisted_with_spares(const Carving& carve, const RoomIndex& index, int unit) {
    long n = index.spare_at_least(unit, carve.req.segment);
    for (const BlockView& v : carve.views.list)
        n -= carve.fits(v) && index.offer(v.block).spare_limit >= unit;
    return n;
}

// The largest room among the blocks left out of the views (below
// views.at_least, so at most at_least - 1): the index counts every block by
// its room, less the listed ones.
int largest_unlisted(const Views& views) {
    for (int room = std::min(views.at_least - 1, views.index->largest_block()); room > 0; --room) {
        long n = views.index->blocks_with_limit(room);
        for (const BlockView& v : views.list)
            n -= views.index->offer(v.block).limit == room;
        if (n > 0)
            return room;
    }
    return 0;
}

// A job that fits in one block and finds none: spares withheld, or too busy.
Placement refuse_one_block(const Carving& carve, int unit) {
    int largest = 0;
    long would_fit = 0;
    for (const BlockView& v : carve.views.list) {
        largest = std::max(largest, v.limit);
        if (segment_cap(v.limit, unit, carve.fits(v)) < unit && segment_cap(v.spare_limit, unit, carve.fits(v)) >= unit)
            ++would_fit;
    }
    if (carve.views.index) {
        would_fit += unlisted_with_spares(carve, *carve.views.index, unit);
        largest = std::max(largest, largest_unlisted(carve.views));
    }
    Refusal why = shaped(would_fit ? Refusal::Kind::kOneBlockSpares : Refusal::Kind::kOneBlockNoRoom, carve.req);
    why.unit = unit;
    why.offered = largest;
    Placement p = refuse(would_fit ? Reason::kSparesWithheld : Reason::kNoBlockFits, why);
    p.blocks_if_spares = static_cast<std::uint32_t>(would_fit);
    return p;
}

// What the blocks would hold for the request were they idle with today's
// failures, counted until it reaches `want` (only whether it does, or the
// sum below it, is asked). Every block counts, listed in the views or not;
// the request is not a recovery here, so no block is its own.
long room_if_idle(const Snapshot& snap, const Request& req, int unit, long want) {
    const Topology& topo = snap.topology();
    long ever = 0;
    for (std::size_t i = 0; i < topo.block_count() && ever < want; ++i) {
        const Block& block = topo.blocks()[i];
        const bool lending = block.settings.lending && req.preemptible;
        const bool fits = req.segment == 0 || static_cast<int>(req.segment) <= block.settings.slice;
        ever += segment_cap(room_if_empty(block, snap.tally(static_cast<BlockIndex>(i)), lending), unit, fits);
    }
    return ever;
}

// Nothing fits now: say why, in the most useful terms.
Placement refuse_no_fit(const Snapshot& snap, const Carving& carve, std::optional<Placement> level_refusal) {
    const Topology& topo = snap.topology();
    const Request& req = carve.req;
    const std::uint32_t want = req.min_nodes;
    if (req.exclusive_topo)
        return refuse(Reason::kExclusiveNoBlock, shaped(Refusal::Kind::kExclusive, req));
    const int unit = carve.unit_for(want);
    long now_total = 0;
    for (const BlockView& v : carve.views.list)
        now_total += segment_cap(v.limit, unit, carve.fits(v));
    const long ever = room_if_idle(snap, req, unit, static_cast<long>(want));
    if (ever < static_cast<long>(want)) {
        Refusal why = shaped(Refusal::Kind::kTooLarge, req);
        why.offered = ever;
        return refuse(Reason::kTooLarge, why);
    }
    if (level_refusal)
        return *level_refusal;
    const int largest_block = carve.views.index ? carve.views.index->largest_block() : largest_block_of(topo);
    if (unit == static_cast<int>(want) && static_cast<int>(want) <= largest_block)
        return refuse_one_block(carve, unit);
    // Rooms with spares are asked of every block: without an index, the
    // views of all of them.
    const Views all = carve.views.index ? view_all_blocks(snap, req) : Views{};
    const Carving every{req, carve.views.index ? all : carve.views, carve.largest_slice};
    if (auto with_spares = choose_blocks(every.rooms_for(true, unit), static_cast<int>(want), unit)) {
        Placement p = refuse(Reason::kSparesWithheld, shaped(Refusal::Kind::kSparesWithheld, req));
        p.blocks_if_spares = static_cast<std::uint32_t>(with_spares->size());
        return p;
    }
    Refusal why = shaped(Refusal::Kind::kNoRoom, req);
    why.offered = now_total;
    return refuse(Reason::kNoBlockFits, why);
}

} // namespace

long bound_shortfall(const Topology& topo, const RoomIndex& index, const Request& req, std::span<const OfferCut> cuts) {
    if (req.recovery)
        return 0;
    const long n = req.min_nodes;
    const long room = index.room_for(req.preemptible, cuts);
    if (room < n)
        return n - room;
    if (req.max_nodes != req.min_nodes || !req.required.empty() || (req.segment && n % req.segment != 0))
        return 0;
    // A job of one node count carved whole (carving_unit: within a slice
    // and unsegmented, or one segment) goes to one block, which must offer
    // it every node.
    if (carving_unit(req, static_cast<std::uint32_t>(n), topo.largest_slice()) == n)
        return std::max(0L, n - index.largest_offer(req.preemptible, cuts));
    // A job of one node count that the hierarchy holds inside one group of
    // a rung: one of that rung's groups must offer it every node.
    const std::optional<HoldingRung> held = holding_rung(topo, level_query(req, req.min_nodes, topo.largest_slice()));
    if (!held)
        return 0;
    return std::max(0L, n - index.reach_in_a_group(topo, held->rung, held->children, req.preemptible, cuts));
}

bool may_place(const Topology& topo, const RoomIndex& index, const Request& req, std::span<const OfferCut> cuts) {
    return bound_shortfall(topo, index, req, cuts) == 0;
}

Placement place(const Snapshot& snap, const Request& req) {
    const Topology& topo = snap.topology();
    if (auto refused = invalid_request(topo, req))
        return *refused;
    const std::vector<std::uint32_t> counts = counts_to_try(req);
    // Every block that may be of use to this request as it sees it (counted
    // once, used by every rule below).
    const Views views = view_blocks(snap, req, view_scope(topo, req, counts));
    if (auto refused = outside_topology(topo, req, views))
        return *refused;
    if (auto refused = unusable_segment(topo, req, counts))
        return *refused;
    if (req.recovery)
        return place_recovery(snap, req, views);
    // Per block, the --nodelist nodes there (none asked: never read).
    std::vector<int> required_in(req.required.empty() ? 0 : topo.block_count(), 0);
    if (auto refused = unusable_required(snap, req, required_in))
        return *refused;
    const Carving carve{req, views, topo.largest_slice()};
    std::optional<Placement> level_refusal;
    if (auto placed = place_largest_count(snap, carve, counts, required_in, level_refusal))
        return *placed;
    return refuse_no_fit(snap, carve, std::move(level_refusal));
}

} // namespace nvlblock
