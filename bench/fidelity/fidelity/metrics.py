# SPDX-License-Identifier: GPL-2.0-or-later
"""The figures of one side's record, by the same code for both sides:
utilization of healthy nodes, waits, restarts after failures, refill gaps,
and busy nodes over time."""

import math
import statistics

from .names import compress, racks, racks_label
from .shape import NODES


def nearest_rank(values, p):
    if not values:
        return None
    v = sorted(values)
    return v[max(0, math.ceil(p / 100 * len(v)) - 1)]


def wait_stats(values):
    if not values:
        return {"count": 0}
    return {"count": len(values), "mean": round(statistics.mean(values), 2),
            "p50": round(nearest_rank(values, 50), 2), "p95": round(nearest_rank(values, 95), 2),
            "max": round(max(values), 2)}


def overlap(a0, a1, b0, b1):
    return max(0.0, min(a1, b1) - max(a0, b0))


def busy_node_seconds(rec, jobs, W):
    """(node-seconds busy in [0, W), node-seconds busy in all, when the last run ends)."""
    busy = busy_all = 0.0
    last_end = 0.0
    for j in jobs:
        for r in rec["runs"][j["name"]]:
            end = r["end"] if r["end"] is not None else math.inf
            busy += len(r["nodes"]) * overlap(r["start"], end, 0.0, W)
            busy_all += len(r["nodes"]) * (end - r["start"])
            last_end = max(last_end, end)
    return busy, busy_all, last_end


def first_waits(rec, jobs):
    """First start - submit per job that started, by job class."""
    waits = {"all": [], "1 node": [], "2-8 nodes": [], "slice (16 nodes)": []}
    for j in jobs:
        runs = rec["runs"][j["name"]]
        if not runs:
            continue
        w = runs[0]["start"] - rec["submits"][j["name"]]
        waits["all"].append(w)
        cls = "slice (16 nodes)" if j["kind"] == "slice" else "1 node" if j["nodes"] == 1 else "2-8 nodes"
        waits[cls].append(w)
    return waits


def restarts_after_failures(rec, jobs):
    """Every run that followed a run killed by a failure, and whether it was in place."""
    restarts = []
    for j in jobs:
        runs = rec["runs"][j["name"]]
        for prev, new in zip(runs, runs[1:]):
            if prev["cause"] != "failed":
                continue
            before = racks(prev["nodes"])
            in_place = len(new["nodes"]) == len(prev["nodes"]) and racks(new["nodes"]) <= before
            restarts.append({"job": j["name"], "kind": j["kind"], "nodes": j["nodes"],
                             "failed_at": round(prev["end"], 1), "old": compress(prev["nodes"]),
                             "old_racks": racks_label(prev["nodes"]), "restart_at": round(new["start"], 1),
                             "delay": round(new["start"] - prev["end"], 1), "new": compress(new["nodes"]),
                             "new_racks": racks_label(new["nodes"]), "in_place": in_place,
                             "same_nodes_plus_spares": len(set(prev["nodes"]) & set(new["nodes"]))})
    return restarts


def refill_gaps(rec, jobs, W):
    """A node's idle time between one job and the next when that is under 5 s
    (a queue was waiting; the simulator refills in the same second, Slurm at its next pass)."""
    per_node = {}
    for j in jobs:
        for r in rec["runs"][j["name"]]:
            for n in r["nodes"]:
                per_node.setdefault(n, []).append((r["start"], r["end"] if r["end"] is not None else math.inf))
    gaps = []
    for runs in per_node.values():
        runs.sort()
        for (_, e0), (s1, _) in zip(runs, runs[1:]):
            if 0 <= e0 < W and 0 <= s1 - e0 < 5:
                gaps.append(s1 - e0)
    return gaps


def metrics(rec, jobs, window):
    W = float(window)
    healthy = NODES * W
    for _, d0, d1 in rec["downs"]:
        healthy -= overlap(d0, d1, 0.0, W)
    busy, busy_all, last_end = busy_node_seconds(rec, jobs, W)
    waits = first_waits(rec, jobs)
    restarts = restarts_after_failures(rec, jobs)
    unstarted = [j["name"] for j in jobs if not rec["runs"][j["name"]]]
    gaps = refill_gaps(rec, jobs, W)
    healthy_all = NODES * last_end - sum(overlap(d0, d1, 0.0, last_end) for _, d0, d1 in rec["downs"])
    return {
        "window_s": W,
        "healthy_node_s": round(healthy, 1), "busy_node_s": round(busy, 1),
        "utilization": round(busy / healthy, 4) if healthy else None,
        "last_end_s": round(last_end, 1),
        "utilization_to_last_end": round(busy_all / healthy_all, 4) if healthy_all else None,
        "wait_s": {k: wait_stats(v) for k, v in waits.items()},
        "failure_requeues": sum(1 for j in jobs for r in rec["runs"][j["name"]] if r["cause"] == "failed"),
        "restarts": len(restarts), "restarts_in_place": sum(r["in_place"] for r in restarts),
        "restart_list": restarts,
        "jobs": len(jobs), "jobs_started": len(jobs) - len(unstarted), "unstarted": unstarted,
        "refill_gaps_under_5s": {"count": len(gaps), "mean_s": round(statistics.mean(gaps), 2) if gaps else None,
                                 "node_s": round(sum(gaps), 1)},
    }


def busy_series(rec, jobs, bucket, end):
    """Mean busy nodes per bucket of `bucket` seconds over [0, end)."""
    bins = [0.0] * (int(end // bucket) + 1)
    for j in jobs:
        for r in rec["runs"][j["name"]]:
            a, b = r["start"], r["end"] if r["end"] is not None else end
            k = int(a // bucket)
            while k < len(bins) and k * bucket < b:
                bins[k] += len(r["nodes"]) * overlap(a, b, k * bucket, (k + 1) * bucket) / bucket
                k += 1
    return bins
