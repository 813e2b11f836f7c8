# SPDX-License-Identifier: GPL-2.0-or-later
"""Reliability runs on a real slurmctld (scripts/nvlcluster): fault
injection, an invariant sampler and the figures docs/reliability.md reports.

The sampler runs beside each scenario and, every second, checks:
  - slurmctld is alive (its pid, and `scontrol ping`), except while a
    scenario kills and restarts it on purpose;
  - every job submitted is pending, running or completed: none lost (gone
    from slurmctld), none failed, cancelled, timed out or preempted for good;
  - no node is in two running jobs;
  - nvlblock's spare and hold accounting (`scontrol show topology`) equals a
    recount from `scontrol show nodes`, `squeue` and the pending recoveries
    it lists: per block Failed, Free, Busy, SparesUsed, SparesFree,
    SparesLent and Held. A sample is compared only when nothing moved while
    it was read: the node states and the jobs holding nodes (squeue) equal
    before and after the topology.
It also reads slurmctld's log for the recoveries: how many failed jobs came
back in place, elsewhere, and how fast.

Standard library only; nvlblock_cluster.scratch (scripts/) starts the clusters.
"""

import json
import os
import random
import re
import statistics
import sys
import threading
import time
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster.client import parse_kv  # noqa: E402
from nvlblock_cluster.common import log_time  # noqa: E402
from nvlblock_cluster.hostlist import expand_hostlist  # noqa: E402
from nvlblock_cluster.naming import rack_name_of  # noqa: E402,F401
from nvlblock_cluster.scratch import ScratchCluster as Cluster, log  # noqa: E402,F401

# Job states that end a job for good without it having completed: seen in
# three samples in a row (a requeue passes through NODE_FAIL or PREEMPTED
# for a moment), such a job was failed by the system.
BAD_STATES = {"FAILED", "NODE_FAIL", "BOOT_FAIL", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE",
              "PREEMPTED", "REVOKED"}
BAD_STREAK = 3
# After slurmctld starts (a kill, a reconfigure), nodes register again over
# some seconds: meanwhile slurmctld's node bitmaps, which nvlblock and the
# scheduler read, and the node records scontrol prints disagree (a node whose
# slurmd was stopped before the kill is not available in the bitmaps yet
# shows ALLOCATED in scontrol). The accounting is compared again after this.
SETTLE_AFTER_START = 30


def node_class(state):
    """scontrol's State=IDLE+DRAIN, DOWN*... as nvlblock's node classes
    (plugin/common/slurm_bridge.c): failed, busy or free."""
    flags = state.split("+")
    base = flags[0]
    no_respond = base.endswith("*")
    base = base.rstrip("*~#$@^-!%")
    others = set(f.rstrip("*") for f in flags[1:])
    if base == "UNKNOWN" and not others & {"DRAIN", "FAIL", "DRAINING", "POWERED_DOWN", "POWERING_DOWN",
                                           "INVALID_REG"}:
        return "busy"  # not heard from since slurmctld started: Slurm has not said it failed
    if base in ("DOWN", "FUTURE", "UNKNOWN") or no_respond or others & {
            "NOT_RESPONDING", "POWERED_DOWN", "POWERING_DOWN", "INVALID_REG"}:
        return "failed"
    if base in ("DRAIN", "DRAINED", "DRAINING", "FAIL", "FAILING") or others & {"DRAIN", "FAIL", "DRAINING"}:
        return "failed"
    if base in ("ALLOCATED", "MIXED", "COMPLETING", "BLOCKED") or others & {"COMPLETING"}:
        return "busy"
    return "free"


SQUEUE_FORMAT = "%i|%T|%N|%D"


def allocations(squeue_out):
    """squeue -o SQUEUE_FORMAT -> {(job, state, nodes)} of the jobs holding nodes."""
    held = set()
    for line in squeue_out.splitlines():
        job, state, nodes, _count = line.split("|")
        if nodes and state in ("RUNNING", "COMPLETING", "SUSPENDED"):
            held.add((job, state, nodes))
    return held


def local_epoch(text):
    """2026-12-01T10:20:30 (slurmctld's local time) -> seconds since the epoch."""
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").timestamp()
    except ValueError:
        return None


class Sampler(threading.Thread):
    """Samples the invariants every `interval` seconds until stop()."""

    def __init__(self, cluster, interval=1.0, accounting_every=1, spares=2, reserve="idle"):
        super().__init__(daemon=True)
        self.c = cluster
        self.interval = interval
        self.accounting_every = accounting_every
        self.spares = spares
        self.reserve = reserve
        self.jobs = {}              # job id -> nodes it asked for
        self.completed = set()
        self.bad_streak = {}
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.ctld_paused = 0
        self.ctld_pauses = 0        # pauses begun so far: a sample spanning one compares nothing
        self.samples = 0
        self.accounting_samples = 0
        self.accounting_skipped = 0
        self.violations = []        # (time, kind, text)
        self.lost = set()
        self.failed = set()
        self.double_allocations = 0
        self.accounting_mismatches = 0
        self.ctld_down = 0
        self.max_pending = 0
        self.max_running = 0
        self.kills = []             # slurmctld kills a scenario made
        self.settle_until = 0.0     # accounting not compared before then (a slurmctld start)

    # -- control ------------------------------------------------------------

    def track(self, job_id, nodes):
        with self.lock:
            self.jobs[job_id] = nodes

    def pause_ctld(self):
        """slurmctld goes down on purpose (a kill and restart) until resume_ctld()."""
        with self.lock:
            self.ctld_paused += 1
            self.ctld_pauses += 1

    def resume_ctld(self):
        with self.lock:
            self.ctld_paused -= 1
            self.settle_until = time.monotonic() + SETTLE_AFTER_START

    def stop(self):
        self.halt.set()
        self.join(timeout=60)

    def violation(self, kind, text):
        self.violations.append((round(time.time(), 1), kind, text))
        log(f"VIOLATION {kind}: {text}")

    # -- sampling -----------------------------------------------------------

    def run(self):
        while not self.halt.is_set():
            t0 = time.monotonic()
            try:
                self.sample()
            except Exception as e:  # a sampler that dies would hide everything after
                with self.lock:
                    paused = self.ctld_paused
                if not paused:
                    self.violation("sampler", f"{type(e).__name__}: {e}")
            self.halt.wait(max(0.0, self.interval - (time.monotonic() - t0)))

    def _run(self, *argv, timeout=30):
        return self.c.run(*argv, check=False, timeout=timeout)

    def node_states(self):
        p = self._run("scontrol", "show", "nodes", "-o", timeout=60)
        if p.returncode != 0:
            return None
        out = {}
        for line in p.stdout.splitlines():
            m = re.search(r"NodeName=(\S+) .*?\bState=(\S+)", line)
            if m:
                out[m.group(1)] = node_class(m.group(2))
        return out

    def ctld_alive(self):
        try:
            pid = self.c.ctld_pid()
            os.kill(pid, 0)
        except (OSError, KeyError, ValueError):
            return False
        return "UP" in self._run("scontrol", "ping").stdout

    def sample(self):
        with self.lock:
            paused = self.ctld_paused
            pauses = self.ctld_pauses
            jobs = dict(self.jobs)
        if not self.ctld_alive():
            if not paused:
                self.ctld_down += 1
                self.violation("slurmctld", "slurmctld is not running or does not answer")
            return
        self.samples += 1
        check_accounting = self.samples % self.accounting_every == 0
        # The accounting is compared only where nothing moved while it was
        # read: the node states and the jobs on them equal on both sides of
        # `scontrol show topology`. Node states alone miss a turnover (a job
        # ends and a queued one starts on its nodes between two reads).
        q_before = self._run("squeue", "-h", "-o", SQUEUE_FORMAT, timeout=60) if check_accounting else None
        before = self.node_states() if check_accounting else None
        topo = self._run("scontrol", "show", "topology").stdout if check_accounting else ""
        q = self._run("squeue", "-h", "-o", SQUEUE_FORMAT, timeout=60)
        if q.returncode != 0:
            if not paused:
                self.violation("squeue", q.stderr.strip())
            return
        after = self.node_states() if check_accounting else None
        queue = {}
        for line in q.stdout.splitlines():
            i, st, nodes, count = line.split("|")
            queue[int(i.split("_")[0])] = (st, nodes, int(count))
        self.max_pending = max(self.max_pending, sum(1 for s in queue.values() if s[0] == "PENDING"))
        self.max_running = max(self.max_running, sum(1 for s in queue.values() if s[0] == "RUNNING"))
        self.check_jobs(set(jobs), queue)
        self.check_double_allocation(queue)
        if check_accounting:
            with self.lock:
                # A restarted slurmctld answers before its nodes have
                # registered again (restart-ctld waits for that while the
                # pause lasts): its bitmaps and scontrol's node records differ
                # until then, so nothing read in or across a pause counts.
                restarting = paused or self.ctld_paused or self.ctld_pauses != pauses
            moved = (q_before is None or q_before.returncode != 0
                     or allocations(q_before.stdout) != allocations(q.stdout))
            if (restarting or moved or before is None or after is None or before != after
                    or time.monotonic() < self.settle_until):
                self.accounting_skipped += 1
            else:
                self.check_accounting(before, topo, jobs)

    def check_jobs(self, jobs, queue):
        for job in sorted(jobs - self.completed):
            st = queue.get(job, (None,))[0]
            if st is None:
                j = self.c.job(job)
                st = j.get("JobState")
                if st is None:
                    if job not in self.lost:
                        self.lost.add(job)
                        self.violation("lost", f"job {job} is gone from slurmctld")
                    continue
                if st == "COMPLETED":
                    self.completed.add(job)
                    continue
            if st in BAD_STATES:
                self.bad_streak[job] = self.bad_streak.get(job, 0) + 1
                if self.bad_streak[job] == BAD_STREAK and job not in self.failed:
                    self.failed.add(job)
                    self.violation("failed", f"job {job} is {st}")
            else:
                self.bad_streak.pop(job, None)

    def check_double_allocation(self, queue):
        owner = {}
        for job, (st, nodes, _) in queue.items():
            if st != "RUNNING":
                continue
            for n in expand_hostlist(nodes):
                if n in owner:
                    self.double_allocations += 1
                    self.violation("double", f"{n} in running jobs {owner[n]} and {job}")
                owner[n] = job

    def check_accounting(self, nodes, topo, sizes):
        self.accounting_samples += 1
        now = time.time()
        held = {}
        near_deadline = False
        for line in topo.splitlines():
            if not line.startswith("RecoveryPending "):
                continue
            r = parse_kv(line)
            if r.get("Fallback") != "no":
                continue
            at = local_epoch(r.get("FallbackAt", ""))
            if at is None or abs(now - at) <= 3:
                near_deadline = True  # its hold may end between the reads
                continue
            if now >= at:
                continue
            job = int(r["JobId"])
            blocks = r.get("Blocks", "").split(",")
            if len(blocks) == 1 and job in sizes:
                held[blocks[0]] = held.get(blocks[0], 0) + sizes[job]
            else:
                near_deadline = True  # a job on several blocks: its split is not listed
        if near_deadline:
            self.accounting_skipped += 1
            self.accounting_samples -= 1
            return
        for line in topo.splitlines():
            if not line.startswith("BlockName="):
                continue
            b = parse_kv(line)
            members = expand_hostlist(b["Nodes"])
            classes = [nodes.get(n, "failed") for n in members]
            failed = classes.count("failed")
            free = classes.count("free")
            busy = classes.count("busy")
            spares = int(b["Spares"])
            reserve = max(0, spares - failed)
            want = {"Failed": failed, "Free": free, "Busy": busy, "Lent": 0,
                    "SparesUsed": min(failed, spares)}
            if b.get("Reserve") == "reclaim":
                want["SparesFree"] = min(reserve, free)
                want["SparesLent"] = min(reserve - want["SparesFree"], busy)
            else:
                want["SparesLent"] = 0
                want["SparesFree"] = max(0, min(reserve, free))
            if b.get("Health") != "down":
                want["Held"] = held.get(b["BlockName"], 0)
            got = {k: int(b[k]) for k in want}
            if got != want:
                self.accounting_mismatches += 1
                self.violation("accounting", f"{b['BlockName']}: scontrol show topology says {got}, "
                                             f"a recount says {want}")

    def summary(self):
        return {
            "samples": self.samples,
            "accounting_samples": self.accounting_samples,
            "accounting_samples_skipped": self.accounting_skipped,
            "jobs": len(self.jobs),
            "completed": len(self.completed),
            "lost": len(self.lost),
            "failed": len(self.failed),
            "double_allocations": self.double_allocations,
            "accounting_mismatches": self.accounting_mismatches,
            "slurmctld_down_samples": self.ctld_down,
            "max_pending": self.max_pending,
            "max_running": self.max_running,
            "violations": self.violations[:50],
        }


# ---------------------------------------------------------------------------
# Recoveries, from slurmctld's log


def recoveries(c, repaired_at=None):
    """Per-recovery outcomes from nvlblock's log lines (one per decision).
    With `repaired_at` (time.time() when the failed nodes were started
    again), `in_place_on_failed_nodes` counts the restarts in place logged
    before it that name more prior nodes than the failure left: a restart
    on nodes still down is no restart (the failed run itself, ended again
    by a slurmctld restarted after a crash, once passed for one). A lost
    node slurmctld itself returned to service in between ("node X returned
    to service": a late answer to its ping, on a loaded host, revives a
    stopped slurmd's node within a millisecond of setting it DOWN) is one
    Slurm offers as up again, and nvlblock counts it as the job's own
    healthy node: such restarts are counted apart
    (`in_place_on_revived_nodes`)."""
    return tally_recoveries(c.log_lines(r"nvlblock: recovery JobId=|returned to service"), repaired_at)


def tally_recoveries(lines, repaired_at=None):
    """recoveries() over slurmctld's log lines (nvlblock's recovery lines
    and Slurm's "returned to service" lines, in log order)."""
    lost, size, lost_nodes, failed_at = {}, {}, {}, {}
    revived = {}  # node -> times slurmctld returned it to service
    out = {"failures": 0, "in_place": 0, "elsewhere": 0, "abandoned": 0, "fallbacks": 0, "reclaims": 0,
           "in_place_on_failed_nodes": 0, "in_place_on_revived_nodes": 0, "in_place_seconds": [],
           "elsewhere_seconds": [], "log": []}
    for line in lines:
        m = re.search(r"node (\S+) returned to service", line)
        if m:
            revived.setdefault(m.group(1), []).append(log_time(line))
            continue
        # Kept in the result: each figure can be traced to its decision.
        out["log"].append(line[line.find("nvlblock: recovery"):])
        m = re.search(r"JobId=(\d+) lost (\d+) of (\d+) nodes \(([^)]*)\)", line)
        if m:
            out["failures"] += 1
            job = int(m.group(1))
            lost[job], size[job] = int(m.group(2)), int(m.group(3))
            lost_nodes[job], failed_at[job] = expand_hostlist(m.group(4)), log_time(line)
            continue
        m = re.search(r"JobId=(\d+) restarted (in place|elsewhere) .* (-?\d+) s after the failure", line)
        if m:
            kind = "in_place" if m.group(2) == "in place" else "elsewhere"
            out[kind] += 1
            out[kind + "_seconds"].append(int(m.group(3)))
            prior = re.search(r": (\d+) prior nodes", line)
            job, at = int(m.group(1)), log_time(line)
            if (kind == "in_place" and prior and repaired_at and at is not None and at < repaired_at
                    and job in lost and int(prior.group(1)) > size[job] - lost[job]):
                came_back = sum(1 for n in lost_nodes[job]
                                if any(failed_at[job] <= t <= at for t in revived.get(n, []) if t is not None))
                beyond = int(prior.group(1)) - (size[job] - lost[job])
                out["in_place_on_revived_nodes" if beyond <= came_back else "in_place_on_failed_nodes"] += 1
            continue
        if " fallback after " in line:
            out["fallbacks"] += 1
        elif " reclaiming " in line:
            out["reclaims"] += 1
        elif " left the queue " in line:
            out["abandoned"] += 1
    restarted = out["in_place"] + out["elsewhere"]
    out["in_place_share"] = round(out["in_place"] / restarted, 3) if restarted else None
    for kind in ("in_place", "elsewhere"):
        s = sorted(out.pop(kind + "_seconds"))
        out[kind + "_delay_p50_s"] = percentile(s, 50)
        out[kind + "_delay_p95_s"] = percentile(s, 95)
    return out


def percentile(values, p):
    if not values:
        return None
    k = max(0, min(len(values) - 1, int(round(p / 100 * len(values) + 0.5)) - 1))
    return values[k]


# ---------------------------------------------------------------------------
# Work and faults


class Churn(threading.Thread):
    """Keeps `count` small jobs (1-2 nodes, 20-60 s) queued or running."""

    def __init__(self, c, sampler, count, seed, extra=()):
        super().__init__(daemon=True)
        self.c, self.sampler, self.count = c, sampler, count
        self.rng = random.Random(seed)
        self.extra = list(extra)
        self.halt = threading.Event()
        self.paused = threading.Event()  # set: submit nothing for now
        self.mine = set()
        self.submitted = 0

    def run(self):
        while not self.halt.is_set():
            if self.paused.is_set():
                self.halt.wait(0.5)
                continue
            try:
                active = {j for j, st in self.queue_states().items()
                          if st in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED")}
                for _ in range(max(0, self.count - len(active & self.mine))):
                    n = self.rng.choice([1, 1, 2])
                    job, _err = self.c.try_sbatch(f"-N{n}", "--requeue", "-J", "small", "-t", "10", *self.extra,
                                                  wrap=f"sleep {self.rng.randint(20, 60)}")
                    if job:
                        self.mine.add(job)
                        self.sampler.track(job, n)
                        self.submitted += 1
            except Exception:
                pass  # slurmctld down on purpose: try again
            self.halt.wait(3)

    def queue_states(self):
        p = self.c.run("squeue", "-h", "-o", "%i %T", check=False)
        return {int(a): b for a, b in (ln.split() for ln in p.stdout.splitlines())}

    def stop(self):
        self.halt.set()
        self.join(timeout=30)


def stop_nodes(c, nodes, within):
    """Stops the slurmds of `nodes` (SIGKILL, their job processes killed:
    node failures), spread evenly over `within` seconds."""
    t0 = time.monotonic()
    for i, n in enumerate(nodes):
        target = t0 + within * i / max(1, len(nodes))
        time.sleep(max(0.0, target - time.monotonic()))
        c.fail_node(n)
    return time.monotonic() - t0


def start_nodes(c, nodes):
    for n in nodes:
        c.repair_node(n)


def write_result(name, result, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2, sort_keys=True)
        f.write("\n")
    return path


def passed(summary):
    """The invariants held: nothing lost, failed or allocated twice, the
    accounting always equal to the recount, slurmctld never down."""
    return (summary["lost"] == 0 and summary["failed"] == 0 and summary["double_allocations"] == 0
            and summary["accounting_mismatches"] == 0 and summary["slurmctld_down_samples"] == 0
            and not any(v[1] == "sampler" for v in summary["violations"]))


def median(values):
    return statistics.median(values) if values else None
