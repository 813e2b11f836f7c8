#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The spares goal (docs/results.md, section (g)): `recommended` against
topology/block, side by side in the same runs.

For each workload, the runs of every seed (nvlblock-sim --json files holding at
least the policies `block` and `recommended`) are checked against:
  - goodput no lower than block's;
  - wait p50 and p95 of all jobs and of every size class with >= 20 jobs no
    more than 5% (or 60 s) above block's;
  - at least 90% of failed multi-node jobs back on their own rack(s), and their
    restart delay p95 under 60 s.

usage: goal_check.py TITLE FILE.json[,FILE.json...] [TITLE FILES ...] > goal.md
"""
import json
import math
import sys


def dur(s):
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{s / 60:.3g}m"
    return f"{s / 3600:.3g}h"


def load(path):
    return {p["policy"]: p for p in json.load(open(path))["policies"]}


def wait_ok(ours, theirs):
    return ours <= max(1.05 * theirs, theirs + 60)


def checks(rec, blk):
    """(criterion, met, ours, block's) for one seed."""
    out = [("goodput", rec["goodput"] >= blk["goodput"] - 5e-5,
            f"{100 * rec['goodput']:.2f}%", f"{100 * blk['goodput']:.2f}%")]
    for cls, w in rec["wait_s"].items():
        b = blk["wait_s"][cls]
        if min(w["count"], b["count"]) < 20:
            continue
        for q in ("p50", "p95"):
            out.append((f"wait {q} {cls.replace('gpus_', '').replace('_', '-')}", wait_ok(w[q], b[q]),
                        dur(w[q]), dur(b[q])))
    m = rec["restarts"]["multi_node"]
    mb = blk["restarts"]["multi_node"]
    if m["restarts"]:
        share = m["in_place"] / m["restarts"]
        out.append(("in place (>= 90%)", share >= 0.9, f"{m['in_place']}/{m['restarts']} ({100 * share:.0f}%)",
                    f"{mb['in_place']}/{mb['restarts']}"))
        out.append(("restart p95 (< 60 s)", m["delay_s"]["p95"] < 60, dur(m["delay_s"]["p95"]),
                    dur(mb["delay_s"]["p95"]) if mb["restarts"] else "-"))
    return out


def section(title, paths):
    runs = [load(p) for p in paths]
    lines = [f"### {title}", "", f"Seeds: {len(runs)}; the first seed's values shown.", "",
             "| criterion | recommended | block | met (seeds) | mean ratio to block |",
             "|---|---:|---:|---:|---:|"]
    per = {}
    for d in runs:
        for name, met, ours, theirs in checks(d["recommended"], d["block"]):
            per.setdefault(name, []).append((met, ours, theirs))
    ratios = {}
    for d in runs:
        r, b = d["recommended"], d["block"]
        for cls, w in r["wait_s"].items():
            for q in ("p50", "p95"):
                key = f"wait {q} {cls.replace('gpus_', '').replace('_', '-')}"
                ratios.setdefault(key, []).append((w[q] + 1) / (b["wait_s"][cls][q] + 1))
    all_met = True
    for name, rows in per.items():
        met = sum(1 for m, _, _ in rows if m)
        all_met = all_met and met == len(rows)
        rs = ratios.get(name)
        mean = f"{math.exp(sum(math.log(x) for x in rs) / len(rs)):.2f}" if rs else ""
        lines.append(f"| {name} | {rows[0][1]} | {rows[0][2]} | {met}/{len(rows)} | {mean} |")
    lines += ["", f"Goal {'met on every seed' if all_met else 'NOT met on every seed'} for this workload.", ""]
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.exit(__doc__)
    print("\n".join(section(argv[i], argv[i + 1].split(",")) for i in range(1, len(argv), 2)))


if __name__ == "__main__":
    main(sys.argv)
