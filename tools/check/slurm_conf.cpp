// SPDX-License-Identifier: GPL-2.0-or-later
#include "slurm_conf.hpp"

#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "readers/slurm_syntax.hpp"

#include <cctype>
#include <cstdlib>
#include <set>
#include <unordered_map>

namespace nvlblock::check {
namespace {

constexpr int kMaxIncludeDepth = 10;

using slurm_syntax::is_space;
using slurm_syntax::LogicalLine;
using slurm_syntax::logical_lines;
using slurm_syntax::lower;

struct Pair {
    std::string key;
    std::string value;
};

// Splits "Key=Value Key2="quoted value" ..." into pairs. Returns false and
// sets `bad` to the offending text when something is not Key=Value.
bool split_pairs(const std::string& line, std::vector<Pair>& out, std::string& bad) {
    std::size_t i = 0;
    while (true) {
        while (i < line.size() && is_space(line[i]))
            ++i;
        if (i >= line.size())
            return true;
        std::size_t k0 = i;
        while (i < line.size() && line[i] != '=' && !is_space(line[i]))
            ++i;
        std::size_t k1 = i;
        while (i < line.size() && is_space(line[i]))
            ++i;
        if (k1 == k0 || i >= line.size() || line[i] != '=') {
            std::size_t end = line.find_first_of(" \t", k0);
            bad = line.substr(k0, end == std::string::npos ? std::string::npos : end - k0);
            return false;
        }
        ++i;
        while (i < line.size() && is_space(line[i]))
            ++i;
        std::string value;
        if (i < line.size() && line[i] == '"') {
            std::size_t close = line.find('"', i + 1);
            if (close == std::string::npos) {
                bad = line.substr(k0);
                return false;
            }
            value = line.substr(i + 1, close - i - 1);
            i = close + 1;
        } else {
            std::size_t v0 = i;
            while (i < line.size() && !is_space(line[i]))
                ++i;
            value = line.substr(v0, i - v0);
        }
        out.push_back({line.substr(k0, k1 - k0), std::move(value)});
    }
}

// Lines whose first key owns the rest of the line (Slurm's "expline" keys).
const std::set<std::string> kLineKeys = {"nodename", "partitionname", "frontendname", "nodeset", "downnodes",
                                         "slurmctldhost", "controlmachine", "backupcontroller"};

class Reader {
public:
    explicit Reader(std::string conf_dir) : conf_dir_(std::move(conf_dir)) {}

    void parse(const std::string& text, const std::string& label, int depth) {
        for (const LogicalLine& l : logical_lines(text)) {
            std::size_t start = 0;
            while (start < l.text.size() && is_space(l.text[start]))
                ++start;
            if (start == l.text.size())
                continue;
            const std::string body = l.text.substr(start);
            SourceLocation where{label, l.line};
            if (body.size() > 7 && lower(body.substr(0, 7)) == "include" && is_space(body[7])) {
                include(body.substr(8), where, depth);
                continue;
            }
            std::vector<Pair> pairs;
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

    void add(SourceLocation where, std::string message) { conf_.problems.push_back({std::move(where), std::move(message)}); }

private:
    void include(std::string rest, const SourceLocation& where, int depth) {
        std::size_t b = 0;
        while (b < rest.size() && is_space(rest[b]))
            ++b;
        std::size_t e = b;
        while (e < rest.size() && !is_space(rest[e]))
            ++e;
        std::string name = rest.substr(b, e - b);
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
        const std::string full = name[0] == '/' ? name : conf_dir_ + "/" + name;
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

    void partition_line(const std::vector<Pair>& pairs, const SourceLocation& where) {
        if (lower(pairs.front().value) == "default")
            return;
        SlurmPartition part{pairs.front().value, "", where};
        for (const auto& p : pairs)
            if (lower(p.key) == "topology")
                part.topology = p.value;
        conf_.partitions.push_back(std::move(part));
    }

    std::string conf_dir_;
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

std::string dirname_of(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
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

} // namespace nvlblock::check
