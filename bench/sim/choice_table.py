#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Section (h) of docs/results.md: the choice a site makes, from nvlblock-sim
--json files of bench/sim/choice.

For each workload, the policies side by side: goodput, the share of healthy
capacity held as in-job standbys, response time per size class (classes with
at least 20 completed jobs), bounded slowdown, failed multi-node jobs back on
their own racks (for nvrx-16+2 a failure absorbed in the job counts as in
place), their restart delay p95, and the victims of reclaims and of Slurm's
preemption. Before them, goodput, restart p95 and response p95 of every
workload in one table each: the first file's value (seed 1), and the range over
all of a workload's files (seeds) in brackets.

usage: choice_table.py TITLE FILE.json[,FILE.json...] [TITLE FILES ...] > choice.md
"""
import json
import sys
from durations import dur

MIN_CLASS_JOBS = 20


def pct(x):
    return f"{100 * x:.1f}%"


def in_place(p):
    m = p["restarts"]["multi_node"]
    return f"{m['in_place']:,} of {m['restarts']:,}" if m["restarts"] else "-"


def restart_p95(p):
    d = p["restarts"]["multi_node"]["delay_s"]
    return dur(d["p95"]) if d["count"] else "-"


def victims(p):
    v, q = p["victims"], p["preemption_victims"]
    return f"{v['moved']:,} / {q['jobs']:,} ({v['lost_node_hours'] + q['lost_node_hours']:,.0f} node-h)"


def workload_table(title, d):
    pols = d["policies"]
    run = d["run"]
    out = [f"### {title}", "",
           f"`{run['trace']}`, failures `{run['failures']}` ({run['failure_model']}); {run['racks']} racks; "
           f"seed {run['seed']}; window {run['window_start_s']}-{run['window_end_s']} s; "
           f"preemption {run['preemption']}; in-job restart {run['in_job_restart_s']} s.", "",
           "| | " + " | ".join(p["policy"] for p in pols) + " |", "|---|" + "---:|" * len(pols)]

    def row(label, fn):
        out.append(f"| {label} | " + " | ".join(fn(p) for p in pols) + " |")

    row("goodput (useful / healthy)", lambda p: pct(p["goodput"]))
    row("utilization (allocated / healthy)", lambda p: pct(p["utilization"]))
    row("held as in-job standbys", lambda p: pct(p["standby_gpu_hours"] / p["healthy_gpu_hours"])
        if p["healthy_gpu_hours"] else "-")
    row("lost to failures (GPU-h)", lambda p: f"{p['lost_failure_gpu_hours']:,.0f}")
    ref = pols[0]["response_s"]
    for c in [c for c in ref if c != "all" and ref[c]["count"] >= MIN_CLASS_JOBS] + ["all"]:
        row(f"response p50 / p95, {c.replace('_', ' ')}",
            lambda p, c=c: f"{dur(p['response_s'][c]['p50'])} / {dur(p['response_s'][c]['p95'])}"
            if p["response_s"][c]["count"] else "-")
    row("bounded slowdown mean / p95, all", lambda p: f"{p['bounded_slowdown']['all']['mean']:.2f} / "
        f"{p['bounded_slowdown']['all']['p95']:.2f}")
    row("wait p50 / p95, all", lambda p: f"{dur(p['wait_s']['all']['p50'])} / {dur(p['wait_s']['all']['p95'])}")
    row("failed multi-node jobs in place", in_place)
    row("  of which in the job (standbys used)",
        lambda p: f"{p['restarts']['in_job']:,} ({p['restarts']['standbys_used']:,})")
    row("  restart p95", restart_p95)
    row("victims: moved by reclaims / preempted (lost)", victims)
    return out


def summary(titles, runs, label, value, show):
    """value(policy) -> number (None: none); show(number) -> text."""
    names = [p["policy"] for p in runs[0][0]["policies"]]
    out = [f"| {label} | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for t, docs in zip(titles, runs):
        bys = [{p["policy"]: p for p in d["policies"]} for d in docs]
        if not all(set(names) <= set(by) for by in bys):
            continue
        cells = []
        for n in names:
            vs = [value(by[n]) for by in bys]
            first = "-" if vs[0] is None else show(vs[0])
            known = [v for v in vs if v is not None]
            rng = f" [{show(min(known))}-{show(max(known))}]" if len(vs) > 1 and known else ""
            cells.append(first + rng)
        out.append(f"| {t} | " + " | ".join(cells) + " |")
    return out


def in_place_share(p):
    m = p["restarts"]["multi_node"]
    return m["in_place"] / m["restarts"] if m["restarts"] else None


def restart_p95_s(p):
    d = p["restarts"]["multi_node"]["delay_s"]
    return d["p95"] if d["count"] else None


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    titles = argv[0::2]
    runs = [[json.load(open(f)) for f in files.split(",")] for files in argv[1::2]]
    out = ["## (h) The choice a site makes", "",
           "Seed 1 [range over the seeds].", ""]
    out += summary(titles, runs, "goodput", lambda p: p["goodput"], pct) + [""]
    out += summary(titles, runs, "failed multi-node jobs in place", in_place_share, lambda x: f"{100 * x:.0f}%")
    out += [""]
    out += summary(titles, runs, "their restart p95", restart_p95_s, dur) + [""]
    out += summary(titles, runs, "response p95, all jobs", lambda p: p["response_s"]["all"]["p95"], dur) + [""]
    for t, docs in zip(titles, runs):
        out += workload_table(t, docs[0]) + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1:])
