// SPDX-License-Identifier: GPL-2.0-or-later
#include "topology_yaml.hpp"

#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"
#include "readers/value_parsers.hpp"
#include "readers/yaml_document.hpp"

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

using yaml::kind;
using yaml::scalar;

// The plugin types topology.yaml knows, each a key of a topology entry
// (topology.yaml(5) of Slurm 25.05-26.05; ring and torus3d came in 26.05).
const std::set<std::string> kTypes = {"block", "flat", "tree", "ring", "torus3d"};

class Reader {
  public:
    Reader(const std::string& text, const std::string& label) : doc_(text, label), label_(label) {}

    SlurmTopologyYaml read() {
        out_.path = label_;
        yaml_node_t* root = doc_.root();
        if (!root || (root->type == YAML_SCALAR_NODE && scalar(root).empty()))
            throw ConfigError({label_, 1}, "the file is empty; expected a list of topologies ('- topology: NAME')");
        if (root->type != YAML_SEQUENCE_NODE)
            throw ConfigError(doc_.where(root), std::string("expected a list of topologies at the top, found ") +
                                                    kind(root) + " (each entry '- topology: NAME' and one of " +
                                                    join(kTypes) + ")");
        for (yaml_node_item_t* i = root->data.sequence.items.start; i < root->data.sequence.items.top; ++i)
            topology(doc_.node(*i));
        std::set<std::string> names;
        for (const auto& t : out_.topologies)
            if (!t.name.empty() && !names.insert(t.name).second)
                problems_.add(t.where, "topology '" + t.name + "' is defined twice");
        problems_.throw_if_any();
        return std::move(out_);
    }

  private:
    void topology(yaml_node_t* n) {
        if (n->type != YAML_MAPPING_NODE) {
            problems_.add(doc_.where(n), std::string("each topology must be a mapping, found ") + kind(n));
            return;
        }
        SlurmTopologyYaml::Topology t;
        t.where = doc_.where(n);
        for_each_pair(n, [&](const std::string& key, yaml_node_t* v) {
            if (key == "topology") {
                t.name = text(v, "topology");
            } else if (key == "cluster_default") {
                t.cluster_default = boolean(v, "cluster_default");
            } else if (kTypes.count(key)) {
                // `flat: false` (or an empty mapping) does not select flat.
                if (key == "flat" && v->type == YAML_SCALAR_NODE && !boolean(v, "flat"))
                    return;
                if (!t.type.empty()) {
                    problems_.add(doc_.where(v),
                                  "'" + key + "' and '" + t.type + "' exclude each other: a topology has one type");
                    return;
                }
                t.type = key;
                if (key == "block")
                    block(v, t);
                else if (key != "flat" && v->type != YAML_MAPPING_NODE)
                    problems_.add(doc_.where(v), key + " must be a mapping, found " + kind(v));
            } else {
                out_.warnings.push_back({doc_.where(v), "unknown key '" + key + "' in a topology; ignored"});
            }
        });
        if (t.name.empty())
            problems_.add(t.where, "a topology without 'topology: NAME'");
        if (t.type.empty())
            problems_.add(t.where, "topology '" + t.name + "' has no type: one of " + join(kTypes));
        out_.topologies.push_back(std::move(t));
    }

    void block(yaml_node_t* v, SlurmTopologyYaml::Topology& t) {
        if (v->type != YAML_MAPPING_NODE) {
            problems_.add(doc_.where(v), std::string("block must be a mapping, found ") + kind(v));
            return;
        }
        bool have_blocks = false;
        for_each_pair(v, [&](const std::string& key, yaml_node_t* x) {
            if (key == "block_sizes") {
                t.block_sizes_where = doc_.where(x);
                sizes(x, t.block_sizes);
            } else if (key == "blocks") {
                have_blocks = true;
                blocks(x, t);
            } else {
                out_.warnings.push_back({doc_.where(x), "unknown key '" + key + "' in block; ignored"});
            }
        });
        if (!have_blocks)
            problems_.add(doc_.where(v), "block topology '" + t.name + "' has no 'blocks:' list");
    }

    // A list of sizes, or one value ("4" or "4,8" as slurm.conf would write it).
    void sizes(yaml_node_t* x, std::vector<std::uint32_t>& out) {
        std::vector<std::pair<std::string, SourceLocation>> items;
        if (x->type == YAML_SEQUENCE_NODE) {
            for (yaml_node_item_t* i = x->data.sequence.items.start; i < x->data.sequence.items.top; ++i) {
                yaml_node_t* e = doc_.node(*i);
                items.emplace_back(text(e, "block_sizes entry"), doc_.where(e));
            }
        } else if (x->type == YAML_SCALAR_NODE) {
            std::stringstream ss(scalar(x));
            for (std::string item; std::getline(ss, item, ',');)
                items.emplace_back(item, doc_.where(x));
        } else {
            problems_.add(doc_.where(x), std::string("block_sizes must be a list of node counts, found ") + kind(x));
        }
        for (const auto& [s, where] : items) {
            try {
                out.push_back(static_cast<std::uint32_t>(parse_int(s, 1, 1'000'000)));
            } catch (const ValueError& e) {
                problems_.add(where, std::string("block_sizes: ") + e.what());
            }
        }
    }

    void blocks(yaml_node_t* x, SlurmTopologyYaml::Topology& t) {
        if (x->type != YAML_SEQUENCE_NODE) {
            problems_.add(doc_.where(x), std::string("blocks must be a list, found ") + kind(x));
            return;
        }
        for (yaml_node_item_t* i = x->data.sequence.items.start; i < x->data.sequence.items.top; ++i) {
            yaml_node_t* e = doc_.node(*i);
            if (e->type != YAML_MAPPING_NODE) {
                problems_.add(doc_.where(e), std::string("each block must be a mapping, found ") + kind(e));
                continue;
            }
            SlurmTopologyYaml::Block b;
            b.where = doc_.where(e);
            for_each_pair(e, [&](const std::string& key, yaml_node_t* v) {
                if (key == "block")
                    b.name = text(v, "block");
                else if (key == "nodes")
                    b.nodes = text(v, "nodes");
                else
                    out_.warnings.push_back({doc_.where(v), "unknown key '" + key + "' in a block; ignored"});
            });
            if (b.name.empty())
                problems_.add(b.where, "a block without 'block: NAME'");
            if (b.nodes.empty())
                problems_.add(b.where, "block '" + b.name + "' has no 'nodes:'");
            t.blocks.push_back(std::move(b));
        }
    }

    template <typename Fn>
    void for_each_pair(yaml_node_t* map, Fn fn) {
        std::set<std::string> seen;
        for (yaml_node_pair_t* p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
            yaml_node_t* k = doc_.node(p->key);
            if (k->type != YAML_SCALAR_NODE) {
                problems_.add(doc_.where(k), "keys must be plain names");
                continue;
            }
            const std::string key = scalar(k);
            if (!seen.insert(key).second) {
                problems_.add(doc_.where(k), "key '" + key + "' appears twice");
                continue;
            }
            fn(key, doc_.node(p->value));
        }
    }

    std::string text(yaml_node_t* v, const std::string& what) {
        if (v->type != YAML_SCALAR_NODE) {
            problems_.add(doc_.where(v), what + " must be a single value, found " + kind(v));
            return "";
        }
        return scalar(v);
    }

    bool boolean(yaml_node_t* v, const std::string& what) {
        try {
            return parse_bool(text(v, what));
        } catch (const ValueError& e) {
            problems_.add(doc_.where(v), what + ": " + e.what());
            return false;
        }
    }

    yaml::Document doc_;
    std::string label_;
    SlurmTopologyYaml out_;
    Diagnostics problems_;
};

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

// Which topology to convert, or an error finding.
const SlurmTopologyYaml::Topology* choose(const SlurmTopologyYaml& y, const ConversionOptions& opts,
                                          const SlurmConf* conf, std::vector<Finding>& findings) {
    auto error = [&](const SourceLocation& w, const std::string& m) {
        findings.push_back({Severity::kError, {w, m}});
        return nullptr;
    };
    std::vector<const SlurmTopologyYaml::Topology*> block_topologies;
    for (const auto& t : y.topologies)
        if (t.type == "block")
            block_topologies.push_back(&t);
    std::string names;
    for (const auto* t : block_topologies)
        names += (names.empty() ? "" : ", ") + t->name;
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
    if (!wanted.empty()) {
        const auto* t = y.find(wanted);
        if (!t)
            return error({y.path, 0}, "no topology '" + wanted +
                                          "' in the file (block topologies: " + (names.empty() ? "none" : names) + ")");
        if (t->type != "block")
            return error(t->where, "topology " + describe(*t) +
                                       " is not a block topology; nvlblock converts block topologies only");
        return t;
    }
    const auto* def = y.cluster_default();
    if (def && def->type == "block")
        return def;
    if (block_topologies.size() == 1) {
        if (def)
            findings.push_back({Severity::kNote,
                                {block_topologies.front()->where, "the cluster default is " + describe(*def) +
                                                                      "; converting the only block topology, '" +
                                                                      block_topologies.front()->name + "'"}});
        return block_topologies.front();
    }
    if (block_topologies.empty())
        return error({y.path, 0}, "no block topology in the file: nothing for nvlblock to take over");
    return error({y.path, 0}, "several block topologies (" + names +
                                  ") and the cluster default is none of them: choose one with --topology NAME "
                                  "or --partition NAME");
}

std::string sizes_text(const std::vector<std::uint32_t>& sizes) {
    std::string s;
    for (auto v : sizes)
        s += (s.empty() ? "" : ",") + std::to_string(v);
    return s;
}

// The problems slurmctld would report loading these two files (none: empty).
std::vector<Diagnostic> load_back(const std::string& topology_conf, const std::string& nvlblock_yaml,
                                  const std::string& conf_name, const std::vector<std::string>& universe) {
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
        load_topology(yaml_path, universe.empty() ? nullptr : &universe);
    } catch (const ConfigError& e) {
        problems = e.problems();
    }
    std::remove(conf_path.c_str());
    std::remove(yaml_path.c_str());
    rmdir(dir.c_str());
    return problems;
}

} // namespace

const SlurmTopologyYaml::Topology* SlurmTopologyYaml::cluster_default() const {
    for (const auto& t : topologies)
        if (t.cluster_default)
            return &t;
    return topologies.empty() ? nullptr : &topologies.front();
}

const SlurmTopologyYaml::Topology* SlurmTopologyYaml::find(const std::string& name) const {
    for (const auto& t : topologies)
        if (t.name == name)
            return &t;
    return nullptr;
}

SlurmTopologyYaml read_slurm_topology_yaml(const std::string& text, const std::string& label) {
    return Reader(text, label).read();
}

bool Conversion::ok() const {
    return std::none_of(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.severity == Severity::kError; });
}

Conversion convert_topology_yaml(const SlurmTopologyYaml& y, const ConversionOptions& opts, const SlurmConf* conf) {
    Conversion c;
    for (const auto& w : y.warnings)
        c.findings.push_back({Severity::kWarning, w});
    const SlurmTopologyYaml::Topology* t = choose(y, opts, conf, c.findings);
    if (!t)
        return c;
    c.topology = t->name;

    // topology.conf: the blocks and BlockSizes in Slurm's block syntax, a
    // transcription; nvlblock reads it with topology/block's rules.
    std::ostringstream tc;
    tc << "# topology.conf written by nvlblock-check --from-topology-yaml from " << y.path << ",\n"
       << "# topology '" << t->name << "'. Slurm's block syntax: topology/block and topology/nvlblock read it alike.\n";
    for (const auto& b : t->blocks) {
        tc << "BlockName=" << b.name << " Nodes=" << b.nodes << '\n';
        try {
            c.nodes += hostlist::expand(b.nodes).size();
        } catch (const hostlist::HostlistError& e) {
            c.findings.push_back({Severity::kError, {b.where, std::string("nodes: ") + e.what()}});
        }
    }
    if (!t->block_sizes.empty())
        tc << "BlockSizes=" << sizes_text(t->block_sizes) << '\n';
    c.blocks = t->blocks.size();

    // nvlblock.yaml takes the blocks from there. Its own defaults (slices of
    // 16, 2 spares) are not topology/block's: unless told otherwise, write
    // those topology.conf alone would give (slice = the base block size, no
    // spares), as its reader works them out.
    BlockSettings drop_in;
    try {
        drop_in = read_topology_spec_text(tc.str(), opts.topology_conf_name, SourceFormat::kTopologyConf).defaults;
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
    ny << "defaults:\n"
       << "  slice: " << opts.slice.value_or(drop_in.slice) << '\n'
       << "  spares: " << opts.spares.value_or(drop_in.spares) << '\n'
       << "topology_conf: " << opts.topology_conf_name << '\n';

    // What we write must load as slurmctld will load it: both files, side by
    // side in a scratch directory, through the plugin's own loader.
    if (c.ok()) {
        const std::vector<std::string> universe = conf ? conf->node_names() : std::vector<std::string>{};
        for (const auto& d : load_back(tc.str(), ny.str(), opts.topology_conf_name, universe))
            c.findings.push_back(
                {Severity::kError, {t->where, "topology " + describe(*t) + " does not convert: " + d.message}});
    }

    // What is not carried over.
    for (const auto& other : y.topologies)
        if (&other != t)
            c.findings.push_back({Severity::kNote,
                                  {other.where, "topology " + describe(other) + partitions_using(conf, y, other) +
                                                    " is not carried over: with topology/nvlblock "
                                                    "every partition uses nvlblock's blocks"}});
    if (conf) {
        for (const auto& p : conf->partitions)
            if (!p.topology.empty())
                c.findings.push_back({Severity::kWarning,
                                      {p.where, "partition " + p.name + " names Topology=" + p.topology +
                                                    ": remove it; without topology.yaml Slurm "
                                                    "has one topology, the TopologyPlugin's"}});
        const SlurmSetting* plugin = conf->setting("TopologyPlugin");
        if (!plugin || slurm_syntax::lower(plugin->value) != "topology/nvlblock")
            c.findings.push_back({Severity::kNote,
                                  {plugin ? plugin->where : SourceLocation{conf->path, 0},
                                   "set TopologyPlugin=topology/nvlblock (and "
                                   "PrEpPlugins=prep/nvlblock for in-place recovery)"}});
    }
    c.findings.push_back({Severity::kNote,
                          {{y.path, 0},
                           "move " + y.path +
                               " away: while it exists Slurm reads it and ignores "
                               "TopologyPlugin= and topology.conf"}});
    if (c.ok()) {
        c.topology_conf = tc.str();
        c.nvlblock_yaml = ny.str();
    }
    return c;
}

} // namespace nvlblock::check
