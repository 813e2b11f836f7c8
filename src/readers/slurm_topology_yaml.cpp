// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/slurm_topology_yaml.hpp"
#include "common/warning_names.hpp"

#include "readers/topology_conf_reader.hpp"
#include "readers/value_parsers.hpp"
#include "readers/yaml_document.hpp"

#include <set>
#include <sstream>

namespace nvlblock {

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
                out_.warnings.push_back(
                    {doc_.where(v), "unknown key '" + key + "' in a topology; ignored", warning_name::kUnknownKey});
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
                out_.warnings.push_back(
                    {doc_.where(x), "unknown key '" + key + "' in block; ignored", warning_name::kUnknownKey});
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
                    out_.warnings.push_back(
                        {doc_.where(v), "unknown key '" + key + "' in a block; ignored", warning_name::kUnknownKey});
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

const SlurmTopologyYaml::Topology& choose(const SlurmTopologyYaml& y, const std::string& wanted) {
    if (!wanted.empty()) {
        const auto* t = y.find(wanted);
        if (!t)
            throw ConfigError({y.path, 0}, "no topology '" + wanted +
                                               "' in the file (block topologies: " + block_topology_names(y) + ")");
        if (t->type != "block")
            throw ConfigError(t->where, "topology " + describe(*t) +
                                            " is not a block topology; nvlblock takes block topologies only");
        return *t;
    }
    const auto* def = y.cluster_default();
    if (def && def->type == "block")
        return *def;
    const SlurmTopologyYaml::Topology* only = nullptr;
    for (const auto& t : y.topologies)
        if (t.type == "block") {
            if (only)
                throw ConfigError({y.path, 0}, "several block topologies (" + block_topology_names(y) +
                                                   ") and the cluster default is none of them: name one "
                                                   "(nvlblock.yaml topology_name:, nvlblock-check --topology)");
            only = &t;
        }
    if (!only)
        throw ConfigError({y.path, 0}, "no block topology in the file: nothing for nvlblock to take");
    return *only;
}

} // namespace

std::string block_topology_names(const SlurmTopologyYaml& y) {
    std::string names;
    for (const auto& t : y.topologies)
        if (t.type == "block")
            names += (names.empty() ? "" : ", ") + t.name;
    return names.empty() ? "none" : names;
}

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

const SlurmTopologyYaml::Topology& choose_block_topology(const SlurmTopologyYaml& y, const std::string& wanted,
                                                         std::vector<Diagnostic>& notes) {
    const SlurmTopologyYaml::Topology& t = choose(y, wanted);
    const SlurmTopologyYaml::Topology* def = y.cluster_default();
    if (wanted.empty() && def && def != &t)
        notes.push_back(
            {t.where, "the cluster default is " + describe(*def) + "; taking the only block topology, '" + t.name + "'",
             warning_name::kTopologyChoice});
    return t;
}

TopologySpec block_topology_spec(const SlurmTopologyYaml& y, const SlurmTopologyYaml::Topology& t, int slurm_release) {
    // Line k of the transcription is block k; the line after the blocks is BlockSizes.
    std::ostringstream conf;
    std::vector<SourceLocation> origin{{y.path, 0}};
    Diagnostics problems;
    for (const auto& b : t.blocks)
        if ((b.name + b.nodes).find_first_of(" \t#=") != std::string::npos)
            problems.add(b.where, "block '" + b.name + "': a block name or node list holds a space, '#' or '='");
    problems.throw_if_any();
    for (const auto& b : t.blocks) {
        conf << "BlockName=" << b.name << " Nodes=" << b.nodes << '\n';
        origin.push_back(b.where);
    }
    if (!t.block_sizes.empty()) {
        conf << "BlockSizes=";
        for (std::size_t i = 0; i < t.block_sizes.size(); ++i)
            conf << (i ? "," : "") << t.block_sizes[i];
        conf << '\n';
        origin.push_back(t.block_sizes_where);
    }
    const std::string label = y.path + " (topology " + t.name + ")";
    auto at_yaml_line = [&](SourceLocation& w) {
        if (w.file == label)
            w = w.line < origin.size() ? origin[w.line] : t.where;
    };
    try {
        TopologySpec spec = read_topology_conf(conf.str(), label, ".", slurm_release);
        for (auto& b : spec.blocks)
            at_yaml_line(b.where);
        for (auto& d : spec.warnings)
            at_yaml_line(d.where);
        return spec;
    } catch (const ConfigError& e) {
        std::vector<Diagnostic> problems = e.problems();
        for (auto& d : problems)
            at_yaml_line(d.where);
        throw ConfigError(std::move(problems));
    }
}

} // namespace nvlblock
