// SPDX-License-Identifier: GPL-2.0-or-later
#include "state/ledger_file.hpp"

#include "common/diagnostic.hpp"
#include "model/hostlist.hpp"
#include "model/node_names.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace nvlblock {
namespace {

std::vector<NodeIndex> indices_of(const Topology& topo, const std::string& expr, std::size_t& unknown) {
    std::vector<NodeIndex> out;
    if (expr == "-")
        return out;
    for (const auto& name : hostlist::expand(expr)) {
        if (auto n = topo.find_node(name))
            out.push_back(*n);
        else
            ++unknown;
    }
    return out;
}

bool contains(std::span<const NodeIndex> v, NodeIndex n) {
    return std::find(v.begin(), v.end(), n) != v.end();
}

// Block names back from their comma list ("-": none).
std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> out;
    if (list == "-")
        return out;
    std::istringstream items(list);
    for (std::string item; std::getline(items, item, ',');)
        out.push_back(item);
    return out;
}

// One saved file being read back; each line kind has its parser.
struct StateReader {
    StateReader(const Topology& t, const std::string& l, Ledger& owner) : topo(t), label(l), ledger(owner) {}

    const Topology& topo;
    const std::string& label;
    Ledger& ledger; // for its log: records dropped on the way
    unsigned lineno = 0;
    int version = 0;
    std::map<std::uint32_t, RecoveryRecord> records;
    std::deque<RecoveryEvent> recent;
    std::deque<ReclaimMove> moves;
    LedgerCounters counters;
    std::size_t record_lines = 0;
    std::map<NodeIndex, std::vector<std::int64_t>> node_failures;
    std::size_t node_failure_lines = 0;

    [[noreturn]] void bad(const std::string& what) const {
        throw ConfigError({label, lineno}, "corrupt nvlblock state: " + what);
    }

    void header(std::istringstream& f, const std::string& kind) {
        if (kind != "nvlblock-state" || !(f >> version))
            bad("missing header");
        if (version != 1 && version != 2)
            bad("unsupported version " + std::to_string(version));
    }

    void counters_line(std::istringstream& f) {
        if (!(f >> counters.failures >> counters.in_place >> counters.elsewhere >> counters.abandoned) ||
            (version >= 2 && !(f >> counters.reclaims >> counters.reclaimed_jobs)))
            bad("bad counters line");
        std::uint64_t n = 0;
        if (!(f >> n))
            return; // written before the failures were counted by kind
        counters.by_trigger[0] = n;
        for (std::size_t i = 1; i < counters.by_trigger.size(); ++i)
            if (!(f >> counters.by_trigger[i]))
                bad("bad counters line");
        for (std::uint64_t& c : counters.by_path)
            if (!(f >> c))
                bad("bad counters line");
    }

    void record_line(std::istringstream& f) {
        RecoveryRecord r;
        int fb = 0;
        std::string nodes, failed;
        if (!(f >> r.job_id >> r.failed_at >> r.fallback_at >> r.hold_until >> fb >> nodes >> failed))
            bad("bad record line");
        r.fallback = fb != 0;
        for (std::string token; f >> token;) {
            HeldBlock b;
            if (!parse_held_block(token, b))
                bad("bad block '" + token + "' in a record line");
            r.blocks.push_back(std::move(b));
        }
        std::size_t unknown = 0;
        try {
            r.nodes = indices_of(topo, nodes, unknown);
            r.failed = indices_of(topo, failed, unknown);
        } catch (const std::exception& e) {
            bad(e.what());
        }
        ++record_lines;
        std::erase_if(r.nodes, [&](NodeIndex n) { return topo.block_of(n) == kNoBlock; });
        std::erase_if(r.failed, [&](NodeIndex n) { return !contains(r.nodes, n); });
        if (r.nodes.empty() || r.failed.empty()) {
            ledger.note(NoteDropped{r.job_id, true});
            return;
        }
        records[r.job_id] = std::move(r);
    }

    void event_line(std::istringstream& f) {
        RecoveryEvent e;
        std::string outcome;
        std::string blocks;
        if (!(f >> e.at >> e.job_id >> outcome >> e.lost >> e.spares_used >> e.seconds >> blocks))
            bad("bad event line");
        e.blocks = split(blocks);
        if (outcome == "in_place")
            e.outcome = RecoveryOutcome::kInPlace;
        else if (outcome == "elsewhere")
            e.outcome = RecoveryOutcome::kElsewhere;
        else if (outcome == "abandoned")
            e.outcome = RecoveryOutcome::kAbandoned;
        else
            bad("unknown outcome '" + outcome + "'");
        recent.push_back(std::move(e));
    }

    void moved_line(std::istringstream& f) {
        ReclaimMove m;
        if (version < 2 || !(f >> m.victim >> m.at >> m.for_user))
            bad("bad moved line");
        moves.push_back(m);
    }

    // node-failures <node> <time>,<time>...: a node no longer configured is dropped.
    void node_failures_line(std::istringstream& f) {
        std::string name, list;
        if (!(f >> name >> list))
            bad("bad node-failures line");
        ++node_failure_lines;
        std::vector<std::int64_t> times;
        std::istringstream items(list);
        for (std::string item; std::getline(items, item, ',');) {
            std::int64_t t = 0;
            auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), t);
            if (item.empty() || ec != std::errc() || end != item.data() + item.size())
                bad("bad time '" + item + "' in a node-failures line");
            times.push_back(t);
        }
        std::sort(times.begin(), times.end());
        if (auto n = topo.find_node(name))
            node_failures[*n] = std::move(times);
    }

    void end_node_failures_line(std::istringstream& f) const {
        std::size_t n = 0;
        if (!(f >> n) || n != node_failure_lines)
            bad("end-node-failures line does not match the contents");
    }

    void end_line(std::istringstream& f) const {
        std::size_t nr = 0, ne = 0, nm = 0;
        if (!(f >> nr >> ne) || (version >= 2 && !(f >> nm)) || nr != record_lines || ne != recent.size() ||
            nm != moves.size())
            bad("end line does not match the contents");
    }
};

} // namespace

// Format, one item per line, fields separated by single spaces:
//   nvlblock-state 2
//   counters <failures> <in_place> <elsewhere> <abandoned> <reclaims> <reclaimed_jobs> [<by_trigger>... <by_path>...]
//   record <job> <failed_at> <fallback_at> <hold_until> <fallback> <nodes> <failed> [<block>=<nodes> ...]
//   event <at> <job> <outcome> <lost> <spares_used> <seconds> <blocks>
//   moved <victim> <at> <for_user>
//   end <records> <events> <moves>
//   node-failures <node> <time>,<time>...
//   end-node-failures <nodes>
// The end line detects truncation; the writer also renames atomically.
// What follows the end line extends the format without a new version:
// readers before it stop at the end line, so a downgrade keeps the rest
// of the state; readers since skip the kinds after it that they do not
// know. The nodes' failures (lemons.hpp) came so, with their own end line.
// The blocks after a record's failed nodes (its blocks as they were when it
// failed, held_blocks.hpp) came later within version 2: readers before them
// ignore the rest of a record line, and a record without them is never
// found changed.
// So did the failures by trigger and by requeue path at the end of the
// counters line (failure_trigger_name, requeue_path_name order): earlier
// readers ignore them, and a line without them counts none.
// Version 1 (before the moves were kept) has four counters, no moved lines
// and two counts at the end; it is read as it was written.
std::string ledger_state_text(const Ledger& ledger, const Topology& topo) {
    const LedgerCounters& counters = ledger.counters();
    std::ostringstream o;
    o << "nvlblock-state 2\n";
    o << "counters " << counters.failures << ' ' << counters.in_place << ' ' << counters.elsewhere << ' '
      << counters.abandoned << ' ' << counters.reclaims << ' ' << counters.reclaimed_jobs;
    for (std::uint64_t n : counters.by_trigger)
        o << ' ' << n;
    for (std::uint64_t n : counters.by_path)
        o << ' ' << n;
    o << '\n';
    for (const auto& [id, r] : ledger.records()) {
        o << "record " << id << ' ' << r.failed_at << ' ' << r.fallback_at << ' ' << r.hold_until << ' '
          << (r.fallback ? 1 : 0) << ' ' << hostlist_of(topo, r.nodes) << ' ' << hostlist_of(topo, r.failed);
        for (const HeldBlock& b : r.blocks)
            o << ' ' << held_block_token(b);
        o << '\n';
    }
    for (const auto& e : ledger.recent())
        o << "event " << e.at << ' ' << e.job_id << ' ' << outcome_name(e.outcome) << ' ' << e.lost << ' '
          << e.spares_used << ' ' << e.seconds << ' ' << comma_list(e.blocks) << '\n';
    for (const auto& m : ledger.reclaims().moves())
        o << "moved " << m.victim << ' ' << m.at << ' ' << m.for_user << '\n';
    o << "end " << ledger.records().size() << ' ' << ledger.recent().size() << ' ' << ledger.reclaims().moves().size()
      << '\n';
    if (!ledger.node_failures().empty()) {
        for (const auto& [node, times] : ledger.node_failures().nodes()) {
            o << "node-failures " << topo.node_name(node) << ' ';
            for (std::size_t i = 0; i < times.size(); ++i)
                o << (i ? "," : "") << times[i];
            o << '\n';
        }
        o << "end-node-failures " << ledger.node_failures().nodes().size() << '\n';
    }
    return o.str();
}

void load_ledger_state(Ledger& ledger, const Topology& topo, const std::string& text, const std::string& label) {
    std::istringstream in(text);
    std::string line;
    StateReader r(topo, label, ledger);
    bool end = false, failures_open = false;
    while (std::getline(in, line)) {
        ++r.lineno;
        std::istringstream f(line);
        std::string kind;
        f >> kind;
        if (kind.empty())
            continue;
        if (end) { // the extensions after the end line
            if (kind == "node-failures")
                r.node_failures_line(f), failures_open = true;
            else if (kind == "end-node-failures")
                r.end_node_failures_line(f), failures_open = false;
            continue; // a later extension: not ours to read
        }
        if (!r.version)
            r.header(f, kind);
        else if (kind == "counters")
            r.counters_line(f);
        else if (kind == "record")
            r.record_line(f);
        else if (kind == "event")
            r.event_line(f);
        else if (kind == "moved")
            r.moved_line(f);
        else if (kind == "end")
            r.end_line(f), end = true;
        else
            r.bad("unknown line '" + kind + "'");
    }
    if (!r.version)
        r.bad("empty file");
    if (!end)
        r.bad("truncated (no end line)");
    if (failures_open)
        r.bad("truncated (no end-node-failures line)");
    ledger.restore(
        {std::move(r.records), std::move(r.recent), r.counters, std::move(r.moves), std::move(r.node_failures)});
}

std::string held_block_token(const HeldBlock& b) {
    return b.name + "=" + (b.nodes.empty() ? std::string("-") : hostlist::compress(b.nodes));
}

bool parse_held_block(const std::string& token, HeldBlock& out) {
    const auto eq = token.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= token.size())
        return false;
    out.name = token.substr(0, eq);
    const std::string expr = token.substr(eq + 1);
    out.nodes.clear();
    if (expr != "-") {
        try {
            out.nodes = hostlist::expand(expr);
        } catch (const std::exception&) {
            return false;
        }
    }
    std::sort(out.nodes.begin(), out.nodes.end());
    return true;
}

} // namespace nvlblock
