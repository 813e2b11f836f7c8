// SPDX-License-Identifier: GPL-2.0-or-later
#include "writers/explain.hpp"

namespace nvlblock {
namespace {

std::string plural(long n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "16 nodes", "32 nodes (2 segments of 16)": a job's shape.
std::string shape(std::uint32_t nodes, std::uint32_t segment) {
    std::string s = plural(nodes, "node", "nodes");
    if (segment && nodes > segment)
        s += " (" + plural(nodes / segment, "segment", "segments") + " of " + std::to_string(segment) + ")";
    return s;
}

// How a level calls one of its groups, and several.
struct LevelName {
    std::string one, many;
};

LevelName level_name(const Topology& topo, const LevelRef& l) {
    const Hierarchy& h = topo.hierarchy();
    switch (l.kind) {
    case LevelRef::Kind::kBlocks:
        return {"block", "blocks"};
    case LevelRef::Kind::kShift: {
        const std::string size = std::to_string(static_cast<long>(h.base_nodes()) << l.shift) + " nodes (" +
                                 plural(1L << l.shift, "block", "blocks") + ")";
        return {"aggregated block of " + size, "aggregated blocks of " + size};
    }
    case LevelRef::Kind::kNamed: {
        const std::string& label = h.levels()[static_cast<std::size_t>(l.level)].label;
        return {label, label + "s"};
    }
    case LevelRef::Kind::kCluster:
        break;
    }
    return {"cluster", "clusters"};
}

std::string no_group(const Topology& topo, const LevelRefusal& r) {
    const LevelName rung = level_name(topo, r.rung), child = level_name(topo, r.child);
    std::string nodes = plural(r.nodes, "node", "nodes");
    if (r.unit > 1)
        nodes += " (" + plural(r.nodes / r.unit, "segment", "segments") + " of " + std::to_string(r.unit) + ")";
    std::string m;
    if (r.kind == LevelRefusal::Kind::kLargerThanAll) {
        m = "the job is larger than every " + (r.child_is_lowest ? child.one : std::string("level")) + "; ";
        m += r.limit ? "no " + plural(r.limit, child.one, child.many) + " together have " + nodes +
                           " free now (the most is " + std::to_string(r.reach) + ")"
                     : "the cluster cannot take " + nodes + " now";
    } else {
        m = "no " + rung.one + " can take " + nodes + " now";
        if (r.limit && r.rung.kind != LevelRef::Kind::kBlocks)
            m += " in at most " + plural(r.limit, child.one, child.many);
        if (!r.closest.empty())
            m += "; the closest is " + r.closest + " with " + std::to_string(r.reach) + " usable";
    }
    if (topo.hierarchy().kind() == Hierarchy::Kind::kBlockSizes)
        m += " (" + topo.hierarchy().describe() + ")";
    return m;
}

std::string level_refusal(const Topology& topo, const LevelRefusal& r) {
    const LevelName rung = level_name(topo, r.rung), child = level_name(topo, r.child);
    switch (r.kind) {
    case LevelRefusal::Kind::kRequiredSplit:
        return "the required nodes are in different " + rung.many;
    case LevelRefusal::Kind::kRequiredSpread:
        return "the required nodes are in " + plural(r.spread, child.one, child.many) + "; a job of " +
               plural(r.nodes, "node", "nodes") + " may use at most " + std::to_string(r.limit) + " (" +
               topo.hierarchy().describe() + ")";
    case LevelRefusal::Kind::kRequiredNoRoom:
        return "with the required nodes, no " + rung.one + " can take " + plural(r.nodes, "node", "nodes") + " now";
    case LevelRefusal::Kind::kNoGroup:
    case LevelRefusal::Kind::kLargerThanAll:
        break;
    }
    return no_group(topo, r);
}

std::string segment_not_divisor(const Refusal& r) {
    if (r.min_nodes == r.max_nodes)
        return "the job's " + plural(r.min_nodes, "node", "nodes") + " cannot be divided into segments of " +
               std::to_string(r.segment) + " (--segment must divide the node count)";
    return "no node count from " + std::to_string(r.min_nodes) + " to " + std::to_string(r.max_nodes) +
           " is a multiple of --segment=" + std::to_string(r.segment);
}

// The request's own faults and the checks before any block is weighed.
std::string invalid(const Topology& topo, const Placement& p) {
    const Refusal& r = p.why;
    switch (r.kind) {
    case Refusal::Kind::kNodeCount:
        return "invalid node count " + std::to_string(r.min_nodes) + "-" + std::to_string(r.max_nodes);
    case Refusal::Kind::kMapSize:
        return "availability map does not match the topology";
    case Refusal::Kind::kRequiredOutOfRange:
        return "required node index out of range";
    case Refusal::Kind::kRequiredOutside:
        return "the required nodes are outside every block";
    case Refusal::Kind::kNodelistMixed:
        return "--nodelist mixes nodes inside and outside blocks";
    case Refusal::Kind::kNoBlockNode:
        return "no block node is available to this job";
    case Refusal::Kind::kSegmentNotDivisor:
        return segment_not_divisor(r);
    case Refusal::Kind::kSegmentTooLarge:
        return "--segment=" + std::to_string(r.segment) + " is larger than the largest slice (" +
               std::to_string(r.offered) + " nodes); segments never cross a slice";
    case Refusal::Kind::kRequiredUnavailable:
        return "required node " + topo.node_name(r.node) + " is not available (" +
               (r.node_failed ? "failed" : "in use or held") + ")";
    case Refusal::Kind::kNodelistSegments:
        return r.nodelist == MultiSegmentNodelist::kUnsupported
                   ? "--nodelist with more than one segment is not supported (as in topology/block)"
                   : "with more than one segment, --nodelist must name every node of the job";
    default:
        return "";
    }
}

// Nothing fits now: the capacity the job would need and what stands in the way.
std::string no_fit(const Topology& topo, const Placement& p) {
    const Refusal& r = p.why;
    switch (r.kind) {
    case Refusal::Kind::kLevel:
        return describe_level_refusal(topo, r.level);
    case Refusal::Kind::kExclusive:
        return "--exclusive=topo needs blocks with no other work for " + shape(r.min_nodes, r.segment) +
               "; none are free now";
    case Refusal::Kind::kTooLarge:
        return "the job needs " + shape(r.min_nodes, r.segment) + "; the healthy blocks can hold at most " +
               std::to_string(r.offered) + " for this kind of job";
    case Refusal::Kind::kOneBlockNoRoom:
        return "no block has " + plural(r.unit, "healthy free node", "healthy free nodes") +
               " now (the most any block offers is " + std::to_string(r.offered) + ")";
    case Refusal::Kind::kOneBlockSpares:
        return "no block has " + plural(r.unit, "healthy free non-spare node", "healthy free non-spare nodes") + "; " +
               plural(p.blocks_if_spares, "block", "blocks") +
               " would fit if their spares were used (spares are kept for in-place recovery)";
    case Refusal::Kind::kSparesWithheld:
        return "not enough healthy free non-spare capacity for " + shape(r.min_nodes, r.segment) +
               "; it would fit on " + plural(p.blocks_if_spares, "block", "blocks") +
               " if their spares were used (spares are kept for in-place recovery)";
    case Refusal::Kind::kNoRoom:
        return "not enough free capacity for " + shape(r.min_nodes, r.segment) + " now (" + std::to_string(r.offered) +
               " usable nodes in whole segments)";
    case Refusal::Kind::kRecoveryWaiting:
        return "in-place restart after a node failure: waiting for its block; " +
               (p.shortfalls.empty() ? std::string("-") : describe_shortfall(topo, p.shortfalls.front()));
    default:
        return invalid(topo, p);
    }
}

} // namespace

std::string describe_level_refusal(const Topology& topo, const LevelRefusal& r) {
    std::string m = level_refusal(topo, r);
    if (r.may_cross_later)
        m += "; it may cross to a larger level after waiting " + std::to_string(r.cross_after) + " s (waited " +
             std::to_string(r.waited) + " s)";
    return m;
}

std::string explain(const Topology& topo, const Placement& p) {
    if (p.placed() && p.recovery_in_place) {
        const long spares = p.spares_used;
        return "restart in place: " + plural(static_cast<long>(p.nodes.size()) - spares, "prior node", "prior nodes") +
               " + " + plural(spares, "spare", "spares");
    }
    if (p.placed())
        return "placed on " + plural(p.blocks, "block", "blocks") + (p.group.empty() ? "" : " in " + p.group);
    return no_fit(topo, p);
}

std::string describe_shortfall(const Topology& topo, const Shortfall& s) {
    const std::string name = s.block >= 0 && static_cast<std::size_t>(s.block) < topo.block_count()
                                 ? topo.block(s.block).name
                                 : "an unknown block";
    if (s.block_down)
        return name + " is down (block fault: " + std::to_string(s.failed) + " of " + std::to_string(s.size) +
               " nodes failed)";
    std::string out = name + " has room for " + std::to_string(s.room) + " of the " + std::to_string(s.need) +
                      " nodes it needs (" + std::to_string(s.failed) + " failed, " + std::to_string(s.spares) +
                      " spares";
    if (s.lent)
        out += ", " + std::to_string(s.lent) + " lent";
    return out + ")";
}

} // namespace nvlblock
