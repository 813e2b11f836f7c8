# SPDX-License-Identifier: GPL-2.0-or-later
"""The simulated side: nvlblock-sim run on the workload, and the runs per job
read back from its --log."""

import csv
import math
import os
import subprocess
import time

from nvlblock_cluster.hostlist import expand_hostlist

from .common import REPO, RESULTS, log
from .names import node_offset
from .shape import BF_INTERVAL, BF_MAX_JOB_TEST, GPUS_PER_NODE, PER_RACK, RACKS, REQUEUE_DELAY, SLICE, SPARES


def sim_binary():
    build = os.environ.get("BUILD", os.path.join(REPO, "build"))
    if not os.path.isabs(build):
        build = os.path.join(REPO, build)
    sim = os.path.join(build, "tools", "sim", "nvlblock-sim")
    if not os.access(sim, os.X_OK):
        raise SystemExit(f"{sim} not found; build first: cmake -S {REPO} -B {build} && cmake --build {build} -j")
    return sim


# The simulator variants: "sim" models Slurm's queue order for requeued jobs
# (--requeue-order requeue, nvlblock-sim's default); "sim-keep" keeps a requeued
# job's place by submit time (--requeue-order submit), reported as a sensitivity.
SIM_VARIANTS = {"sim": ["--requeue-order", "requeue"], "sim-keep": ["--requeue-order", "submit"]}


def run_sim(args, workload_csv, failures_csv, variant="sim"):
    argv = [sim_binary(), "--trace", workload_csv, "--racks", str(RACKS), "--nodes-per-rack", str(PER_RACK),
            "--slice", str(SLICE), "--spares", str(SPARES), "--gpus-per-node", str(GPUS_PER_NODE),
            "--policies", ",".join(args.policies), "--failures", failures_csv, "--seed", "1",
            "--queue", "easy", "--bf-interval", str(BF_INTERVAL), "--bf-max-job-test", str(BF_MAX_JOB_TEST),
            "--requeue-delay", str(REQUEUE_DELAY), "--recovery-wait", str(args.recovery_wait),
            "--checkpoint-interval", "0", "--window-end", str(args.window),
            "--json", os.path.join(RESULTS, f"{variant}.json"), "--log", os.path.join(RESULTS, variant),
            "--threads", "1", "--quiet"] + SIM_VARIANTS[variant]
    log("nvlblock-sim " + " ".join(os.path.relpath(a, REPO) if a.startswith(REPO) else a for a in argv[1:]))
    t = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"nvlblock-sim failed:\n{p.stderr}")
    log(f"nvlblock-sim: {time.monotonic() - t:.2f} s")
    return [os.path.relpath(a, REPO) if a.startswith(REPO) else a for a in argv[1:]]


def sim_records(policy, jobs, failures, variant="sim"):
    """Runs per job from nvlblock-sim's --log: {name: [{start, end, nodes, cause}]}."""
    runs = {j["name"]: [] for j in jobs}
    open_run = {}
    with open(os.path.join(RESULTS, f"{variant}-{policy}.csv")) as f:
        header = next(csv.reader(f))
        for row in csv.reader(f):
            if len(row) > len(header):  # an unquoted host list with commas (older nvlblock-sim)
                row = row[:4] + [",".join(row[4:len(row) - 1]), row[-1]]
            r = dict(zip(header, row))
            t, ev, name = float(r["time_s"]), r["event"], r["job"]
            if ev == "start":
                run = {"start": t, "end": None, "nodes": [node_offset(n) for n in expand_hostlist(r["hosts"])],
                       "cause": None, "how": "sim", "detail": r["detail"]}
                runs[name].append(run)
                open_run[name] = run
            elif ev in ("end", "fail", "preempt"):
                run = open_run.pop(name)
                run["end"] = t
                run["cause"] = {"end": "done", "fail": "failed", "preempt": "preempted"}[ev]
            elif ev == "reject":
                pass
    downs = [(f["node"], float(f["down"]), float(f["up"]) if f["up"] is not None else math.inf) for f in failures]
    submits = {j["name"]: float(j["submit"]) for j in jobs}
    return {"submits": submits, "runs": runs, "downs": downs, "t0": 0.0}
