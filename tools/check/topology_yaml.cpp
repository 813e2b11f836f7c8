// SPDX-License-Identifier: GPL-2.0-or-later
#include "topology_yaml.hpp"
#include "generate.hpp"

#include "common/warning_names.hpp"
#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"
#include "readers/value_parsers.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace nvlblock::check {

using namespace tool;
namespace {

std::string describe(const SlurmTopologyYaml::Topology& t) {
    return "'" + t.name + "' (" + t.type + ")";
}

std::string partitions_using(const SlurmConf* conf, const SlurmTopologyYaml& y, const SlurmTopologyYaml::Topology& t) {
    if (!conf)
        return "";
    std::vector<std::string> names;
    const SlurmTopologyYaml::Topology* def = y.cluster_default();
    for (const auto& p : conf->partitions)
        if (p.topology == t.name || (p.topology.empty() && def == &t))
            names.push_back(p.name);
    if (names.empty())
        return "";
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return ", used by partition" + std::string(names.size() == 1 ? " " : "s ") + s + ",";
}

// Which topology to convert (the core's choice, core/readers), or an error finding.
const SlurmTopologyYaml::Topology* choose(const SlurmTopologyYaml& y, const ConversionOptions& opts,
                                          const SlurmConf* conf, std::vector<Finding>& findings) {
    auto error = [&](const SourceLocation& w, const std::string& m) {
        findings.push_back({Severity::kError, {w, m}});
        return nullptr;
    };
    std::string wanted = opts.topology;
    if (wanted.empty() && !opts.partition.empty()) {
        if (!conf)
            return error({y.path, 0}, "--partition needs slurm.conf (--slurm-conf)");
        auto it = std::find_if(conf->partitions.begin(), conf->partitions.end(),
                               [&](const SlurmPartition& p) { return p.name == opts.partition; });
        if (it == conf->partitions.end())
            return error({conf->path, 0}, "no partition '" + opts.partition + "' in slurm.conf");
        if (it->topology.empty()) {
            const auto* def = y.cluster_default();
            if (!def)
                return error({y.path, 0}, "the file has no topology");
            wanted = def->name;
        } else {
            wanted = it->topology;
        }
    }
    try {
        std::vector<Diagnostic> notes;
        const SlurmTopologyYaml::Topology& t = nvlblock::choose_block_topology(y, wanted, notes);
        for (auto& n : notes)
            findings.push_back({Severity::kNote, std::move(n)});
        return &t;
    } catch (const ConfigError& e) {
        for (const auto& d : e.problems())
            findings.push_back({Severity::kError, d});
        return nullptr;
    }
}

std::string sizes_text(const std::vector<std::uint32_t>& sizes) {
    std::string s;
    for (auto v : sizes)
        s += (s.empty() ? "" : ",") + std::to_string(v);
    return s;
}

// The problems slurmctld would report loading these two files (none: empty).
std::vector<Diagnostic> load_back(const std::string& topology_conf, const std::string& nvlblock_yaml,
                                  const std::string& conf_name, const std::vector<std::string>& universe,
                                  int slurm_release) {
    char tmpl[] = "/tmp/nvlblock-convert-XXXXXX";
    if (!mkdtemp(tmpl))
        return {{{tmpl, 0}, std::string("cannot make a scratch directory: ") + std::strerror(errno)}};
    const std::string dir = tmpl;
    const std::string conf_path = dir + "/" + conf_name, yaml_path = dir + "/nvlblock.yaml";
    std::vector<Diagnostic> problems;
    {
        std::ofstream(conf_path) << topology_conf;
        std::ofstream(yaml_path) << nvlblock_yaml;
    }
    try {
        load_topology(yaml_path, universe.empty() ? nullptr : &universe, slurm_release);
    } catch (const ConfigError& e) {
        problems = e.problems();
    }
    std::remove(conf_path.c_str());
    std::remove(yaml_path.c_str());
    rmdir(dir.c_str());
    return problems;
}

} // namespace

bool Conversion::ok() const {
    return std::none_of(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity == Severity::kError; });
}

namespace {

// topology.conf: the blocks and BlockSizes in Slurm's block syntax, a
// transcription; nvlblock reads it with topology/block's rules.
std::string topology_conf_text(const SlurmTopologyYaml& y, const SlurmTopologyYaml::Topology& t, Conversion& c) {
    std::ostringstream tc;
    tc << "# topology.conf written by nvlblock-check --from-topology-yaml from " << y.path << ",\n"
       << "# topology '" << t.name << "'. Slurm's block syntax: topology/block and topology/nvlblock read it alike.\n";
    for (const auto& b : t.blocks) {
        tc << "BlockName=" << b.name << " Nodes=" << b.nodes << '\n';
        try {
            c.nodes += hostlist::expand(b.nodes).size();
        } catch (const hostlist::HostlistError& e) {
            c.findings.push_back({Severity::kError, {b.where, std::string("nodes: ") + e.what()}});
        }
    }
    if (!t.block_sizes.empty())
        tc << "BlockSizes=" << sizes_text(t.block_sizes) << '\n';
    c.blocks = t.blocks.size();
    return tc.str();
}

// What is not carried over, and what the site does next.
void not_carried_over(const SlurmTopologyYaml& y, const SlurmTopologyYaml::Topology& chosen, const SlurmConf* conf,
                      Conversion& c) {
    for (const auto& other : y.topologies)
        if (&other != &chosen)
            c.findings.push_back({Severity::kNote,
                                  {other.where, "topology " + describe(other) + partitions_using(conf, y, other) +
                                                    " is not carried over: with topology/nvlblock "
                                                    "every partition uses nvlblock's blocks"}});
    if (conf) {
        for (const auto& p : conf->partitions)
            if (!p.topology.empty())
                c.findings.push_back({Severity::kWarning,
                                      {p.where,
                                       "partition " + p.name + " names Topology=" + p.topology +
                                           ": remove it; without topology.yaml Slurm "
                                           "has one topology, the TopologyPlugin's",
                                       warning_name::kPartitionTopology}});
        const SlurmSetting* plugin = conf->setting("TopologyPlugin");
        if (!plugin || slurm_syntax::lower(plugin->value) != "topology/nvlblock")
            c.findings.push_back({Severity::kNote,
                                  {plugin ? plugin->where : SourceLocation{conf->path, 0},
                                   "set TopologyPlugin=topology/nvlblock (and "
                                   "PrEpPlugins=prep/script,prep/nvlblock for in-place recovery)"}});
    }
    c.findings.push_back({Severity::kNote,
                          {{y.path, 0},
                           "move " + y.path +
                               " away: while it exists Slurm reads it and ignores "
                               "TopologyPlugin= and topology.conf"}});
}

} // namespace

Conversion convert_topology_yaml(const SlurmTopologyYaml& y, const ConversionOptions& opts, const SlurmConf* conf) {
    Conversion c;
    for (const auto& w : y.warnings)
        c.findings.push_back({Severity::kWarning, w});
    const SlurmTopologyYaml::Topology* t = choose(y, opts, conf, c.findings);
    if (!t)
        return c;
    c.topology = t->name;

    const std::string tc = topology_conf_text(y, *t, c);

    // nvlblock.yaml takes the blocks from there. Its own defaults (slices of
    // 16, 2 spares) are not topology/block's: unless told otherwise, write
    // those topology.conf alone would give (slice = the base block size, no
    // spares), as its reader works them out.
    BlockSettings drop_in;
    try {
        drop_in =
            read_topology_spec_text(tc, opts.topology_conf_name, SourceFormat::kTopologyConf, ".", opts.slurm_release)
                .defaults;
    } catch (const ConfigError& e) {
        for (const auto& d : e.problems())
            c.findings.push_back(
                {Severity::kError, {t->where, "topology " + describe(*t) + " does not convert: " + d.message}});
        return c;
    }
    std::ostringstream ny;
    ny << "# nvlblock.yaml written by nvlblock-check --from-topology-yaml from " << y.path << ",\n"
       << "# topology '" << t->name << "'. The blocks" << (t->block_sizes.empty() ? "" : " and BlockSizes")
       << " come from " << opts.topology_conf_name << ".\n";
    if (!opts.slice && !opts.spares)
        ny << "# As written, nvlblock places jobs as topology/block did: slices of the base\n"
           << "# block size, no spares. The next step (docs/admin.md 5) holds spares: a\n"
           << "# smaller slice and spares: N, slice + spares at most each block's size.\n";
    ny << yaml_defaults(opts.slice.value_or(drop_in.slice), opts.spares.value_or(drop_in.spares))
       << "topology_conf: " << opts.topology_conf_name << '\n';

    // What we write must load as slurmctld will load it: both files, side by
    // side in a scratch directory, through the plugin's own loader.
    if (c.ok()) {
        const std::vector<std::string> universe = conf ? conf->node_names() : std::vector<std::string>{};
        for (const auto& d : load_back(tc, ny.str(), opts.topology_conf_name, universe, opts.slurm_release))
            c.findings.push_back(
                {Severity::kError, {t->where, "topology " + describe(*t) + " does not convert: " + d.message}});
    }

    not_carried_over(y, *t, conf, c);
    if (c.ok()) {
        c.topology_conf = tc;
        c.nvlblock_yaml = ny.str();
    }
    return c;
}

} // namespace nvlblock::check
