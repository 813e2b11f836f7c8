# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of `nvlcluster up`'s options, before anything is built or
started: flags that exclude each other, values out of range, paths that
slurm.conf cannot hold."""

import os
import re
from argparse import Namespace

from .builds import PLUGIN_FILES
from .common import ClusterError
from .slurmconf import fragment_conf, is_yaml


def validate_fragment_opts(opts: Namespace) -> None:
    """up --slurm-conf-fragment FILE --topology FILE: a cluster of someone
    else's node names and topology file; sets opts.nodes."""
    for flag, path in (("--slurm-conf-fragment", opts.slurm_conf_fragment),
                       ("--topology", opts.topology)):
        if not path:
            raise ClusterError("--slurm-conf-fragment and --topology go together")
        if not os.path.isfile(path):
            raise ClusterError(f"{flag} {path}: no such file")
    if not opts.front_end:
        raise ClusterError("--slurm-conf-fragment needs --front-end")
    for flag, value in (("--racks", opts.racks), ("--slice", opts.slice), ("--block-sizes", opts.block_sizes),
                        ("--spares", opts.spares), ("--lending", opts.lending or None),
                        ("--reserve", opts.reserve), ("--preempt-partition", opts.preempt_partition or None),
                        ("--config", opts.config), ("--recovery-wait", opts.recovery_wait),
                        ("--block-fault", opts.block_fault),
                        ("--status-interval", opts.status_interval),
                        ("--extra-nodes", opts.extra_nodes or None),
                        ("--topology-conf", opts.topology_conf or None)):
        if value is not None:
            raise ClusterError(f"{flag} and --topology exclude each other; the files say it all")
    if opts.plugin == "block" and is_yaml(opts.topology):
        raise ClusterError("topology/block reads topology.conf, not nvlblock.yaml")
    opts.nodes, _ = fragment_conf(opts.slurm_conf_fragment)
    # The rest of `up` counts racks x nodes per rack.
    opts.racks, opts.nodes_per_rack = 1, len(opts.nodes)


def validate_plugin_dir(opts: Namespace) -> None:
    """up --plugin-dir DIR: the nvlblock plugins as installed there (a Debian
    package's /usr/lib/slurm, a `cmake --install` prefix), loaded in place
    instead of a build of this repository. They must have been built against
    the Slurm this cluster runs; Slurm itself refuses another release's."""
    if not opts.plugin_dir:
        return
    if opts.plugin != "nvlblock":
        raise ClusterError("--plugin-dir applies to --plugin nvlblock only")
    opts.plugin_dir = os.path.abspath(opts.plugin_dir)
    if re.search(r"[\s#=:]", opts.plugin_dir):
        # PluginDir is a colon-separated list with no quoting.
        raise ClusterError(f"--plugin-dir {opts.plugin_dir}: the path must not contain "
                           "blanks, '#', '=' or ':'")
    missing = [f for f in PLUGIN_FILES if not os.path.isfile(os.path.join(opts.plugin_dir, f))]
    if missing:
        raise ClusterError(f"--plugin-dir {opts.plugin_dir}: no {', '.join(missing)} there")


def validate_up_opts(opts: Namespace) -> None:
    if re.search(r"[\s#=]", os.path.abspath(opts.dir)):
        # slurm.conf has no quoting for paths.
        raise ClusterError(f"--dir {opts.dir}: the path must not contain blanks, '#' or '='")
    validate_plugin_dir(opts)
    opts.nodes = None
    if opts.slurm_conf_fragment or opts.topology:
        validate_fragment_opts(opts)
        return
    if opts.racks is None:
        raise ClusterError("--racks is required (unless --slurm-conf-fragment and --topology)")
    # Flags that only change nvlblock.yaml.
    yaml_flags = (("--spares", opts.spares), ("--lending", opts.lending or None), ("--reserve", opts.reserve),
                  ("--recovery-wait", opts.recovery_wait), ("--block-fault", opts.block_fault),
                  ("--status-interval", opts.status_interval))
    if opts.plugin == "block":
        for flag, value in yaml_flags + (("--config", opts.config),
                                         ("--topology-conf", opts.topology_conf or None)):
            if value is not None:
                raise ClusterError(f"{flag} applies to --plugin nvlblock only")
    if opts.topology_conf:
        for flag, value in yaml_flags + (("--config", opts.config),):
            if value is not None:
                raise ClusterError(f"{flag} sets nvlblock.yaml, which --topology-conf does not "
                                   "write (the plugin reads the plain topology.conf)")
    if opts.config:
        if not os.path.isfile(opts.config):
            raise ClusterError(f"--config {opts.config}: no such file")
        for flag, value in (("--slice", opts.slice),) + yaml_flags:
            if value is not None:
                # Silently ignoring one or the other would be worse.
                raise ClusterError(f"{flag} and --config exclude each other; put it in the file")
    if getattr(opts, "accounting", False) and opts.front_end:
        # Slurm's accounting variant is a multiple-slurmd build.
        raise ClusterError("--accounting is not supported with --front-end")
    if getattr(opts, "lend_grace_time", None) is not None:
        if not opts.preempt_partition:
            raise ClusterError("--lend-grace-time sets the GraceTime of --preempt-partition's partition; "
                               "add --preempt-partition")
        if opts.lend_grace_time < 0:
            raise ClusterError("--lend-grace-time must not be negative")
    if opts.recovery_wait is not None and opts.recovery_wait < 0:
        raise ClusterError("--recovery-wait must not be negative")
    if opts.block_fault is not None and not 0 < opts.block_fault <= 1:
        raise ClusterError("--block-fault must be a fraction in (0, 1]")
    if opts.extra_nodes < 0:
        raise ClusterError("--extra-nodes must not be negative")
    if opts.slice is not None and not 1 <= opts.slice <= opts.nodes_per_rack:
        raise ClusterError(f"--slice must be between 1 and --nodes-per-rack ({opts.nodes_per_rack})")
    if opts.spares is not None and opts.spares < 0:
        raise ClusterError("--spares must not be negative")
