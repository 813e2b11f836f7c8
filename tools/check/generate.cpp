// SPDX-License-Identifier: GPL-2.0-or-later
#include "generate.hpp"

#include "cli.hpp"

#include "json_file.hpp"
#include "local.hpp"
#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"

#include <json-c/json.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace nvlblock::check {

using namespace tool;
namespace {

namespace fs = std::filesystem;

using DomainKey = std::pair<std::string, std::uint32_t>; // cluster UUID, clique id

struct Reported {
    std::string host;
    std::string file;
    std::optional<DomainKey> domain;
};

struct OutBlock {
    std::string name;
    std::vector<std::string> nodes; // hostname order
    std::optional<DomainKey> domain;
    bool kept = false;                // a previous block no node reported for
    std::optional<int> slice, spares; // per-block settings carried over from --previous
    std::optional<bool> lending;
};

using cli::plural;

std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs, std::vector<Diagnostic>& errors) {
    std::vector<std::string> files;
    for (const auto& in : inputs) {
        std::error_code ec;
        if (fs::is_directory(in, ec)) {
            std::vector<std::string> found;
            for (const auto& e : fs::directory_iterator(in, ec))
                if (e.is_regular_file() && e.path().extension() == ".json")
                    found.push_back(e.path().string());
            if (ec)
                errors.push_back({{in, 0}, "cannot list the directory: " + ec.message()});
            std::sort(found.begin(), found.end());
            if (found.empty() && !ec)
                errors.push_back({{in, 0}, "no *.json report in this directory"});
            files.insert(files.end(), found.begin(), found.end());
        } else {
            files.push_back(in);
        }
    }
    return files;
}

std::optional<Reported> read_report(const std::string& file, std::vector<Diagnostic>& errors) {
    try {
        JsonDoc doc = JsonDoc::load(file);
        json_object* root = doc.root();
        const std::string schema = json::string(root, "schema", "");
        if (schema != kNodeReportSchema) {
            errors.push_back({{file, 0},
                              "schema '" + schema + "' is not " + kNodeReportSchema +
                                  " (write reports with nvlblock-check --local --json)"});
            return std::nullopt;
        }
        Reported r;
        r.file = file;
        r.host = json::string(root, "hostname", "");
        if (r.host.empty()) {
            errors.push_back({{file, 0}, "the report has an empty hostname"});
            return std::nullopt;
        }
        json_object* problems = json::required(root, "problems", "");
        const std::size_t np = json::array_size(problems, "problems");
        if (np) {
            std::string all;
            for (std::size_t i = 0; i < np; ++i)
                all +=
                    (i ? "; " : "") + json::string_value(json::at(problems, i), "problems[" + std::to_string(i) + "]");
            errors.push_back({{file, 0},
                              "node " + r.host + " reported problems: " + all +
                                  "; fix them and run nvlblock-check --local there again"});
            return std::nullopt;
        }
        json_object* dom = json::member(root, "nvlink_domain", "");
        if (!json::is_null(dom)) {
            const std::string uuid = json::string(dom, "cluster_uuid", "nvlink_domain");
            const std::int64_t clique = json::integer(dom, "clique_id", "nvlink_domain");
            if (uuid.empty() || clique < 0 || clique > 0xffffffffLL) {
                errors.push_back(
                    {{file, 0}, "nvlink_domain of node " + r.host + " has no valid cluster_uuid/clique_id"});
                return std::nullopt;
            }
            r.domain = DomainKey{uuid, static_cast<std::uint32_t>(clique)};
        } else {
            // No domain: fine for a node without NVLink fabric, not for one
            // whose GPUs could not be asked.
            json_object* nvml = json::required(root, "nvml", "");
            const std::size_t gpus = json::array_size(json::required(root, "gpus", ""), "gpus");
            if (gpus > 0 && !json::boolean_or(nvml, "available", "nvml", false)) {
                errors.push_back({{file, 0},
                                  "node " + r.host + " has " + plural(gpus, "GPU") +
                                      " but NVML was not available there, so its NVLink domain is unknown"});
                return std::nullopt;
            }
        }
        return r;
    } catch (const ConfigError& e) {
        for (const auto& d : e.problems())
            errors.push_back(d);
    } catch (const JsonShapeError& e) {
        errors.push_back({{file, 0}, std::string("not a node report: ") + e.what()});
    }
    return std::nullopt;
}

std::optional<long> name_number(const std::string& name, const std::string& prefix) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return std::nullopt;
    const std::string digits = name.substr(prefix.size());
    if (digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        return std::nullopt;
    return std::stol(digits);
}

std::string block_name(const std::string& prefix, long number, int width) {
    std::string digits = std::to_string(number);
    if (static_cast<int>(digits.size()) < width)
        digits.insert(0, static_cast<std::size_t>(width) - digits.size(), '0');
    return prefix + digits;
}

std::string domain_comment(const OutBlock& b) {
    if (!b.domain)
        return "kept from the previous file: no node reported";
    return "cluster " + b.domain->first + ", clique " + std::to_string(b.domain->second);
}

// Per-block slice and spares when a block is too small for the defaults.
std::optional<std::pair<int, int>> small_block_settings(int size, const GenerateOptions& o) {
    if (size >= o.slice + o.spares)
        return std::nullopt;
    if (size > o.spares)
        return std::pair{size - o.spares, o.spares};
    return std::pair{size, 0};
}

// The opening comment of a generated file.
std::string generated_header(const char* file, std::size_t reports) {
    return std::string("# ") + file + " written by nvlblock-check --generate from " + plural(reports, "node report") +
           ".\n"
           "# One block per NVLink domain (NVML cluster UUID + clique id), nodes in\n"
           "# hostname order. When racks are added, generate again with --previous\n"
           "# naming this file: existing blocks keep their names and positions and new\n"
           "# ones are appended.\n";
}

std::string render_yaml(const std::vector<OutBlock>& blocks, const std::vector<std::string>& outside,
                        const GenerateOptions& o, std::size_t reports) {
    std::ostringstream y;
    y << generated_header("nvlblock.yaml", reports) << yaml_defaults(o.slice, o.spares) << "blocks:\n";
    for (const auto& b : blocks) {
        y << "  # " << domain_comment(b) << "\n";
        y << "  - name: " << b.name << "\n";
        y << "    nodes: " << hostlist::compress(b.nodes) << "\n";
        if (b.slice || b.spares || b.lending) {
            if (b.slice)
                y << "    slice: " << *b.slice << "\n";
            if (b.spares)
                y << "    spares: " << *b.spares << "\n";
            if (b.lending)
                y << "    lending: " << (*b.lending ? "true" : "false") << "\n";
        } else if (auto s = small_block_settings(static_cast<int>(b.nodes.size()), o)) {
            y << "    slice: " << s->first << "  # " << b.nodes.size() << " nodes: smaller than slice " << o.slice
              << " + " << o.spares << " spares\n";
            if (s->second != o.spares)
                y << "    spares: " << s->second << "\n";
        }
    }
    if (o.su_racks > 0 && !blocks.empty()) {
        y << "# Scalable units: every " << o.su_racks << " consecutive racks (--su-racks); edit to match\n"
          << "# the leaf switches if they differ.\n"
          << "hierarchy:\n  levels:\n    - name: su\n      label: scalable unit\n      groups:\n";
        const std::size_t per = static_cast<std::size_t>(o.su_racks);
        const std::size_t count = (blocks.size() + per - 1) / per;
        const int width = std::max<int>(2, static_cast<int>(std::to_string(count).size()));
        for (std::size_t g = 0; g < count; ++g) {
            std::vector<std::string> names;
            for (std::size_t b = g * per; b < std::min(blocks.size(), (g + 1) * per); ++b)
                names.push_back(blocks[b].name);
            std::string num = std::to_string(g + 1);
            num.insert(0, static_cast<std::size_t>(std::max(0, width - static_cast<int>(num.size()))), '0');
            y << "        su" << num << ": " << hostlist::compress(names) << "\n";
        }
    }
    if (!outside.empty())
        y << "# In no NVLink domain, so in no block: " << hostlist::compress(outside) << "\n";
    return y.str();
}

std::string render_conf(const std::vector<OutBlock>& blocks, const std::vector<std::string>& outside,
                        const GenerateOptions& o, std::size_t reports) {
    std::ostringstream c;
    c << generated_header("topology.conf", reports);
    std::size_t smallest = 0;
    for (const auto& b : blocks)
        smallest = smallest ? std::min(smallest, b.nodes.size()) : b.nodes.size();
    for (const auto& b : blocks)
        c << "# " << domain_comment(b) << "\n"
          << "BlockName=" << b.name << " Nodes=" << hostlist::compress(b.nodes) << "\n";
    if (!blocks.empty() && o.su_racks > 0) {
        // Scalable units as topology/block's one level above the base.
        c << "# Scalable units: aligned runs of " << o.su_racks << " racks (--su-racks).\n"
          << "BlockSizes=" << smallest << "," << smallest * static_cast<std::size_t>(o.su_racks) << "\n";
    } else if (!blocks.empty() && smallest < blocks.front().nodes.size()) {
        // Slurm takes the first block's size as the base unless BlockSizes
        // says otherwise, and rejects smaller blocks; keep its default five
        // aggregation levels on the smallest size.
        c << "# Blocks differ in size: the base block size is the smallest one.\n"
          << "BlockSizes=";
        for (int level = 0; level < 5; ++level)
            c << (level ? "," : "") << smallest * (std::size_t{1} << level);
        c << "\n";
    }
    if (!outside.empty())
        c << "# In no NVLink domain, so in no block: " << hostlist::compress(outside) << "\n";
    return c.str();
}

} // namespace

std::string yaml_defaults(int slice, int spares) {
    std::string y = "defaults:\n  slice: " + std::to_string(slice) + "\n  spares: " + std::to_string(spares) + "\n";
    if (spares > 0) // the recommended start: spares run work until a failure needs them
        y += "  reserve: reclaim    # docs/admin.md 4.1; 'idle' keeps them free\n";
    return y;
}

bool natural_less(const std::string& a, const std::string& b) {
    std::size_t i = 0, j = 0;
    int tie = 0; // equal numbers written with different zero padding: fewer digits first
    auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    while (i < a.size() && j < b.size()) {
        if (digit(a[i]) && digit(b[j])) {
            std::size_t i1 = i, j1 = j;
            while (i1 < a.size() && digit(a[i1]))
                ++i1;
            while (j1 < b.size() && digit(b[j1]))
                ++j1;
            std::string x = a.substr(i, i1 - i), y = b.substr(j, j1 - j);
            x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
            y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
            if (x.size() != y.size())
                return x.size() < y.size();
            if (x != y)
                return x < y;
            if (!tie && i1 - i != j1 - j)
                tie = i1 - i < j1 - j ? -1 : 1;
            i = i1;
            j = j1;
        } else {
            if (a[i] != b[j])
                return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    if (a.size() - i != b.size() - j)
        return a.size() - i < b.size() - j;
    return tie < 0;
}

namespace {

// Every report read once; a node reported twice is an error at the second.
std::vector<Reported> read_reports(const std::vector<std::string>& files, GenerateResult& res) {
    std::vector<Reported> reported;
    std::unordered_map<std::string, std::string> file_of;
    for (const auto& f : files) {
        auto r = read_report(f, res.errors);
        if (!r)
            continue;
        auto [it, fresh] = file_of.emplace(r->host, f);
        if (!fresh) {
            res.errors.push_back({{f, 0}, "node " + r->host + " is also reported by " + it->second});
            continue;
        }
        reported.push_back(std::move(*r));
    }
    return reported;
}

// The NVLink domains and their nodes (hostname order), in the order of their
// first hostname; the nodes in none.
struct Domains {
    std::map<DomainKey, std::vector<std::string>> nodes;
    std::vector<DomainKey> order;
    std::vector<std::string> outside;
};

Domains group_by_domain(const std::vector<Reported>& reported) {
    Domains d;
    for (const auto& r : reported) {
        if (r.domain)
            d.nodes[*r.domain].push_back(r.host);
        else
            d.outside.push_back(r.host);
    }
    for (auto& [k, nodes] : d.nodes) {
        std::sort(nodes.begin(), nodes.end(), natural_less);
        d.order.push_back(k);
    }
    std::sort(d.outside.begin(), d.outside.end(), natural_less);
    std::sort(d.order.begin(), d.order.end(), [&](const DomainKey& a, const DomainKey& b) {
        return natural_less(d.nodes[a].front(), d.nodes[b].front());
    });
    return d;
}

// Which previous block each domain continues (at most one each way); the
// domains that continue none go to `fresh`. A domain over several blocks, or
// a block split over domains, is an error: the site merges or splits by hand.
std::vector<std::optional<DomainKey>> match_previous(const TopologySpec& prev, Domains& domains,
                                                     const std::unordered_map<std::string, std::size_t>& block_of,
                                                     const std::string& prev_path, std::vector<DomainKey>& fresh,
                                                     GenerateResult& res) {
    std::vector<std::optional<DomainKey>> domain_of_prev(prev.blocks.size());
    for (const auto& k : domains.order) {
        std::set<std::size_t> touched;
        for (const auto& n : domains.nodes[k])
            if (auto it = block_of.find(n); it != block_of.end())
                touched.insert(it->second);
        if (touched.empty()) {
            fresh.push_back(k);
            continue;
        }
        if (touched.size() > 1) {
            std::string names;
            for (auto i : touched)
                names += (names.empty() ? "'" : ", '") + prev.blocks[i].name + "'";
            res.errors.push_back({{prev_path, 0},
                                  "the NVLink domain of cluster " + k.first + " clique " + std::to_string(k.second) +
                                      " holds nodes of blocks " + names + "; merge them by hand"});
            continue;
        }
        const std::size_t i = *touched.begin();
        if (domain_of_prev[i]) {
            res.errors.push_back({prev.blocks[i].where, "the nodes of block '" + prev.blocks[i].name +
                                                            "' are now in two NVLink domains; split it by hand"});
            continue;
        }
        domain_of_prev[i] = k;
    }
    return domain_of_prev;
}

// A previous block as it goes on: its domain's nodes now, plus its nodes
// that did not report (kept where they were); none if no node is left.
std::optional<OutBlock> continue_block(const BlockSpec& was, const std::optional<DomainKey>& domain, Domains& domains,
                                       const std::set<std::string>& reported_hosts, GenerateResult& res) {
    OutBlock b;
    b.name = was.name;
    b.domain = domain;
    b.slice = was.slice;
    b.spares = was.spares;
    b.lending = was.lending;
    std::set<std::string> nodes;
    if (b.domain)
        nodes.insert(domains.nodes[*b.domain].begin(), domains.nodes[*b.domain].end());
    std::size_t kept = 0;
    for (const auto& n : was.node_names) {
        if (!reported_hosts.count(n)) {
            nodes.insert(n);
            ++kept;
        }
    }
    if (!b.domain) {
        b.kept = true;
        if (kept == was.node_names.size())
            res.notes.push_back({was.where, "block '" + b.name + "': no node reported; kept as it was"});
    } else if (kept) {
        res.notes.push_back(
            {was.where, "block '" + b.name + "': " + plural(kept, "node") + " did not report; kept in the block"});
    }
    if (nodes.empty()) {
        res.notes.push_back(
            {was.where, "block '" + b.name + "': every node now reports another domain or none; dropped"});
        return std::nullopt;
    }
    b.nodes.assign(nodes.begin(), nodes.end());
    std::sort(b.nodes.begin(), b.nodes.end(), natural_less);
    return b;
}

// --previous: its blocks keep their names, places and settings, new domains
// are numbered after its highest number. False on errors (in res).
bool keep_previous(const GenerateOptions& opts, const std::vector<Reported>& reported, Domains& domains,
                   std::vector<OutBlock>& blocks, std::vector<DomainKey>& fresh, long& next, GenerateResult& res) {
    TopologySpec prev;
    try {
        prev = read_topology_spec(opts.previous, opts.slurm_release);
    } catch (const ConfigError& e) {
        for (const auto& d : e.problems())
            res.errors.push_back(d);
        res.errors.push_back({{opts.previous, 0}, "cannot use it as --previous"});
        return false;
    }
    std::unordered_map<std::string, std::size_t> block_of;
    for (std::size_t i = 0; i < prev.blocks.size(); ++i) {
        for (const auto& n : prev.blocks[i].node_names)
            block_of.emplace(n, i);
        if (auto num = name_number(prev.blocks[i].name, opts.prefix))
            next = std::max(next, *num + 1);
    }
    next = std::max<long>(next, static_cast<long>(prev.blocks.size()) + 1);
    std::set<std::string> reported_hosts;
    for (const auto& r : reported)
        reported_hosts.insert(r.host);
    const auto domain_of_prev = match_previous(prev, domains, block_of, opts.previous, fresh, res);
    if (!res.errors.empty())
        return false;
    for (std::size_t i = 0; i < prev.blocks.size(); ++i)
        if (auto b = continue_block(prev.blocks[i], domain_of_prev[i], domains, reported_hosts, res))
            blocks.push_back(std::move(*b));
    // Nodes that left a previous block for no domain at all.
    for (const auto& r : reported)
        if (!r.domain)
            if (auto it = block_of.find(r.host); it != block_of.end())
                res.notes.push_back({{r.file, 0},
                                     "node " + r.host + " was in block '" + prev.blocks[it->second].name +
                                         "' and now reports no NVLink domain; left out of every block"});
    return true;
}

// What we write must load: checked with the readers slurmctld uses.
bool loads(const std::string& text, const std::vector<OutBlock>& blocks, const std::vector<std::string>& outside,
           const GenerateOptions& opts, GenerateResult& res) {
    try {
        std::vector<std::string> universe;
        for (const auto& b : blocks)
            universe.insert(universe.end(), b.nodes.begin(), b.nodes.end());
        universe.insert(universe.end(), outside.begin(), outside.end());
        build_topology(read_topology_spec_text(text, "<generated>", opts.format, ".", opts.slurm_release), &universe);
        return true;
    } catch (const ConfigError& e) {
        for (const auto& d : e.problems())
            res.errors.push_back(d);
        return false;
    }
}

} // namespace

GenerateResult generate_topology(const std::vector<std::string>& inputs, const GenerateOptions& opts) {
    GenerateResult res;
    const std::vector<std::string> files = expand_inputs(inputs, res.errors);
    const std::vector<Reported> reported = read_reports(files, res);
    res.reports = files.size();
    Domains domains = group_by_domain(reported);

    std::vector<OutBlock> blocks;
    long next = 1;
    std::vector<DomainKey> fresh;
    if (opts.previous.empty())
        fresh = domains.order;
    else if (!keep_previous(opts, reported, domains, blocks, fresh, next, res))
        return res;
    if (!res.errors.empty())
        return res;
    for (const auto& k : fresh) {
        OutBlock b;
        b.name = block_name(opts.prefix, next++, opts.width);
        b.domain = k;
        b.nodes = domains.nodes[k];
        blocks.push_back(std::move(b));
    }
    if (blocks.empty()) {
        res.errors.push_back({{files.empty() ? std::string("nvlblock-check") : files.front(), 0},
                              "no node reported an NVLink domain: nothing to put in a block"});
        return res;
    }
    std::string text = opts.format == SourceFormat::kYaml ? render_yaml(blocks, domains.outside, opts, res.reports)
                                                          : render_conf(blocks, domains.outside, opts, res.reports);
    if (!loads(text, blocks, domains.outside, opts, res))
        return res;
    res.text = std::move(text);
    res.blocks = blocks.size();
    for (const auto& b : blocks)
        res.nodes_in_blocks += b.nodes.size();
    res.outside = domains.outside.size();
    return res;
}

} // namespace nvlblock::check
