// SPDX-License-Identifier: GPL-2.0-or-later
#include "validate.hpp"
#include "wiring.hpp"

#include "cli.hpp"
#include "common/warning_names.hpp"

#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"
#include "readers/spec_error.hpp"
#include "recovery/reclaim.hpp"
#include "writers/status_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_set>

namespace nvlblock::check {

using namespace tool;
namespace {

using slurm_syntax::lower;

using cli::plural;

class Collector {
  public:
    explicit Collector(CheckResult& r) : r_(r) {}
    void error(const SourceLocation& w, const std::string& m) { r_.findings.push_back({Severity::kError, {w, m}}); }
    void warning(const SourceLocation& w, const std::string& m, const char* name) {
        r_.findings.push_back({Severity::kWarning, {w, m, name}});
    }
    void warning(const Diagnostic& d) { r_.findings.push_back({Severity::kWarning, d}); }
    void note(const SourceLocation& w, const std::string& m) { r_.findings.push_back({Severity::kNote, {w, m}}); }
    void add(Finding f) { r_.findings.push_back(std::move(f)); }
    void errors(const std::vector<Diagnostic>& ds) {
        for (const auto& d : ds)
            error(d.where, d.message);
    }

  private:
    CheckResult& r_;
};

void check_plugin(const SlurmConf& conf, SourceFormat format, Collector& out) {
    const SlurmSetting* s = conf.setting("TopologyPlugin");
    if (!s)
        return;
    const std::string v = lower(s->value);
    if (v == "topology/nvlblock")
        return;
    if (v == "topology/block") {
        if (format == SourceFormat::kYaml)
            out.error(s->where, "TopologyPlugin=" + s->value +
                                    " does not read nvlblock.yaml; set TopologyPlugin=topology/nvlblock");
        return;
    }
    out.warning(s->where,
                "TopologyPlugin=" + s->value +
                    ": this cluster does not use block topology; set TopologyPlugin=topology/nvlblock",
                warning_name::kTopologyPlugin);
}

// What Slurm 24.11's topology.conf handling only warns about: block nodes
// that slurm.conf does not define (build_topology reports them only when
// everything else is valid).
void unknown_conf_nodes(const TopologySpec& spec, const std::unordered_set<std::string>& universe, Collector& out) {
    for (const auto& b : spec.blocks)
        for (const auto& n : b.node_names)
            if (!universe.count(n))
                out.warning(b.where, "node " + n + " of block '" + b.name + "' is not in slurm.conf; ignored",
                            warning_name::kNodeNotInSlurmConf);
}

// Every block's spares, by what they are while nothing fails: the summary
// line, the idle note and the reclaim note read the same counts. A loaded
// topology's spares fit their blocks (build_topology refuses the others).
struct SpareTally {
    std::size_t idle = 0, lent = 0, reclaimed = 0; // lent: idle ones on blocks that lend
};

SpareTally spares_of(const Topology& t) {
    SpareTally n;
    for (const Block& b : t.blocks()) {
        const auto spares = static_cast<std::size_t>(b.settings.spares);
        if (b.settings.reserve == SpareReserve::kReclaim) {
            n.reclaimed += spares;
            continue;
        }
        n.idle += spares;
        n.lent += b.settings.lending ? spares : 0;
    }
    return n;
}

// reserve: reclaim: who may lose nodes, as the plugin will apply it, and a
// warning where nothing ever can.
void reclaim_advice(const Topology& t, const SlurmConf& conf, Collector& out) {
    if (spares_of(t).reclaimed == 0)
        return;
    const RecoveryPolicy& p = t.policy().recovery;
    std::string why;
    const bool slurm = slurm_preemption_frees_nodes(conf, why);
    out.note({t.source(), 0}, reclaim_policy_text(p, reclaim_per_hour(p, t.node_count()), slurm ? why : ""));
    if (!slurm && p.reclaim_from.empty() && judges_wiring(conf))
        out.warning({t.source(), 0},
                    "reserve: reclaim, but " + why +
                        " and recovery.reclaim_from names no work: no job can ever lose its nodes, "
                        "so a failed job restarts in place only where its rack has free nodes",
                    warning_name::kReclaimMovesNothing);
}

// reserve: idle: what the withheld spares cost and buy.
void idle_advice(const Topology& t, Collector& out) {
    const SpareTally n = spares_of(t);
    if (n.idle == 0)
        return;
    std::string m = "reserve: idle: " + plural(n.idle, "spare") + " run no ordinary work while nothing fails";
    m += n.lent ? " (lending: preemptible work may run on " + std::to_string(n.lent) + " of them)" : "";
    out.note({t.source(), 0}, m + "; a failed job finds them free at once, unless more nodes fail on its rack than "
                                  "it has spares; reserve: reclaim withholds none (docs/admin.md 4.1)");
}

// 2505 -> "25.05".
std::string generation_text(int release) {
    const int month = release % 100;
    return std::to_string(release / 100) + (month < 10 ? ".0" : ".") + std::to_string(month);
}

void advice(const Topology& t, const SlurmConf& conf, const CheckOptions& opts, Collector& out) {
    idle_advice(t, out);
    reclaim_advice(t, conf, out);
    for (Finding& f : wiring_findings(t, conf))
        out.add(std::move(f));
    if (t.format() == SourceFormat::kTopologyConf && t.block_count() > 0)
        out.note({t.source(), 0}, "topology.conf syntax, read by Slurm " + generation_text(t.policy().slurm_release) +
                                      "'s topology/block rules (--slurm-release): every block is cut into slices of " +
                                      std::to_string(t.defaults().slice) +
                                      " nodes (the base block size) and has no spares; nvlblock.yaml adds "
                                      "spares, lending and per-block slices");
    for (const auto& b : t.blocks()) {
        const int size = b.size();
        if (opts.max_block_size > 0 && size > opts.max_block_size)
            out.warning(b.where,
                        "block '" + b.name + "' has " + std::to_string(size) +
                            " nodes; an NVLink domain of an NVL72 rack has at most " +
                            std::to_string(opts.max_block_size) + " compute trays (--max-block-size)",
                        warning_name::kBlockSize);
        const BlockSettings& s = b.settings;
        if (s.slice < 1 || s.slice + s.spares > size)
            continue;
        const int slices = (size - s.spares) / s.slice;
        const int rest = size - s.spares - slices * s.slice;
        if (rest > 0)
            out.note(b.where, "block '" + b.name + "': " + std::to_string(size) +
                                  " nodes = " + plural(slices, "slice") + " of " + std::to_string(s.slice) +
                                  (s.spares ? " + " + plural(s.spares, "spare") : std::string()) + " + " +
                                  std::to_string(rest) + " that only jobs smaller than a slice can use");
    }
    // The hierarchy above the blocks: what each level holds, and the blocks no group of it names.
    for (const HierarchyLevel& level : t.hierarchy().levels()) {
        if (t.hierarchy().kind() != Hierarchy::Kind::kGroups)
            break;
        std::size_t groups = 0, largest = 0;
        std::vector<std::string> alone;
        SourceLocation where{t.source(), 0};
        for (const Group& g : level.groups) {
            if (g.implicit) {
                for (BlockIndex b : g.blocks)
                    alone.push_back(t.block(b).name);
                continue;
            }
            if (!groups++)
                where = g.where;
            largest = std::max(largest, g.blocks.size());
        }
        std::string m = "hierarchy level '" + level.name + "': " + plural(groups, "group") + " of up to " +
                        plural(largest, "block");
        if (!alone.empty())
            m += "; in no " + level.name + " group (each one its own): " + hostlist::compress(alone);
        out.note(where, m);
    }
    // slurm.conf nodes outside every block, by the NodeName= line defining them.
    std::vector<std::pair<SourceLocation, std::vector<std::string>>> outside;
    for (const auto& n : conf.nodes) {
        auto idx = t.find_node(n.name);
        if (idx && t.block_of(*idx) != kNoBlock)
            continue;
        if (outside.empty() || outside.back().first.file != n.where.file || outside.back().first.line != n.where.line)
            outside.push_back({n.where, {}});
        outside.back().second.push_back(n.name);
    }
    for (const auto& [where, names] : outside)
        out.note(where, plural(names.size(), "node") +
                            " in no block (scheduled without topology, like "
                            "ordinary servers): " +
                            hostlist::compress(names));
}

std::string size_histogram(const Topology& t) {
    std::map<int, int, std::greater<int>> sizes;
    for (const auto& b : t.blocks())
        ++sizes[b.size()];
    std::string out;
    for (const auto& [size, n] : sizes)
        out += (out.empty() ? "" : ", ") + std::to_string(n) + " x " + std::to_string(size);
    return out;
}

// "node gb0050 of block 'rack04' is not in slurm.conf" for many nodes of one
// line becomes one finding: "nodes gb[0050-0051] of block 'rack04' are not in
// slurm.conf". The core reports node by node; a typo in a range would
// otherwise print a line per node.
void coalesce(std::vector<Finding>& findings) {
    std::vector<Finding> out;
    std::size_t i = 0;
    auto split = [](const std::string& m, std::string& node, std::string& rest) {
        if (m.rfind("node ", 0) != 0)
            return false;
        auto sp = m.find(' ', 5);
        if (sp == std::string::npos)
            return false;
        node = m.substr(5, sp - 5);
        rest = m.substr(sp);
        return true;
    };
    while (i < findings.size()) {
        std::string node, rest;
        if (!split(findings[i].diag.message, node, rest)) {
            out.push_back(findings[i++]);
            continue;
        }
        std::vector<std::string> nodes{node};
        std::size_t j = i + 1;
        for (; j < findings.size(); ++j) {
            std::string n2, r2;
            const Finding& f = findings[j];
            if (f.severity != findings[i].severity || f.diag.where.file != findings[i].diag.where.file ||
                f.diag.where.line != findings[i].diag.where.line || !split(f.diag.message, n2, r2) || r2 != rest)
                break;
            nodes.push_back(n2);
        }
        Finding f = findings[i];
        if (nodes.size() > 1) {
            std::string r = rest;
            if (auto is = r.find(" is "); is != std::string::npos) // block names hold no blanks
                r.replace(is, 4, " are ");
            f.diag.message = "nodes " + hostlist::compress(nodes) + r;
        }
        out.push_back(std::move(f));
        i = j;
    }
    findings = std::move(out);
}

// Findings in file order (files in the order they first appear), then by line.
void sort_by_place(std::vector<Finding>& findings) {
    std::vector<std::string> files;
    for (const auto& f : findings)
        if (std::find(files.begin(), files.end(), f.diag.where.file) == files.end())
            files.push_back(f.diag.where.file);
    auto rank = [&](const Finding& f) {
        return std::pair(std::find(files.begin(), files.end(), f.diag.where.file) - files.begin(), f.diag.where.line);
    };
    std::stable_sort(findings.begin(), findings.end(),
                     [&](const Finding& a, const Finding& b) { return rank(a) < rank(b); });
}

// What the spares cost, for the summary line an administrator reads before
// rollout: ", 8 spares, none withheld (reserve: reclaim)", ", 8 spares
// withheld idle (11% of the nodes in blocks)", or both counts where blocks differ.
std::string spares_summary(const Topology& t) {
    const SpareTally n = spares_of(t);
    const std::size_t idle = n.idle, reclaimed = n.reclaimed;
    if (idle + reclaimed == 0)
        return ", no spares";
    const std::string all = ", " + plural(idle + reclaimed, "spare");
    if (idle == 0)
        return all + ", none withheld (reserve: reclaim)";
    const std::size_t in_blocks = std::max<std::size_t>(t.nodes_in_blocks(), 1);
    const std::string share = std::to_string((idle * 100 + in_blocks / 2) / in_blocks) + "% of the nodes in blocks";
    if (reclaimed == 0)
        return all + " withheld idle (" + share + ")";
    return all + ": " + std::to_string(idle) + " withheld idle (" + share + "), " + std::to_string(reclaimed) +
           " reclaimed";
}

} // namespace

std::string Finding::str() const {
    switch (severity) {
    case Severity::kError:
        return diag.str();
    case Severity::kWarning:
        return diag.where.str() + ": warning: " + diag.message + (diag.name.empty() ? "" : " [" + diag.name + "]");
    case Severity::kNote:
        return diag.where.str() + ": note: " + diag.message;
    }
    return diag.str();
}

int CheckResult::count(Severity s) const {
    return static_cast<int>(
        std::count_if(findings.begin(), findings.end(), [s](const Finding& f) { return f.severity == s; }));
}

std::string CheckResult::summary(const std::string& path, bool strict) const {
    const int errors = count(Severity::kError), warnings = count(Severity::kWarning);
    std::string out = "nvlblock-check: " + path + ": ";
    if (errors || !topology) {
        out += plural(static_cast<std::size_t>(errors), "error");
        if (warnings)
            out += ", " + plural(static_cast<std::size_t>(warnings), "warning");
        return out;
    }
    const Topology& t = *topology;
    out += (strict && warnings ? "FAILED with --strict: " : "OK: ") + plural(t.block_count(), "block");
    if (t.block_count())
        out += " (" + size_histogram(t) + " nodes)";
    out += ", " + std::to_string(t.nodes_in_blocks()) + " of " + std::to_string(slurm_nodes) +
           " slurm.conf nodes in blocks" + spares_summary(t);
    if (warnings)
        out += ", " + plural(static_cast<std::size_t>(warnings), "warning");
    if (accepted)
        out += ", " + plural(static_cast<std::size_t>(accepted), "warning") + " accepted";
    return out;
}

void accept_warnings(CheckResult& r, const std::vector<std::string>& names) {
    for (Finding& f : r.findings) {
        if (f.severity != Severity::kWarning || std::find(names.begin(), names.end(), f.diag.name) == names.end())
            continue;
        f.severity = Severity::kNote;
        f.diag.message = "accepted warning [" + f.diag.name + "]: " + f.diag.message;
        ++r.accepted;
    }
}

namespace {

// Slurm 25.05 and later read topology.yaml beside slurm.conf instead of
// TopologyPlugin= and topology.conf, and it can name only Slurm's own
// plugins: with one there, nvlblock is never loaded (prep/nvlblock stops
// slurmctld saying so; here it is said before anything starts).
void check_topology_yaml(const SlurmConf& conf, Collector& out) {
    const std::string yaml = dirname_of(conf.path) + "/topology.yaml";
    if (access(yaml.c_str(), F_OK) != 0)
        return;
    out.error({yaml, 0}, "Slurm 25.05 and later read this file and ignore TopologyPlugin= and topology.conf, so "
                         "topology/nvlblock would not run; convert its block topology with `nvlblock-check "
                         "--from-topology-yaml " +
                             yaml + "` and move it away (docs/admin.md 5.1)");
}

// A file with problems of its own: its blocks that read cleanly are built
// too, so that overlapping nodes, nodes slurm.conf lacks and sizes come in the
// same pass. A problem blamed on damaged defaults is left out: it may be the
// built-in value standing in for the wrong one.
void build_what_was_read(TopologySpec spec, bool defaults_damaged, const std::vector<std::string>* universe,
                         Collector& out) {
    const SourceLocation defaults = spec.defaults_where;
    try {
        build_topology(std::move(spec), universe);
    } catch (const ConfigError& e) {
        for (const Diagnostic& d : e.problems())
            if (!(defaults_damaged && d.where.line != 0 && d.where.line == defaults.line &&
                  d.where.file == defaults.file))
                out.error(d.where, d.message);
    }
}

} // namespace

CheckResult check_topology(const std::string& path, const SlurmConf& conf, const CheckOptions& opts) {
    CheckResult r;
    Collector out(r);
    r.slurm_nodes = conf.nodes.size();
    out.errors(conf.problems);
    check_topology_yaml(conf, out);
    if (conf.nodes.empty() && conf.problems.empty())
        out.error({conf.path, 0}, "no NodeName= lines: no nodes to check the topology against");

    // Without nodes from slurm.conf, check the file on its own rather than
    // report every node as missing.
    const std::vector<std::string> universe = conf.node_names();
    const std::vector<std::string>* known = universe.empty() ? nullptr : &universe;
    TopologySpec spec;
    try {
        spec = read_topology_spec(path, opts.slurm_release);
    } catch (const ConfigError& e) {
        out.errors(e.problems());
        if (const auto* read = dynamic_cast<const SpecError*>(&e); read && read->partial())
            build_what_was_read(*read->partial(), read->defaults_damaged(), known, out);
        coalesce(r.findings);
        sort_by_place(r.findings);
        return r;
    }
    check_plugin(conf, spec.format, out);
    const TopologySpec copy = spec;
    try {
        Topology t = build_topology(std::move(spec), known);
        for (const auto& w : t.warnings())
            out.warning(w);
        if (r.count(Severity::kError) == 0 && !universe.empty())
            advice(t, conf, opts, out);
        r.topology = std::move(t);
    } catch (const ConfigError& e) {
        for (const auto& w : copy.warnings)
            out.warning(w);
        if (copy.format == SourceFormat::kTopologyConf && !universe.empty())
            unknown_conf_nodes(copy, {universe.begin(), universe.end()}, out);
        out.errors(e.problems());
    }
    coalesce(r.findings);
    sort_by_place(r.findings);
    // slurm.conf problems make the whole check fail even if the topology loads.
    if (r.count(Severity::kError))
        r.topology.reset();
    return r;
}

std::string default_topology_path(const std::string& slurm_conf_path) {
    const std::string dir = dirname_of(slurm_conf_path);
    const std::string yaml = dir + "/nvlblock.yaml";
    if (access(yaml.c_str(), F_OK) == 0)
        return yaml;
    return dir + "/topology.conf";
}

} // namespace nvlblock::check
