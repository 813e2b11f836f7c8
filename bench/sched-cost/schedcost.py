# SPDX-License-Identifier: GPL-2.0-or-later
"""What the scheduling benchmarks in bench/sched-cost share: a front-end test
cluster per topology plugin (scripts/nvlcluster), its client environment,
seeded job submission, and perf profiles of its slurmctld.

The variants compared: topology/default (no topology at all, "flat"),
topology/block, and topology/nvlblock with or without spares. Each gets its
own cluster, one after the other, in one run of a benchmark.
"""

import concurrent.futures
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster import client, common  # noqa: E402

# name -> (nvlcluster --plugin, extra nvlcluster arguments, extra slurm.conf lines).
# flat: nvlcluster's block cluster with the TopologyPlugin line replaced, so
# the nodes, partition and every other setting are the same.
VARIANTS = {
    "flat": ("block", (), ("TopologyPlugin=topology/default",)),
    "block": ("block", (), ()),
    "nvlblock": ("nvlblock", (), ()),
    "nvlblock_no_spares": ("nvlblock", ("--spares", "0"), ()),
    # The configuration docs/admin.md recommends: 2 spares per rack, reclaimed
    # from running work when a failure needs them, so nothing is withheld.
    "nvlblock_recommended": ("nvlblock", ("--reserve", "reclaim"), ()),
}


log = functools.partial(common.log, tag="sched-cost")


class Cluster(client.Cluster):
    """A running front-end cluster of one variant; a context manager that
    always takes the cluster down again."""

    def __init__(self, variant, racks, port, scheduler_parameters):
        self.variant = variant
        self.racks = racks
        self.port = port
        self.scheduler_parameters = scheduler_parameters
        self.dir = None
        self.env = None
        self.cwd = None

    def __enter__(self):
        plugin, extra, conf = VARIANTS[self.variant]
        self.dir = tempfile.mkdtemp(prefix=f"nvlblock-schedcost-{self.variant}-")
        args = ["--racks", str(self.racks), "--front-end", "--plugin", plugin, "--port-base", str(self.port),
                *extra, "--extra-conf", f"SchedulerParameters={self.scheduler_parameters}", *conf]
        try:
            up = client.Cluster.up(self.dir, args)
        except client.CommandError as e:
            self.down()
            sys.exit(f"sched-cost: {self.variant}: {e}")
        self.env, self.cwd = up.env, up.cwd
        return self

    def __exit__(self, *exc):
        self.down()

    def down(self):
        if self.dir:
            client.down(self.dir)
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    @property
    def slurmctld_log(self):
        return os.path.join(self.dir, "log", "slurmctld.log")

    @property
    def slurmctld_pid(self):
        return self.ctld_pid()

    def cpu_seconds(self):
        """slurmctld's CPU time so far, in seconds: per thread name
        ("sched_agent": the main scheduler, "bckfl": backfill; from
        schedstat, in nanoseconds, so that a short burst is measured
        finely), and "all": the whole process, threads that ended included
        (RPCs, job launches; from stat, in clock ticks)."""
        pid = self.slurmctld_pid
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        # utime and stime: fields 14 and 15 of proc(5).
        out = {"all": (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")}
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    ns = int(f.read().split()[0])
            except OSError:
                continue  # the thread ended
            if name != "all":
                out[name] = out.get(name, 0.0) + ns / 1e9
        return out

    def slurm(self, *argv, check=True):
        return self.run(*argv, check=check, timeout=None)

    def partition(self, state):
        self.slurm("scontrol", "update", "partitionname=gpu", f"state={state}")

    def count(self, state):
        q = self.slurm("squeue", "-h", "-t", state, "-o", "%i", check=False)
        return len(q.stdout.split())

    def submit(self, jobs):
        """Submit (nodes, segment, seconds) jobs; the number accepted."""

        def one(job):
            nodes, seg, secs = job
            cmd = ["sbatch", "-N", str(nodes), "-t", str(max(1, secs * 2 // 60 + 1)), "-o", "/dev/null",
                   "--wrap", f"sleep {secs}"]
            if seg:
                cmd.insert(1, f"--segment={seg}")
            return self.run(*cmd, check=False, timeout=None).returncode == 0

        # Four sbatch at a time: slurmctld serialises them anyway; this only
        # hides the client's start-up time.
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            return sum(pool.map(one, jobs))


def sdiag_stats(out):
    """Main and backfill cycle statistics from sdiag's text."""
    main, bf = out.split("Main schedule statistics", 1)[1].split("Backfilling stats", 1)

    def num(section, label):
        m = re.search(rf"{label}:\s+(\d+)", section)
        return int(m.group(1)) if m else 0
    return {
        "main_cycles": num(main, "Total cycles"),
        "main_mean_us": num(main, "Mean cycle"),
        "main_max_us": num(main, "Max cycle"),
        "backfill_cycles": num(bf, "Total cycles"),
        "backfill_mean_us": num(bf, "Mean cycle"),
        "backfill_max_us": num(bf, "Max cycle"),
        "backfilled_jobs": num(bf, "Total backfilled jobs \\(since last slurm start\\)"),
        "backfill_depth_mean": num(bf, "Depth Mean"),
        "main_depth_mean": num(main, "Mean depth cycle"),
        "jobs_started": num(out, "Jobs started"),
        "jobs_completed": num(out, "Jobs completed"),
    }


class Profile:
    """perf record of a running slurmctld (software cpu-clock: this machine
    has no hardware counters), stopped with SIGINT; a context manager."""

    def __init__(self, pid, path, frequency=999):
        self.pid = pid
        self.path = path
        self.frequency = frequency
        self.proc = None

    def __enter__(self):
        if not self.path:
            return self
        if not shutil.which("perf"):
            sys.exit("sched-cost: --perf needs perf (scripts/install-deps installs linux-perf)")
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        # Frame-pointer call chains are enough to charge malloc and
        # bitstring work to the plugin or to Slurm, where the caller keeps
        # frame pointers; the self-time table (by DSO) needs none.
        self.proc = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", str(self.frequency), "-g",
                                      "-p", str(self.pid), "-o", self.path],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # perf attaches before the measured work starts
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _plugin_functions():
    """Names of the functions defined in nvlblock's plugin sources: in
    topology_nvlblock.so they are the shim's own, the rest of that object is
    Slurm's topology common code linked into it."""
    names = set()
    for root, _, files in os.walk(os.path.join(REPO, "plugin")):
        for f in files:
            if f.endswith(".c"):
                with open(os.path.join(root, f)) as src:
                    names.update(re.findall(r"^\w[\w\s\*]*?\b(\w+)\(", src.read(), re.M))
    return names


def _group(dso, sym, own):
    if dso == "libnvlblock.so.1":
        return "nvlblock core (libnvlblock)"
    if dso == "topology_nvlblock.so":
        base = sym.split("@")[0]
        return "nvlblock shim" if base in own else "Slurm topology common code (in the plugin)"
    if dso in ("topology_block.so", "topology_default.so"):
        return f"Slurm {dso}"
    if dso.startswith("libc.so"):
        return "libc (allocations and copies, nearly all Slurm's)"
    if dso == "[kernel.kallsyms]":
        return "kernel"
    return "Slurm (slurmctld, libslurmfull, select/cons_tres, other plugins)"


def profile_summary(path, top=25):
    """Self time of a perf.data as text: per group (Slurm, libc, kernel, the
    nvlblock shim, the nvlblock core) and by symbol, for the scheduler
    threads (main scheduler and backfill) and for the whole process."""
    own = _plugin_functions()
    out = []
    for label, comm in (("scheduler threads (sched_agent, bckfl)", ["--comm", "sched_agent,bckfl"]),
                        ("all threads", [])):
        r = subprocess.run(["perf", "report", "-i", path, "--no-children", "--stdio", "--sort", "dso,sym", "-g",
                            "none", "-n", "--percent-limit", "0", *comm], capture_output=True, text=True)
        rows = []
        for line in r.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*)$", line)
            if m:
                rows.append((int(m.group(2)), m.group(3), m.group(4).strip()))
        total = sum(n for n, _, _ in rows) or 1
        groups = {}
        for n, dso, sym in rows:
            g = _group(dso, sym, own)
            groups[g] = groups.get(g, 0) + n
        text = [f"## {label}: {total} samples (cpu-clock)", "", "| share | samples | where |", "|---:|---:|---|"]
        text += [f"| {100 * n / total:.1f}% | {n} | {g} |" for g, n in sorted(groups.items(), key=lambda x: -x[1])]
        text += ["", "| share | samples | object | symbol |", "|---:|---:|---|---|"]
        text += [f"| {100 * n / total:.1f}% | {n} | {dso} | {sym} |"
                 for n, dso, sym in sorted(rows, key=lambda x: -x[0])[:top]]
        out.append("\n".join(text))
    return "\n\n".join(out) + "\n"
