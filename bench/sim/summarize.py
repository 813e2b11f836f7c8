#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Markdown tables from nvlblock-sim --json files: the policies side by side.

usage: summarize.py TITLE FILE.json [TITLE FILE.json ...] > table.md
"""
import json
import sys
from durations import dur as _dur


def dur(s):
    return _dur(s, days=True)


def table(title, path):
    d = json.load(open(path))
    pols = d["policies"]
    run = d["run"]
    out = [f"### {title}", ""]
    out.append(f"`{run['trace']}` on {run['racks']} racks x {run['nodes_per_rack']} nodes; "
               f"failures `{run['failures']}` ({run['failure_model']}); seed {run['seed']}; "
               f"window {run['window_start_s']}-{run['window_end_s']} s; "
               f"{run['queue']} queue, checkpoint every {run['checkpoint_interval_s']} s.")
    out.append("")
    out.append("| | " + " | ".join(p["policy"] for p in pols) + " |")
    out.append("|---|" + "---:|" * len(pols))

    def row(label, fn):
        out.append(f"| {label} | " + " | ".join(fn(p) for p in pols) + " |")

    row("slice / spares / lending", lambda p: f"{p['topology']['slice']} / {p['topology']['spares']}"
        f"{' reclaim' if p['topology'].get('reclaim') else ''} / {'on' if p['topology']['lending'] else 'off'}")
    row("useful GPU-hours", lambda p: f"{p['useful_gpu_hours']:,.0f}")
    row("goodput (useful / healthy)", lambda p: f"{100 * p['goodput']:.1f}%")
    row("utilization of healthy nodes", lambda p: f"{100 * p['utilization']:.1f}%")
    row("stranded nodes (mean)", lambda p: f"{p['stranded_nodes_mean']:,.1f}")
    row("lost to failures (GPU-h)", lambda p: f"{p['lost_failure_gpu_hours']:,.0f}")
    row("lost to preemption (GPU-h)", lambda p: f"{p['lost_preemption_gpu_hours']:,.0f}")
    row("jobs completed / never started", lambda p: f"{p['jobs']['completed']:,} / {p['jobs']['never_started']:,}")
    classes = [c for c in pols[0]["wait_s"] if any(p["wait_s"][c]["count"] for p in pols)]
    for c in classes:
        row(f"wait p50 / p95 / p99, {c.replace('_', ' ')}",
            lambda p, c=c: " / ".join(dur(p["wait_s"][c][k]) for k in ("p50", "p95", "p99"))
            if p["wait_s"][c]["count"] else "-")
    classes = [c for c in pols[0].get("response_s", {}) if any(p["response_s"][c]["count"] for p in pols)]
    for c in classes:
        row(f"response p50 / p95, {c.replace('_', ' ')}",
            lambda p, c=c: " / ".join(dur(p["response_s"][c][k]) for k in ("p50", "p95"))
            if p["response_s"][c]["count"] else "-")
    if pols[0].get("spread"):
        row("multi-rack jobs started", lambda p: f"{p['spread']['multi_rack_jobs']:,}")
        row("  in one SU, of those that fit one", lambda p: (
            f"{100 * p['spread']['confined_of_fit'] / p['spread']['fit_one_su']:.1f}% of {p['spread']['fit_one_su']:,}"
            if p["spread"]["fit_one_su"] else "-"))
        row("  mean SUs spanned", lambda p: f"{p['spread']['mean_sus_spanned']:.2f}")
    row("runs killed by failures", lambda p: f"{p['restarts']['failure_requeues']:,}")
    row("restarts (in place)", lambda p: f"{p['restarts']['restarts']:,} ({p['restarts']['in_place']:,})")
    row("restart delay p50 / p95",
        lambda p: f"{dur(p['restarts']['delay_s']['p50'])} / {dur(p['restarts']['delay_s']['p95'])}"
        if p["restarts"]["delay_s"]["count"] else "-")
    row("multi-node restarts (in place)", lambda p: f"{p['restarts']['multi_node']['restarts']:,} "
        f"({p['restarts']['multi_node']['in_place']:,})")
    row("multi-node restart delay p50 / p95",
        lambda p: f"{dur(p['restarts']['multi_node']['delay_s']['p50'])} / "
        f"{dur(p['restarts']['multi_node']['delay_s']['p95'])}"
        if p["restarts"]["multi_node"]["delay_s"]["count"] else "-")
    row("preemptions (of which reclaims)", lambda p: f"{p['restarts']['preemptions']:,} "
        f"({p['restarts'].get('reclaims', 0):,})")
    if "victims" in pols[0]:
        row("jobs moved by reclaims (per 1,000 jobs)",
            lambda p: f"{p['victims']['moved']:,} ({p['victims']['moved_per_1000_jobs']:.1f})")
        row("  victims' lost node-hours", lambda p: f"{p['victims']['lost_node_hours']:,.1f}")
        row("  most moves of one job", lambda p: f"{p['victims']['most_moves_one_job']:,}")
        row("  checkpointed in grace time", lambda p: f"{100 * p['victims']['checkpointed_share']:.0f}%"
            if p["victims"]["requeued"] else "-")
    row("node failures / rack faults",
        lambda p: f"{p['failures']['node_failures']:,} / {p['failures']['rack_faults']:,}")
    row("events", lambda p: f"{p['simulation']['events']:,}")
    if "performance" in pols[0]:
        row("simulation seconds (events/s)", lambda p: f"{p['performance']['wall_s']:.1f} "
            f"({p['performance']['events_per_s']:,.0f})")
    out.append("")
    return "\n".join(out)


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.exit(__doc__)
    print("\n".join(table(argv[i], argv[i + 1]) for i in range(1, len(argv), 2)))


if __name__ == "__main__":
    main(sys.argv)
