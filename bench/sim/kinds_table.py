#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Section (i) of docs/results.md: the five policies by failure kind.

Reads nvlblock-sim --json files (one per workload, kind and seed; the first
seed in detail) and writes, as Markdown:
  - goodput, per workload and kind;
  - failed multi-node jobs back on their own rack(s) and their restart
    delay p95;
  - response time p50 / p95 per size class with >= 20 jobs under every policy;
  - the goal for `recommended` against `block` on every workload and kind:
    goodput no lower, response p50 and p95 of every class with >= 20 jobs
    within 5% (or 60 s) of block's (goal_check.within, as (g) judges it), with
    every miss and its figures; over every seed given;
  - what the faults did: interruptions by kind, runs ended with the node up
    (of which on a fault no check had found), jobs not requeued, and the
    recoveries the core opened by trigger.

usage: kinds_table.py 'WORKLOAD|KIND' FILE.json[,FILE.json...] [...] > kinds.md
"""
import json
import math
import sys

from durations import dur
from goal_check import within

POLICIES = ["block", "block-expedite", "nvrx-16+2", "nvlblock", "recommended"]


def load(path):
    return {p["policy"]: p for p in json.load(open(path))["policies"]}


def cls_name(cls):
    return cls.replace("gpus_", "").replace("_", "-") + " GPUs"


def classes(runs):
    """Size classes with >= 20 jobs under every policy of the run."""
    names = None
    for p in runs.values():
        have = {c for c, w in p["response_s"].items() if c != "all" and w["count"] >= 20}
        names = have if names is None else names & have
    first = next(iter(runs.values()))
    return [c for c in first["response_s"] if c in (names or set())]


def in_place(p):
    m = p["restarts"]["multi_node"]
    if not m["restarts"]:
        return "-"
    return f"{100 * m['in_place'] / m['restarts']:.0f}% / {dur(m['delay_s']['p95'])}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def goal_rows(rec, blk):
    """(criterion, met, recommended's, block's) for one seed."""
    rows = [("goodput", rec["goodput"] >= blk["goodput"] - 5e-5, f"{100 * rec['goodput']:.2f}%",
             f"{100 * blk['goodput']:.2f}%")]
    for c in classes({"block": blk, "recommended": rec}):
        for q in ("p50", "p95"):
            ours, theirs = rec["response_s"][c][q], blk["response_s"][c][q]
            pct = f" ({100 * (ours / theirs - 1):+.0f}%)" if theirs > 0 else ""
            rows.append((f"response {q} {cls_name(c)}", within(ours, theirs), dur(ours) + pct, dur(theirs)))
    return rows


def worst_mean_ratio(runs):
    """The response criterion whose ratio to block, as a geometric mean over the seeds, is highest."""
    logs = {}
    for d in runs:
        rec, blk = d["recommended"], d["block"]
        for c in classes({"block": blk, "recommended": rec}):
            for q in ("p50", "p95"):
                ratio = (rec["response_s"][c][q] + 1) / (blk["response_s"][c][q] + 1)
                logs.setdefault(f"{q} {cls_name(c)}", []).append(math.log(ratio))
    if not logs:
        return None, None
    name = max(logs, key=lambda k: sum(logs[k]) / len(logs[k]))
    return name, math.exp(sum(logs[name]) / len(logs[name]))


def faults(run):
    p = run["recommended"]
    f = p["failures"]
    led = p["restarts"]["ledger"]
    opened = f"{led['node_down']} / {led['drained']} / {led['after_end']}" if led else "-"
    held = run.get("block-expedite", {}).get("failures", {})
    held = f"{held['jobs_not_requeued']} ({held['not_requeued_gpu_hours']:,.0f})" if held else "-"
    return [str(f["node_failures"] + f["rack_faults"]), str(f["up_faults"]), str(f["job_faults"]),
            f"{f['fault_ends']} ({f['hidden_fault_hits']})", f"{f['jobs_not_requeued']}", opened, held]


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.exit(__doc__)
    sets = []
    for i in range(1, len(argv), 2):
        paths = [p for p in argv[i + 1].split(",") if p]
        if paths:
            sets.append((argv[i].replace("|", ", "), [load(p) for p in paths]))
    main_sets = [(t, r) for t, r in sets if all(p in r[0] for p in POLICIES)]
    extra = [(t, r) for t, r in sets if (t, r) not in main_sets]
    print("## (i) By failure kind\n")
    print("Seed 1 of each run (every policy); the goal over every seed given (block and recommended).\n")
    print("### Goodput\n")
    print(table(["workload, kind"] + POLICIES,
                [[t] + [f"{100 * r[0][p]['goodput']:.1f}%" for p in POLICIES] for t, r in main_sets]))
    print("### Failed multi-node jobs in place / their restart p95\n")
    print(table(["workload, kind"] + POLICIES, [[t] + [in_place(r[0][p]) for p in POLICIES] for t, r in main_sets]))
    print("### Response time p50 / p95 per size class (classes with >= 20 jobs under every policy)\n")
    rows = []
    for t, r in main_sets:
        for c in classes(r[0]):
            rows.append([f"{t}: {cls_name(c)}"] + [
                f"{dur(r[0][p]['response_s'][c]['p50'])} / {dur(r[0][p]['response_s'][c]['p95'])}" for p in POLICIES])
    print(table(["workload, kind, class"] + POLICIES, rows))
    print("### The goal: recommended against block (goodput no lower; response p50, p95 per class within 5% or 60 s)\n")
    summary, misses = [], []
    for t, r in sets:
        if "recommended" not in r[0] or "block" not in r[0]:
            continue
        per = [goal_rows(d["recommended"], d["block"]) for d in r]
        judged = sum(len(x) for x in per)
        met = sum(1 for x in per for row in x if row[1])
        gaps = [100 * (d["recommended"]["goodput"] - d["block"]["goodput"]) for d in r]
        worst, ratio = worst_mean_ratio(r)
        summary.append([t, str(len(r)), f"{met}/{judged}", f"{min(gaps):+.2f} to {max(gaps):+.2f}",
                        f"{ratio:.3f} ({worst})" if worst else "-", "**met**" if met == judged else "**not met**"])
        for seed, x in enumerate(per, 1):
            for name, ok, ours, theirs in x:
                if not ok:
                    misses.append([t, f"s{seed}", name, ours, theirs])
    print(table(["workload, kind", "seeds", "criteria met", "goodput - block's (points)",
                 "highest mean response ratio to block (criterion)", "verdict"], summary))
    if misses:
        print("Misses (recommended against block):\n")
        print(table(["workload, kind", "seed", "criterion", "recommended", "block"], misses))
    print("### What the faults did (seed 1; recommended, and the jobs block-expedite's requeue held)\n")
    print(table(["workload, kind", "nodes down", "faults node up", "faults of the job",
                 "runs ended node up (on a hidden fault)", "jobs not requeued",
                 "recoveries opened: down / drained at end / after end",
                 "block-expedite: jobs held (GPU-h left)"],
                [[t] + faults(r[0]) for t, r in sets if "recommended" in r[0]]))
    if extra:
        print("### Detection and requeue (block and recommended)\n")
        rows = []
        for t, r in extra:
            b, rec = r[0]["block"], r[0]["recommended"]
            rows.append([t, f"{100 * b['goodput']:.1f}% / {100 * rec['goodput']:.1f}%", in_place(b), in_place(rec),
                         f"{b['failures']['fault_ends']} ({b['failures']['hidden_fault_hits']})",
                         f"{rec['failures']['fault_ends']} ({rec['failures']['hidden_fault_hits']})",
                         str(rec["failures"]["jobs_not_requeued"])])
        print(table(["workload, kind", "goodput block / recommended", "in place / restart p95: block",
                     "recommended", "runs ended node up (hidden): block", "recommended", "not requeued"], rows))


if __name__ == "__main__":
    main(sys.argv)
