# SPDX-License-Identifier: GPL-2.0-or-later
"""The nvlcluster commands (up, down, status, env, restart-ctld,
stop-node, start-node), each taking the parsed options of its subcommand."""

import os
import shutil
import signal
import sys
import time
from argparse import Namespace
from typing import Optional

from . import accounting as acct
from .builds import build_plugin, build_slurm, copy_plugins
from .common import ACCOUNTING_DAEMONS, ClusterError, log, wait_until
from .daemons import (check_daemons_named, check_node, check_ports, ctld_responds, daemon_pids,
                      export_lines, node_processes, slurm_cmd, spawn_daemon, stop_cluster,
                      summarize, tail_report, wait_for_idle, wait_for_registration)
from .layout import RECORD_VERSION, DirLock, Layout, Record, is_cluster_dir, require_record
from .naming import FRONTEND_NAME, GPUS_PER_NODE, extra_names, node_name, node_width
from .options import validate_up_opts
from .ports import ACCOUNTING_PORTS, accounting_ports
from .procs import signal_pid, stop_pids
from .slurmconf import gres_conf, is_yaml, nvlblock_yaml, slurm_conf, topology_conf, write_file


def prepare_dir(layout: Layout, opts: Namespace, prefix: str, plugin_dir: Optional[str]) -> None:
    """Fresh state, spool, log and run directories and all config files."""
    # Read --config first: it may be the nvlblock.yaml of this very cluster.
    config_text = None
    if opts.config:
        with open(opts.config) as f:
            config_text = f.read()
    for sub in (layout.state, layout.spool, layout.log, layout.run, layout.dev, layout.plugin):
        shutil.rmtree(sub, ignore_errors=True)
    for sub in (layout.etc, layout.state, layout.spool, layout.log, layout.run, layout.dev):
        os.makedirs(sub, exist_ok=True)
    if opts.plugin_dir:
        # Installed plugins (a package's): loaded where they are, as on a site.
        plugin_dir = opts.plugin_dir
    elif plugin_dir:
        plugin_dir = copy_plugins(plugin_dir, layout.plugin)
    total = opts.racks * opts.nodes_per_rack
    for name in os.listdir(layout.etc):
        os.unlink(os.path.join(layout.etc, name))

    if opts.topology:
        # --topology: that file alone, under the name the plugin reads
        # (nvlblock.yaml beside slurm.conf, else topology.conf).
        with open(opts.topology) as f:
            text = f.read()
        write_file(os.path.join(layout.etc, "nvlblock.yaml" if is_yaml(opts.topology)
                                else "topology.conf"), text)
        os.makedirs(os.path.join(layout.spool, FRONTEND_NAME))
        write_file(layout.slurm_conf, "\n".join(slurm_conf(layout, opts, prefix, plugin_dir)) + "\n")
        return
    # topology.conf is written for both plugins: topology/block reads it, and
    # for nvlblock it is the same racks in stock syntax, for comparison.
    block_size = opts.block_sizes or (opts.slice if opts.slice is not None else opts.nodes_per_rack)
    write_file(os.path.join(layout.etc, "topology.conf"),
               topology_conf(opts.racks, opts.nodes_per_rack, block_size))
    # --topology-conf: no nvlblock.yaml, so topology/nvlblock reads the plain
    # topology.conf above (drop-in mode).
    if opts.plugin == "nvlblock" and not opts.topology_conf:
        target = os.path.join(layout.etc, "nvlblock.yaml")
        if config_text is not None:
            write_file(target, config_text)
        else:
            write_file(target, nvlblock_yaml(opts.racks, opts.nodes_per_rack, opts, layout.state))
    # slurmd creates its spool directory only after it first wants to put
    # its socket and hwloc cache there, logging errors for both.
    if opts.front_end:
        os.makedirs(os.path.join(layout.spool, FRONTEND_NAME))
    else:
        width = node_width(total)
        for i in range(1, total + 1):
            os.makedirs(os.path.join(layout.spool, node_name(i, width)))
        for name in extra_names(opts.extra_nodes):
            os.makedirs(os.path.join(layout.spool, name))
        for i in range(GPUS_PER_NODE):
            os.symlink("/dev/null", os.path.join(layout.dev, f"nvidia{i}"))
        write_file(os.path.join(layout.etc, "gres.conf"), gres_conf(layout, total))
    write_file(layout.slurm_conf, "\n".join(slurm_conf(layout, opts, prefix, plugin_dir)) + "\n")


def check_accounting(plugin_dir: Optional[str], prefix: str) -> None:
    """up --accounting: MariaDB is installed, the Slurm has slurmdbd, and
    nvlblock's plugins, built against the default variant of the same
    release, fit the accounting variant (config.h differs only in
    HAVE_MYSQL), so the cluster loads the plugins of the tree under test."""
    acct.mariadb_programs()
    acct.check_slurm(prefix)
    if plugin_dir and not os.environ.get("NVLBLOCK_SLURM_PREFIX"):
        differ = acct.config_h_differences(build_slurm(False, "build-dir"),
                                           build_slurm(False, "build-dir", accounting=True))
        if differ:
            raise ClusterError("Slurm's accounting variant is configured unlike the default one, whose "
                               "build nvlblock's plugins are compiled against; config.h differs in: "
                               + "; ".join(differ[:5]))


def raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def cmd_up(opts: Namespace) -> None:
    started = time.monotonic()
    # A test driver that gives up on us sends SIGTERM: clean up as for Ctrl-C.
    signal.signal(signal.SIGTERM, raise_interrupt)
    validate_up_opts(opts)
    layout = Layout(opts.dir)
    total = opts.racks * opts.nodes_per_rack + opts.extra_nodes
    if os.path.isdir(layout.dir) and os.listdir(layout.dir) and not is_cluster_dir(layout):
        raise ClusterError(f"{layout.dir} is not empty and not an nvlcluster directory; "
                           "choose a new or empty --dir")
    with DirLock(layout):
        old = Record.load(layout)
        if old and old.live_daemons():
            raise ClusterError(f"a cluster is already running in {layout.dir}; "
                               "run `nvlcluster down` first")
        # Leftovers of a cluster that was never taken down properly would hold
        # ports and write into the fresh state.
        stop_cluster(layout, old, quiet=True)

        accounting = getattr(opts, "accounting", False)
        prefix = build_slurm(opts.front_end, "prefix", accounting=accounting)
        plugin_dir = None
        if opts.plugin == "nvlblock" and not opts.plugin_dir:
            plugin_dir = build_plugin(opts.front_end)
        slurmd_ports = 1 if opts.front_end else total
        if accounting:
            check_accounting(plugin_dir, prefix)
        check_ports(opts.port_base, slurmd_ports + (ACCOUNTING_PORTS if accounting else 0))
        prepare_dir(layout, opts, prefix, plugin_dir)
        record = Record(layout, {
            "version": RECORD_VERSION, "dir": layout.dir, "prefix": prefix,
            "plugin": opts.plugin,
            "plugin_dir": opts.plugin_dir or (layout.plugin if plugin_dir else None),
            "plugin_build_dir": plugin_dir, "front_end": opts.front_end,
            "ctld_daemonized": bool(getattr(opts, "ctld_daemonized", False)),
            "racks": opts.racks, "nodes_per_rack": opts.nodes_per_rack,
            "extra_nodes": opts.extra_nodes, "port_base": opts.port_base, "daemons": {},
            "accounting": accounting,
        })
        if opts.nodes:
            record.data.update(nodes=opts.nodes,
                               fragment=os.path.abspath(opts.slurm_conf_fragment),
                               topology=os.path.abspath(opts.topology))
        try:
            if accounting:
                dbd_port, db_port = accounting_ports(opts.port_base, slurmd_ports)
                log(f"starting MariaDB on port {db_port} and slurmdbd on port {dbd_port}")
                acct.write_slurmdbd_conf(layout, prefix, dbd_port, db_port)
                acct.start_mariadb(record, db_port, opts.timeout)
                acct.start_slurmdbd(record, opts.timeout)
            log(f"starting slurmctld on port {opts.port_base} ({total} nodes, "
                f"{opts.plugin}, {'front end' if opts.front_end else 'one slurmd per node'})")
            spawn_daemon(record, "slurmctld", cold=True)
            record.save()
            # Start the slurmd once slurmctld answers, so that their first
            # registration reaches it.
            if not wait_until(lambda: not record.alive("slurmctld") or ctld_responds(record),
                              opts.timeout, 0.2):
                raise ClusterError(f"slurmctld does not answer after {opts.timeout} s; see "
                                   f"{layout.daemon_log('slurmctld')}\n"
                                   + tail_report(layout, "slurmctld"))
            check_daemons_named(record, ["slurmctld"])
            names = record.slurmd_names()
            log(f"starting {len(names)} slurmd")
            for name in names:
                spawn_daemon(record, name)
            record.save()
            wait_for_idle(record, total, opts.timeout)
            if accounting:
                acct.wait_ctld_registered(record, opts.port_base, opts.timeout)
        except BaseException:
            # Including KeyboardInterrupt: never leave half a cluster behind.
            # The logs stay for the post-mortem.
            record.save()
            log("start failed; stopping what was started")
            stop_cluster(layout, record, quiet=True)
            raise
    log(f"cluster up in {time.monotonic() - started:.1f} s: {total} nodes idle, "
        + ("slurmdbd on MariaDB, " if accounting else "") + f"SLURM_CONF={layout.slurm_conf}")
    sys.stdout.write(export_lines(layout, prefix))


def cmd_down(opts: Namespace) -> None:
    layout = Layout(opts.dir)
    if not is_cluster_dir(layout):
        log(f"{layout.dir} is not an nvlcluster directory; nothing to stop")
        return
    with DirLock(layout):
        record = Record.load(layout)
        running = record.live_daemons() if record else []
        stop_cluster(layout, record, timeout=opts.timeout)
    log(f"stopped {len(running)} daemons" if running else "no daemons were running")


def cmd_status(opts: Namespace) -> int:
    layout = Layout(opts.dir)
    record = require_record(layout)
    d = record.data
    shape = (f"{len(d['nodes'])} nodes of {d['fragment']}" if d.get("nodes")
             else f"{d['racks']} racks x {d['nodes_per_rack']} nodes")
    print(f"cluster {layout.dir}: {shape}"
          + (f" + {d['extra_nodes']} servers" if d.get("extra_nodes") else "") + ", "
          f"plugin {d['plugin']}, {'front end' if d['front_end'] else 'multiple slurmd'}, "
          f"ports from {d['port_base']}")
    print(f"SLURM_CONF={layout.slurm_conf}")
    # slurmctld first, then the slurmd in node order.
    names = sorted(record.daemons, key=lambda n: (n != "slurmctld", n))
    dead = [n for n in names if not record.alive(n)]
    if len(dead) == len(names):
        print("not running (all daemons stopped)")
        return 3
    for name in names:
        # One line per daemon, except for a crowd of slurmd.
        if name in ("slurmctld",) + ACCOUNTING_DAEMONS or len(names) <= 43:
            label = name if name in ("slurmctld",) + ACCOUNTING_DAEMONS else f"slurmd {name}"
            print(f"  {label:16} pid {record.daemons[name].get('pid') or '-':>8}  "
                  f"{'dead' if name in dead else 'alive'}")
    print(f"daemons: {len(names) - len(dead)} alive, {len(dead)} dead"
          + (f" ({', '.join(dead[:20])}{' ...' if len(dead) > 20 else ''})" if dead else ""))
    if record.alive("slurmctld"):
        rc, out = slurm_cmd(layout, record.prefix, ["sinfo", "-h", "-o", "%P %T %D"])
        if rc == 0:
            print("nodes (partition state count):")
            for line in out.splitlines():
                print(f"  {line}")
        rc, out = slurm_cmd(layout, record.prefix, ["squeue", "-h", "-o", "%T"])
        if rc == 0:
            print(f"jobs: {summarize(out.split()) if out.split() else 'none'}")
    return 0 if not dead else 3


def cmd_env(opts: Namespace) -> None:
    layout = Layout(opts.dir)
    record = require_record(layout)
    sys.stdout.write(export_lines(layout, record.prefix))


def cmd_restart_ctld(opts: Namespace) -> None:
    layout = Layout(opts.dir)
    with DirLock(layout):
        record = require_record(layout)
        sig = signal.SIGKILL if opts.kill else signal.SIGTERM
        old = record.daemons.get("slurmctld", {}).get("pid")
        # The old slurmctld must be gone before the new one binds its port.
        stop_pids(daemon_pids(record, ["slurmctld"]), sig, opts.timeout)
        spawn_daemon(record, "slurmctld")
        record.save()
        if not wait_until(lambda: not record.alive("slurmctld") or ctld_responds(record),
                          opts.timeout):
            raise ClusterError(f"slurmctld does not answer after {opts.timeout} s; see "
                               f"{layout.daemon_log('slurmctld')}\n"
                               + tail_report(layout, "slurmctld"))
        # Until its nodes register again, the new slurmctld shows them as
        # UNKNOWN and schedules nothing there; nodes whose slurmd is stopped
        # stay that way.
        wait_for_registration(record, [n for n in record.slurmd_names() if record.alive(n)],
                              opts.timeout)
    log(f"slurmctld restarted ({signal.Signals(sig).name} to pid {old}), "
        f"new pid {record.daemons['slurmctld']['pid']}")


def cmd_stop_node(opts: Namespace) -> None:
    layout = Layout(opts.dir)
    with DirLock(layout):
        record = require_record(layout)
        check_node(record, opts.node)
        sig = signal.SIGKILL if opts.kill else signal.SIGTERM
        # Find the node's job processes while the picture is still intact.
        victims = [] if opts.keep_jobs else node_processes(layout, opts.node)
        was_alive = record.alive(opts.node)
        stop_pids(daemon_pids(record, [opts.node]), sig, opts.timeout)
        # A failed node takes its jobs with it; without this they would run on
        # with no slurmd to report them.
        for pid in victims:
            signal_pid(pid, signal.SIGKILL)
    log(f"slurmd {opts.node} {'stopped' if was_alive else 'was not running'}"
        + (f"; killed {len(victims)} of its job processes" if victims else ""))


def cmd_start_node(opts: Namespace) -> None:
    layout = Layout(opts.dir)
    with DirLock(layout):
        record = require_record(layout)
        check_node(record, opts.node)
        if record.alive(opts.node):
            log(f"slurmd {opts.node} already runs (pid {record.daemons[opts.node]['pid']})")
            return
        if not record.alive("slurmctld"):
            raise ClusterError("slurmctld is not running; use restart-ctld first")
        spawn_daemon(record, opts.node)
        record.save()
        wait_for_registration(record, [opts.node], opts.timeout)
    log(f"slurmd {opts.node} started, pid {record.daemons[opts.node]['pid']}")
