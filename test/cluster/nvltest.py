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

import fcntl
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
NVLCLUSTER = os.path.join(REPO, "scripts", "nvlcluster")

PORT_FIRST = 23000     # another user has 17000-22999 on shared hosts
PORT_LAST = 29999
PORT_STEP = 100        # slurmctld + up to 99 slurmd per cluster
LOCK_DIR = os.path.join(tempfile.gettempdir(), "nvlt-ports")
LOG_KEEP_DIR = os.environ.get("NVLTEST_LOG_DIR",
                              os.path.join(tempfile.gettempdir(), "nvlt-failed-logs"))

# AuthInfo=cred_expire=10 (nvlcluster): a requeued job may not start before
# cred_expire + 1 s; then a scheduling pass (sched_interval=5) must reach it.
REQUEUE_DELAY = 11


def log(msg):
    print(f"[nvltest {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class SubmitError(Exception):
    """sbatch refused a job; .stderr holds what it said."""

    def __init__(self, args, stderr):
        super().__init__(f"sbatch {' '.join(args)} failed: {stderr.strip()}")
        self.stderr = stderr


class CommandError(Exception):
    pass


# --------------------------------------------------------------------------
# Names


def node_index(node):
    """gb0007 -> 7; None for nodes outside the racks (cpu01...)."""
    m = re.fullmatch(r"gb(\d+)", node)
    return int(m.group(1)) if m else None


def rack_of(node, per_rack=18):
    """The rack (block) of a node: gb0001-gb0018 -> rack01; None for a
    node in no rack (an --extra-nodes server)."""
    i = node_index(node)
    if i is None:
        return None
    return f"rack{(i - 1) // per_rack + 1:02d}"


def rack_nodes(rack, per_rack=18):
    """All node names of rack 'rackNN'."""
    r = int(rack[4:])
    return [f"gb{i:04d}" for i in range((r - 1) * per_rack + 1, r * per_rack + 1)]


def racks_of(nodes, per_rack=18):
    """{rack: count} of a node list (None for nodes in no rack)."""
    out = {}
    for n in nodes:
        r = rack_of(n, per_rack)
        out[r] = out.get(r, 0) + 1
    return out


def hostlist(nodes):
    """A comma-separated node list Slurm accepts (no compression needed)."""
    return ",".join(nodes)


def parse_kv(line):
    """'Key=Value Key2=Value with spaces Key3=...' -> dict. A new key starts
    at a blank followed by an identifier and '='; values may hold blanks
    (Reason=..., Command=...)."""
    out = {}
    for part in re.split(r"\s+(?=[A-Za-z][A-Za-z0-9_:/.]*=)", line.strip()):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


# --------------------------------------------------------------------------
# Ports


class PortBlock:
    """A block of PORT_STEP ports claimed for one cluster: a lock file per
    block held for the cluster's lifetime, plus a check that nothing listens
    on any of its ports."""

    def __init__(self, count):
        if count >= PORT_STEP:
            raise ValueError(f"a cluster of {count} ports does not fit in {PORT_STEP}")
        self.count = count
        self.base = None
        self.fd = None

    def __enter__(self):
        os.makedirs(LOCK_DIR, exist_ok=True)
        for base in range(PORT_FIRST, PORT_LAST - PORT_STEP + 2, PORT_STEP):
            fd = os.open(os.path.join(LOCK_DIR, f"{base}.lock"), os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            if self._free(base):
                self.base, self.fd = base, fd
                return self
            os.close(fd)
        raise RuntimeError(f"no free block of {PORT_STEP} ports in {PORT_FIRST}-{PORT_LAST}")

    def _free(self, base):
        for port in range(base, base + self.count + 1):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("", port))
                except OSError:
                    return False
        return True

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


# --------------------------------------------------------------------------
# The cluster


class Cluster:
    """A running nvlcluster for the duration of a `with` block."""

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
            argv = [NVLCLUSTER, "up", "--dir", self.dir, "--racks", str(self.racks),
                    "--nodes-per-rack", str(self.per_rack), "--plugin", self.plugin,
                    "--port-base", str(self.ports.base)] + self.flags
            if self.extra_nodes:
                argv += ["--extra-nodes", str(self.extra_nodes)]
            log(f"up: {' '.join(argv[1:])}")
            self.started = time.monotonic()
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=900)
            if p.returncode != 0:
                raise CommandError(f"nvlcluster up failed (exit {p.returncode}):\n"
                                   + "\n".join(p.stderr.splitlines()[-40:]))
            self.env = self._env_from_exports(p.stdout)
            os.makedirs(self.jobs_dir, exist_ok=True)
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
                p = subprocess.run([NVLCLUSTER, "down", "--dir", self.dir, "--timeout", "10"],
                                   stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                   timeout=300)
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

    @staticmethod
    def _env_from_exports(stdout):
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        for line in stdout.splitlines():
            m = re.match(r"export SLURM_CONF=(.*)$", line)
            if m:
                env["SLURM_CONF"] = m.group(1).strip("'")
            m = re.match(r"export PATH=(.*):\$PATH$", line)
            if m:
                env["PATH"] = m.group(1).replace("'", "") + ":" + env.get("PATH", "/usr/bin:/bin")
        if "SLURM_CONF" not in env:
            raise CommandError(f"nvlcluster up printed no SLURM_CONF: {stdout!r}")
        # Plugins built with sanitizers: every client that loads them preloads
        # the runtime too (scripts/nvlcluster NVLCLUSTER_PRELOAD).
        if os.environ.get("NVLCLUSTER_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["NVLCLUSTER_PRELOAD"]
        return env

    # -- paths -------------------------------------------------------------

    @property
    def jobs_dir(self):
        """Working directory of every client command: job output lands here."""
        return os.path.join(self.dir, "jobs")

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    @property
    def ctld_log(self):
        return self.path("log", "slurmctld.log")

    @property
    def state_file(self):
        return self.path("state", "nvlblock_state")

    # -- commands ----------------------------------------------------------

    def run(self, *argv, check=True, timeout=60):
        """Run a Slurm client (or any) command against the cluster."""
        p = subprocess.run(list(argv), env=self.env, cwd=self.jobs_dir, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise CommandError(f"{' '.join(argv)} failed (exit {p.returncode}): "
                               f"{p.stderr.strip()} {p.stdout.strip()}")
        return p

    def nvlcluster(self, *args, timeout=300):
        p = subprocess.run([NVLCLUSTER, args[0], "--dir", self.dir] + list(args[1:]),
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
        if p.returncode != 0:
            raise CommandError(f"nvlcluster {' '.join(args)} failed: {p.stderr.strip()}")
        return p

    def sbatch(self, *args, wrap="sleep 3600"):
        """Submit a batch job; return its id. Raises SubmitError with
        sbatch's message when the job is refused."""
        argv = ["sbatch"] + list(args)
        if not any(a.startswith("--wrap") for a in args) and wrap is not None:
            argv += ["--wrap", wrap]
        p = self.run(*argv, check=False)
        m = re.search(r"Submitted batch job (\d+)", p.stdout)
        if p.returncode != 0 or not m:
            raise SubmitError(argv[1:], p.stderr + p.stdout)
        return int(m.group(1))

    def try_sbatch(self, *args, wrap="sleep 3600"):
        """(job id, None) or (None, sbatch's error message)."""
        try:
            return self.sbatch(*args, wrap=wrap), None
        except SubmitError as e:
            return None, e.stderr

    def job(self, jobid):
        """`scontrol show job -o` as a dict ({} once the job is gone)."""
        p = self.run("scontrol", "show", "job", "-o", str(jobid), check=False)
        if p.returncode != 0 or not p.stdout.strip():
            return {}
        return parse_kv(p.stdout.splitlines()[0])

    def state(self, jobid):
        return self.job(jobid).get("JobState")

    def reason(self, jobid):
        """The pending reason as squeue shows it (nvlblock's sentence where set)."""
        return self.run("squeue", "-h", "-j", str(jobid), "-o", "%r", check=False).stdout.strip()

    def expand(self, hostlist_expr):
        if not hostlist_expr or hostlist_expr == "(null)":
            return []
        out = self.run("scontrol", "show", "hostnames", hostlist_expr).stdout.split()
        return out

    def nodes(self, jobid):
        """The job's node names (expanded), [] while it has none."""
        return self.expand(self.job(jobid).get("NodeList", ""))

    def squeue(self):
        """[{id, partition, state, nodes, reason}] of every job squeue lists."""
        p = self.run("squeue", "-h", "-o", "%i|%P|%T|%N|%r")
        out = []
        for line in p.stdout.splitlines():
            i, part, st, nodes, reason = line.split("|", 4)
            out.append({"id": int(i), "partition": part, "state": st, "nodes": nodes,
                        "reason": reason})
        return out

    def queue_text(self):
        return "\n".join(f"  {j['id']} {j['partition']} {j['state']} {j['nodes']} {j['reason']}"
                         for j in self.squeue())

    def node_states(self):
        """{node: sinfo long state} (e.g. idle, allocated, blocked, down)."""
        p = self.run("sinfo", "-h", "-N", "-o", "%N %T")
        states = {}
        for line in p.stdout.splitlines():
            n, s = line.split()
            states[n] = s
        return states

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

    def set_down(self, *nodes, reason="nvltest"):
        self.run("scontrol", "update", f"nodename={hostlist(nodes)}", "state=down",
                 f"reason={reason}")

    def drain(self, *nodes, reason="nvltest"):
        self.run("scontrol", "update", f"nodename={hostlist(nodes)}", "state=drain",
                 f"reason={reason}")

    def resume(self, *nodes):
        self.run("scontrol", "update", f"nodename={hostlist(nodes)}", "state=resume")

    def cancel(self, *jobids):
        if jobids:
            self.run("scancel", *[str(j) for j in jobids], check=False)

    def restart_ctld(self, kill=True):
        args = ["restart-ctld", "--timeout", "60"] + (["--kill"] if kill else [])
        self.nvlcluster(*args)

    def ctld_pid(self):
        with open(self.path("run", "cluster.json")) as f:
            return json.load(f)["daemons"]["slurmctld"]["pid"]

    # -- logs --------------------------------------------------------------

    def log_lines(self, pattern, which="slurmctld"):
        """Lines of a daemon log (slurmctld, or a node name) matching a regex."""
        path = self.ctld_log if which == "slurmctld" else self.path("log", f"slurmd-{which}.log")
        try:
            with open(path, errors="replace") as f:
                return [l.rstrip("\n") for l in f if re.search(pattern, l)]
        except FileNotFoundError:
            return []

    def wait_log(self, pattern, timeout, which="slurmctld"):
        return self.wait_for(lambda: self.log_lines(pattern, which), timeout,
                             f"a line matching /{pattern}/ in the {which} log")

    # -- waiting -----------------------------------------------------------

    def wait_for(self, predicate, timeout, what, interval=0.5):
        """Poll predicate() until it returns something true; return that.
        On timeout fail with `what`, the queue and the topology as they are."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() >= deadline:
                raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n"
                                     f"queue now:\n{self._safe(self.queue_text)}\n"
                                     f"topology now:\n{self._safe(self._topology_text)}")
            time.sleep(interval)

    def _topology_text(self):
        return self.run("scontrol", "show", "topology", check=False).stdout

    @staticmethod
    def _safe(fn):
        try:
            return fn()
        except Exception as e:  # a failure message must not fail itself
            return f"({e})"

    def wait_state(self, jobid, states, timeout, what=None):
        """Wait until the job is in one of `states` (e.g. "RUNNING"); return its dict."""
        states = (states,) if isinstance(states, str) else tuple(states)
        return self.wait_for(lambda: (lambda j: j if j.get("JobState") in states else None)(
            self.job(jobid)), timeout, what or f"job {jobid} to be {'/'.join(states)}")

    def wait_running(self, jobid, timeout=30):
        """Wait until the job runs; return its node list."""
        self.wait_state(jobid, "RUNNING", timeout)
        return self.nodes(jobid)

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
