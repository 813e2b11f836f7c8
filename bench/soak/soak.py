# SPDX-License-Identifier: GPL-2.0-or-later
"""A seeded chaos week on a real cluster, time compressed (bench/soak/run).

One cluster (scripts/nvlcluster: 4 racks of 9 nodes, slice 6, spares 2,
slurmctld daemonized as sites run it, RequeueExit=75, a node Epilog that
fails on request, a preemptible partition `lend` that may borrow spares on
rack01-02, `reserve: reclaim` on rack03-04) runs a stream of jobs of every
size (1-12 nodes), partition (gpu: not preemptible; lend: preemptible) and
requeue setting (--requeue or not), while a seeded schedule of chaos events
hits it (Soak.KINDS). A sampler reads the cluster every SAMPLE_S seconds and
feeds checker.Checker, which holds the invariants. At the end every node is
repaired, held jobs are released, submissions stop and every job must end.

Standard library only; nvlblock_cluster.scratch (scripts/) starts the cluster.
"""

import heapq
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "scripts"))
import checker as chk  # noqa: E402
from nvlblock_cluster.client import CommandError  # noqa: E402
from nvlblock_cluster.hostlist import expand_hostlist  # noqa: E402
from nvlblock_cluster.scratch import ScratchCluster, log  # noqa: E402

SAMPLE_S = 2.0
REQUEUE_EXIT = 75
EPILOG_DELAY = 3          # the failing Epilog's run time before it fails
RECOVERY_WAIT = 60        # as bench/reliability: longer than a requeue (11 s) plus a hold
MAX_BROKEN = 4            # nodes the soak keeps failed at once (of 36; 2 spares a rack)

JOB_SCRIPT = """#!/bin/sh
# A soak job: runs $1 seconds in 1 s steps. Once $SOAK_CTL/fault-<job>-<restart>
# exists it fails as a GPU fault does: with 'drain K' in it, it drains its
# K-th node first (as a health check would on an XID); then it exits 75
# (RequeueExit). Without 'drain', the node's Epilog is left to drain it.
d=$1
i=0
f=$SOAK_CTL/fault-$SLURM_JOB_ID-${SLURM_RESTART_COUNT:-0}
while [ $i -lt $d ]; do
  if [ -e $f ]; then
    read mode idx < $f
    rm -f $f
    if [ "$mode" = drain ]; then
      bad=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | sed -n "$((idx + 1))p")
      scontrol update nodename=$bad state=drain reason=soak-gpu-xid-79
    fi
    exit %d
  fi
  sleep 1
  i=$((i + 1))
done
""" % REQUEUE_EXIT

EPILOG = """#!/bin/sh
# The soak's node Epilog: fails (slurmctld drains the node, "Epilog error")
# on a node named by $CTL/epilog-bad-<node>, once, after %d s.
f=%s/epilog-bad-$SLURMD_NODENAME
[ -e $f ] || exit 0
rm -f $f
sleep %d
exit 1
"""


def write_exec(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class Soak:
    # kind -> weight in the random part of the schedule
    KINDS = {
        "node_kill": 3,          # slurmd SIGKILLed with its jobs (a crash); started again later
        "node_down": 3,          # scontrol update state=down (a health check); resumed later
        "gpu_fault_drain": 4,    # the job drains one of its nodes and exits 75 (RequeueExit)
        "gpu_fault_epilog": 2,   # the job exits 75; its batch host's Epilog fails and drains it
        "epilog_requeue": 2,     # scontrol requeue; the batch host's Epilog drains it after
        "drain_announced": 2,    # a node of a running job drained (DRAINING); the job carries on
        "flap": 2,               # a node down and up 3 times, 5-15 s apart
        "requeue_no_fault": 1,   # scontrol requeue with every node healthy: opens nothing
        "cancel": 1,             # the owner cancels a job
        "reconfigure_good": 1,   # scontrol reconfigure (nvlblock.yaml touched every other time)
        "reconfigure_bad": 1,    # a slurm.conf typo, reconfigure fails, slurmctld resumes; reverted
        "ctld_kill": 1,          # SIGKILL of slurmctld, started again
        "topology_move": 2,      # 25.05+: a free node moved to another block and back
    }

    def __init__(self, seed, duration, interval=(15, 45), job_seconds=(30, 180), target_jobs=8, racks=4,
                 per_rack=9, slice_=6, spares=2, drain_timeout=None, name=None, repair=(30, 120),
                 progress=None):
        self.seed = seed
        self.rng = random.Random(seed)
        self.jobs_rng = random.Random(seed * 7919 + 1)
        self.duration = duration
        self.interval = interval
        self.job_seconds = job_seconds
        self.target_jobs = target_jobs
        self.racks, self.per_rack, self.slice, self.spares = racks, per_rack, slice_, spares
        self.drain_timeout = drain_timeout or (job_seconds[1] * 3 + 300)
        self.name = name or f"soak-{seed}"
        self.repair = repair               # seconds a broken node stays broken
        self.progress = progress           # a file the figures so far are written to, every 5 min
        self.check = chk.Checker(expand_hostlist=expand_hostlist)
        self.lock = threading.Lock()       # the checker and the shared views
        self.halt = threading.Event()
        self.submit_paused = threading.Event()
        self.queue_view = {}               # job -> (state, nodes), the sampler's last listing
        self.last_submit = 0.0
        self.submitted = 0
        self.submit_errors = 0
        self.events = []                   # every event applied, in order
        self.skipped = {}                  # kind -> times no target was found
        self.action_errors = []
        self.broken = {}                   # node -> how the soak broke it
        self.faults = []                   # (node, start, end) of every node fault, for the end
        self.repairs = []                  # heap of (time, seq, action, args)
        self.seq = 0
        self.moved = {}                    # node -> its block before a topology move
        self.moves_back = 0
        self.log_offset = 0
        self.stderr_offset = 0
        self.reconfigures = 0
        self.sampler_errors = 0

    # -- the cluster ------------------------------------------------------------

    def flags(self):
        return ["--slice", str(self.slice), "--spares", str(self.spares), "--ctld-daemonized",
                "--preempt-partition", "--lending", "--slurmd-timeout", "10", "--status-interval", "2",
                "--recovery-wait", str(RECOVERY_WAIT), "--extra-conf", f"RequeueExit={REQUEUE_EXIT}",
                f"Epilog={self.epilog}", "MinJobAge=7200"]

    def run(self):
        # The tree the run started from (the plugins are built from the
        # working tree when the cluster starts, uncommitted changes included).
        self.commit = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                                     text=True).stdout.strip()
        self.dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no", "--",
                                     "src", "plugin", "include"], capture_output=True, text=True).stdout.split("\n")
        self.ctl = tempfile.mkdtemp(prefix=f"nvlsoak-{self.seed}-", dir="/tmp")
        os.chmod(self.ctl, 0o755)
        self.epilog = os.path.join(self.ctl, "epilog.sh")
        write_exec(self.epilog, EPILOG % (EPILOG_DELAY, self.ctl, EPILOG_DELAY))
        self.job_script = os.path.join(self.ctl, "soak-job.sh")
        write_exec(self.job_script, JOB_SCRIPT)
        t_start = time.time()
        try:
            with ScratchCluster(self.name, racks=self.racks, nodes_per_rack=self.per_rack,
                                flags=self.flags()) as c:
                self.c = c
                c.env["SOAK_CTL"] = self.ctl
                r = self._run(c, t_start)
                if r["violations"] or r["action_errors"]:
                    # The evidence: slurmctld's and every slurmd's log, the
                    # configuration and the saved state, kept past `down`.
                    r["logs_kept_in"] = c.keep_logs()
                return r
        finally:
            shutil.rmtree(self.ctl, ignore_errors=True)

    def _run(self, c, t_start):
        # A slurmctld that has just started on a loaded host may drop a
        # client's first connections ("Zero Bytes were transmitted").
        self.version = c.wait_for(lambda: self.quietly(lambda: c.slurm_version), 60, "scontrol --version")
        self.nodes = c.expand(c.wait_for(lambda: self.quietly(lambda: c.run("sinfo", "-h", "-o", "%N").stdout.strip()),
                                         60, "sinfo to list the nodes"))
        blocks = c.wait_for(lambda: self.quietly(c.topology), 60, "the blocks")
        self.racks_of = {b["BlockName"]: expand_hostlist(b["Nodes"]) for b in blocks}
        self.block_of = {n: b for b, ns in self.racks_of.items() for n in ns}
        self.set_reserve_reclaim(c)
        sampler = threading.Thread(target=self.sampler, daemon=True)
        workload = threading.Thread(target=self.workload, daemon=True)
        sampler.start()
        workload.start()
        t0 = time.time()
        try:
            self.chaos(t0 + self.duration)
            chaos_end = time.time()
            self.drain(c)
        finally:
            self.halt.set()
            workload.join(30)
            sampler.join(60)
        t_end = time.time()
        return self.result(c, t_start, t0, chaos_end, t_end)

    @staticmethod
    def quietly(fn):
        try:
            return fn()
        except Exception:  # noqa: BLE001 - asked again by wait_for
            return None

    def set_reserve_reclaim(self, c):
        """rack01-02 keep `reserve: idle` with lending; the others get
        `reserve: reclaim` (per-block settings), read at a reconfigure."""
        path = c.path("etc", "nvlblock.yaml")
        with open(path) as f:
            text = f.read()
        names = sorted(self.racks_of)
        for name in names[len(names) // 2:]:
            text = re.sub(rf"(  - name: {name}\n    nodes: \S+\n)", r"\1    reserve: reclaim\n", text)
        with open(path, "w") as f:
            f.write(text)
        self.reconfigure(c, touch=False)
        reserves = c.wait_for(lambda: self.quietly(lambda: {b["BlockName"]: b["Reserve"] for b in c.topology()}), 60,
                              "the blocks' reserve settings")
        log(f"soak: reserve per block: {reserves}")
        self.reserves = reserves

    # -- the sampler --------------------------------------------------------------

    def ctld_pid_alive(self, c):
        try:
            with open(c.path("run", "slurmctld.pid")) as f:
                pid = int(f.read().split()[0])
            with open(f"/proc/{pid}/stat") as f:
                st = f.read()
            return st[st.rfind(")") + 2] not in "ZX" and os.path.basename(os.readlink(f"/proc/{pid}/exe")) == \
                "slurmctld"
        except (OSError, ValueError, IndexError):
            return False

    def new_lines(self, path, attr):
        try:
            with open(path, "rb") as f:
                f.seek(getattr(self, attr))
                data = f.read()
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n") + 1
        setattr(self, attr, getattr(self, attr) + end)
        return data[:end].decode("utf-8", "replace").splitlines()

    def batch_scripts(self):
        """{job: {(restart count, node)}} of the soak's batch scripts alive on this host."""
        runs = {}
        tag = f"SOAK_CTL={self.ctl}".encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    # slurmd runs a copy of the batch script: spool/.../slurm_script.
                    if b"/slurm_script\0" not in f.read():
                        continue
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read().split(b"\0")
            except OSError:
                continue
            if tag not in env:
                continue
            e = dict(x.decode("utf-8", "replace").split("=", 1) for x in env if b"=" in x)
            if "SLURM_JOB_ID" in e:
                runs.setdefault(int(e["SLURM_JOB_ID"]), set()).add(
                    (int(e.get("SLURM_RESTART_COUNT", "0") or 0), e.get("SLURMD_NODENAME", "?")))
        return runs

    def sampler(self):
        c = self.c
        n = 0
        while not self.halt.is_set():
            t0 = time.monotonic()
            try:
                self.sample(c, n)
            except Exception as e:  # noqa: BLE001 - a dead sampler would hide everything after
                self.sampler_errors += 1
                log(f"soak: sampler error {type(e).__name__}: {e}")
            n += 1
            self.halt.wait(max(0.0, SAMPLE_S - (time.monotonic() - t0)))

    def sample(self, c, n):
        with self.lock:
            pauses = len(self.check.pauses)
            paused = self.check.paused
        now = time.time()
        alive = self.ctld_pid_alive(c)
        answers = alive and "UP" in c.run("scontrol", "ping", check=False, timeout=30).stdout
        q = c.run("squeue", "-h", "-t", "all", "-o", "%i|%T|%N", check=False, timeout=60) if answers else None
        jobs = None
        if q is not None and q.returncode == 0:
            jobs = {}
            for line in q.stdout.splitlines():
                i, st, nodes = line.split("|")
                if i.isdigit():
                    jobs[int(i)] = (st, expand_hostlist(nodes) if nodes else [])
        runs = self.batch_scripts() if n % 2 == 0 else None
        lines = self.new_lines(c.ctld_log, "log_offset")
        err_lines = self.new_lines(c.path("log", "slurmctld.stderr"), "stderr_offset")
        try:
            with open(c.path("state", "nvlblock-status.json")) as f:
                status = json.load(f)
        except (OSError, ValueError):
            status = None
        try:
            prom = os.stat(c.path("state", "nvlblock.prom")).st_mtime
        except OSError:
            prom = None
        with self.lock:
            ck = self.check
            ck.log(lines)
            ck.log(err_lines, source="slurmctld.stderr")
            # Nothing read across a pause (a kill, a reconfigure) is judged.
            steady = not paused and not ck.paused and len(ck.pauses) == pauses
            if steady:
                evidence = self.ctld_evidence(c) if not alive or not answers else None
                ck.ctld(now, alive, answers, evidence)
                if jobs is not None:
                    ck.queue(now, jobs)
                if runs is not None:
                    ck.processes(now, runs)
                ck.status(now, status, prom)
                ck.overdue(now)
            if jobs is not None:
                self.queue_view = jobs

    def ctld_evidence(self, c):
        try:
            with open(c.ctld_log, errors="replace") as f:
                return [ln.rstrip() for ln in f.readlines()[-20:]]
        except OSError:
            return []

    # -- the workload --------------------------------------------------------------

    def job_spec(self):
        r = self.jobs_rng
        size = r.choices([1, 2, 3, 4, 6, 12], weights=[3, 2, 2, 1, 4, 1])[0]
        preemptible = size <= 3 and r.random() < 0.35
        requeue = r.random() < 0.8
        lo, hi = self.job_seconds
        seconds = r.randint(lo, hi)
        return {"size": size, "partition": "lend" if preemptible else "gpu", "preemptible": preemptible,
                "requeue": requeue, "seconds": seconds}

    def workload(self):
        c = self.c
        while not self.halt.is_set():
            if not self.submit_paused.is_set():
                with self.lock:
                    active = sum(1 for j in self.check.jobs if j not in self.check.ended
                                 and self.queue_view.get(j, ("PENDING",))[0] not in chk.TERMINAL)
                for _ in range(max(0, self.target_jobs - active)):
                    if self.submit_paused.is_set() or self.halt.is_set():
                        break
                    spec = self.job_spec()
                    args = [f"-N{spec['size']}", "-p", spec["partition"],
                            "--requeue" if spec["requeue"] else "--no-requeue", "-J", f"soak{spec['size']}",
                            "-t", "60", "-o", "soak-%j.out", self.job_script, str(spec["seconds"])]
                    try:
                        job, _err = c.try_sbatch(*args, wrap=None)
                    except Exception:  # noqa: BLE001 - slurmctld restarting
                        job = None
                    if job:
                        spec["submitted"] = time.time()
                        with self.lock:
                            self.check.track(job, spec)
                        self.submitted += 1
                        self.last_submit = time.time()
                    else:
                        self.submit_errors += 1
                        break
            self.halt.wait(3)

    # -- chaos ---------------------------------------------------------------------

    def chaos(self, end):
        kinds = [k for k in self.KINDS if k != "topology_move" or self.version >= (25, 5, 0)]
        tour = list(kinds)
        self.rng.shuffle(tour)
        next_event = time.time() + self.rng.uniform(*self.interval) / 2
        next_progress = time.time() + 300
        while time.time() < end:
            if self.progress and time.time() >= next_progress:
                self.write_progress(end)
                next_progress = time.time() + 300
            self.do_repairs(time.time())
            if time.time() >= next_event:
                kind = tour.pop(0) if tour else self.rng.choices(kinds, weights=[self.KINDS[k] for k in kinds])[0]
                applied = self.event(kind)
                if not applied and len(tour) < 3 * len(kinds):
                    tour.append(kind)  # no target now: the tour tries it again later
                next_event = time.time() + self.rng.uniform(*self.interval)
            time.sleep(0.5)

    def write_progress(self, end):
        """The figures so far, for a look at a long run before it ends."""
        by_kind = {}
        for e in self.events:
            by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
        with self.lock:
            summary = self.check.summary()
            violations = list(self.check.violations)
            ended = {}
            for j, st in self.check.ended.items():
                ended[st] = ended.get(st, 0) + 1
        doc = {"at": time.strftime("%Y-%m-%dT%H:%M:%S"), "chaos_seconds_left": round(end - time.time()),
               "events": len(self.events), "events_by_kind": by_kind, "submitted": self.submitted,
               "ended_so_far": ended, "invariants": summary, "violations": violations,
               "action_errors": len(self.action_errors), "sampler_errors": self.sampler_errors}
        with open(self.progress + ".tmp", "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        os.replace(self.progress + ".tmp", self.progress)

    def event(self, kind):
        t = time.time()
        try:
            detail = getattr(self, "ev_" + kind)()
        except Exception as e:  # noqa: BLE001 - recorded; an invariant catches the consequences
            self.action_errors.append({"at": round(t), "kind": kind, "error": f"{type(e).__name__}: {e}"})
            log(f"soak: {kind} failed: {e}")
            return True
        if detail is None:
            self.skipped[kind] = self.skipped.get(kind, 0) + 1
            return False
        self.events.append({"at": round(t, 1), "kind": kind, **detail})
        log(f"soak: event {len(self.events)} {kind} {detail}")
        return True

    def schedule(self, delay, action, *args):
        self.seq += 1
        heapq.heappush(self.repairs, (time.time() + delay, self.seq, action, args))

    def do_repairs(self, now, everything=False):
        while self.repairs and (everything or self.repairs[0][0] <= now):
            _, _, action, args = heapq.heappop(self.repairs)
            try:
                getattr(self, "re_" + action)(*args)
            except Exception as e:  # noqa: BLE001
                self.action_errors.append({"at": round(time.time()), "kind": "repair " + action,
                                           "error": f"{type(e).__name__}: {e}"})
                log(f"soak: repair {action} {args} failed: {e}")

    # targets

    def running(self, min_nodes=1, requeue=None, healthy=True):
        """Running jobs of the soak [(job, nodes)], optionally multi-node or
        requeueable only, on nodes the soak has not broken."""
        with self.lock:
            view = dict(self.queue_view)
            specs = dict(self.check.jobs)
        out = []
        for job, (st, nodes) in sorted(view.items()):
            spec = specs.get(job)
            if st != "RUNNING" or spec is None or len(nodes) < min_nodes:
                continue
            if requeue is not None and spec["requeue"] != requeue:
                continue
            if healthy and any(n in self.broken for n in nodes):
                continue
            out.append((job, nodes))
        return out

    def jobs_on(self, node):
        with self.lock:
            return [j for j, (st, nodes) in self.queue_view.items() if st == "RUNNING" and node in nodes]

    def pick_node(self, under_job_share=0.7):
        if len(self.broken) >= MAX_BROKEN:
            return None
        busy = [n for _, nodes in self.running(min_nodes=2) for n in nodes if n not in self.broken]
        if busy and self.rng.random() < under_job_share:
            return self.rng.choice(sorted(set(busy)))
        free = [n for n in self.nodes if n not in self.broken and n not in self.moved]
        return self.rng.choice(free) if free else None

    def mark_broken(self, node, how):
        self.broken[node] = how
        self.faults.append([node, time.time(), None])
        with self.lock:
            for j, (st, ns) in self.queue_view.items():
                if st == "RUNNING" and node in ns:
                    self.check.chaos(j, "node")

    def mark_repaired(self, node):
        self.broken.pop(node, None)
        for f in self.faults:
            if f[0] == node and f[2] is None:
                f[2] = time.time()

    def restarts(self, job):
        return int(self.c.job(job).get("Restarts", "0") or 0)

    # events

    def ev_node_kill(self):
        node = self.pick_node()
        if not node:
            return None
        jobs = self.jobs_on(node)
        self.mark_broken(node, "kill")
        self.c.fail_node(node)
        self.schedule(self.rng.uniform(*self.repair), "start_node", node)
        return {"node": node, "jobs": jobs}

    def re_start_node(self, node):
        self.c.repair_node(node, timeout=180)
        self.mark_repaired(node)

    def ev_node_down(self):
        node = self.pick_node()
        if not node:
            return None
        jobs = self.jobs_on(node)
        self.mark_broken(node, "down")
        self.c.set_down(node, reason="soak-down")
        self.schedule(self.rng.uniform(*self.repair), "resume", node)
        return {"node": node, "jobs": jobs}

    def re_resume(self, node):
        self.c.resume(node)
        self.mark_repaired(node)

    def gpu_target(self):
        if len(self.broken) >= MAX_BROKEN:
            return None
        cands = self.running(min_nodes=2)
        if not cands:
            return None
        job, nodes = self.rng.choice(cands)
        return job, nodes

    def fault_file(self, job, text):
        path = os.path.join(self.ctl, f"fault-{job}-{self.restarts(job)}")
        with open(path + ".tmp", "w") as f:
            f.write(text + "\n")
        os.replace(path + ".tmp", path)

    def ev_gpu_fault_drain(self):
        t = self.gpu_target()
        if not t:
            return None
        job, nodes = t
        k = self.rng.randrange(len(nodes))
        node = nodes[k]
        self.mark_broken(node, "drain")
        with self.lock:
            self.check.chaos(job, "gpu")
        self.fault_file(job, f"drain {k}")
        self.schedule(self.rng.uniform(*self.repair), "resume", node)
        return {"job": job, "node": node, "requeue": self.check.jobs[job]["requeue"]}

    def batch_host(self, job):
        return self.c.job(job).get("BatchHost")

    def ev_gpu_fault_epilog(self):
        t = self.gpu_target()
        if not t:
            return None
        job, _ = t
        node = self.batch_host(job)
        if not node or node in self.broken:
            return None
        self.mark_broken(node, "epilog")
        with self.lock:
            self.check.chaos(job, "gpu")
        open(os.path.join(self.ctl, f"epilog-bad-{node}"), "w").close()
        self.fault_file(job, "exit 0")
        self.schedule(max(EPILOG_DELAY + 20, self.rng.uniform(*self.repair)), "resume_epilog", node)
        return {"job": job, "node": node, "requeue": self.check.jobs[job]["requeue"]}

    def re_resume_epilog(self, node):
        # The Epilog may not have run (the job ended another way): no drain then.
        try:
            os.remove(os.path.join(self.ctl, f"epilog-bad-{node}"))
        except FileNotFoundError:
            pass
        if self.node_failed_in_slurm(node):
            self.c.resume(node)
        self.mark_repaired(node)

    def node_failed_in_slurm(self, node):
        st = self.c.run("sinfo", "-h", "-n", node, "-o", "%T", check=False).stdout.strip()
        return any(w in st for w in ("drain", "down", "fail"))

    def ev_epilog_requeue(self):
        if len(self.broken) >= MAX_BROKEN:
            return None
        cands = self.running(min_nodes=2, requeue=True)
        if not cands:
            return None
        job, _ = self.rng.choice(cands)
        node = self.batch_host(job)
        if not node or node in self.broken:
            return None
        self.mark_broken(node, "epilog")
        open(os.path.join(self.ctl, f"epilog-bad-{node}"), "w").close()
        self.c.run("scontrol", "requeue", str(job))
        self.schedule(max(EPILOG_DELAY + 20, self.rng.uniform(*self.repair)), "resume_epilog", node)
        return {"job": job, "node": node}

    def ev_drain_announced(self):
        target = self.gpu_target()
        if not target:
            return None
        job, nodes = target
        node = self.rng.choice(nodes)
        self.mark_broken(node, "draining")
        self.c.drain(node, reason="soak-gpu-xid-48")
        self.schedule(self.rng.uniform(*self.repair), "resume", node)
        return {"job": job, "node": node}

    def ev_flap(self):
        node = self.pick_node()
        if not node:
            return None
        self.broken[node] = "flap"
        delay = 0.0
        for i in range(3):
            self.schedule(delay, "flap_down", node)
            delay += self.rng.uniform(5, 15)
            self.schedule(delay, "flap_up", node, i == 2)
            delay += self.rng.uniform(5, 15)
        return {"node": node, "flaps": 3, "seconds": round(delay)}

    def re_flap_down(self, node):
        self.faults.append([node, time.time(), None])
        with self.lock:
            for j, (st, ns) in self.queue_view.items():
                if st == "RUNNING" and node in ns:
                    self.check.chaos(j, "node")
        self.c.set_down(node, reason="soak-flap")

    def re_flap_up(self, node, last):
        self.c.resume(node)
        for f in self.faults:
            if f[0] == node and f[2] is None:
                f[2] = time.time()
        if last:
            self.broken.pop(node, None)

    def ev_requeue_no_fault(self):
        cands = self.running(min_nodes=2, requeue=True)
        if not cands:
            return None
        job, _ = self.rng.choice(cands)
        self.c.run("scontrol", "requeue", str(job))
        return {"job": job}

    def ev_cancel(self):
        cands = self.running()
        if not cands:
            return None
        job, _ = self.rng.choice(cands)
        with self.lock:
            self.check.chaos(job, "cancel")
        self.c.cancel(job)
        return {"job": job}

    def paused_ctld(self):
        with self.lock:
            self.check.pause(time.time())

    def resumed_ctld(self):
        with self.lock:
            self.check.resume(time.time())

    def reconfigure(self, c, touch):
        """A good `scontrol reconfigure`: a daemonized slurmctld forks a new
        process (new pid) that reads the files again."""
        if touch:
            path = c.path("etc", "nvlblock.yaml")
            with open(path) as f:
                text = re.sub(r"\n# soak reconfigure \d+\n", "\n", f.read())
            with open(path, "w") as f:
                f.write(text.rstrip("\n") + f"\n# soak reconfigure {self.reconfigures}\n")
        with open(c.path("run", "slurmctld.pid")) as f:
            old = f.read().strip()
        self.paused_ctld()
        try:
            c.run("scontrol", "reconfigure", check=False, timeout=60)

            def new_ctld():
                try:
                    with open(c.path("run", "slurmctld.pid")) as f:
                        pid = f.read().strip()
                except OSError:
                    return False
                if pid == old or not self.ctld_pid_alive(c):
                    return False
                return "UP" in c.run("scontrol", "ping", check=False).stdout
            c.wait_for(new_ctld, 90, "slurmctld to come back from a reconfigure")
        finally:
            self.resumed_ctld()
        self.reconfigures += 1
        return old

    def ev_reconfigure_good(self):
        touch = self.reconfigures % 2 == 0
        old = self.reconfigure(self.c, touch)
        with open(self.c.path("run", "slurmctld.pid")) as f:
            new = f.read().strip()
        return {"nvlblock_yaml_touched": touch, "pid": f"{old}->{new}"}

    def log_since(self, offset, needle):
        with open(self.c.ctld_log, "rb") as f:
            f.seek(offset)
            return needle.encode() in f.read()

    def ev_reconfigure_bad(self):
        c = self.c
        conf = c.env["SLURM_CONF"]
        good = conf + ".good"
        shutil.copy(conf, good)
        offset = os.path.getsize(c.ctld_log)
        with open(c.path("run", "slurmctld.pid")) as f:
            pid = f.read().strip()
        with open(conf, "a") as f:
            f.write("NoSuchSlurmKeyword=1\n")
        self.paused_ctld()
        try:
            subprocess.run(["scontrol", "reconfigure"], env=dict(c.env, SLURM_CONF=good), cwd=c.cwd,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
            c.wait_for(lambda: self.log_since(offset, "Resuming operation, reconfigure failed"), 90,
                       "slurmctld to resume after the failed reconfigure")
        finally:
            shutil.copy(good, conf)
            self.resumed_ctld()
        with open(c.path("run", "slurmctld.pid")) as f:
            same = f.read().strip() == pid
        return {"same_pid": same}

    def ev_ctld_kill(self):
        c = self.c
        # slurmctld saves a submitted job within a few seconds; a job it
        # acknowledged just before a SIGKILL may be lost by Slurm itself
        # (bench/reliability/scenarios.py kill_ctld). No submissions in the
        # 8 s before the kill, and job_state saved since the last one.
        self.submit_paused.set()
        try:
            time.sleep(8)
            last = self.last_submit
            c.wait_for(lambda: os.path.getmtime(c.path("state", "job_state")) > last, 30,
                       "slurmctld to save its job state")
            self.paused_ctld()
            try:
                c.nvlcluster("restart-ctld", "--kill", "--timeout", "90", timeout=400)
            finally:
                self.resumed_ctld()
        finally:
            self.submit_paused.clear()
        return {"pid": c.ctld_pid()}

    def ev_topology_move(self):
        if self.version < (25, 5, 0):
            return None
        with self.lock:
            busy = {n for st, ns in self.queue_view.values() if st in ("RUNNING", "COMPLETING") for n in ns}
        free = [n for n in self.nodes if n not in busy and n not in self.broken and n not in self.moved]
        if not free:
            return None
        node = self.rng.choice(free)
        src = self.block_of[node]
        dst = self.rng.choice([b for b in sorted(self.racks_of) if b != src])
        offset = os.path.getsize(self.c.ctld_log)
        p = self.c.run("scontrol", "update", f"nodename={node}", f"topology=default:{dst}", check=False)
        accepted = p.returncode == 0
        why = None
        if not accepted:
            # nvlblock says why in slurmctld's log (scontrol only "not available").
            time.sleep(0.5)
            with open(self.c.ctld_log, "rb") as f:
                f.seek(offset)
                m = re.search(rb"cannot put node \S+ into '\S+': ([^\n]*)", f.read())
            why = m.group(1).decode("utf-8", "replace")[:200] if m else None
        if accepted:
            self.moved[node] = src
            self.schedule(self.rng.uniform(20, 60), "move_back", node)
        return {"node": node, "from": src, "to": dst, "accepted": accepted,
                "said": (p.stderr or p.stdout).strip()[:200], "nvlblock_said": why}

    def topology_figures(self):
        moves = [e for e in self.events if e["kind"] == "topology_move"]
        why = {}
        for e in moves:
            if not e["accepted"]:
                text = e.get("nvlblock_said") or e["said"]
                key = ("a recovery waits on the block" if "waiting to restart" in text else
                       "the node's job would be split" if "split the job" in text else text)
                why[key] = why.get(key, 0) + 1
        return {"accepted": sum(1 for e in moves if e["accepted"]), "refused": sum(why.values()),
                "refused_because": why, "moved_back": self.moves_back}

    def re_move_back(self, node):
        p = self.c.run("scontrol", "update", f"nodename={node}", "topology=", check=False)
        if p.returncode == 0:
            self.moved.pop(node, None)
            self.moves_back += 1
        else:
            # Refused (its new block has a job on it now): try again later.
            self.schedule(20, "move_back", node)
            raise RuntimeError(f"moving {node} back refused: {(p.stderr or p.stdout).strip()[:200]}")

    # -- the end --------------------------------------------------------------------

    def drain(self, c):
        """Repair everything, stop submitting, release held jobs, and wait
        until every job has ended (at most drain_timeout)."""
        self.submit_paused.set()
        for _ in range(5):
            self.do_repairs(time.time(), everything=True)
            if not self.repairs:
                break
        for n in sorted(set(self.broken)):
            try:
                c.resume(n)
            except Exception:  # noqa: BLE001
                pass
            self.mark_repaired(n)
        deadline = time.time() + self.drain_timeout
        self.released = 0
        while time.time() < deadline:
            jobs = self.job_list(c)
            mine = {j: jobs.get(j, {}) for j in self.check.jobs}
            held = [j for j, f in mine.items() if f.get("JobState") == "PENDING" and f.get("Priority") == "0"]
            if held:
                c.run("scontrol", "release", ",".join(map(str, held)), check=False)
                self.released += len(held)
            if all(f.get("JobState") in chk.TERMINAL for f in mine.values() if f):
                break
            time.sleep(5)
        time.sleep(chk.FINAL_STABLE_S + 2 * SAMPLE_S)  # the sampler sees every end as stable

    @staticmethod
    def job_list(c, timeout=120):
        """Every job slurmctld knows, asked until scontrol answers. A listing
        that failed (slurmctld busy on a loaded host) is not a cluster
        without jobs: read as one, it would end the drain at once ("every
        job listed has ended") and leave running jobs out of the final
        states, which the checker reports as lost. (The lost job of stop
        48's third local CI run was a job missing from a listing that did
        answer: parse_kv read a JobId named in its comment; fixed there.)"""
        deadline = time.time() + timeout
        while True:
            try:
                return c.jobs(check=True)
            except (CommandError, subprocess.TimeoutExpired) as e:
                if time.time() >= deadline:
                    raise RuntimeError(f"scontrol show job failed for {timeout} s: {e}") from e
                time.sleep(2)

    def result(self, c, t_start, t0, chaos_end, t_end):
        jobs = self.job_list(c)
        final = {}
        for j in self.check.jobs:
            f = jobs.get(j)
            if not f:
                continue
            state = f.get("JobState")
            info = (f"Restarts={f.get('Restarts')} ExitCode={f.get('ExitCode')} Reason={f.get('Reason')} "
                    f"Nodes={f.get('NodeList')} Partition={f.get('Partition')}")
            final[j] = (state, info)
            if state not in ("COMPLETED",):
                # Explained by data: a node of the job failed by the soak
                # while it ran (the live marking can miss a job that
                # started between a listing and a fault).
                nodes = set(expand_hostlist(f.get("NodeList", ""))) if f.get("NodeList") not in (None, "(null)") \
                    else set()
                start = chk.log_time(f"[{f.get('StartTime')}]") or 0
                end = chk.log_time(f"[{f.get('EndTime')}]") or time.time()
                for node, a, b in self.faults:
                    if node in nodes and a <= end + 5 and (b or time.time()) >= start - 5:
                        self.check.chaos(j, "node")
        # Batch scripts a slurmd deleted as strays (24.11) explain a FAILED end.
        purges = []
        for node in self.nodes:
            try:
                with open(c.path("log", f"slurmd-{node}.log"), errors="replace") as f:
                    purges += [line for line in f if chk.PURGED_SCRIPT.search(line)]
            except OSError:
                pass
        with self.lock:
            self.check.slurmd_log(purges)
            ends = self.check.finish(time.time(), final)
            summary = self.check.summary()
        status = {}
        try:
            status = c.status_json()
        except (OSError, ValueError):
            pass
        by_kind = {}
        for e in self.events:
            by_kind[e["kind"]] = by_kind.get(e["kind"], 0) + 1
        topo = c.topology_summary()
        return {
            "seed": self.seed,
            "commit_at_start": self.commit,
            "uncommitted_plugin_sources_at_start": [x.strip() for x in self.dirty if x.strip()],
            "slurm": ".".join(map(str, self.version)),
            "cluster": {"racks": self.racks, "nodes_per_rack": self.per_rack, "slice": self.slice,
                        "spares": self.spares, "reserve": self.reserves, "recovery_wait_s": RECOVERY_WAIT,
                        "flags": self.flags()[:-1] + ["<epilog>"]},
            "hours": round((chaos_end - t0) / 3600, 3),
            "seconds": {"chaos": round(chaos_end - t0), "drain": round(t_end - chaos_end),
                        "total_with_start": round(t_end - t_start)},
            "events": len(self.events),
            "events_by_kind": by_kind,
            "events_skipped_no_target": self.skipped,
            "topology_moves": ("skipped: Slurm %s has no run-time topology changes (25.05+)"
                               % ".".join(map(str, self.version))) if self.version < (25, 5, 0) else
            self.topology_figures(),
            "failover": "not run: one slurmctld host (test/netns/failover_cluster.py covers failover)",
            "jobs": {"submitted": self.submitted, "ended": ends, "released_from_hold": self.released,
                     "submit_refusals": self.submit_errors, "max_running": summary["max_running_jobs"]},
            "recoveries_log": summary["recoveries"],
            "recoveries_status_json": {k: status.get("recoveries", {}).get(k) for k in
                                       ("failures", "in_place", "fallbacks", "abandoned", "reclaims",
                                        "reclaimed_jobs", "by_trigger", "by_path")},
            "topology_summary": topo,
            "invariants": summary,
            "violations": self.check.violations,
            "action_errors": self.action_errors,
            "sampler_errors": self.sampler_errors,
            "events_log": self.events,
        }


def markdown(r):
    inv = r["invariants"]
    rec = r["recoveries_log"]
    lines = [
        f"Soak seed {r['seed']}, Slurm {r['slurm']}: {r['hours']} h of chaos "
        f"({r['seconds']['chaos']} s, then {r['seconds']['drain']} s to drain)",
        "",
        "| figure | value |", "|---|---|",
        f"| cluster | {r['cluster']['racks']} racks x {r['cluster']['nodes_per_rack']} nodes, slice "
        f"{r['cluster']['slice']}, spares {r['cluster']['spares']}, "
        f"recovery.wait {r['cluster']['recovery_wait_s']} s |",
        f"| events | {r['events']} |",
    ]
    for k, v in sorted(r["events_by_kind"].items()):
        lines.append(f"| events: {k} | {v} |")
    lines += [
        f"| topology moves | {r['topology_moves']} |",
        f"| failover | {r['failover']} |",
        f"| jobs submitted | {r['jobs']['submitted']} |",
        f"| jobs ended | {', '.join(f'{k} {v}' for k, v in sorted(r['jobs']['ended'].items()))} |",
        f"| jobs released from a hold at the end | {r['jobs']['released_from_hold']} |",
        f"| most jobs running at once | {r['jobs']['max_running']} |",
        f"| jobs on nodes slurmctld set DOWN itself (not responding) | "
        f"{', '.join(map(str, inv.get('jobs_on_nodes_slurm_set_down', []))) or 'none'} |",
        f"| jobs whose start slurmctld lost to its SIGKILL (recovered PENDING while running) | "
        f"{', '.join(map(str, inv.get('jobs_whose_start_slurm_lost', []))) or 'none'} |",
        f"| jobs whose batch script a slurmd purged as a stray (24.11) | "
        f"{', '.join(map(str, inv.get('jobs_whose_script_slurmd_purged', []))) or 'none'} |",
        f"| recoveries opened | {rec['failures']} |",
        f"| restarted in place / elsewhere | {rec['in_place']} / {rec['elsewhere']} |",
        f"| fallbacks / abandoned / reclaims | {rec['fallbacks']} / {rec['abandoned']} / {rec['reclaims']} |",
        f"| longest failure-to-decision | {rec['decision_seconds_max']} s |",
        f"| slurmctld pauses (kills, reconfigures) | {inv['slurmctld_pauses']} ({inv['slurmctld_paused_seconds']} s) |",
        f"| samples (ctld / queue / status) | {inv['samples']['ctld']} / {inv['samples']['queue']} / "
        f"{inv['samples']['status']} |",
        f"| **invariant violations** | **{inv['violations']}** {inv['violations_by_kind'] or ''} |",
    ]
    for v in r["violations"]:
        lines.append(f"- VIOLATION {v['kind']}: {v['text']}")
        for e in v["evidence"][:8]:
            lines.append(f"    {e}")
    return "\n".join(lines) + "\n"
