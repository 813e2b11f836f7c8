// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/engine.hpp"

#include "placement/block_choice.hpp"

#include <algorithm>
#include <numeric>

namespace nvlblock {
namespace {

// One block as seen by one request.
struct BlockView {
    BlockIndex block = kNoBlock;
    std::vector<NodeIndex> order; // usable nodes, most preferred first
    int limit = 0;                // nodes this request may take now
    int spare_limit = 0;          // nodes it could take if spares were not withheld
    int room_if_empty = 0;        // nodes it could take on an idle block with today's failures
    bool exclusive_ok = false;    // no other work and no holds: --exclusive=topo may take it
    bool fits_segment = true;     // segment <= slice
    std::uint32_t own_need = 0;   // recovery: nodes the job needs back here
    std::uint32_t prior_taken = 0;
};

bool node_available(const Snapshot& snap, const Request& req, NodeIndex n) {
    if (!is_healthy(snap.state(n)))
        return false;
    if (req.available.empty())
        return snap.state(n) == NodeState::kFree;
    return n < req.available.size() && req.available[n] != 0;
}

const RecoveryNeed* own_need(const Request& req, BlockIndex b) {
    if (!req.recovery)
        return nullptr;
    for (const auto& need : req.recovery->blocks)
        if (need.block == b)
            return &need;
    return nullptr;
}

BlockView view_block(const Snapshot& snap, const Request& req, BlockIndex b) {
    const Block& block = snap.topology().block(b);
    const BlockTally& t = snap.tally(b);
    const bool lending = block.settings.lending && req.preemptible;
    const RecoveryNeed* mine = own_need(req, b);

    BlockView v;
    v.block = b;
    v.fits_segment = req.segment == 0 || static_cast<int>(req.segment) <= block.settings.slice;
    if (t.fault)
        return v;

    int held_others = 0, held_nodes_others = 0;
    for (const auto& h : t.holds) {
        if (h.job_id == req.job_id)
            continue;
        held_others += static_cast<int>(h.need);
        held_nodes_others += static_cast<int>(h.held_nodes);
    }
    // Preference classes, in order: the job's own prior nodes (recovery),
    // truly free nodes, then nodes Slurm offers through preemption (lent
    // first, so preemption hits preemptible work before anything else).
    std::vector<NodeIndex> prior, free_nodes, lent, busy;
    int busy_unavail = 0, lent_unavail = 0;
    std::vector<bool> is_prior;
    if (mine) {
        is_prior.assign(snap.topology().node_count(), false);
        for (NodeIndex n : mine->prior_healthy)
            if (n < is_prior.size())
                is_prior[n] = true;
    }
    for (NodeIndex n : block.nodes) {
        const NodeState s = snap.state(n);
        const std::uint32_t holder = snap.held_for(n);
        const bool counts_lent = s == NodeState::kLent && block.settings.lending;
        if (node_available(snap, req, n) && (holder == 0 || holder == req.job_id)) {
            if (mine && is_prior[n])
                prior.push_back(n);
            else if (s == NodeState::kFree)
                free_nodes.push_back(n);
            else if (counts_lent)
                lent.push_back(n);
            else
                busy.push_back(n);
        } else if (s == NodeState::kBusy || (s == NodeState::kLent && !counts_lent)) {
            ++busy_unavail;
        } else if (counts_lent) {
            ++lent_unavail;
        }
    }
    // Preemptible work borrowing spares takes them from the end of the block,
    // so spares stay where operators expect them and ordinary work packs low.
    if (lending)
        std::reverse(free_nodes.begin(), free_nodes.end());
    // Keep the job's prior nodes in the order recorded.
    if (mine) {
        std::vector<NodeIndex> ordered;
        for (NodeIndex n : mine->prior_healthy)
            if (std::find(prior.begin(), prior.end(), n) != prior.end())
                ordered.push_back(n);
        prior = std::move(ordered);
        v.own_need = mine->need;
        v.prior_taken = static_cast<std::uint32_t>(prior.size());
    }
    for (auto* part : {&prior, &free_nodes, &lent, &busy})
        v.order.insert(v.order.end(), part->begin(), part->end());

    const int n = t.size, f = t.failed, s = t.spares_configured;
    const int extra_held = held_others - held_nodes_others; // held by count, not yet by node
    const int by_nodes = static_cast<int>(v.order.size()) - extra_held;
    const int healthy_room = n - f - busy_unavail - held_others;
    const int ordinary_room = n - std::max(f, s) - busy_unavail - held_others;
    int room;
    if (mine)
        room = healthy_room; // a recovering job may use the spares it lost
    else if (lending)
        room = healthy_room - lent_unavail;
    else
        room = ordinary_room;
    v.limit = std::max(0, std::min(by_nodes, room));
    v.spare_limit = std::max(0, std::min(by_nodes, healthy_room));
    v.room_if_empty = std::max(0, (mine || lending) ? n - f : n - std::max(f, s));
    v.exclusive_ok = busy_unavail == 0 && lent_unavail == 0 && held_others == 0;
    return v;
}

int segment_cap(int limit, int segment, bool fits) {
    if (!fits)
        return 0;
    return segment > 1 ? limit / segment * segment : limit;
}

std::string plural(long n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string shape(std::uint32_t nodes, std::uint32_t segment) {
    std::string s = plural(nodes, "node", "nodes");
    if (segment && nodes > segment)
        s += " (" + plural(nodes / segment, "segment", "segments") + " of " + std::to_string(segment) + ")";
    return s;
}

Placement refuse(Reason r, std::string message) {
    Placement p;
    p.reason = r;
    p.message = std::move(message);
    return p;
}

// Pick `count` nodes of a view: required ones first, then in preference order.
void take_nodes(const BlockView& v, int count, const std::vector<NodeIndex>& required, std::vector<NodeIndex>& out) {
    int taken = 0;
    for (NodeIndex n : required) {
        if (taken == count)
            break;
        if (std::find(v.order.begin(), v.order.end(), n) != v.order.end()) {
            out.push_back(n);
            ++taken;
        }
    }
    for (NodeIndex n : v.order) {
        if (taken == count)
            break;
        if (std::find(required.begin(), required.end(), n) != required.end())
            continue;
        out.push_back(n);
        ++taken;
    }
}

Placement place_recovery(const Snapshot& snap, const Request& req, const std::vector<BlockView>& views) {
    Placement p;
    std::uint32_t spares = 0;
    std::string shortfall;
    for (const RecoveryNeed& need : req.recovery->blocks) {
        const Block& block = snap.topology().block(need.block);
        const BlockTally& t = snap.tally(need.block);
        const BlockView& v = views[static_cast<std::size_t>(need.block)];
        if (t.fault) {
            shortfall = block.name + " is down (block fault: " + std::to_string(t.failed) + " of " +
                        std::to_string(t.size) + " nodes failed)";
            break;
        }
        if (v.limit < static_cast<int>(need.need)) {
            shortfall = block.name + " has room for " + std::to_string(v.limit) + " of the " +
                        std::to_string(need.need) + " nodes it needs (" + std::to_string(t.failed) + " failed, " +
                        std::to_string(block.settings.spares) + " spares";
            if (t.lent)
                shortfall += ", " + std::to_string(t.lent) + " lent";
            shortfall += ")";
            break;
        }
        take_nodes(v, static_cast<int>(need.need), {}, p.nodes);
        const std::uint32_t prior_used = std::min(v.prior_taken, need.need);
        spares += need.need - prior_used;
    }
    if (!shortfall.empty()) {
        Placement w = refuse(Reason::kRecoveryWaiting,
                             "in-place restart after a node failure: waiting for its block; " + shortfall);
        return w;
    }
    std::sort(p.nodes.begin(), p.nodes.end());
    p.reason = Reason::kPlaced;
    p.recovery_in_place = true;
    p.spares_used = spares;
    p.message = "restart in place: " + plural(static_cast<long>(p.nodes.size()) - spares, "prior node", "prior nodes") +
                " + " + plural(spares, "spare", "spares");
    return p;
}

// Blocks holding --nodelist nodes are forced into the choice and filled
// first; the rest goes by best fit. With segments only a single segment may
// carry required nodes (as in topology/block), so they must share one block.
std::optional<std::vector<BlockTake>> choose_with_required(const std::vector<BlockRoom>& rooms,
                                                           const std::vector<int>& required_in, int count,
                                                           int segment) {
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
    }
    return "unknown";
}

Placement place(const Snapshot& snap, const Request& req) {
    const Topology& topo = snap.topology();
    if (req.min_nodes == 0 || req.max_nodes < req.min_nodes)
        return refuse(Reason::kInvalidRequest, "invalid node count " + std::to_string(req.min_nodes) + "-" +
                                                   std::to_string(req.max_nodes));
    if (!req.available.empty() && req.available.size() != topo.node_count())
        return refuse(Reason::kInvalidRequest, "availability map does not match the topology");

    // Like topology/block: work that can use no block node is scheduled without topology.
    bool any_block_node = false;
    for (NodeIndex n = 0; n < topo.node_count() && !any_block_node; ++n)
        any_block_node = topo.block_of(n) != kNoBlock && node_available(snap, req, n);
    bool required_outside = false, required_inside = false;
    for (NodeIndex n : req.required) {
        if (n >= topo.node_count())
            return refuse(Reason::kInvalidRequest, "required node index out of range");
        (topo.block_of(n) == kNoBlock ? required_outside : required_inside) = true;
    }
    if (required_outside && !required_inside)
        return refuse(Reason::kNotInTopology, "the required nodes are outside every block");
    if (required_outside)
        return refuse(Reason::kInvalidRequest, "--nodelist mixes nodes inside and outside blocks");
    if (!any_block_node && !req.recovery && !required_inside)
        return refuse(Reason::kNotInTopology, "no block node is available to this job");

    // Node counts to try, largest first (-N min-max takes the most it can).
    const std::uint32_t seg = req.segment;
    std::vector<std::uint32_t> counts;
    for (std::uint32_t c = req.max_nodes; c >= req.min_nodes && c > 0; --c) {
        if (seg == 0 || c % seg == 0)
            counts.push_back(c);
        if (c == req.min_nodes)
            break;
    }
    if (counts.empty())
        return refuse(Reason::kSegmentNotDivisor,
                      req.min_nodes == req.max_nodes
                          ? "the job's " + plural(req.min_nodes, "node", "nodes") + " cannot be divided into segments of " +
                                std::to_string(seg) + " (--segment must divide the node count)"
                          : "no node count from " + std::to_string(req.min_nodes) + " to " + std::to_string(req.max_nodes) +
                                " is a multiple of --segment=" + std::to_string(seg));
    if (seg && static_cast<int>(seg) > topo.largest_slice())
        return refuse(Reason::kSegmentTooLarge, "--segment=" + std::to_string(seg) + " is larger than the largest slice (" +
                                                    std::to_string(topo.largest_slice()) + " nodes); segments never cross a slice");

    std::vector<BlockView> views;
    views.reserve(topo.block_count());
    for (BlockIndex b = 0; b < static_cast<BlockIndex>(topo.block_count()); ++b)
        views.push_back(view_block(snap, req, b));

    if (req.recovery)
        return place_recovery(snap, req, views);

    // Required nodes: each must be usable; its block is forced into the choice.
    std::vector<int> required_in(views.size(), 0);
    for (NodeIndex n : req.required) {
        const BlockView& v = views[static_cast<std::size_t>(topo.block_of(n))];
        if (std::find(v.order.begin(), v.order.end(), n) == v.order.end())
            return refuse(Reason::kRequiredUnavailable,
                          "required node " + topo.node_name(n) + " is not available (" +
                              (is_healthy(snap.state(n)) ? "in use or held" : "failed") + ")");
        ++required_in[static_cast<std::size_t>(topo.block_of(n))];
    }
    if (!req.required.empty() && seg && req.min_nodes > seg)
        return refuse(Reason::kInvalidRequest, "--nodelist with more than one segment is not supported (as in topology/block)");

    // The unit a count is carved in: --segment if given; a job that fits in a
    // slice stays in one block (as topology/block keeps a job within one
    // block); a larger one spans as few blocks as it can.
    const int largest_slice = topo.largest_slice();
    auto unit_for = [&](std::uint32_t count) {
        if (seg)
            return static_cast<int>(seg);
        return static_cast<int>(count) <= largest_slice ? static_cast<int>(count) : 1;
    };
    auto rooms_for = [&](bool use_spares, int unit) {
        std::vector<BlockRoom> rooms;
        for (const BlockView& v : views) {
            if (req.exclusive_topo && !v.exclusive_ok)
                continue;
            const int lim = use_spares ? v.spare_limit : v.limit;
            // An explicit segment must fit the block's slice; an implicit one only its room.
            rooms.push_back({v.block, lim, segment_cap(lim, unit, seg == 0 || v.fits_segment)});
        }
        return rooms;
    };

    for (std::uint32_t count : counts) {
        const int c = static_cast<int>(count);
        const int unit = unit_for(count);
        const std::vector<BlockRoom> rooms = rooms_for(false, unit);
        std::optional<std::vector<BlockTake>> takes = req.required.empty()
                                                          ? choose_blocks(rooms, c, unit)
                                                          : choose_with_required(rooms, required_in, c, unit);
        if (!takes)
            continue;
        Placement p;
        p.reason = Reason::kPlaced;
        for (const BlockTake& t : *takes)
            take_nodes(views[static_cast<std::size_t>(t.block)], t.count, req.required, p.nodes);
        std::sort(p.nodes.begin(), p.nodes.end());
        p.message = "placed on " + plural(static_cast<long>(takes->size()), "block", "blocks");
        return p;
    }

    // Nothing fits now: say why, in the most useful terms.
    const std::uint32_t want = req.min_nodes;
    if (req.exclusive_topo)
        return refuse(Reason::kExclusiveNoBlock, "--exclusive=topo needs blocks with no other work for " +
                                                     shape(want, seg) + "; none are free now");
    const int unit = unit_for(want);
    long ever = 0;
    for (const BlockView& v : views)
        ever += segment_cap(v.room_if_empty, unit, seg == 0 || v.fits_segment);
    if (ever < static_cast<long>(want))
        return refuse(Reason::kTooLarge, "the job needs " + shape(want, seg) + "; the healthy blocks can hold at most " +
                                             std::to_string(ever) + " for this kind of job");

    const std::vector<BlockRoom> rooms = rooms_for(false, unit);
    const std::vector<BlockRoom> spare_rooms = rooms_for(true, unit);
    int largest = 0, largest_block = 0;
    std::uint32_t would_fit = 0;
    for (std::size_t i = 0; i < rooms.size(); ++i) {
        largest = std::max(largest, rooms[i].limit);
        if (rooms[i].segment_cap < unit && spare_rooms[i].segment_cap >= unit)
            ++would_fit;
    }
    for (const Block& b : topo.blocks())
        largest_block = std::max(largest_block, b.size());
    if (unit == static_cast<int>(want) && static_cast<int>(want) <= largest_block) {
        if (would_fit) {
            Placement p = refuse(Reason::kSparesWithheld,
                                 "no block has " + plural(unit, "healthy free non-spare node", "healthy free non-spare nodes") +
                                     "; " + plural(would_fit, "block", "blocks") +
                                     " would fit if their spares were used (spares are kept for in-place recovery)");
            p.blocks_if_spares = would_fit;
            return p;
        }
        return refuse(Reason::kNoBlockFits, "no block has " + plural(unit, "healthy free node", "healthy free nodes") +
                                                " now (the most any block offers is " + std::to_string(largest) + ")");
    }
    if (auto with_spares = choose_blocks(spare_rooms, static_cast<int>(want), unit)) {
        Placement p = refuse(Reason::kSparesWithheld, "not enough healthy free non-spare capacity for " + shape(want, seg) +
                                                          "; it would fit on " +
                                                          plural(static_cast<long>(with_spares->size()), "block", "blocks") +
                                                          " if their spares were used (spares are kept for in-place recovery)");
        p.blocks_if_spares = static_cast<std::uint32_t>(with_spares->size());
        return p;
    }
    long now_total = 0;
    for (const auto& r : rooms)
        now_total += r.segment_cap;
    return refuse(Reason::kNoBlockFits, "not enough free capacity for " + shape(want, seg) + " now (" +
                                            std::to_string(now_total) + " usable nodes in whole segments)");
}

} // namespace nvlblock
