// SPDX-License-Identifier: GPL-2.0-or-later
#include "readers/yaml_reader.hpp"
#include "common/warning_names.hpp"

#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_topology_yaml.hpp"
#include "readers/spec_error.hpp"
#include "readers/topology_conf_reader.hpp"
#include "readers/value_parsers.hpp"
#include "readers/yaml_document.hpp"

#include <yaml.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

namespace nvlblock {
namespace {

using YamlDocument = yaml::Document;
using yaml::kind;
using yaml::scalar;

class Reader {
  public:
    Reader(YamlDocument& doc, std::string label, std::string base_dir, int slurm_release)
        : doc_(doc), label_(std::move(label)), base_dir_(std::move(base_dir)) {
        spec_.policy.slurm_release = slurm_release;
    }

    TopologySpec read() {
        spec_.source = label_;
        spec_.format = SourceFormat::kYaml;
        yaml_node_t* root = doc_.root();
        if (!root || (root->type == YAML_SCALAR_NODE && scalar(root).empty()))
            throw ConfigError({label_, 1}, "the file is empty; expected a mapping with 'blocks:'");
        if (root->type != YAML_MAPPING_NODE)
            throw ConfigError(where(root), std::string("expected a mapping at the top, found ") + kind(root));

        yaml_node_t* blocks = nullptr;
        yaml_node_t* include = nullptr;
        yaml_node_t* include_yaml = nullptr;
        yaml_node_t* topology_name = nullptr;
        yaml_node_t* hierarchy = nullptr;
        for_each_pair(root, "the top level",
                      {"defaults", "blocks", "recovery", "block_fault", "preemptible", "status", "topology_conf",
                       "topology_yaml", "topology_name", "hierarchy"},
                      [&](const std::string& key, yaml_node_t* value) {
                          if (key == "defaults") {
                              const std::size_t before = problem_count();
                              read_settings(value, "defaults", spec_.defaults);
                              spec_.defaults_where = where(value);
                              defaults_damaged_ = problem_count() > before;
                          } else if (key == "blocks")
                              blocks = value;
                          else if (key == "recovery")
                              read_recovery(value);
                          else if (key == "block_fault")
                              read_block_fault(value);
                          else if (key == "preemptible")
                              read_preemptible(value);
                          else if (key == "status")
                              read_status(value);
                          else if (key == "topology_conf")
                              include = value;
                          else if (key == "topology_yaml")
                              include_yaml = value;
                          else if (key == "topology_name")
                              topology_name = value;
                          else if (key == "hierarchy")
                              hierarchy = value;
                      });
        const std::size_t before_include = problem_count();
        if (include && include_yaml)
            problem(include_yaml, "topology_yaml and topology_conf exclude each other: the blocks "
                                  "come from one file");
        else if (include)
            read_include(include);
        else if (include_yaml)
            read_topology_yaml(include_yaml, topology_name);
        const bool blocks_unread = problem_count() > before_include;
        if (topology_name && !include_yaml)
            problem(topology_name, "topology_name names a topology of topology_yaml, which is not given");
        if (blocks)
            read_blocks(blocks);
        else if (!include && !include_yaml)
            problems_.add({label_, 1},
                          "no 'blocks:' list and no 'topology_conf:' or 'topology_yaml:' to take blocks from");
        const std::size_t before_hierarchy = problem_count();
        if (hierarchy)
            read_hierarchy(hierarchy);
        if (!problems_.empty())
            throw_with_what_was_read(blocks_unread, problem_count() > before_hierarchy);
        return std::move(spec_);
    }

  private:
    std::size_t problem_count() const { return problems_.items().size(); }

    // Where a problem with node `n` is reported: its own line, or within a
    // value an alias brought (`nodes: *rack01_nodes`), the alias's line: each
    // use may fail on its own, and that line is the one the reader of the
    // message looks at. The message names the line of the anchored value.
    SourceLocation where(const yaml_node_t* n) const {
        return alias_line_ ? SourceLocation{label_, alias_line_} : doc_.where(n);
    }
    void problem(const yaml_node_t* n, std::string message) {
        if (alias_line_)
            message += " (in the value of an alias, written at line " + std::to_string(doc_.where(n).line) + ")";
        problems_.add(where(n), std::move(message));
    }

    // Every problem, with the spec read around them (spec_error.hpp): the
    // blocks left out of it are those with a problem of their own, and the
    // hierarchy goes too where it or one of its blocks was damaged (its
    // groups would name blocks that are not there).
    [[noreturn]] void throw_with_what_was_read(bool blocks_unread, bool hierarchy_damaged) {
        std::optional<TopologySpec> partial;
        if (!blocks_unread) {
            partial = std::move(spec_);
            if (hierarchy_damaged || blocks_damaged_)
                partial->hierarchy.levels.clear();
        }
        throw SpecError(problems_.items(), std::move(partial), defaults_damaged_);
    }

    using PairFn = std::function<void(const std::string&, yaml_node_t*)>;

    // Calls fn for every key of a mapping; unknown and repeated keys are errors.
    void for_each_pair(yaml_node_t* map, const std::string& context, const std::set<std::string>& allowed,
                       const PairFn& fn) {
        if (map->type != YAML_MAPPING_NODE) {
            problem(map, context + " must be a mapping, found " + kind(map));
            return;
        }
        std::set<std::string> seen;
        for (yaml_node_pair_t* p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; ++p) {
            yaml_node_t* k = doc_.node(p->key);
            yaml_node_t* v = doc_.node(p->value);
            if (k->type != YAML_SCALAR_NODE) {
                problem(k, "keys in " + context + " must be plain names");
                continue;
            }
            const std::string key = scalar(k);
            if (key == "<<") {
                // YAML 1.1's merge key: libyaml's document loader does not
                // merge, and a key taken silently from elsewhere is a setting
                // nobody wrote here. Anchors and aliases (*name) of whole
                // values work; merging maps does not.
                problem(k, "YAML merge keys ('<<') are not supported in " + context +
                               ": write the keys out (anchors and *aliases of whole values work; "
                               "docs/config.md)");
                continue;
            }
            if (!allowed.count(key)) {
                std::string msg = "unknown key '" + key + "' in " + context;
                if (auto hint = closest_word(key, allowed))
                    msg += " (did you mean '" + *hint + "'?)";
                else
                    msg += " (known: " + join(allowed) + ")";
                problem(k, msg);
                continue;
            }
            if (!seen.insert(key).second) {
                problem(k, "key '" + key + "' appears twice in " + context);
                continue;
            }
            // A value that starts before its key is an alias of an anchor
            // written earlier: what it brings is reported at this line.
            const bool alias = alias_line_ == 0 && v->start_mark.line < k->start_mark.line;
            if (alias)
                alias_line_ = doc_.where(k).line;
            fn(key, v);
            if (alias)
                alias_line_ = 0;
        }
    }

    // Runs a value parser; a failure becomes "file:line: <context>: <why>".
    template <typename T, typename Parse>
    std::optional<T> value(yaml_node_t* v, const std::string& context, Parse parse) {
        if (v->type != YAML_SCALAR_NODE) {
            problem(v, context + " must be a single value, found " + kind(v));
            return std::nullopt;
        }
        try {
            return parse(scalar(v));
        } catch (const ValueError& e) {
            problem(v, context + ": " + e.what());
            return std::nullopt;
        }
    }

    std::optional<int> count_value(yaml_node_t* v, const std::string& context, int min) {
        return value<int>(v, context, [min](const std::string& s) { return parse_int(s, min, 1'000'000); });
    }

    std::optional<SpareReserve> reserve_value(yaml_node_t* v, const std::string& context) {
        return value<SpareReserve>(v, context, [](const std::string& s) {
            if (s == "idle")
                return SpareReserve::kIdle;
            if (s == "reclaim")
                return SpareReserve::kReclaim;
            throw ValueError("expected idle or reclaim, got '" + s + "'");
        });
    }

    void read_settings(yaml_node_t* map, const std::string& context, BlockSettings& out) {
        for_each_pair(map, context, {"slice", "spares", "lending", "reserve"},
                      [&](const std::string& key, yaml_node_t* v) {
                          if (key == "reserve") {
                              if (auto r = reserve_value(v, context + ".reserve")) {
                                  out.reserve = *r;
                                  spec_.defaults_reserve_written = true; // only `defaults:` is read here
                              }
                          } else if (key == "slice") {
                              if (auto n = count_value(v, context + ".slice", 1))
                                  out.slice = *n;
                          } else if (key == "spares") {
                              if (auto n = count_value(v, context + ".spares", 0))
                                  out.spares = *n;
                          } else if (auto b = value<bool>(v, context + ".lending", parse_bool)) {
                              out.lending = *b;
                          }
                      });
    }

    void read_recovery(yaml_node_t* map) {
        RecoveryPolicy& r = spec_.policy.recovery;
        for_each_pair(map, "recovery",
                      {"wait", "failure_window", "reclaim_budget", "reclaim_cooldown", "reclaim_from", "never_reclaim",
                       "reclaim_limits", "reclaim_cost", "lemon"},
                      [&](const std::string& key, yaml_node_t* v) {
                          const std::string context = "recovery." + key;
                          if (key == "reclaim_from" || key == "never_reclaim") {
                              read_selector(v, context, {"qos", "partitions", "accounts"},
                                            key == "reclaim_from" ? r.reclaim_from : r.never_reclaim);
                          } else if (key == "reclaim_limits") {
                              read_reclaim_limits(v, r);
                          } else if (key == "lemon") {
                              read_lemon(v, r.lemon);
                          } else if (key == "failure_window" && v->type == YAML_SCALAR_NODE && scalar(v) == "auto") {
                              r.failure_window_seconds = -1;
                          } else if (key == "reclaim_cost") {
                              if (auto c = value<ReclaimCost>(v, context, parse_reclaim_cost))
                                  r.reclaim_cost = *c;
                          } else if (auto s = value<std::int64_t>(v, context, parse_duration_seconds)) {
                              (key == "wait"             ? r.wait_seconds
                               : key == "failure_window" ? r.failure_window_seconds
                               : key == "reclaim_budget" ? r.reclaim_budget_seconds
                                                         : r.reclaim_cooldown_seconds) = *s;
                          }
                      });
    }

    static ReclaimCost parse_reclaim_cost(const std::string& s) {
        if (s == "run_time")
            return ReclaimCost::kRunTime;
        if (s == "run_time_and_wait")
            return ReclaimCost::kRunTimeAndWait;
        throw ValueError("expected run_time or run_time_and_wait, got '" + s + "'");
    }

    // reclaim_limits: {per_user_per_day: N, per_hour: N | auto}
    void read_reclaim_limits(yaml_node_t* map, RecoveryPolicy& r) {
        for_each_pair(map, "recovery.reclaim_limits", {"per_user_per_day", "per_hour"},
                      [&](const std::string& key, yaml_node_t* v) {
                          const std::string context = "recovery.reclaim_limits." + key;
                          if (key == "per_hour" && v->type == YAML_SCALAR_NODE && scalar(v) == "auto")
                              r.reclaim_per_hour = 0;
                          else if (auto n = count_value(v, context, key == "per_hour" ? 1 : 0))
                              (key == "per_hour" ? r.reclaim_per_hour : r.reclaim_per_user_per_day) = *n;
                      });
    }
    // lemon: {failures: N, window: DURATION}
    void read_lemon(yaml_node_t* map, LemonPolicy& l) {
        for_each_pair(map, "recovery.lemon", {"failures", "window"}, [&](const std::string& key, yaml_node_t* v) {
            const std::string context = "recovery.lemon." + key;
            if (key == "failures") {
                // A bound on what each node keeps (lemons.hpp), far above any useful count.
                if (auto n = value<int>(v, context, [](const std::string& t) { return parse_int(t, 0, 1000); }))
                    l.failures = *n;
            } else if (auto s = value<std::int64_t>(v, context, parse_duration_seconds)) {
                if (*s > 0)
                    l.window_seconds = *s;
                else
                    problem(v, context + " must be longer than 0");
            }
        });
    }
    void read_block_fault(yaml_node_t* map) {
        for_each_pair(map, "block_fault", {"fraction"}, [&](const std::string&, yaml_node_t* v) {
            if (auto f =
                    value<double>(v, "block_fault.fraction", [](const std::string& s) { return parse_fraction(s); }))
                spec_.policy.block_fault_fraction = *f;
        });
    }

    std::vector<std::string> name_list(yaml_node_t* v, const std::string& context) {
        std::vector<std::string> out;
        if (v->type == YAML_SCALAR_NODE) { // a single name is accepted as a list of one
            out.push_back(scalar(v));
            return out;
        }
        if (v->type != YAML_SEQUENCE_NODE) {
            problem(v, context + " must be a list of names, found " + kind(v));
            return out;
        }
        for (yaml_node_item_t* it = v->data.sequence.items.start; it < v->data.sequence.items.top; ++it) {
            yaml_node_t* item = doc_.node(*it);
            if (item->type != YAML_SCALAR_NODE || scalar(item).empty())
                problem(item, context + " entries must be names");
            else
                out.push_back(scalar(item));
        }
        return out;
    }

    // A JobSelector: {qos: [...], partitions: [...], accounts: [...]}, the keys `keys` allows.
    void read_selector(yaml_node_t* map, const std::string& context, const std::set<std::string>& keys,
                       JobSelector& out) {
        for_each_pair(map, context, keys, [&](const std::string& key, yaml_node_t* v) {
            auto names = name_list(v, context + "." + key);
            (key == "qos" ? out.qos : key == "partitions" ? out.partitions : out.accounts) = names;
        });
    }

    void read_preemptible(yaml_node_t* map) {
        read_selector(map, "preemptible", {"qos", "partitions"}, spec_.policy.preemptible);
    }

    void read_status(yaml_node_t* map) {
        for_each_pair(map, "status", {"interval", "json", "prometheus"}, [&](const std::string& key, yaml_node_t* v) {
            if (key == "interval") {
                if (auto s = value<std::int64_t>(v, "status.interval", parse_duration_seconds)) {
                    if (*s < 1)
                        problem(v, "status.interval must be at least 1 second");
                    else
                        spec_.policy.status.interval_seconds = *s;
                }
            } else if (auto path = value<std::string>(v, "status." + key, [](const std::string& s) { return s; })) {
                (key == "json" ? spec_.policy.status.json_path : spec_.policy.status.prometheus_path) = *path;
            }
        });
    }

    std::optional<std::string> include_path(yaml_node_t* v, const std::string& key) {
        return value<std::string>(v, key, [](const std::string& s) {
            if (s.empty())
                throw ValueError("empty path");
            return s;
        });
    }

    // The blocks (and BlockSizes) of an included file, in its order.
    void take_blocks(TopologySpec conf, const std::string& as_written, const std::string& full) {
        spec_.included_as_written = as_written;
        spec_.included_path = full;
        spec_.block_sizes = conf.block_sizes;
        spec_.hierarchy.base_nodes = conf.hierarchy.base_nodes;
        spec_.hierarchy.level_mask = conf.hierarchy.level_mask;
        for (auto& b : conf.blocks) {
            included_.emplace(b.name, spec_.blocks.size());
            spec_.blocks.push_back(std::move(b));
        }
        for (auto& w : conf.warnings)
            spec_.warnings.push_back(std::move(w));
    }

    void include_failed(const ConfigError& e, yaml_node_t* v, const std::string& key, const std::string& path) {
        for (const auto& d : e.problems())
            problems_.add(d.where, d.message);
        problem(v, "in " + key + " '" + path + "' included from here");
    }

    void read_include(yaml_node_t* v) {
        auto path = include_path(v, "topology_conf");
        if (!path)
            return;
        const std::string full = path_in(base_dir_, *path);
        try {
            take_blocks(read_topology_conf(read_text_file(full), full, dirname_of(full), spec_.policy.slurm_release),
                        *path, full);
        } catch (const ConfigError& e) {
            include_failed(e, v, "topology_conf", *path);
        }
    }

    // topology_yaml: a file in Slurm's topology.yaml format (a generator's,
    // kept under another name); topology_name: which of its block topologies.
    void read_topology_yaml(yaml_node_t* v, yaml_node_t* name_node) {
        auto path = include_path(v, "topology_yaml");
        std::optional<std::string> name;
        if (name_node)
            name = value<std::string>(name_node, "topology_name", [](const std::string& s) { return s; });
        if (!path)
            return;
        const std::string full = path_in(base_dir_, *path);
        try {
            const SlurmTopologyYaml y = read_slurm_topology_yaml(read_text_file(full), full);
            if (name && !y.find(*name)) { // one error, at the line to change
                problem(name_node, "topology_name: no topology '" + *name + "' in topology_yaml '" + *path +
                                       "' (block topologies: " + block_topology_names(y) + ")");
                return;
            }
            std::vector<Diagnostic> notes = y.warnings;
            const SlurmTopologyYaml::Topology& t = choose_block_topology(y, name.value_or(""), notes);
            for (const auto& other : y.topologies)
                if (&other != &t)
                    notes.push_back({other.where,
                                     "topology '" + other.name + "' (" + other.type +
                                         ") is not used: nvlblock takes topology '" + t.name + "'",
                                     warning_name::kTopologyChoice});
            take_blocks(block_topology_spec(y, t, spec_.policy.slurm_release), *path, full);
            for (auto& n : notes)
                spec_.warnings.push_back(std::move(n));
        } catch (const ConfigError& e) {
            include_failed(e, v, "topology_yaml", *path);
        }
    }

    // hierarchy:
    //   crossing: strict | <duration>
    //   levels:                       lowest first
    //     - name: su
    //       label: scalable unit
    //       groups:
    //         su01: rack[01-08]       blocks, or groups of the level below
    void read_hierarchy(yaml_node_t* map) {
        spec_.hierarchy.where = where(map);
        for_each_pair(map, "hierarchy", {"crossing", "levels"}, [&](const std::string& key, yaml_node_t* v) {
            if (key == "crossing") {
                auto s = value<std::string>(v, "hierarchy.crossing", [](const std::string& x) { return x; });
                if (!s || *s == "strict")
                    return;
                try {
                    spec_.hierarchy.cross_after = parse_duration_seconds(*s);
                } catch (const ValueError& e) {
                    problem(v,
                            "hierarchy.crossing: '" + *s + "' is neither 'strict' nor a duration (" + e.what() + ")");
                }
                return;
            }
            if (v->type != YAML_SEQUENCE_NODE) {
                problem(v, std::string("hierarchy.levels must be a list, found ") + kind(v));
                return;
            }
            for (yaml_node_item_t* it = v->data.sequence.items.start; it < v->data.sequence.items.top; ++it)
                read_level(doc_.node(*it));
        });
    }

    void read_level(yaml_node_t* map) {
        LevelSpec level;
        level.where = where(map);
        yaml_node_t* groups = nullptr;
        for_each_pair(map, "a hierarchy level", {"name", "label", "groups"},
                      [&](const std::string& key, yaml_node_t* v) {
                          if (key == "name") {
                              if (auto s = value<std::string>(v, "level name", parse_name))
                                  level.name = *s;
                          } else if (key == "label") {
                              if (auto s = value<std::string>(v, "level label", [](const std::string& x) { return x; }))
                                  level.label = *s;
                          } else {
                              groups = v;
                          }
                      });
        if (map->type != YAML_MAPPING_NODE)
            return;
        if (level.name.empty()) {
            problems_.add(level.where, "hierarchy level has no 'name'");
            return;
        }
        if (!groups) {
            problems_.add(level.where, "hierarchy level '" + level.name + "' has no 'groups'");
            return;
        }
        // name: members, where members is a hostlist expression or a list of names.
        if (groups->type != YAML_MAPPING_NODE) {
            problem(groups, "groups of level '" + level.name + "' must be a mapping of group name to members, found " +
                                kind(groups));
        } else {
            for (yaml_node_pair_t* p = groups->data.mapping.pairs.start; p < groups->data.mapping.pairs.top; ++p) {
                yaml_node_t* k = doc_.node(p->key);
                yaml_node_t* v = doc_.node(p->value);
                if (k->type != YAML_SCALAR_NODE)
                    continue;
                GroupSpec g;
                g.where = where(k);
                try {
                    g.name = parse_name(scalar(k));
                } catch (const ValueError& e) {
                    problems_.add(g.where, "group name: " + std::string(e.what()));
                    continue;
                }
                for (const std::string& item : name_list(v, "members of group '" + g.name + "'")) {
                    try {
                        for (auto& n : expand_counted(item))
                            g.members.push_back(std::move(n));
                    } catch (const hostlist::HostlistError& e) {
                        problem(v, "group '" + g.name + "': " + e.what());
                    }
                }
                level.groups.push_back(std::move(g));
            }
        }
        spec_.hierarchy.levels.push_back(std::move(level));
    }

    void read_blocks(yaml_node_t* list) {
        if (list->type != YAML_SEQUENCE_NODE) {
            problem(list, std::string("'blocks' must be a list, found ") + kind(list));
            return;
        }
        for (yaml_node_item_t* it = list->data.sequence.items.start; it < list->data.sequence.items.top; ++it) {
            const std::size_t before = problem_count();
            read_block(doc_.node(*it));
            blocks_damaged_ = blocks_damaged_ || problem_count() > before;
        }
    }

    void read_block(yaml_node_t* map) {
        const std::size_t before = problem_count();
        BlockSpec b;
        b.where = where(map);
        bool have_nodes = false, have_name = false, name_key = false;
        yaml_node_t* nodes_node = nullptr;
        unsigned nodes_alias_line = 0; // read after the name: the alias it came by
        for_each_pair(map, "a block entry", {"name", "nodes", "slice", "spares", "lending", "reserve"},
                      [&](const std::string& key, yaml_node_t* v) {
                          if (key == "name") {
                              name_key = true;
                              if (auto s = value<std::string>(v, "block name", parse_name)) {
                                  b.name = *s;
                                  have_name = true;
                              }
                          } else if (key == "nodes") {
                              nodes_node = v;
                              nodes_alias_line = alias_line_;
                          } else if (key == "slice") {
                              b.slice = count_value(v, "slice", 1);
                          } else if (key == "spares") {
                              b.spares = count_value(v, "spares", 0);
                          } else if (key == "reserve") {
                              b.reserve = reserve_value(v, "reserve");
                          } else {
                              b.lending = value<bool>(v, "lending", parse_bool);
                          }
                      });
        if (map->type != YAML_MAPPING_NODE)
            return;
        if (!have_name) {
            if (!name_key) // a bad name has been reported already
                problems_.add(b.where, "block entry has no 'name'");
            return;
        }
        if (nodes_node) {
            const unsigned outer = std::exchange(alias_line_, nodes_alias_line);
            have_nodes = read_block_nodes(b, nodes_node);
            alias_line_ = outer;
        }
        auto inc = included_.find(b.name);
        const bool damaged = problem_count() > before; // not built, not applied (spec_error.hpp)
        if (inc != included_.end() && !have_nodes) {
            if (damaged)
                return;
            // An override for a block that topology.conf defines.
            BlockSpec& target = spec_.blocks[inc->second];
            if (b.slice)
                target.slice = b.slice;
            if (b.spares)
                target.spares = b.spares;
            if (b.lending)
                target.lending = b.lending;
            if (b.reserve)
                target.reserve = b.reserve;
            return;
        }
        if (!have_nodes) {
            if (!nodes_node)
                problems_.add(b.where, "block '" + b.name + "' has no 'nodes'");
            return;
        }
        if (!damaged)
            spec_.blocks.push_back(std::move(b));
    }

    // A block's `nodes:` expanded into b; false (and a problem) if it cannot be.
    bool read_block_nodes(BlockSpec& b, yaml_node_t* n) {
        auto expr = value<std::string>(n, "nodes of block '" + b.name + "'", [](const std::string& s) { return s; });
        if (!expr)
            return false;
        b.nodes_expr = *expr;
        try {
            b.node_names = expand_counted(*expr);
            return true;
        } catch (const hostlist::HostlistError& e) {
            problem(n, "block '" + b.name + "': " + e.what());
            return false;
        }
    }

    // A hostlist expression's names, counted against the whole file's: YAML
    // aliases let a 2 KB file repeat one expression of a million names a
    // thousand times, which slurmctld would expand. Past the limit, every
    // expansion is an error at its own line, and nothing more is expanded.
    std::vector<std::string> expand_counted(const std::string& expr) {
        if (expanded_ > kMaxNamesInFile)
            throw hostlist::HostlistError("not expanded: the file names more than " + std::to_string(kMaxNamesInFile) +
                                          " nodes in all (YAML aliases?)");
        std::vector<std::string> names = hostlist::expand(expr);
        expanded_ += names.size();
        if (expanded_ > kMaxNamesInFile)
            throw hostlist::HostlistError("the file names more than " + std::to_string(kMaxNamesInFile) +
                                          " nodes in all, blocks and groups together (YAML aliases?)");
        return names;
    }
    // Four times the largest single expression: every node in a block and
    // in a few levels of groups.
    static constexpr std::size_t kMaxNamesInFile = 4 * hostlist::kMaxHosts;

    YamlDocument& doc_;
    std::string label_;
    std::string base_dir_;
    TopologySpec spec_;
    Diagnostics problems_;
    std::map<std::string, std::size_t> included_;
    std::size_t expanded_ = 0; // names expanded so far (expand_counted)
    bool defaults_damaged_ = false, blocks_damaged_ = false;
    unsigned alias_line_ = 0; // the line of the alias whose value is being read (0: none)
};

} // namespace

TopologySpec read_yaml_topology(const std::string& text, const std::string& label, const std::string& base_dir,
                                int slurm_release) {
    YamlDocument doc(text, label);
    return Reader(doc, label, base_dir, slurm_release).read();
}

} // namespace nvlblock
