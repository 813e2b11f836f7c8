// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-check: validate a topology file against slurm.conf, describe the
// node it runs on (--local), or write a topology file from the per-node
// reports of a cluster (--generate).
#include "cli.hpp"
#include "common/warning_names.hpp"
#include "generate.hpp"
#include "local.hpp"
#include "plugin_build.hpp"
#include "readers/load_topology.hpp"
#include "run_main.hpp"
#include "slurm_conf.hpp"
#include "state/atomic_file.hpp"
#include "topology_yaml.hpp"
#include "validate.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <unistd.h>

using namespace nvlblock;
using namespace nvlblock::check;
using namespace nvlblock::tool;

namespace {

const char* kUsage = R"(usage: nvlblock-check [options] [TOPOLOGY]
       nvlblock-check --local [--json] [options]
       nvlblock-check --generate [options] REPORT|DIR...
       nvlblock-check --from-topology-yaml FILE [options]
       nvlblock-check --plugins [--plugin-dir DIR] [--slurm-release R]

Check a topology file (nvlblock.yaml, or topology.conf syntax) against the
nodes of slurm.conf, as slurmctld with TopologyPlugin=topology/nvlblock will
load it. Each problem is one line on stderr, "file:line: message", and so is
each warning, "file:line: warning: ..."; notes ("file:line: note: ...": what
the configuration costs and does) and the summary line go to stdout. Nodes of
slurm.conf in no block are a note: ordinary servers may stay outside blocks.
TOPOLOGY defaults to nvlblock.yaml beside slurm.conf, else topology.conf there.

  --slurm-conf FILE     slurm.conf to read NodeName= lines from (default
                        $SLURM_CONF, else /etc/slurm/slurm.conf); Include
                        files are followed as Slurm does
  --max-block-size N    warn about blocks of more than N nodes (default 18,
                        the compute trays of an NVL72 rack; 0: never)
  --strict              count warnings as problems (exit status 1)
  --accept NAME[,NAME]  warnings of these kinds, named in brackets after
                        each warning, are accepted: printed as notes, not
                        counted by --strict (docs/admin.md 5.5)
  -Q, --quiet           no notes and no summary line
  --slurm-release R     judge the file by this Slurm release's topology/block
                        rules (they differ: 24.11 refuses a block smaller than
                        the base size, 25.05 and later accept it); default: the
                        Slurm that runs here (slurmctld -V, else scontrol -V),
                        else the release these tools were built for; also
                        what --generate and --from-topology-yaml read and
                        write is judged by it

--local: describe this node. hwloc lists the NVIDIA GPUs (PCI vendor 0x10de)
with their NUMA nodes, CPUs and PCI bus; NVML, loaded at run time, gives each
GPU's fabric cluster UUID and clique id: the NVLink domain of the node.
Without the NVIDIA driver the tool says so and still reports what hwloc sees.

  --json                the per-node report (schema nvlblock-node/1) that
                        --generate reads
  --hwloc-xml FILE      an hwloc XML topology instead of this machine (hwloc
                        also honours $HWLOC_XMLFILE)
  --nvml-library PATH   NVML to dlopen (default $NVLBLOCK_NVML_LIBRARY, else
                        libnvidia-ml.so.1)
  --no-nvml             do not load NVML
  --hostname NAME       the node name to report (default: the host name up
                        to the first dot)

--generate: one block per NVLink domain from the JSON reports of every node
(files, or directories of *.json files). Nodes are in hostname order. Blocks
are named PREFIX plus a number padded to WIDTH digits (nvl0001, ...), first
numbered in the order of their lowest hostname. With --previous, the blocks of
that file keep their names, positions and per-block settings, new domains are
appended and numbered on, and nodes that did not report stay where they were:
adding racks never renames or moves a block. Nodes with no NVLink domain
(8-GPU servers, CPU nodes) are left out of every block.

  -o, --output FILE     write here instead of stdout
  --format yaml|conf    nvlblock.yaml or topology.conf (default: from the
                        --output name, else yaml)
  --previous FILE       the topology file in use, whose blocks to keep
  --prefix P            block name prefix (default nvl)
  --width N             digits in block numbers (default 4)
  --slice N, --spares N nvlblock.yaml defaults (16 and 2); smaller blocks get
                        their own slice
  --su-racks N          group every N consecutive racks into a scalable unit:
                        nvlblock.yaml hierarchy groups su01, su02, ...; in
                        topology.conf a BlockSizes level (N a power of two)

--from-topology-yaml: convert the block topology of Slurm's topology.yaml
(Slurm 25.05 and later) for nvlblock. While topology.yaml exists beside
slurm.conf, Slurm reads it and ignores TopologyPlugin= and topology.conf, and
it cannot name topology/nvlblock: such a cluster never runs nvlblock (checking
a slurm.conf that has one beside it is an error). Writes topology.conf (the
blocks and block_sizes in Slurm's block syntax, which nvlblock reads with
topology/block's rules) and an nvlblock.yaml that takes its blocks from it;
tree, flat, ring and torus3d topologies, other block topologies and
partitions' Topology= are reported as not carried over. Then move
topology.yaml away (docs/admin.md 5.1).

  --topology NAME       the topology to convert (default: the cluster default
                        if it is a block topology, else the only block one)
  --partition NAME      the topology this partition of slurm.conf uses
  --output-dir DIR      write DIR/topology.conf and DIR/nvlblock.yaml (existing
                        files are kept unless --force); default: print both
  --slice N, --spares N nvlblock.yaml defaults (default: none, so jobs are
                        placed as topology/block placed them)
  --slurm-conf FILE     also check the blocks' nodes and the partitions against
                        this slurm.conf (default: $SLURM_CONF or
                        /etc/slurm/slurm.conf, when it exists)

--plugins: which Slurm release the installed nvlblock plugins were built for,
against the Slurm that runs here. Slurm loads a plugin only into the exact
release it was built for: after a Slurm upgrade without a rebuild, slurmctld
stops at its next start (docs/admin.md 7.1).

  --plugin-dir DIR      where the plugins are (default: slurm.conf's PluginDir)
  --slurm-release R     the Slurm release here (default: what `slurmctld -V`,
                        else `scontrol -V`, prints)

Exit status: 0 valid / report written; 1 problems found; 2 usage error.
)";

int judged_release(const cli::Args& args);

// A --slurm-release value as a whole, as slurmctld -V gives it: "24.11.5",
// or a snapshot's "26.11.0-0rc1".
const char* kReleaseSyntax = "--slurm-release must read like 24.11.5 (or 26.11.0-0rc1)";
bool whole_release(const std::string& release) {
    return slurm_release_of("slurm " + release) == release;
}

// --accept's names, each one a warning nvlblock can give: a misspelt name
// would otherwise accept nothing, and --strict fail for no visible reason.
std::vector<std::string> accepted_warnings(const cli::Args& args) {
    std::vector<std::string> names = args.list("accept");
    for (const std::string& n : names)
        if (!warning_name::known(n)) {
            std::string all;
            for (const char* k : warning_name::kAll)
                all += std::string(all.empty() ? "" : ", ") + k;
            throw cli::UsageError("--accept: no warning is named '" + n + "' (the names: " + all + ")");
        }
    return names;
}

int run_validate(const cli::Args& args) {
    if (args.positional().size() > 1)
        throw cli::UsageError("more than one topology file given");
    const std::string conf_path = args.str("slurm-conf", default_slurm_conf_path());
    const std::string topo_path =
        args.positional().empty() ? default_topology_path(conf_path) : args.positional().front();
    CheckOptions opts;
    opts.max_block_size = static_cast<int>(args.integer("max-block-size", 18, 0, 1'000'000));
    opts.slurm_release = judged_release(args);
    const SlurmConf conf = read_slurm_conf(conf_path);
    CheckResult r = check_topology(topo_path, conf, opts);
    accept_warnings(r, accepted_warnings(args));
    const bool quiet = args.has("quiet");
    // Problems on stderr, as Slurm's commands print theirs; std::cerr is tied
    // to std::cout, so on a terminal the lines keep their order.
    for (const auto& f : r.findings)
        if (f.severity != Severity::kNote)
            std::cerr << f.str() << '\n';
        else if (!quiet)
            std::cout << f.str() << '\n';
    if (!quiet)
        std::cout << r.summary(topo_path, args.has("strict")) << '\n';
    const bool failed = r.count(Severity::kError) > 0 || (args.has("strict") && r.count(Severity::kWarning) > 0);
    return failed ? 1 : 0;
}

int run_local(const cli::Args& args) {
    if (!args.positional().empty())
        throw cli::UsageError("--local takes no file argument");
    LocalOptions o;
    o.hwloc_xml = args.str("hwloc-xml");
    o.nvml_library = args.str("nvml-library");
    o.use_nvml = !args.has("no-nvml");
    o.hostname = args.str("hostname");
    const NodeReport r = discover_local(o);
    std::cout << (args.has("json") ? report_json(r) : report_text(r));
    return r.problems.empty() ? 0 : 1;
}

// The generated file replaces the old one atomically and safely (the same
// writer slurmctld uses for its files).
void write_output(const std::string& path, const std::string& text) {
    write_file_atomically(path, text, kReportFileMode, false);
}

int run_generate(const cli::Args& args) {
    for (const char* o : {"topology", "partition", "output-dir", "force"})
        if (args.has(o))
            throw cli::UsageError(std::string("--") + o + " needs --from-topology-yaml");
    if (args.positional().empty())
        throw cli::UsageError("--generate needs the node reports (files or directories)");
    GenerateOptions o;
    const std::string output = args.str("output");
    const std::string format = args.str("format", output.empty() ? "yaml" : "");
    if (format == "yaml")
        o.format = SourceFormat::kYaml;
    else if (format == "conf")
        o.format = SourceFormat::kTopologyConf;
    else if (format.empty())
        o.format = guess_format(output);
    else
        throw cli::UsageError("--format must be yaml or conf");
    o.prefix = args.str("prefix", "nvl");
    if (o.prefix.empty() || o.prefix.find_first_of(" \t=,[]#:") != std::string::npos)
        throw cli::UsageError("--prefix must be a plain name");
    o.width = static_cast<int>(args.integer("width", 4, 1, 9));
    o.slice = static_cast<int>(args.integer("slice", 16, 1, 10'000));
    o.spares = static_cast<int>(args.integer("spares", 2, 0, 10'000));
    o.previous = args.str("previous");
    o.su_racks = static_cast<int>(args.integer("su-racks", 0, 0, 100'000));
    if (o.su_racks == 1)
        throw cli::UsageError("--su-racks must be at least 2");
    if (o.format == SourceFormat::kTopologyConf && o.su_racks && (o.su_racks & (o.su_racks - 1)))
        throw cli::UsageError("--su-racks: topology.conf's BlockSizes can only express a power of two racks");
    if (o.format == SourceFormat::kTopologyConf && (args.has("slice") || args.has("spares")))
        throw cli::UsageError("--slice and --spares apply to nvlblock.yaml; topology.conf has no such settings");
    o.slurm_release = judged_release(args);
    const GenerateResult r = generate_topology(args.positional(), o);
    for (const auto& n : r.notes)
        std::cerr << n.where.str() << ": note: " << n.message << '\n';
    for (const auto& e : r.errors)
        std::cerr << e.str() << '\n';
    if (!r.errors.empty()) {
        std::cerr << "nvlblock-check: nothing written (" << r.errors.size() << " problem"
                  << (r.errors.size() == 1 ? "" : "s") << ")\n";
        return 1;
    }
    if (output.empty())
        std::cout << r.text;
    else
        write_output(output, r.text);
    std::cerr << "nvlblock-check: " << r.blocks << " block" << (r.blocks == 1 ? "" : "s") << ", " << r.nodes_in_blocks
              << " nodes in blocks, " << r.outside << " outside, from " << r.reports << " report"
              << (r.reports == 1 ? "" : "s") << (output.empty() ? "" : "; wrote " + output) << '\n';
    return 0;
}

bool file_exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

int run_from_topology_yaml(const cli::Args& args) {
    if (!args.positional().empty())
        throw cli::UsageError("--from-topology-yaml takes the file as its value, and no other file");
    const std::string path = args.str("from-topology-yaml");
    ConversionOptions o;
    o.topology = args.str("topology");
    o.partition = args.str("partition");
    if (!o.topology.empty() && !o.partition.empty())
        throw cli::UsageError("--topology and --partition exclude each other");
    if (args.has("slice"))
        o.slice = static_cast<int>(args.integer("slice", 16, 1, 10'000));
    if (args.has("spares"))
        o.spares = static_cast<int>(args.integer("spares", 2, 0, 10'000));
    o.slurm_release = judged_release(args);
    const std::string out_dir = args.str("output-dir");
    // Findings go to stdout when the files are written, to stderr when they are printed.
    std::ostream& report = out_dir.empty() ? std::cerr : std::cout;

    std::optional<SlurmConf> conf;
    const std::string conf_path = args.str("slurm-conf", default_slurm_conf_path());
    if (args.has("slurm-conf") || file_exists(conf_path)) {
        conf = read_slurm_conf(conf_path);
        for (const auto& p : conf->problems)
            report << p.str() << '\n';
        if (!conf->problems.empty())
            return 1;
    }
    Conversion c;
    try {
        c = convert_topology_yaml(read_slurm_topology_yaml(read_text_file(path), path), o, conf ? &*conf : nullptr);
    } catch (const ConfigError& e) {
        for (const auto& d : e.problems())
            report << d.str() << '\n';
        report << "nvlblock-check: nothing written\n";
        return 1;
    }
    for (const auto& f : c.findings)
        report << f.str() << '\n';
    if (!c.ok()) {
        report << "nvlblock-check: nothing written\n";
        return 1;
    }
    if (out_dir.empty()) {
        std::cout << "==> topology.conf <==\n" << c.topology_conf << "\n==> nvlblock.yaml <==\n" << c.nvlblock_yaml;
    } else {
        const std::string tc = out_dir + "/topology.conf", ny = out_dir + "/nvlblock.yaml";
        for (const auto& f : {tc, ny})
            if (!args.has("force") && file_exists(f)) {
                report << f << ": exists; nothing written (--force replaces it)\n";
                return 1;
            }
        write_output(tc, c.topology_conf);
        write_output(ny, c.nvlblock_yaml);
    }
    report << "nvlblock-check: topology '" << c.topology << "' of " << path << ": " << c.blocks << " block"
           << (c.blocks == 1 ? "" : "s") << ", " << c.nodes << " nodes"
           << (out_dir.empty() ? "" : "; wrote " + out_dir + "/topology.conf and " + out_dir + "/nvlblock.yaml")
           << '\n';
    return 0;
}

// "24.11.5" from `slurmctld -V` or `scontrol -V`, or "" when neither runs here.
std::string slurm_release_here() {
    for (const char* cmd : {"slurmctld -V 2>/dev/null", "scontrol -V 2>/dev/null"}) {
        FILE* p = ::popen(cmd, "r");
        if (!p)
            continue;
        char buf[256];
        std::string out;
        while (std::fgets(buf, sizeof buf, p))
            out += buf;
        ::pclose(p);
        if (const auto r = slurm_release_of(out))
            return *r;
    }
    return "";
}

std::string plugin_finding_line(const PluginFinding& f, const std::string& release) {
    switch (f.state) {
    case PluginState::kMatches:
        return "OK: " + f.path + ": nvlblock " + f.build.nvlblock + " built for Slurm " + f.build.slurm +
               ", the release here";
    case PluginState::kOtherRelease:
        return f.path + ": built for Slurm " + f.build.slurm + ", but Slurm here is " + release +
               ": Slurm will refuse to load it and slurmctld stops; rebuild nvlblock against " + release +
               " and install it with Slurm (docs/admin.md 7.1)";
    case PluginState::kMissing:
        return f.path + ": not there";
    case PluginState::kUnmarked:
        return f.path + ": does not say which Slurm release it was built for (built before nvlblock-check "
                        "--plugins existed); rebuild it";
    }
    return f.path;
}

// Whose topology/block rules judge the file (they differ: 24.11 refuses a
// block smaller than the base size, 25.05 accepts it): --slurm-release, else
// the Slurm that runs here, else the one this build's plugins were built for.
int judged_release(const cli::Args& args) {
    std::string release = args.str("slurm-release");
    if (release.empty())
        release = slurm_release_here();
    if (release.empty())
        release = cli::built_for_slurm();
    if (release.empty())
        return kDefaultSlurmRelease;
    const auto generation = slurm_generation_of(release);
    if (!generation || !whole_release(release))
        throw cli::UsageError(kReleaseSyntax);
    return *generation;
}

int run_plugins(const cli::Args& args) {
    if (!args.positional().empty())
        throw cli::UsageError("--plugins takes no file argument");
    std::string dir = args.str("plugin-dir");
    if (dir.empty()) {
        const SlurmConf conf = read_slurm_conf(args.str("slurm-conf", default_slurm_conf_path()));
        const auto plugin_dir = conf.get("PluginDir");
        if (!plugin_dir)
            throw cli::UsageError("slurm.conf (" + conf.path + ") sets no PluginDir: give --plugin-dir");
        dir = plugin_dir->substr(0, plugin_dir->find(':')); // the first directory of the list
    }
    const std::string release = args.has("slurm-release") ? args.str("slurm-release") : slurm_release_here();
    if (!whole_release(release))
        throw cli::UsageError(release.empty() ? "cannot tell which Slurm release runs here (no slurmctld or "
                                                "scontrol answered -V): give --slurm-release"
                                              : kReleaseSyntax);
    int bad = 0;
    for (const PluginFinding& f : check_plugin_builds(dir, release)) {
        std::cout << plugin_finding_line(f, release) << '\n';
        bad += f.state != PluginState::kMatches;
    }
    return bad ? 1 : 0;
}

int run(int argc, char** argv) {
    cli::Args args(argc, argv, {"slurm-conf", "max-block-size", "hwloc-xml",          "nvml-library",  "hostname",
                                "output",     "format",         "previous",           "prefix",        "width",
                                "slice",      "spares",         "from-topology-yaml", "topology",      "partition",
                                "output-dir", "su-racks",       "plugin-dir",         "slurm-release", "accept"},
                   {"help", "local", "generate", "json", "no-nvml", "strict", "quiet", "force", "plugins"},
                   {{'Q', "quiet"}, {'o', "output"}});
    if (args.has("help")) {
        std::cout << kUsage;
        return 0;
    }
    if (args.has("local") + args.has("generate") + args.has("from-topology-yaml") + args.has("plugins") > 1)
        throw cli::UsageError("--local, --generate, --from-topology-yaml and --plugins exclude each other");
    if (args.has("accept") &&
        (args.has("local") || args.has("generate") || args.has("from-topology-yaml") || args.has("plugins")))
        throw cli::UsageError("--accept applies to a topology check, not to --local, --generate, "
                              "--from-topology-yaml or --plugins");
    if (args.has("plugins"))
        return run_plugins(args);
    if (args.has("plugin-dir"))
        throw cli::UsageError("--plugin-dir needs --plugins");
    if (args.has("local"))
        return run_local(args);
    if (args.has("generate"))
        return run_generate(args);
    if (args.has("from-topology-yaml"))
        return run_from_topology_yaml(args);
    for (const char* o : {"topology", "partition", "output-dir", "force"})
        if (args.has(o))
            throw cli::UsageError(std::string("--") + o + " needs --from-topology-yaml");
    for (const char* o : {"json", "hwloc-xml", "nvml-library", "no-nvml", "hostname"})
        if (args.has(o))
            throw cli::UsageError(std::string("--") + o + " needs --local");
    for (const char* o : {"output", "format", "previous", "prefix", "width", "slice", "spares", "su-racks"})
        if (args.has(o))
            throw cli::UsageError(std::string("--") + o + " needs --generate");
    return run_validate(args);
}

} // namespace

int main(int argc, char** argv) {
    return nvlblock::cli::run_main("nvlblock-check", run, argc, argv);
}
