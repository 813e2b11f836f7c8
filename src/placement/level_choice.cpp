// SPDX-License-Identifier: GPL-2.0-or-later
#include "placement/level_choice.hpp"

#include "model/node_names.hpp"

#include <algorithm>
#include <limits>
#include <span>

namespace nvlblock {
namespace {

constexpr long kUnbounded = std::numeric_limits<long>::max();

// One rung of the ladder from the blocks to the whole cluster, as one
// request sees it: how blocks fall into groups here and how many nodes a
// group of this rung nominally holds for this request.
struct Rung {
    enum class Kind { kBlocks, kShift, kNamed, kCluster };
    Kind kind = Kind::kBlocks;
    int shift = 0;                         // kShift: groups of 2^shift blocks, aligned
    const HierarchyLevel* named = nullptr; // kNamed
    int level = 0;                         // kNamed: its index in the hierarchy
    long nominal = 0;

    int group_of(BlockIndex b) const {
        switch (kind) {
        case Kind::kBlocks:
            return b;
        case Kind::kShift:
            return b >> shift;
        case Kind::kNamed:
            return named->group_of[static_cast<std::size_t>(b)];
        case Kind::kCluster:
            break;
        }
        return 0;
    }
};

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
    if (r.kind == Rung::Kind::kNamed)
        return r.named->groups[static_cast<std::size_t>(r.group_of(blocks.front()))].name;
    return block_hostlist(topo, std::vector<BlockIndex>(blocks.begin(), blocks.end()));
}

int segment_cap_of(int room, int unit) {
    return unit > 1 ? room / unit * unit : room;
}

// The ladder for this request, lowest first: the blocks, each level, the cluster.
std::vector<Rung> ladder(const Topology& topo, const LevelQuery& q) {
    const Hierarchy& h = topo.hierarchy();
    std::vector<Rung> rungs;
    Rung blocks;
    blocks.kind = Rung::Kind::kBlocks;
    if (h.kind() == Hierarchy::Kind::kBlockSizes) {
        blocks.nominal = h.base_nodes();
        rungs.push_back(blocks);
        for (int k = 1; k <= kMaxBlockLevel; ++k) {
            if (!h.has_block_level(k))
                continue;
            Rung r;
            r.kind = Rung::Kind::kShift;
            r.shift = k;
            r.nominal = static_cast<long>(h.base_nodes()) << k;
            rungs.push_back(r);
        }
    } else {
        // What a block and a group hold for this kind of job when idle:
        // ordinary capacity (size less spares) in whole segments.
        auto block_cap = [&](const Block& b) {
            if (q.unit > b.settings.slice)
                return 0;
            return segment_cap_of(std::max(0, b.ordinary_capacity()), q.unit);
        };
        long largest = 0;
        for (const Block& b : topo.blocks())
            largest = std::max<long>(largest, block_cap(b));
        blocks.nominal = q.segmented ? largest : topo.largest_slice();
        rungs.push_back(blocks);
        for (const HierarchyLevel& l : h.levels()) {
            Rung r;
            r.kind = Rung::Kind::kNamed;
            r.named = &l;
            r.level = static_cast<int>(&l - h.levels().data());
            for (const Group& g : l.groups) {
                long cap = 0;
                for (BlockIndex b : g.blocks)
                    cap += block_cap(topo.block(b));
                r.nominal = std::max(r.nominal, cap);
            }
            rungs.push_back(r);
        }
    }
    Rung cluster;
    cluster.kind = Rung::Kind::kCluster;
    cluster.nominal = kUnbounded;
    rungs.push_back(cluster);
    return rungs;
}

// A child (a group of the rung below) inside a candidate group; its blocks
// are Groups::child_blocks[first, first + count).
struct Child {
    int id = 0;
    long cap = 0;
    int first = 0, count = 0;
};

// A group of the rung asked; its blocks are Groups::blocks[first_block, ...),
// its children Groups::children[first_child, ...) in block order.
struct Candidate {
    int first_block = 0, block_count = 0;
    int first_child = 0, child_count = 0;
    long free = 0;    // nodes the request may take in it now
    long reach = 0;   // of those, what its allowed children hold
    int distance = 0; // levels up to the job's previous groups (0: its own)
};

// Every group of one rung, flat: a question builds a handful of arrays,
// not a vector per group and per child (the deep-queue profile spent a
// third of its time allocating them, asked for each job a backfill pass
// examines).
struct Groups {
    std::vector<Candidate> groups;
    std::vector<Child> children;
    std::vector<BlockIndex> blocks;       // by group, in block order within each
    std::vector<BlockIndex> child_blocks; // by child, in block order within each

    std::span<const BlockIndex> blocks_of(const Candidate& c) const {
        return {blocks.data() + c.first_block, static_cast<std::size_t>(c.block_count)};
    }
    std::span<const Child> children_of(const Candidate& c) const {
        return {children.data() + c.first_child, static_cast<std::size_t>(c.child_count)};
    }
    std::span<const BlockIndex> blocks_of(const Child& c) const {
        return {child_blocks.data() + c.first, static_cast<std::size_t>(c.count)};
    }
};

// Children to use inside a group: the ones holding required nodes, then one
// that holds the rest (best fit: fewest nodes, the first on ties), else the
// largest first. `limit`: at most this many children (0: any).
std::optional<std::vector<int>> pick_children(std::span<const Child> children, const std::vector<bool>& forced,
                                              long need, long limit) {
    std::vector<int> chosen;
    std::vector<bool> used(children.size(), false);
    for (std::size_t i = 0; i < children.size(); ++i)
        if (forced[i]) {
            chosen.push_back(static_cast<int>(i));
            used[i] = true;
            need -= children[i].cap;
        }
    long left = limit ? limit - static_cast<long>(chosen.size()) : kUnbounded;
    while (need > 0) {
        if (left <= 0)
            return std::nullopt;
        int fit = -1, largest = -1;
        for (std::size_t i = 0; i < children.size(); ++i) {
            const long cap = children[i].cap;
            if (used[i] || cap <= 0)
                continue;
            if (cap >= need && (fit < 0 || cap < children[static_cast<std::size_t>(fit)].cap))
                fit = static_cast<int>(i);
            if (largest < 0 || cap > children[static_cast<std::size_t>(largest)].cap)
                largest = static_cast<int>(i);
        }
        const int take = fit >= 0 ? fit : largest;
        if (take < 0)
            return std::nullopt;
        used[static_cast<std::size_t>(take)] = true;
        chosen.push_back(take);
        need -= children[static_cast<std::size_t>(take)].cap;
        --left;
    }
    return chosen;
}

// The sum of the `limit` largest child capacities (all of them for 0).
// `scratch`: reused between calls.
long reach_of(std::span<const Child> children, long limit, std::vector<long>& scratch) {
    long sum = 0;
    if (limit == 0 || static_cast<std::size_t>(limit) >= children.size()) {
        for (const Child& c : children) // every child counts: nothing to order
            sum += c.cap;
        return sum;
    }
    scratch.clear();
    for (const Child& c : children)
        scratch.push_back(c.cap);
    // Which of equal capacities are the `limit` largest does not change their sum.
    std::nth_element(scratch.begin(), scratch.begin() + limit, scratch.end(), std::greater<>());
    for (long i = 0; i < limit; ++i)
        sum += scratch[static_cast<std::size_t>(i)];
    return sum;
}

class Confiner {
  public:
    Confiner(const Topology& topo, const std::vector<BlockRoom>& rooms, const LevelQuery& q)
        : topo_(topo), rooms_(rooms), q_(q), rungs_(ladder(topo, q)) {
        const std::size_t n = topo.block_count();
        cap_.assign(n, 0);
        limit_.assign(n, 0);
        room_of_.assign(n, -1);
        for (std::size_t i = 0; i < rooms.size(); ++i) {
            const auto b = static_cast<std::size_t>(rooms[i].block);
            cap_[b] = rooms[i].segment_cap;
            limit_[b] = rooms[i].limit;
            room_of_[b] = static_cast<int>(i);
        }
    }

    LevelScope run() {
        const Hierarchy& h = topo_.hierarchy();
        const long n = q_.nodes;
        const bool block_sizes = h.kind() == Hierarchy::Kind::kBlockSizes;
        if (block_sizes && q_.segmented && q_.unit <= static_cast<int>(h.base_nodes()))
            return {}; // topology/block places each segment on its own, in one base block
        // The rung that nominally holds the job, and whether it may be
        // confined to one block at all.
        std::size_t target = 0;
        while (target + 1 < rungs_.size() && rungs_[target].nominal < n)
            ++target;
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
        return std::any_of(cap_.begin(), cap_.end(), [&](int c) { return c >= q_.nodes; });
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
                if (rungs_[j].group_of(rep) == rungs_[j].group_of(p)) {
                    best = std::min(best, static_cast<int>(j - t));
                    break;
                }
        }
        return best;
    }

    LevelScope at(std::size_t t, bool block_sizes) {
        const Rung& rung = rungs_[t];
        const Rung& child = rungs_[t == 0 ? 0 : t - 1];
        const long n = q_.nodes;
        // topology/block: at most ceil(n / child size) children; groups: any.
        const long limit = t == 0 ? 1 : block_sizes ? (n + child.nominal - 1) / child.nominal : 0;
        const bool required = !q_.required_in.empty();

        build_groups(t);
        std::vector<Candidate>& groups = g_.groups;
        const Candidate* chosen = nullptr;
        std::vector<bool> forced;
        if (required) {
            // The group holding the required nodes (topology/block: the first
            // one that holds any; they must all be in it).
            for (const Candidate& c : groups)
                if (std::ranges::any_of(g_.blocks_of(c), [&](BlockIndex b) { return req(b) > 0; })) {
                    chosen = &c;
                    break;
                }
            if (!chosen)
                return {};
            int inside = 0, total = 0;
            for (BlockIndex b = 0; b < static_cast<BlockIndex>(topo_.block_count()); ++b)
                total += req(b);
            for (BlockIndex b : g_.blocks_of(*chosen))
                inside += req(b);
            if (inside != total) {
                // nvlblock.yaml: the user named nodes in several groups, so
                // the job goes to the level where one group holds them all.
                go_up_ = !block_sizes;
                return refuse(LevelRefusal::Kind::kRequiredSplit, t, limit);
            }
            const std::span<const Child> children = g_.children_of(*chosen);
            forced.assign(children.size(), false);
            long forced_count = 0;
            for (std::size_t i = 0; i < children.size(); ++i)
                for (BlockIndex b : g_.blocks_of(children[i]))
                    if (req(b) > 0 && !forced[i]) {
                        forced[i] = true;
                        ++forced_count;
                    }
            if (limit && forced_count > limit) {
                LevelScope s = refuse(LevelRefusal::Kind::kRequiredSpread, t, limit);
                s.refusal.spread = forced_count;
                s.topology_unavailable = true;
                return s;
            }
        } else {
            for (Candidate& c : groups) {
                c.reach = reach_of(g_.children_of(c), limit, caps_);
                if (c.reach < n)
                    continue;
                c.distance = distance(t, g_.blocks[static_cast<std::size_t>(c.first_block)]);
                if (!chosen || c.distance < chosen->distance ||
                    (c.distance == chosen->distance && c.free < chosen->free))
                    chosen = &c;
            }
            if (!chosen)
                return no_fit(t, groups, limit);
            forced.assign(static_cast<std::size_t>(chosen->child_count), false);
        }
        auto picked = pick_children(g_.children_of(*chosen), forced, n, limit);
        if (!picked)
            return required ? refuse(LevelRefusal::Kind::kRequiredNoRoom, t, limit) : no_fit(t, groups, limit);
        return confined(rung, *chosen, *picked);
    }

    // The groups of rung `t` into g_, in order of their first block, each
    // with its children (the groups of the rung below, in order of their
    // first block) and what the request may take in them: counting sorts,
    // linear in the blocks.
    void build_groups(std::size_t t) {
        const Rung& rung = rungs_[t];
        const Rung& child = rungs_[t == 0 ? 0 : t - 1];
        const auto blocks = static_cast<BlockIndex>(topo_.block_count());
        g_.groups.clear();
        group_of_.clear();
        for (BlockIndex b = 0; b < blocks; ++b) { // each group's slot, and its block count
            const auto id = static_cast<std::size_t>(rung.group_of(b));
            if (id >= slot_.size())
                slot_.resize(id + 1, -1);
            if (slot_[id] < 0) {
                slot_[id] = static_cast<int>(g_.groups.size());
                g_.groups.emplace_back();
            }
            group_of_.push_back(slot_[id]);
            ++g_.groups[static_cast<std::size_t>(slot_[id])].block_count;
        }
        for (BlockIndex b = 0; b < blocks; ++b) // ready for the next question
            slot_[static_cast<std::size_t>(rung.group_of(b))] = -1;
        int at = 0;
        for (Candidate& c : g_.groups) {
            c.first_block = at;
            at += c.block_count;
            c.block_count = 0;
        }
        g_.blocks.resize(static_cast<std::size_t>(blocks));
        for (BlockIndex b = 0; b < blocks; ++b) {
            Candidate& c = g_.groups[static_cast<std::size_t>(group_of_[static_cast<std::size_t>(b)])];
            g_.blocks[static_cast<std::size_t>(c.first_block + c.block_count++)] = b;
            c.free += limit_[static_cast<std::size_t>(b)];
        }
        build_children(t == 0 ? nullptr : &child);
    }

    // The children of every group in g_ (`child`: the rung below; null: each block its own).
    void build_children(const Rung* child) {
        g_.children.clear();
        child_of_.resize(g_.blocks.size());
        for (Candidate& c : g_.groups) {
            c.first_child = static_cast<int>(g_.children.size());
            for (int k = c.first_block; k < c.first_block + c.block_count; ++k) {
                const BlockIndex b = g_.blocks[static_cast<std::size_t>(k)];
                const auto id = static_cast<std::size_t>(child ? child->group_of(b) : b);
                if (id >= slot_.size())
                    slot_.resize(id + 1, -1);
                if (slot_[id] < 0) {
                    slot_[id] = static_cast<int>(g_.children.size());
                    g_.children.push_back(Child{static_cast<int>(id), 0, 0, 0});
                }
                Child& ch = g_.children[static_cast<std::size_t>(slot_[id])];
                ch.cap += cap_[static_cast<std::size_t>(b)];
                ++ch.count;
                child_of_[static_cast<std::size_t>(k)] = slot_[id];
            }
            c.child_count = static_cast<int>(g_.children.size()) - c.first_child;
            for (int i = c.first_child; i < c.first_child + c.child_count; ++i)
                slot_[static_cast<std::size_t>(g_.children[static_cast<std::size_t>(i)].id)] = -1;
        }
        int at = 0;
        for (Child& ch : g_.children) {
            ch.first = at;
            at += ch.count;
            ch.count = 0;
        }
        g_.child_blocks.resize(g_.blocks.size());
        for (std::size_t k = 0; k < g_.blocks.size(); ++k) { // by group, in block order: each child's blocks in order
            Child& ch = g_.children[static_cast<std::size_t>(child_of_[k])];
            g_.child_blocks[static_cast<std::size_t>(ch.first + ch.count++)] = g_.blocks[k];
        }
    }

    // The job confined to the picked children of `chosen`: their rooms, in block order.
    LevelScope confined(const Rung& rung, const Candidate& chosen, const std::vector<int>& picked) const {
        LevelScope s;
        s.verdict = LevelScope::Verdict::kConfined;
        if (rung.kind != Rung::Kind::kCluster)
            s.group = group_name(topo_, rung, g_.blocks_of(chosen));
        std::vector<BlockIndex> allowed;
        for (int i : picked)
            for (BlockIndex b : g_.blocks_of(g_.children_of(chosen)[static_cast<std::size_t>(i)]))
                allowed.push_back(b);
        std::sort(allowed.begin(), allowed.end());
        for (BlockIndex b : allowed)
            if (room_of_[static_cast<std::size_t>(b)] >= 0)
                s.rooms.push_back(rooms_[static_cast<std::size_t>(room_of_[static_cast<std::size_t>(b)])]);
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
    LevelScope no_fit(std::size_t t, const std::vector<Candidate>& groups, long limit) const {
        const Rung& rung = rungs_[t];
        const bool cluster = rung.kind == Rung::Kind::kCluster;
        LevelScope s = refuse(cluster ? LevelRefusal::Kind::kLargerThanAll : LevelRefusal::Kind::kNoGroup, t, limit);
        const Candidate* best = nullptr;
        for (const Candidate& c : groups)
            if (!best || c.reach > best->reach)
                best = &c;
        s.refusal.reach = best ? best->reach : 0;
        s.refusal.child_is_lowest = t == 1;
        if (!cluster && best && best->reach > 0)
            s.refusal.closest = group_name(topo_, rung, g_.blocks_of(*best));
        return s;
    }

    const Topology& topo_;
    const std::vector<BlockRoom>& rooms_;
    const LevelQuery& q_;
    std::vector<Rung> rungs_;
    std::vector<int> cap_, limit_, room_of_;
    Groups g_;                             // the groups of the rung last asked
    std::vector<int> slot_;                // by group or child id: its slot while it is being built (-1: none)
    std::vector<int> group_of_, child_of_; // by block / by position in g_.blocks: slot in g_
    std::vector<long> caps_;               // reach_of's scratch
    bool go_up_ = false;                   // the last refusal asks for the next level, crossing or not
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

LevelScope confine_to_levels(const Topology& topo, const std::vector<BlockRoom>& rooms, const LevelQuery& q) {
    if (!levels_may_confine(topo, q))
        return {};
    return Confiner(topo, rooms, q).run();
}

} // namespace nvlblock
