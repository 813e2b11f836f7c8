# SPDX-License-Identifier: GPL-2.0-or-later
"""nvltest: a small harness for integration tests on a real local Slurm
cluster started with scripts/nvlcluster (Python 3 standard library only).

    with Cluster("spares", racks=3, flags=["--recovery-wait", "15"]) as c:
        job = c.sbatch("-N16", "--requeue")
        nodes = c.wait_running(job)
        c.set_down(nodes[4])
        ...

Every Cluster gets a fresh directory /tmp/nvlt-<name>-XXXX and its own port
base (blocks of PORT_STEP ports from 23000 up, claimed with a lock file so
that concurrent test runs never collide). `down` always runs, even when the
test fails; on failure DIR/log (and the configuration and saved state) are
copied to a directory under $NVLTEST_LOG_DIR (default /tmp/nvlt-failed-logs)
that the failure message names. DIR is removed afterwards unless
NVLTEST_KEEP=1.

Node and rack names follow nvlcluster: gb0001.., 18 nodes per rack by
default, rack01 holds gb0001-gb0018; --extra-nodes servers are cpu01...
"""

import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster import client, ports, timers  # noqa: E402
from nvlblock_cluster.client import NVLCLUSTER, CommandError, SubmitError, parse_kv  # noqa: E402,F401
from nvlblock_cluster.naming import node_index, rack_nodes, rack_of  # noqa: E402,F401
from nvlblock_cluster.naming import rack_counts as racks_of  # noqa: E402,F401

PORT_FIRST = 23000     # another user has 17000-22999 on shared hosts
PORT_LAST = 29999
PORT_STEP = 100        # slurmctld + up to 99 slurmd per cluster
LOCK_DIR = ports.LOCK_DIR
LOG_KEEP_DIR = os.environ.get("NVLTEST_LOG_DIR",
                              os.path.join(tempfile.gettempdir(), "nvlt-failed-logs"))

# A requeued job may not start before cred_expire + 1 s; then a scheduling
# pass must reach it (nvlblock_cluster/timers.py, where every timer is set).
REQUEUE_DELAY = timers.REQUEUE_DELAY


def log(msg):
    print(f"[nvltest {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Ports


class PortBlock(ports.PortBlock):
    """A block of PORT_STEP ports from PORT_FIRST claimed for one cluster."""

    def __init__(self, count):
        super().__init__(count, PORT_FIRST, PORT_LAST, PORT_STEP, LOCK_DIR)


# --------------------------------------------------------------------------
# The cluster


class Cluster(client.Cluster):
    """A running nvlcluster for the duration of a `with` block. The job,
    node and waiting helpers are nvlblock_cluster.client.Cluster's."""

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
        self.ports = PortBlock(slurmds + 1).__enter__()
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

    # -- paths -------------------------------------------------------------

    @property
    def jobs_dir(self):
        """Working directory of every client command: job output lands here."""
        return os.path.join(self.dir, "jobs")

    @property
    def ctld_log(self):
        return self.path("log", "slurmctld.log")

    @property
    def state_file(self):
        return self.path("state", "nvlblock_state")

    # -- commands ----------------------------------------------------------

    def node_states_short(self):
        """{node: state as plain `sinfo -N` prints it} (e.g. idle, alloc, block)."""
        p = self.run("sinfo", "-h", "-N", "-o", "%N %t")
        return dict(line.split() for line in p.stdout.splitlines())

    @property
    def slurm_version(self):
        """(major, minor, micro) of the Slurm this cluster runs."""
        if not hasattr(self, "_slurm_version"):
            out = self.run("scontrol", "--version").stdout
            m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
            if not m:
                raise CommandError(f"scontrol --version said {out!r}")
            self._slurm_version = tuple(int(x) for x in m.groups())
        return self._slurm_version

    def topology_args(self, block=None, nodes=None):
        """The `scontrol show topology` arguments that select a block or
        nodes: 24.11 takes either as its one argument; from 25.05 a bare
        argument names a topology, and block= / nodes= select."""
        if self.slurm_version < (25, 5, 0):
            return [block or nodes] if (block or nodes) else []
        return ([f"block={block}"] if block else []) + ([f"nodes={nodes}"] if nodes else [])

    def topology(self, arg=None):
        """`scontrol show topology [arg]`: one dict per block line (arg: a
        block name). nvlblock's summary line ("nvlblock: Blocks=...") is left
        out; use topology_summary()."""
        argv = ["scontrol", "show", "topology"] + self.topology_args(block=arg)
        p = self.run(*argv, check=False)
        self.last_topology_output = p.stdout + p.stderr
        return [parse_kv(line) for line in p.stdout.splitlines() if line.startswith("BlockName=")]

    def topology_block(self, name):
        for b in self.topology():
            if b.get("BlockName") == name:
                return b
        raise AssertionError(f"no block {name} in scontrol show topology: "
                             f"{self.last_topology_output}")

    def topology_summary(self):
        p = self.run("scontrol", "show", "topology")
        for line in p.stdout.splitlines():
            if line.startswith("nvlblock: "):
                return parse_kv(line[len("nvlblock: "):])
        return {}

    def status_json(self):
        with open(self.path("state", "nvlblock-status.json")) as f:
            return json.load(f)

    def status_block(self, name, status=None):
        status = status or self.status_json()
        for b in status["blocks"]:
            if b["name"] == name:
                return b
        raise AssertionError(f"no block {name} in the status JSON")

    def wait_status(self, predicate, timeout, what):
        """Wait until the status JSON (rewritten every status.interval)
        satisfies predicate(status); return it."""
        def check():
            try:
                s = self.status_json()
            except (OSError, ValueError):
                return None
            return s if predicate(s) else None
        return self.wait_for(check, timeout, what)

    def read_state_file(self):
        try:
            with open(self.state_file) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    # -- logs --------------------------------------------------------------

    def log_lines(self, pattern, which="slurmctld"):
        """Lines of a daemon log (slurmctld, or a node name) matching a regex."""
        path = self.ctld_log if which == "slurmctld" else self.path("log", f"slurmd-{which}.log")
        try:
            with open(path, errors="replace") as f:
                return [ln.rstrip("\n") for ln in f if re.search(pattern, ln)]
        except FileNotFoundError:
            return []

    def wait_log(self, pattern, timeout, which="slurmctld"):
        return self.wait_for(lambda: self.log_lines(pattern, which), timeout,
                             f"a line matching /{pattern}/ in the {which} log")

    # -- waiting -----------------------------------------------------------

    def failure_context(self):
        return (super().failure_context()
                + f"\ntopology now:\n{self._safe(self._topology_text)}"
                + f"\nslurmctld.log, last lines:\n{self._safe(self._ctld_log_tail)}")

    def _ctld_log_tail(self, lines=25):
        """The end of slurmctld's log: CI shows a failed test's output, not
        the logs keep_logs() saves on the machine it ran on."""
        with open(self.ctld_log, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def _topology_text(self):
        return self.run("scontrol", "show", "topology", check=False).stdout

    def wait_restarted(self, jobid, timeout, old_nodes=None):
        """Wait until a requeued job runs again (a new start after its requeue);
        return its nodes."""
        def check():
            j = self.job(jobid)
            if j.get("JobState") == "RUNNING" and int(j.get("Restarts", "0")) >= 1:
                return self.expand(j.get("NodeList", ""))
            return None
        return self.wait_for(check, timeout, f"job {jobid} to run again after its requeue")

    def wait_pending_reason(self, jobid, needle, timeout):
        return self.wait_for(lambda: (lambda r: r if needle in r else None)(self.reason(jobid)),
                             timeout, f"job {jobid} to pend with a reason containing {needle!r}")

    def wait_idle(self, timeout=60):
        """Wait until no job is listed as running, completing or configuring
        and every node of the racks is idle, down or drained."""
        def check():
            if any(j["state"] in ("RUNNING", "COMPLETING", "CONFIGURING") for j in self.squeue()):
                return False
            return all(s.rstrip("*~#") in ("idle", "down", "drained", "draining")
                       for s in self.node_states().values())
        self.wait_for(check, timeout, "an idle cluster")

    def reset(self, timeout=60):
        """Cancel every job, resume every failed node, wait for quiet."""
        ids = [j["id"] for j in self.squeue()]
        self.cancel(*ids)
        failed = [n for n, s in self.node_states().items()
                  if s.rstrip("*~#$@") in ("down", "drained", "draining", "fail", "failing")]
        if failed:
            self.resume(*failed)
        self.wait_for(lambda: not self.squeue(), timeout, "an empty queue")
        self.wait_for(lambda: all(s == "idle" for s in self.node_states().values()), timeout,
                      "all nodes idle")


def read_prometheus(path):
    """{'name{labels}': value} of a Prometheus text file; {} while it is missing."""
    metrics = {}
    try:
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    name, value = line.rsplit(" ", 1)
                    metrics[name] = float(value)
    except FileNotFoundError:
        pass
    return metrics


HEALTH_METRIC = {"healthy": 0, "degraded": 1, "down": 2}


class ClusterTest(unittest.TestCase):
    """Base class: prints each test's duration; maxDiff off."""

    maxDiff = None

    def setUp(self):
        self._t0 = time.monotonic()
        log(f"--- {self.id()}")

    def tearDown(self):
        log(f"--- {self.id()} took {time.monotonic() - self._t0:.1f} s")

    def assertMetricsMatchTopology(self, metrics, blocks):
        """The per-block Prometheus metrics say what `scontrol show topology` says."""
        for b in blocks:
            label = '{block="%s"}' % b["BlockName"]
            for metric, field in (("nvlblock_block_nodes", "BlockSize"), ("nvlblock_block_spares", "Spares"),
                                  ("nvlblock_block_spares_free", "SparesFree"),
                                  ("nvlblock_block_spares_used", "SparesUsed"),
                                  ("nvlblock_block_failed_nodes", "Failed")):
                self.assertEqual(metrics[metric + label], float(b[field]), metric + label)
            self.assertEqual(metrics["nvlblock_block_health" + label], HEALTH_METRIC[b["Health"]], label)

    def assertOnRack(self, nodes, rack, msg=None):
        self.assertEqual(racks_of(nodes), {rack: len(nodes)}, msg or f"{nodes} not all on {rack}")


def main():
    unittest.main(verbosity=2)
