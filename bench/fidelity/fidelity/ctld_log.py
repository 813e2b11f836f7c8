# SPDX-License-Identifier: GPL-2.0-or-later
"""The real side's record: the lines of slurmctld's log a replay needs, the
runs per job read from them, and a check of those against `scontrol show job`."""

import datetime
import math
import re

from nvlblock_cluster.client import parse_kv
from nvlblock_cluster.hostlist import expand_hostlist

from .names import compress, node_offset


LOG_TS = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)\] (.*)$")
RELEVANT = re.compile(r"_slurm_rpc_submit_batch_job|sched: Allocate|_start_job: Started|requeue job|Requeuing|"
                      r"_job_complete: JobId=\d+ done|update_node|nvlblock: recovery|backfill: .*(state changed|"
                      r"yielding|reached end)")


def parse_ctld_log(path, t0):
    """The lines a replay needs, as (seconds since t0, text)."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LOG_TS.match(line.rstrip("\n"))
            if not m or not RELEVANT.search(m.group(2)):
                continue
            ts = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").timestamp()
            out.append((round(ts - t0, 3), m.group(2)))
    return out


def real_records(raw, jobs):
    """Runs per job from slurmctld's log lines: {name: [{start, end, nodes, cause, how}]}."""
    by_id = {v["id"]: name for name, v in raw["submitted"].items()}
    runs = {j["name"]: [] for j in jobs}
    submits, open_run = {}, {}
    for t, text in raw["log"]:
        m = re.search(r"JobId=(\d+)", text)
        name = by_id.get(int(m.group(1))) if m else None
        if "_slurm_rpc_submit_batch_job" in text and name:
            submits[name] = t
        elif ("sched: Allocate" in text or "_start_job: Started" in text) and name:
            hosts = re.search(r"NodeList=(\S+)", text) or re.search(r" on (\S+)$", text)
            run = {"start": t, "end": None, "nodes": [node_offset(n) for n in expand_hostlist(hosts.group(1))],
                   "cause": None, "how": "backfill" if "backfill" in text else "main"}
            runs[name].append(run)
            open_run[name] = run
        elif "requeue job" in text and "due to failure of node" in text and name:
            run = open_run.pop(name, None)
            if run:
                run["end"], run["cause"] = t, "failed"
        elif "_job_complete" in text and name:
            run = open_run.pop(name, None)
            if run:
                run["end"], run["cause"] = t, "done"
        elif "nvlblock: recovery" in text and name:
            for run in reversed(runs[name]):
                run.setdefault("plugin_says", []).append(text.split(": ", 1)[1] if ": " in text else text)
                break
    downs, pending = [], {}
    for e in raw["node_events"]:
        if e["event"] == "down":
            pending[e["node"]] = e["at_s"]
        else:
            downs.append((e["node"], pending.pop(e["node"]), e["at_s"]))
    downs += [(n, t, math.inf) for n, t in pending.items()]
    return {"submits": submits, "runs": runs, "downs": downs, "t0": 0.0}


def check_against_scontrol(rec, raw):
    """The last run of every job from the log against `scontrol show job -o`."""
    problems = []
    by_id = {v["id"]: name for name, v in raw["submitted"].items()}
    seen = set()
    for line in raw["scontrol"]:
        kv = parse_kv(line)
        jid = int(kv.get("JobId", "0"))
        name = by_id.get(jid)
        if not name:
            continue
        seen.add(name)
        runs = rec["runs"][name]
        if kv.get("JobState") != "COMPLETED":
            problems.append(f"{name}: JobState={kv.get('JobState')}")
        if not runs:
            problems.append(f"{name}: no start in the log")
            continue
        nodes = sorted(node_offset(n) for n in expand_hostlist(kv.get("NodeList", "")))
        if nodes != sorted(runs[-1]["nodes"]):
            problems.append(f"{name}: NodeList={kv.get('NodeList')} but the log's last run had "
                            f"{compress(runs[-1]['nodes'])}")
        failed_runs = sum(1 for r in runs if r["cause"] == "failed")
        if int(kv.get("Restarts", "0")) != failed_runs:
            problems.append(f"{name}: Restarts={kv.get('Restarts')} but {failed_runs} failure requeues in the log")
    missing = set(by_id.values()) - seen
    if missing:
        problems.append(f"{len(missing)} jobs missing from scontrol show job (MinJobAge?)")
    return problems
