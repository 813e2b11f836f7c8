// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/level_choice.hpp"

#include "model/node_names.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <span>

namespace nvlblock {
namespace {

constexpr long kUnbounded = std::numeric_limits<long>::max();

// How a refusal names the rung (writers/explain.cpp spells it).
LevelRef ref_of(const Rung& r) {
    LevelRef l;
    l.shift = r.shift;
    l.level = r.level;
    switch (r.kind) {
    case Rung::Kind::kBlocks:
        l.kind = LevelRef::Kind::kBlocks;
        break;
    case Rung::Kind::kShift:
        l.kind = LevelRef::Kind::kShift;
        break;
    case Rung::Kind::kNamed:
        l.kind = LevelRef::Kind::kNamed;
        break;
    case Rung::Kind::kCluster:
        l.kind = LevelRef::Kind::kCluster;
        break;
    }
    return l;
}

// A group's name: its name in nvlblock.yaml, else its blocks as a host list.
// Never asked for the cluster rung, which has no group to name.
std::string group_name(const Topology& topo, const Rung& r, std::span<const BlockIndex> blocks) {
    if (r.kind == Rung::Kind::kNamed) {
        const HierarchyLevel& l = topo.hierarchy().levels()[static_cast<std::size_t>(r.level)];
        return l.groups[static_cast<std::size_t>(l.group_of[static_cast<std::size_t>(blocks.front())])].name;
    }
    return block_hostlist(topo, std::vector<BlockIndex>(blocks.begin(), blocks.end()));
}

// What a group of each rung of the ladder nominally holds for this
// request, lowest first: topology.conf's sizes; for nvlblock.yaml groups,
// what the largest holds for this kind of job when idle (ordinary capacity,
// size less spares, in whole segments). Read where asked: every decision of
// a job larger than a slice asks, and a list of them was an allocation each.
class Nominals {
  public:
    Nominals(const Topology& topo, const LevelQuery& q)
        : h_(topo.hierarchy()), largest_slice_(topo.largest_slice()), segmented_(q.segmented) {
        if (h_.kind() != Hierarchy::Kind::kBlockSizes)
            holds_ = topo.group_holds(q.unit); // counted once per unit with the topology
    }

    std::size_t size() const { return h_.ladder().size(); }

    long operator[](std::size_t t) const {
        const std::vector<Rung>& rungs = h_.ladder();
        if (h_.kind() == Hierarchy::Kind::kBlockSizes)
            return t + 1 < rungs.size() ? static_cast<long>(h_.base_nodes()) << rungs[t].shift : kUnbounded;
        if (t == 0)
            return segmented_ ? holds_.front() : largest_slice_;
        return t + 1 < rungs.size() ? holds_[t] : kUnbounded; // the last rung: the cluster
    }

  private:
    const Hierarchy& h_;
    long largest_slice_;
    bool segmented_;
    std::span<const long> holds_;
};

// The rung that nominally holds a job of n nodes: the lowest whose groups
// nominally hold it (the cluster at last).
std::size_t nominal_rung(const Nominals& nominal, long n) {
    std::size_t t = 0;
    while (t + 1 < nominal.size() && nominal[t] < n)
        ++t;
    return t;
}

// At most how many children of a group of rung t a job of n nodes may
// touch: topology/block's ceil(n / child size) (one block on the blocks'
// rung); nvlblock.yaml groups: any (0).
long children_limit(bool block_sizes, std::size_t t, const Nominals& nominal, long n) {
    if (t == 0)
        return 1;
    return block_sizes ? (n + nominal[t - 1] - 1) / nominal[t - 1] : 0;
}

// Children below this capacity (children that are blocks: a few dozen
// nodes at most) are counted by capacity instead of compared one by one.
constexpr long kCounted = 256;

// The greedy of pick_children over every child not `used`: while nodes are
// needed, one that holds the rest (fewest nodes, the first on ties), else
// the largest (the first on ties). False when it runs out of children or
// of `left`.
bool pick_by_scan(std::span<const long> caps, std::vector<char>& used, long need, long left, std::vector<int>& chosen) {
    while (need > 0) {
        if (left <= 0)
            return false;
        int fit = -1, largest = -1;
        for (std::size_t i = 0; i < caps.size(); ++i) {
            const long cap = caps[i];
            if (used[i] || cap <= 0)
                continue;
            if (cap >= need && (fit < 0 || cap < caps[static_cast<std::size_t>(fit)]))
                fit = static_cast<int>(i);
            if (largest < 0 || cap > caps[static_cast<std::size_t>(largest)])
                largest = static_cast<int>(i);
        }
        const int take = fit >= 0 ? fit : largest;
        if (take < 0)
            return false;
        used[static_cast<std::size_t>(take)] = 1;
        chosen.push_back(take);
        need -= caps[static_cast<std::size_t>(take)];
        --left;
    }
    return true;
}

// The same greedy over children counted by capacity (all below kCounted,
// `most` the largest): each capacity's children in index order, so the
// first of a capacity not yet taken is the first on ties.
bool pick_by_capacity(std::span<const long> caps, const std::vector<char>& used, long most, long need, long left,
                      std::vector<int>& chosen) {
    std::array<int, kCounted + 1> start; // children of capacity v: order[start[v], start[v + 1])
    std::fill_n(start.begin(), most + 2, 0);
    for (std::size_t i = 0; i < caps.size(); ++i)
        if (!used[i] && caps[i] > 0)
            ++start[static_cast<std::size_t>(caps[i]) + 1];
    for (long v = 1; v <= most + 1; ++v)
        start[static_cast<std::size_t>(v)] += start[static_cast<std::size_t>(v - 1)];
    std::array<int, kCounted> next; // the first child of capacity v not taken yet
    std::copy_n(start.begin(), most + 1, next.begin());
    std::vector<int> order(static_cast<std::size_t>(start[static_cast<std::size_t>(most) + 1]));
    for (std::size_t i = 0; i < caps.size(); ++i)
        if (!used[i] && caps[i] > 0)
            order[static_cast<std::size_t>(next[static_cast<std::size_t>(caps[i])]++)] = static_cast<int>(i);
    std::copy_n(start.begin(), most + 1, next.begin());
    auto left_of = [&](long v) { return start[static_cast<std::size_t>(v) + 1] - next[static_cast<std::size_t>(v)]; };
    long top = most;
    while (need > 0) {
        if (left <= 0)
            return false;
        for (long v = std::max(need, 1L); v <= most; ++v)
            if (left_of(v) > 0) { // one holds the rest: the fewest nodes
                chosen.push_back(order[static_cast<std::size_t>(next[static_cast<std::size_t>(v)])]);
                return true;
            }
        while (top > 0 && left_of(top) == 0)
            --top;
        if (top == 0)
            return false;
        chosen.push_back(order[static_cast<std::size_t>(next[static_cast<std::size_t>(top)]++)]);
        need -= top;
        --left;
    }
    return true;
}

// Children to use inside a group (`caps`: what each holds for the
// request): the ones holding required nodes, then one that holds the rest
// (best fit: fewest nodes, the first on ties), else the largest first.
// `limit`: at most this many children (0: any).
std::optional<std::vector<int>> pick_children(std::span<const long> caps, const std::vector<char>& forced, long need,
                                              long limit) {
    std::vector<int> chosen;
    std::vector<char> used(caps.size(), 0);
    for (std::size_t i = 0; i < caps.size(); ++i)
        if (forced[i]) {
            chosen.push_back(static_cast<int>(i));
            used[i] = 1;
            need -= caps[i];
        }
    const long left = limit ? limit - static_cast<long>(chosen.size()) : kUnbounded;
    const auto [least, most] = std::ranges::minmax(caps);
    const bool counted = !caps.empty() && least >= 0 && most < kCounted;
    if (counted ? pick_by_capacity(caps, used, most, need, left, chosen) : pick_by_scan(caps, used, need, left, chosen))
        return chosen;
    return std::nullopt;
}

// The sum of the `limit` largest child capacities (all of them for 0).
// `scratch`: reused between calls.
long reach_of(std::span<const long> caps, long limit, std::vector<long>& scratch) {
    if (limit == 0 || static_cast<std::size_t>(limit) >= caps.size()) // every child counts: nothing to order
        return std::accumulate(caps.begin(), caps.end(), 0L);
    // Children that are blocks hold a few dozen nodes at most: counted by
    // capacity, the largest are read from the top (no selection over them all).
    const auto [least, most] = std::ranges::minmax(caps);
    if (least >= 0 && most < kCounted) {
        std::array<int, kCounted> with; // only [0, most] is read
        std::fill_n(with.begin(), most + 1, 0);
        for (long c : caps)
            ++with[static_cast<std::size_t>(c)];
        long sum = 0, left = limit;
        for (long c = most; c > 0 && left > 0; --c) {
            const long take = std::min<long>(left, with[static_cast<std::size_t>(c)]);
            sum += take * c;
            left -= take;
        }
        return sum;
    }
    scratch.assign(caps.begin(), caps.end());
    // Which of equal capacities are the `limit` largest does not change their sum.
    std::nth_element(scratch.begin(), scratch.begin() + limit, scratch.end(), std::greater<>());
    return std::accumulate(scratch.begin(), scratch.begin() + limit, 0L);
}

// A group of the rung asked, as this request sees it (parallel to Rung::groups).
struct Candidate {
    long free = 0;    // nodes the request may take in it now
    long reach = 0;   // of those, what its allowed children hold
    int distance = 0; // levels up to the job's previous groups (0: its own)
};

class Confiner {
  public:
    Confiner(const Topology& topo, const std::vector<BlockRoom>& rooms, const LevelQuery& q)
        : topo_(topo), rooms_(rooms), q_(q), rungs_(topo.hierarchy().ladder()), nominal_(topo, q) {}

    LevelScope run() {
        const Hierarchy& h = topo_.hierarchy();
        const long n = q_.nodes;
        const bool block_sizes = h.kind() == Hierarchy::Kind::kBlockSizes;
        if (block_sizes && q_.segmented && q_.unit <= static_cast<int>(h.base_nodes()))
            return {}; // topology/block places each segment on its own, in one base block
        // The rung that nominally holds the job, and whether it may be
        // confined to one block at all.
        std::size_t target = nominal_rung(nominal_, n);
        if (target == 0) {
            if (!block_sizes && (!q_.segmented || fits_one_block()))
                return {}; // the block choice keeps it in one block
            if (block_sizes && n <= topo_.largest_slice())
                return {};
            if (!block_sizes)
                target = 1; // segments that no block takes now: confined to the lowest level
        }
        const bool may_cross = h.cross_after() && q_.waited >= *h.cross_after();
        LevelScope first;
        bool refused_first = false;
        for (std::size_t t = target; t < rungs_.size(); ++t) {
            go_up_ = false;
            LevelScope s = at(t, block_sizes);
            if (s.verdict != LevelScope::Verdict::kRefused || s.topology_unavailable)
                return s;
            if (go_up_)
                continue;
            if (!refused_first) {
                first = std::move(s);
                refused_first = true;
            }
            if (!may_cross)
                break;
        }
        if (may_cross)
            return {}; // crossed every level: anywhere
        if (h.cross_after()) {
            first.refusal.may_cross_later = true;
            first.refusal.cross_after = *h.cross_after();
            first.refusal.waited = q_.waited;
        }
        return first;
    }

  private:
    bool fits_one_block() const {
        return std::any_of(rooms_.begin(), rooms_.end(), [&](const BlockRoom& r) { return r.segment_cap >= q_.nodes; });
    }

    // Distance from a group (any of its blocks) to the job's previous blocks:
    // 0 when it holds one of them, else how many levels up they meet.
    int distance(std::size_t t, BlockIndex rep) const {
        if (q_.prefer.empty())
            return 0;
        int best = static_cast<int>(rungs_.size());
        for (BlockIndex p : q_.prefer) {
            if (p < 0 || static_cast<std::size_t>(p) >= topo_.block_count())
                continue;
            for (std::size_t j = t; j < rungs_.size(); ++j)
                if (rungs_[j].group_at[static_cast<std::size_t>(rep)] ==
                    rungs_[j].group_at[static_cast<std::size_t>(p)]) {
                    best = std::min(best, static_cast<int>(j - t));
                    break;
                }
        }
        return best;
    }

    // What the request may take in each group of `rung` and each child:
    // the rooms added up, one pass over them.
    void add_rooms(const Rung& rung) {
        caps_.assign(rung.children.size(), 0);
        cands_.assign(rung.groups.size(), Candidate{});
        for (const BlockRoom& room : rooms_) {
            const auto b = static_cast<std::size_t>(room.block);
            caps_[static_cast<std::size_t>(rung.child_at[b])] += room.segment_cap;
            cands_[static_cast<std::size_t>(rung.group_at[b])].free += room.limit;
        }
    }

    std::span<const long> caps_of(const Rung::Group& g) const {
        return {caps_.data() + g.first_child, static_cast<std::size_t>(g.child_count)};
    }

    LevelScope at(std::size_t t, bool block_sizes) {
        const Rung& rung = rungs_[t];
        const long n = q_.nodes;
        const long limit = children_limit(block_sizes, t, nominal_, n);
        add_rooms(rung);
        int chosen = -1;
        std::vector<char> forced; // bytes, not bits: read once per child
        if (!q_.required_in.empty()) {
            // The group holding the required nodes (topology/block: the first
            // one that holds any; they must all be in it).
            for (std::size_t g = 0; g < rung.groups.size() && chosen < 0; ++g)
                if (std::ranges::any_of(rung.blocks_of(rung.groups[g]), [&](BlockIndex b) { return req(b) > 0; }))
                    chosen = static_cast<int>(g);
            if (chosen < 0)
                return {};
            const Rung::Group& group = rung.groups[static_cast<std::size_t>(chosen)];
            int inside = 0, total = 0;
            for (BlockIndex b = 0; b < static_cast<BlockIndex>(topo_.block_count()); ++b)
                total += req(b);
            for (BlockIndex b : rung.blocks_of(group))
                inside += req(b);
            if (inside != total) {
                // nvlblock.yaml: the user named nodes in several groups, so
                // the job goes to the level where one group holds them all.
                go_up_ = !block_sizes;
                return refuse(LevelRefusal::Kind::kRequiredSplit, t, limit);
            }
            forced.assign(static_cast<std::size_t>(group.child_count), 0);
            long forced_count = 0;
            for (int i = 0; i < group.child_count; ++i)
                if (std::ranges::any_of(rung.blocks_of(rung.children[static_cast<std::size_t>(group.first_child + i)]),
                                        [&](BlockIndex b) { return req(b) > 0; })) {
                    forced[static_cast<std::size_t>(i)] = 1;
                    ++forced_count;
                }
            if (limit && forced_count > limit) {
                LevelScope s = refuse(LevelRefusal::Kind::kRequiredSpread, t, limit);
                s.refusal.spread = forced_count;
                s.topology_unavailable = true;
                return s;
            }
        } else {
            for (std::size_t g = 0; g < rung.groups.size(); ++g) {
                Candidate& c = cands_[g];
                c.reach = reach_of(caps_of(rung.groups[g]), limit, scratch_);
                if (c.reach < n)
                    continue;
                c.distance = distance(t, rung.blocks[static_cast<std::size_t>(rung.groups[g].first_block)]);
                const Candidate* best = chosen < 0 ? nullptr : &cands_[static_cast<std::size_t>(chosen)];
                if (!best || c.distance < best->distance || (c.distance == best->distance && c.free < best->free))
                    chosen = static_cast<int>(g);
            }
            if (chosen < 0)
                return no_fit(t, limit);
            forced.assign(static_cast<std::size_t>(rung.groups[static_cast<std::size_t>(chosen)].child_count), 0);
        }
        auto picked = pick_children(caps_of(rung.groups[static_cast<std::size_t>(chosen)]), forced, n, limit);
        if (!picked)
            return q_.required_in.empty() ? no_fit(t, limit) : refuse(LevelRefusal::Kind::kRequiredNoRoom, t, limit);
        return confined(rung, static_cast<std::size_t>(chosen), *picked);
    }

    // The job confined to the picked children of group `chosen`: their rooms, in block order.
    LevelScope confined(const Rung& rung, std::size_t chosen, const std::vector<int>& picked) const {
        const Rung::Group& group = rung.groups[chosen];
        LevelScope s;
        s.verdict = LevelScope::Verdict::kConfined;
        if (rung.kind != Rung::Kind::kCluster)
            s.group = group_name(topo_, rung, rung.blocks_of(group));
        std::vector<char> take(static_cast<std::size_t>(group.child_count), 0);
        for (int i : picked)
            take[static_cast<std::size_t>(i)] = 1;
        for (const BlockRoom& room : rooms_) {
            const int child = rung.child_at[static_cast<std::size_t>(room.block)] - group.first_child;
            if (child >= 0 && child < group.child_count && take[static_cast<std::size_t>(child)])
                s.rooms.push_back(room);
        }
        std::sort(s.rooms.begin(), s.rooms.end(),
                  [](const BlockRoom& a, const BlockRoom& b) { return a.block < b.block; });
        return s;
    }

    int req(BlockIndex b) const { return q_.required_in.empty() ? 0 : q_.required_in[static_cast<std::size_t>(b)]; }

    // A refusal at rung `t`: the facts writers/explain.cpp words.
    LevelScope refuse(LevelRefusal::Kind kind, std::size_t t, long limit) const {
        LevelScope s;
        s.verdict = LevelScope::Verdict::kRefused;
        s.reason = Reason::kNoGroupFits;
        s.refusal.kind = kind;
        s.refusal.rung = ref_of(rungs_[t]);
        s.refusal.child = ref_of(rungs_[t == 0 ? 0 : t - 1]);
        s.refusal.nodes = q_.nodes;
        s.refusal.unit = q_.unit;
        s.refusal.limit = limit;
        return s;
    }

    // No group of rung `t` has room: the closest one (the most room, the
    // first on ties) is named when it has any.
    LevelScope no_fit(std::size_t t, long limit) const {
        const Rung& rung = rungs_[t];
        const bool cluster = rung.kind == Rung::Kind::kCluster;
        LevelScope s = refuse(cluster ? LevelRefusal::Kind::kLargerThanAll : LevelRefusal::Kind::kNoGroup, t, limit);
        std::size_t best = 0;
        for (std::size_t g = 1; g < cands_.size(); ++g)
            if (cands_[g].reach > cands_[best].reach)
                best = g;
        s.refusal.reach = cands_.empty() ? 0 : cands_[best].reach;
        s.refusal.child_is_lowest = t == 1;
        if (!cluster && s.refusal.reach > 0)
            s.refusal.closest = group_name(topo_, rung, rung.blocks_of(rung.groups[best]));
        return s;
    }

    const Topology& topo_;
    const std::vector<BlockRoom>& rooms_;
    const LevelQuery& q_;
    const std::vector<Rung>& rungs_; // the hierarchy's ladder, laid out once
    Nominals nominal_;               // per rung: what a group of it nominally holds for this request
    std::vector<long> caps_;         // per child of the rung asked: what the request may take in it
    std::vector<Candidate> cands_;   // per group of the rung asked
    std::vector<long> scratch_;      // reach_of's
    bool go_up_ = false;             // the last refusal asks for the next level, crossing or not
};

} // namespace

bool levels_may_confine(const Topology& topo, const LevelQuery& q) {
    const Hierarchy& h = topo.hierarchy();
    if (h.empty() || q.nodes <= 0 || topo.block_count() == 0)
        return false;
    // Most requests need no level: a job that fits a slice stays in one
    // block, and topology/block places segments of a base block one by one.
    if (!q.segmented && q.nodes <= topo.largest_slice())
        return false;
    return !(q.segmented && h.per_segment() && q.unit <= static_cast<int>(h.base_nodes()));
}

std::optional<HoldingRung> holding_rung(const Topology& topo, const LevelQuery& q) {
    const Hierarchy& h = topo.hierarchy();
    if (!levels_may_confine(topo, q) || !q.required_in.empty() || (h.cross_after() && q.waited >= *h.cross_after()))
        return std::nullopt;
    const bool block_sizes = h.kind() == Hierarchy::Kind::kBlockSizes;
    const Nominals nominal(topo, q);
    const std::size_t target = nominal_rung(nominal, q.nodes);
    if (target == 0 && block_sizes && q.nodes <= topo.largest_slice())
        return std::nullopt; // Confiner::run leaves it free
    // Confined to one group of the target rung or refused there
    // (Confiner::run); with nvlblock.yaml groups, a job the lowest rung
    // holds (segments) goes to one block or, where none takes it now, to a
    // group of the lowest level: inside one group of that level either way.
    if (target == 0 && !block_sizes)
        return HoldingRung{1, 0};
    return HoldingRung{target, children_limit(block_sizes, target, nominal, q.nodes)};
}

LevelScope confine_to_levels(const Topology& topo, const std::vector<BlockRoom>& rooms, const LevelQuery& q) {
    if (!levels_may_confine(topo, q))
        return {};
    return Confiner(topo, rooms, q).run();
}

} // namespace nvlblock
