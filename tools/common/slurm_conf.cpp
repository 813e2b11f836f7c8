// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_conf.hpp"

#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <unordered_map>

namespace nvlblock::tool {
namespace {

using namespace slurm_syntax;

// slurm.conf keys are any run of characters up to '=' or white space.
bool slurm_conf_key_char(char c) {
    return c != '=' && !is_space(c);
}
constexpr PairRules kSlurmConfPairs{slurm_conf_key_char, false, false};

// Splits "Key=Value Key2="quoted value" ..." into pairs. Returns false and
// sets `bad` to the offending text when something is not Key=Value.
bool split_pairs(const std::string& line, std::vector<KeyValue>& out, std::string& bad) {
    std::string_view rest = line;
    while (true) {
        rest = skip_space(rest);
        if (rest.empty())
            return true;
        KeyValue kv;
        switch (next_pair(rest, kv, kSlurmConfPairs)) {
        case PairScan::kPair:
            out.push_back(std::move(kv));
            break;
        case PairScan::kOpenQuote:
            bad = std::string(rest);
            return false;
        case PairScan::kMalformed:
            bad = std::string(rest.substr(0, rest.find_first_of(" \t")));
            return false;
        }
    }
}

// Lines whose first key owns the rest of the line (Slurm's "expline" keys).
const std::set<std::string> kLineKeys = {"nodename",  "partitionname", "frontendname",   "nodeset",
                                         "downnodes", "slurmctldhost", "controlmachine", "backupcontroller"};

class Reader {
  public:
    explicit Reader(std::string conf_dir) : conf_dir_(std::move(conf_dir)) {}

    void parse(const std::string& text, const std::string& label, int depth) {
        for (const LogicalLine& l : logical_lines(text)) {
            const std::string body(skip_space(l.text));
            if (body.empty())
                continue;
            SourceLocation where{label, l.line};
            if (auto target = include_target(body)) {
                include(std::string(*target), where, depth);
                continue;
            }
            std::vector<KeyValue> pairs;
            std::string bad;
            if (!split_pairs(body, pairs, bad)) {
                add(where, "cannot parse '" + bad + "': expected Key=Value");
                continue;
            }
            const std::string first = lower(pairs.front().key);
            if (kLineKeys.count(first)) {
                if (first == "nodename")
                    node_line(pairs.front().value, where);
                else if (first == "partitionname")
                    partition_line(pairs, where);
                else if (first == "slurmctldhost" || first == "controlmachine")
                    conf_.settings.emplace(first, SlurmSetting{pairs.front().value, where}); // the primary
                continue;
            }
            for (const auto& p : pairs)
                conf_.settings[lower(p.key)] = {p.value, where};
        }
    }

    SlurmConf take(std::string path) {
        conf_.path = std::move(path);
        return std::move(conf_);
    }

    void add(SourceLocation where, std::string message) {
        conf_.problems.push_back({std::move(where), std::move(message)});
    }

  private:
    void include(std::string rest, const SourceLocation& where, int depth) {
        const std::string_view after = skip_space(rest);
        std::string name(after.substr(0, std::find_if(after.begin(), after.end(), is_space) - after.begin()));
        if (name.empty()) {
            add(where, "Include without a file name");
            return;
        }
        if (auto pc = name.find("%c"); pc != std::string::npos) {
            auto it = conf_.settings.find("clustername");
            if (it == conf_.settings.end()) {
                add(where, "Include " + name + ": %c needs ClusterName= set before it");
                return;
            }
            name = name.substr(0, pc) + it->second.value + name.substr(pc + 2);
        }
        if (name.find('*') != std::string::npos) {
            add(where, "Include " + name + ": Slurm does not expand '*' in Include; it skips the line");
            return;
        }
        if (depth >= kMaxIncludeDepth) {
            add(where, "Include nested more than " + std::to_string(kMaxIncludeDepth) + " deep");
            return;
        }
        // Slurm resolves a relative Include against slurm.conf's directory
        // (get_extra_conf_path), whichever file holds the Include line.
        const std::string full = path_in(conf_dir_, name);
        std::string text;
        try {
            text = read_text_file(full);
        } catch (const ConfigError& e) {
            add(where, "Include " + name + ": " + e.first().message);
            return;
        }
        parse(text, full, depth + 1);
    }

    void node_line(const std::string& expr, const SourceLocation& where) {
        if (lower(expr) == "default")
            return;
        std::vector<std::string> names;
        try {
            names = hostlist::expand(expr);
        } catch (const hostlist::HostlistError& e) {
            add(where, std::string("NodeName: ") + e.what());
            return;
        }
        for (auto& n : names) {
            auto [it, fresh] = seen_.emplace(n, where);
            if (!fresh) {
                add(where, "node " + n + " is defined twice (first at " + it->second.str() +
                               "); slurmctld stops with \"Duplicated NodeName\"");
                continue;
            }
            conf_.nodes.push_back({std::move(n), where});
        }
    }

    void partition_line(const std::vector<KeyValue>& pairs, const SourceLocation& where) {
        // A DEFAULT line's settings apply to the partitions after it.
        if (lower(pairs.front().value) == "default") {
            for (const auto& p : pairs)
                if (lower(p.key) == "preemptmode")
                    default_preempt_mode_ = p.value;
            return;
        }
        SlurmPartition part{pairs.front().value, "", where, default_preempt_mode_};
        for (const auto& p : pairs) {
            if (lower(p.key) == "topology")
                part.topology = p.value;
            else if (lower(p.key) == "preemptmode")
                part.preempt_mode = p.value;
        }
        conf_.partitions.push_back(std::move(part));
    }

    std::string conf_dir_;
    std::string default_preempt_mode_;
    SlurmConf conf_;
    std::unordered_map<std::string, SourceLocation> seen_;
};

} // namespace

std::vector<std::string> SlurmConf::node_names() const {
    std::vector<std::string> out;
    out.reserve(nodes.size());
    for (const auto& n : nodes)
        out.push_back(n.name);
    return out;
}

const SlurmSetting* SlurmConf::setting(const std::string& key) const {
    auto it = settings.find(lower(key));
    return it == settings.end() ? nullptr : &it->second;
}

std::optional<std::string> SlurmConf::get(const std::string& key) const {
    if (const SlurmSetting* s = setting(key))
        return s->value;
    return std::nullopt;
}

SlurmConf read_slurm_conf_text(const std::string& text, const std::string& label, const std::string& conf_dir) {
    Reader r(conf_dir);
    r.parse(text, label, 0);
    return r.take(label);
}

SlurmConf read_slurm_conf(const std::string& path) {
    std::string text;
    try {
        text = read_text_file(path);
    } catch (const ConfigError& e) {
        SlurmConf conf;
        conf.path = path;
        conf.problems = e.problems();
        return conf;
    }
    return read_slurm_conf_text(text, path, dirname_of(path));
}

std::string default_slurm_conf_path() {
    const char* env = std::getenv("SLURM_CONF");
    return env && *env ? env : "/etc/slurm/slurm.conf";
}

} // namespace nvlblock::tool
