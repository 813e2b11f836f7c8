// SPDX-License-Identifier: GPL-2.0-or-later
//
// nvlblock-status: the status file slurmctld writes, as a table.
#include "cli.hpp"
#include "lemon_request.hpp"
#include "model/hostlist.hpp"
#include "readers/load_topology.hpp"
#include "run_main.hpp"
#include "slurm_conf.hpp"
#include "status_view.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>

using namespace nvlblock;

namespace {

const char* kUsage = R"(usage: nvlblock-status [options] [STATUS_FILE]

Show the JSON status file that slurmctld (TopologyPlugin=topology/nvlblock)
writes every status.interval: one row per block with its health, nodes,
healthy and failed nodes (and which), busy, lent and free nodes, spares
free/used/lent, nodes held for restarting jobs and stranded nodes; cluster
totals, fragmentation, and recoveries with the jobs still waiting.

STATUS_FILE defaults to nvlblock.yaml's status.json if set, else
<StateSaveLocation>/nvlblock-status.json, both found through slurm.conf.

  --slurm-conf FILE   slurm.conf (default $SLURM_CONF, else /etc/slurm/slurm.conf)
  --stale SECONDS     warn when the file is older than this (default three
                      status intervals: 90 s unless nvlblock.yaml says otherwise)
  --problems          list only blocks that are not healthy or have failed or
                      held nodes (the totals still cover every block)
  --recent N          recent recoveries to list (default 5)
  --now UNIX_TIME     take this as the current time (for replaying old files)
  --clear-lemon NODES forget these nodes' failures under jobs (a hostlist), so
                      that they are no longer lemons (docs/admin.md 4.6): asks
                      slurmctld through <StateSaveLocation>/nvlblock-requests
                      (root or SlurmUser); applied within seconds and logged
                      by slurmctld. Shows nothing else.

Exit status: 0 shown; 1 the file cannot be read or is not a status file;
2 usage error; 3 shown, but the file is stale.
)";

struct Located {
    std::string path;
    std::int64_t interval = 30;
};

Located locate(const cli::Args& args) {
    Located l;
    const std::string conf_path = args.str("slurm-conf", tool::default_slurm_conf_path());
    // nvlblock.yaml beside slurm.conf may move the file and set the interval.
    const std::string yaml = dirname_of(conf_path) + "/nvlblock.yaml";
    std::string from_yaml;
    if (access(yaml.c_str(), R_OK) == 0) {
        try {
            const TopologySpec spec = read_topology_spec(yaml);
            from_yaml = spec.policy.status.json_path;
            l.interval = spec.policy.status.interval_seconds;
        } catch (const ConfigError& e) {
            std::cerr << "nvlblock-status: warning: " << e.first().str() << " (ignoring " << yaml << ")\n";
        }
    }
    if (!args.positional().empty()) {
        l.path = args.positional().front();
        return l;
    }
    if (!from_yaml.empty()) {
        l.path = from_yaml;
        return l;
    }
    const tool::SlurmConf conf = tool::read_slurm_conf(conf_path);
    if (!conf.problems.empty() && conf.settings.empty())
        throw std::runtime_error(conf.problems.front().str() + " (give the status file as an argument)");
    l.path = conf.get("StateSaveLocation").value_or("/var/spool/slurmctld") + "/nvlblock-status.json";
    return l;
}

int clear_lemons(const cli::Args& args) {
    const std::string conf_path = args.str("slurm-conf", tool::default_slurm_conf_path());
    const tool::SlurmConf conf = tool::read_slurm_conf(conf_path);
    if (!conf.problems.empty() && conf.settings.empty())
        throw std::runtime_error(conf.problems.front().str());
    std::vector<std::string> nodes;
    try {
        nodes = hostlist::expand(args.str("clear-lemon", ""));
    } catch (const std::exception& e) {
        throw cli::UsageError(std::string("--clear-lemon: ") + e.what());
    }
    if (nodes.empty())
        throw cli::UsageError("--clear-lemon needs node names");
    for (const std::string& path :
         status::request_clear_lemons(conf.get("StateSaveLocation").value_or("/var/spool/slurmctld"), nodes,
                                      conf.get("SlurmUser").value_or("root")))
        std::cout << "asked slurmctld: " << path << "\n";
    std::cout << "slurmctld applies it within seconds while in control and logs \"failures of NODE cleared\"\n";
    return 0;
}

int run(int argc, char** argv) {
    cli::Args args(argc, argv, {"slurm-conf", "stale", "now", "recent", "clear-lemon"}, {"help", "problems"});
    if (args.has("help")) {
        std::cout << kUsage;
        return 0;
    }
    if (args.has("clear-lemon"))
        return clear_lemons(args);
    if (args.positional().size() > 1)
        throw cli::UsageError("more than one status file given");
    const Located where = locate(args);
    status::RenderOptions o;
    o.now = args.integer("now", static_cast<long long>(std::time(nullptr)), 0, INT64_MAX);
    o.stale_after = args.integer("stale", 3 * where.interval, 1, INT64_MAX);
    o.problems_only = args.has("problems");
    o.recent = static_cast<std::size_t>(args.integer("recent", 5, 0, 1000));
    const status::Status s = status::load_status(where.path);
    std::cout << status::render(s, where.path, o);
    return status::is_stale(s, o) ? 3 : 0;
}

} // namespace

int main(int argc, char** argv) {
    return nvlblock::cli::run_main("nvlblock-status", run, argc, argv);
}
