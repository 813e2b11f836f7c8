# SPDX-License-Identifier: GPL-2.0-or-later
"""The workload (trace rows and slice jobs) and the failure schedule, as both
sides replay them."""

import csv

from .shape import GPUS_PER_NODE, NODES


def time_limit(duration):
    """nvlblock-sim's limit: twice the run time, rounded up to whole minutes (seconds)."""
    return (2 * duration + 59) // 60 * 60


def build_workload(args):
    jobs = []
    with open(args.trace) as f:
        rows = list(csv.DictReader(row for row in f if not row.startswith("#")))
    for i, r in enumerate(rows):
        submit = int(r["submit_s"])
        if submit >= args.window or i % args.every:
            continue
        dur = min(args.max_duration, max(args.min_duration, int(r["duration_s"])))
        jobs.append({"name": r["job_id"], "submit": submit, "nodes": int(r["nodes"]), "segment": 0,
                     "requeue": False, "duration": dur, "kind": "trace"})
    if args.slices:
        with open(args.slices) as f:
            for r in csv.DictReader(row for row in f if not row.startswith("#")):
                jobs.append({"name": r["job_id"], "submit": int(r["submit_s"]), "nodes": int(r["nodes"]),
                             "segment": int(r["segment"]), "requeue": True,
                             "duration": int(r["duration_s"]), "kind": "slice"})
    jobs.sort(key=lambda j: j["submit"])  # stable: trace rows before slice jobs of the same second
    names = [j["name"] for j in jobs]
    if len(set(names)) != len(names):
        raise SystemExit("duplicate job names in the workload")
    for j in jobs:
        j["limit"] = time_limit(j["duration"])
    return jobs


def write_workload(jobs, path):
    """The workload as a trace CSV nvlblock-sim reads (extra columns are ignored by it).
    A 16-node slice job is a 16-node trace row: with slice 16 the placement engine
    treats a job that fits one slice as one segment (--segment=16 places the same)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "submit_s", "nodes", "gpus_per_node", "duration_s", "priority", "user_vc",
                    "segment", "requeue", "limit_s"])
        for j in jobs:
            w.writerow([j["name"], j["submit"], j["nodes"], GPUS_PER_NODE, j["duration"], "", "",
                        j["segment"] or "", int(j["requeue"]), j["limit"]])


def read_failures(path):
    out = []
    with open(path) as f:
        for r in csv.DictReader(row for row in f if not row.startswith("#")):
            node = int(r["node_id"])
            if not 0 <= node < NODES:
                raise SystemExit(f"{path}: node_id {node} outside 0..{NODES - 1}")
            up = r.get("up_s", "").strip()
            out.append({"node": node, "down": int(r["down_s"]), "up": int(up) if up else None})
    return out
