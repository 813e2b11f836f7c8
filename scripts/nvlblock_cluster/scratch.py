# SPDX-License-Identifier: GPL-2.0-or-later
"""A throw-away cluster for the length of a `with` block, as the cluster
tests and the benches start them:

    with ScratchCluster("spares", racks=3, flags=["--recovery-wait", "15"]) as c:
        job = c.sbatch("-N16", "--requeue")
        ...

Every cluster gets a fresh directory /tmp/nvlt-<name>-XXXX and its own port
block (PORT_STEP ports from PORT_FIRST up, claimed with a lock file so that
concurrent runs never collide). `down` always runs, even when the block
raises; then DIR/log (and the configuration and saved state) are copied to a
directory under $NVLTEST_LOG_DIR (default /tmp/nvlt-failed-logs) that the
exception's note names. DIR is removed afterwards unless NVLTEST_KEEP=1.
"""

import functools
import os
import shutil
import tempfile
import time

from . import client, common, observe, ports

PORT_FIRST = 23000     # another user has 17000-22999 on shared hosts
PORT_LAST = 29999
PORT_STEP = 100        # slurmctld + up to 99 slurmd per cluster
LOG_KEEP_DIR = os.environ.get("NVLTEST_LOG_DIR",
                              os.path.join(tempfile.gettempdir(), "nvlt-failed-logs"))

# The tag stays "nvltest", the harness these clusters came from: the kept
# logs and bench results (bench/reliability/results/*.log) are read by it.
log = functools.partial(common.log, tag="nvltest", clock=True)


class PortBlock(ports.PortBlock):
    """A block of PORT_STEP ports from PORT_FIRST claimed for one cluster."""

    def __init__(self, count):
        super().__init__(count, PORT_FIRST, PORT_LAST, PORT_STEP, ports.LOCK_DIR)


class ScratchCluster(observe.Observed):
    """A running nvlcluster for the duration of a `with` block. The job,
    node and waiting helpers are client.Cluster's, the topology, status and
    log readers observe.Observed's."""

    def __init__(self, name, racks=3, plugin="nvlblock", flags=(), nodes_per_rack=18,
                 extra_nodes=0):
        self.name = name
        self.racks = racks
        self.plugin = plugin
        self.flags = list(flags)
        self.per_rack = nodes_per_rack
        self.extra_nodes = extra_nodes
        self.dir = None
        self.env = None
        self.cwd = None
        self.ports = None
        self.started = None

    # -- life cycle --------------------------------------------------------

    def __enter__(self):
        total = self.racks * self.per_rack + self.extra_nodes
        # A front-end cluster has one slurmd (one port) whatever its size.
        slurmds = 1 if "--front-end" in self.flags else total
        # --accounting: slurmdbd and MariaDB after the slurmd (ports.py).
        extra_ports = ports.ACCOUNTING_PORTS if "--accounting" in self.flags else 0
        self.ports = PortBlock(slurmds + 1 + extra_ports).__enter__()
        try:
            self.dir = tempfile.mkdtemp(prefix=f"nvlt-{self.name}-", dir="/tmp")
            args = ["--racks", str(self.racks), "--nodes-per-rack", str(self.per_rack),
                    "--plugin", self.plugin, "--port-base", str(self.ports.base)] + self.flags
            if self.extra_nodes:
                args += ["--extra-nodes", str(self.extra_nodes)]
            log(f"up: up --dir {self.dir} {' '.join(args)}")
            self.started = time.monotonic()
            up = client.Cluster.up(self.dir, args)
            self.env, self.cwd = up.env, up.cwd
        except BaseException as e:
            self._finish(e)
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        self._finish(exc)
        return False

    def _finish(self, exc):
        """down (always), keep the logs on failure, remove DIR, free the ports."""
        try:
            if self.dir:
                p = self.down(timeout=10)
                if p.returncode != 0:
                    log(f"down failed: {p.stderr.strip()}")
        finally:
            try:
                if exc is not None and self.dir:
                    kept = self.keep_logs()
                    note = f"nvltest: logs of cluster {self.dir} kept in {kept}"
                    log(note)
                    if hasattr(exc, "add_note"):
                        exc.add_note(note)
            finally:
                if self.dir and not os.environ.get("NVLTEST_KEEP"):
                    shutil.rmtree(self.dir, ignore_errors=True)
                if self.ports:
                    self.ports.__exit__(None, None, None)
                    self.ports = None

    def keep_logs(self):
        """Copy DIR/log, DIR/etc and DIR/state somewhere that survives; return it."""
        target = os.path.join(LOG_KEEP_DIR, f"{os.path.basename(self.dir)}-{time.strftime('%H%M%S')}")
        os.makedirs(target, exist_ok=True)
        for sub in ("log", "etc", "state"):
            src = os.path.join(self.dir, sub)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(target, sub), dirs_exist_ok=True,
                                ignore_dangling_symlinks=True)
        return target
