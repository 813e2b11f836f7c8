# SPDX-License-Identifier: GPL-2.0-or-later
"""The real side: a 72-node cluster per policy (scripts/nvlcluster), the
workload and failures replayed on it at their times, and its raw record
(results/real-<policy>-<k>.json.gz)."""

import gzip
import json
import os
import statistics
import time

from nvlblock_cluster import client

from .common import RESULTS, log
from .ctld_log import parse_ctld_log
from .names import real_name
from .shape import PER_RACK, PORT_BASE, RACKS, SLICE, SPARES


def job_script(duration):
    """Sleep until Slurm's StartTime + duration + 0.5 s: the run time slurmctld
    records is then the trace's, whatever the launch took. Plain sh (sbatch --wrap)."""
    return (f"t=${{SLURM_JOB_START_TIME:-0}}; [ \"$t\" -gt 0 ] || t=$(date +%s); "
            f"ms=$(( (t + {duration}) * 1000 + 500 - $(date +%s%3N) )); "
            "[ $ms -gt 0 ] && sleep $((ms / 1000)).$(printf %03d $((ms % 1000))); exit 0")


class RealCluster(client.Cluster):
    """The cluster of one policy; commands and job helpers are nvlblock_cluster's."""

    def __init__(self, policy, args):
        self.policy = policy
        self.args = args
        self.dir = f"/tmp/nvlfid-{policy}"
        self.env = None
        self.cwd = os.path.join(self.dir, "jobs")

    def up(self):
        argv = ["up", "--dir", self.dir, "--racks", str(RACKS), "--nodes-per-rack", str(PER_RACK),
                "--plugin", self.policy, "--slice", str(SLICE), "--port-base", str(PORT_BASE[self.policy]),
                "--extra-conf", "MinJobAge=86400"]
        if self.policy == "nvlblock":
            argv += ["--spares", str(SPARES), "--recovery-wait", str(self.args.recovery_wait)]
        log("nvlcluster " + " ".join(argv))
        t = time.monotonic()
        try:
            self.env = client.Cluster.up(self.dir, argv[3:]).env
        except client.CommandError as e:
            raise SystemExit(str(e)) from None
        os.makedirs(self.cwd, exist_ok=True)
        log(f"cluster up in {time.monotonic() - t:.0f} s")
        return argv

    def down(self, timeout=10):
        return super().down(timeout)

    @property
    def ctld_log(self):
        return os.path.join(self.dir, "log", "slurmctld.log")


def replay_events(jobs, failures):
    """(at, order, kind, what) sorted by time: at the same second a node comes
    back before one goes down, and both before the submissions, in workload order."""
    events = []
    for f in failures:
        events.append((f["down"], 1, "down", f["node"]))
        if f["up"] is not None:
            events.append((f["up"], 0, "up", f["node"]))
    for k, j in enumerate(jobs):
        events.append((j["submit"], 2 + k, "submit", j))
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def sbatch_args(j, args):
    """sbatch's arguments for a workload job."""
    argv = ["-J", j["name"], "-N", str(j["nodes"]), f"--time={j['limit'] // 60}",
            "-o", "/dev/null", "-e", "/dev/null"]
    if j["segment"]:
        argv.append(f"--segment={j['segment']}")
    argv.append("--requeue" if j["requeue"] else "--no-requeue" if args.no_requeue_trace else "--requeue")
    return argv + ["--wrap", job_script(j["duration"])]


def wait_drained(cluster, args, t0, load):
    """Wait until squeue lists no job, sampling the load average every 5 s;
    return the seconds since t0."""
    deadline = time.time() + args.drain_timeout
    while True:
        p = cluster.run("squeue", "-h", "-o", "%i %T", check=False)
        left = [ln for ln in p.stdout.splitlines() if ln.strip()]
        if p.returncode == 0 and not left:
            break
        if time.time() > deadline:
            raise RuntimeError(f"queue not drained after {args.drain_timeout} s: {len(left)} jobs left")
        load.append((round(time.time() - t0, 1), os.getloadavg()[0]))
        time.sleep(5)
    return time.time() - t0


def replay(cluster, jobs, failures, args):
    """Submit the jobs and apply the failures at their times; wait for the queue
    to drain. Returns the harness's own record of what it did."""
    t0 = time.time() + 3.0
    submitted, node_events = {}, []
    lags = []
    load = []  # (t, 1-minute load average): the replay is timing-sensitive, other work on the host shows here
    for at, _, kind, what in replay_events(jobs, failures):
        if not load or time.time() - t0 - load[-1][0] >= 10:
            load.append((round(time.time() - t0, 1), os.getloadavg()[0]))
        delay = t0 + at - time.time()
        if delay > 0:
            time.sleep(delay)
        t_call = time.time() - t0
        if kind == "submit":
            submitted[what["name"]] = {"id": cluster.sbatch(*sbatch_args(what, args)), "call_s": round(t_call, 3),
                                       "done_s": round(time.time() - t0, 3)}
            lags.append(t_call - at)
            if len(submitted) % 50 == 0:
                log(f"t={t_call:6.1f} s: {len(submitted)}/{len(jobs)} submitted")
            continue
        name = real_name(what)
        if kind == "down":
            cluster.set_down(name, reason="fidelity")
        else:
            cluster.resume(name)
        node_events.append({"node": what, "event": kind, "at_s": round(t_call, 3),
                            "done_s": round(time.time() - t0, 3), "planned_s": at})
        log(f"t={t_call:6.1f} s: {name} {kind} (planned {at} s)")
    log(f"all {len(jobs)} jobs submitted; sbatch started late by mean {statistics.mean(lags):.2f} s, "
        f"max {max(lags):.2f} s; waiting for the queue to drain")
    t_end = wait_drained(cluster, args, t0, load)
    log(f"queue drained at t={t_end:.0f} s")
    return {"t0": t0, "submitted": submitted, "node_events": node_events, "drained_s": round(t_end, 1),
            "loadavg": load}


def run_real(policy, jobs, failures, args, k=1):
    cluster = RealCluster(policy, args)
    try:
        up_argv = cluster.up()
        wall0 = time.monotonic()
        raw = replay(cluster, jobs, failures, args)
        raw["scontrol"] = [ln for ln in cluster.run("scontrol", "show", "job", "-o").stdout.splitlines() if ln.strip()]
        raw["sdiag"] = cluster.run("sdiag", check=False).stdout
        raw["log"] = parse_ctld_log(cluster.ctld_log, raw["t0"])
        raw["nvlcluster_up"] = up_argv
        raw["replay_wall_s"] = round(time.monotonic() - wall0, 1)
    finally:
        cluster.down()
    with gzip.open(os.path.join(RESULTS, f"real-{policy}-{k}.json.gz"), "wt") as f:
        json.dump(raw, f)
    return raw


def load_real(policy, k=1):
    path = os.path.join(RESULTS, f"real-{policy}-{k}.json.gz")
    if not os.path.exists(path):
        return None
    with gzip.open(path, "rt") as f:
        return json.load(f)
