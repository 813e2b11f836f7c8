#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The spares goal (docs/results.md, section (g)): `recommended` against
topology/block, side by side in the same runs.

For each workload, the runs of every seed (nvlblock-sim --json files holding at
least the policies `block` and `recommended`) are checked against:
  - goodput no lower than block's;
  - response time (submit to final end, restarts included) p50 and p95 of all
    jobs and of every size class with >= 20 jobs no more than 5% (or 60 s)
    above block's;
  - at least 95% of failed multi-node jobs back on their own rack(s), and their
    restart delay p95 under 60 s.
Waits (first start - submit) are shown beside them, not judged: a failed job
restarted at once moves others' first starts, and block's delay to the
failed job itself is not a wait. The victims' side (jobs moved by reclaims,
per 1,000 jobs, their lost node-hours, the most moves of one job, the share
that checkpointed in their grace time) is reported, not judged.

usage: goal_check.py TITLE FILE.json[,FILE.json...] [TITLE FILES ...] > goal.md
"""
import json
import math
import sys
from durations import dur as _dur


IN_PLACE = 0.95
RESTART_P95_S = 60


def dur(s):
    return _dur(s, zero=None)


def load(path):
    return {p["policy"]: p for p in json.load(open(path))["policies"]}


def within(ours, theirs):
    return ours <= max(1.05 * theirs, theirs + 60)


def cls_name(cls):
    return cls.replace("gpus_", "").replace("_", "-")


def by_class(rec, blk, key, judged):
    """(criterion, judged, met, ours, block's, ratio) per class with >= 20 jobs."""
    out = []
    for cls, w in rec.get(key, {}).items():
        b = blk[key][cls]
        if min(w["count"], b["count"]) < 20:
            continue
        for q in ("p50", "p95"):
            out.append((f"{key.split('_')[0]} {q} {cls_name(cls)}", judged, within(w[q], b[q]), dur(w[q]), dur(b[q]),
                        (w[q] + 1) / (b[q] + 1)))
    return out


def checks(rec, blk):
    """(criterion, judged, met, ours, block's, ratio) for one seed."""
    out = [("goodput", True, rec["goodput"] >= blk["goodput"] - 5e-5, f"{100 * rec['goodput']:.2f}%",
            f"{100 * blk['goodput']:.2f}%", None)]
    out += by_class(rec, blk, "response_s", True)
    m = rec["restarts"]["multi_node"]
    mb = blk["restarts"]["multi_node"]
    if m["restarts"]:
        share = m["in_place"] / m["restarts"]
        out.append((f"in place (>= {100 * IN_PLACE:.0f}%)", True, share >= IN_PLACE,
                    f"{m['in_place']}/{m['restarts']} ({100 * share:.0f}%)", f"{mb['in_place']}/{mb['restarts']}",
                    None))
        out.append((f"restart p95 (< {RESTART_P95_S} s)", True, m["delay_s"]["p95"] < RESTART_P95_S,
                    dur(m["delay_s"]["p95"]), dur(mb["delay_s"]["p95"]) if mb["restarts"] else "-", None))
    out += by_class(rec, blk, "wait_s", False)
    return out


def victims(rec):
    v = rec.get("victims", {})
    return (v.get("moved", rec["restarts"].get("reclaims", 0)), v.get("moved_per_1000_jobs", 0.0),
            v.get("lost_node_hours", 0.0), v.get("most_moves_one_job", 0), v.get("checkpointed_share", 0.0),
            v.get("requeued", 0))


def span(values, fmt):
    lo, hi = min(values), max(values)
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}-{fmt(hi)}"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def evaluate(paths):
    runs = [load(p) for p in paths]
    per = {}
    for d in runs:
        for row in checks(d["recommended"], d["block"]):
            per.setdefault(row[0], []).append(row[1:])
    return runs, per


def section(title, runs, per):
    lines = [f"### {title}", "", f"Seeds: {len(runs)}; the first seed's values shown.", "",
             "| criterion | recommended | block | met (seeds) | mean ratio to block |", "|---|---:|---:|---:|---:|"]
    judged_met = True
    for name, rows in per.items():
        judged = rows[0][0]
        met = sum(1 for r in rows if r[1])
        judged_met = judged_met and (met == len(rows) or not judged)
        ratios = [r[4] for r in rows if r[4] is not None]
        mean = f"{geomean(ratios):.2f}" if ratios else ""
        label = name if judged else f"({name}, not judged)"
        lines.append(f"| {label} | {rows[0][2]} | {rows[0][3]} | {met}/{len(rows)} | {mean} |")
    vs = [victims(d["recommended"]) for d in runs]
    lines += ["", "Victims (recommended, over the seeds): "
              f"{span([v[0] for v in vs], str)} jobs moved ({span([v[1] for v in vs], lambda x: f'{x:.1f}')} "
              f"per 1,000 jobs), {span([v[2] for v in vs], lambda x: f'{x:,.0f}')} node-hours of their work lost, "
              f"at most {max(v[3] for v in vs)} moves of one job, "
              f"{span([100 * v[4] for v in vs], lambda x: f'{x:.0f}%')} of those requeued checkpointed in their "
              "grace time.", "",
              f"Goal {'met on every seed' if judged_met else 'NOT met on every seed'} for this workload.", ""]
    return "\n".join(lines), judged_met


def overview(results):
    """One row per workload: how many seeds (or metric x seed) meet each criterion."""
    lines = ["| workload | goodput >= block | response within 5% or 60 s | in place >= 95% | restart p95 < 60 s "
             "| jobs moved per 1,000 | victims' lost node-h | verdict |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for title, runs, per, met in results:
        def count(pred):
            rows = [r for name, rs in per.items() if pred(name) for r in rs]
            return f"{sum(1 for r in rows if r[1])}/{len(rows)}" if rows else "-"

        worst = min(100 * (d["recommended"]["goodput"] - d["block"]["goodput"]) for d in runs)
        goodput = f" (worst {worst:+.2f} pt)" if worst < -0.005 else ""
        multi = [d["recommended"]["restarts"]["multi_node"] for d in runs]
        shares = [m["in_place"] / m["restarts"] for m in multi if m["restarts"]]
        p95s = [m["delay_s"]["p95"] for m in multi if m["restarts"]]
        in_place = f" ({span([100 * x for x in shares], lambda x: f'{x:.0f}%')})" if shares else ""
        restart = f" ({span(p95s, dur)})" if p95s else ""
        vs = [victims(d["recommended"]) for d in runs]
        responses = count(lambda n: n.startswith('response'))
        lines.append(f"| {title} | {count(lambda n: n == 'goodput')}{goodput} | {responses} "
                     f"| {count(lambda n: n.startswith('in place'))}{in_place} "
                     f"| {count(lambda n: n.startswith('restart'))}{restart} "
                     f"| {span([v[1] for v in vs], lambda x: f'{x:.1f}')} "
                     f"| {span([v[2] for v in vs], lambda x: f'{x:,.0f}')} | {'**met**' if met else '**not met**'} |")
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) < 3 or len(argv) % 2 == 0:
        sys.exit(__doc__)
    results, sections = [], []
    for i in range(1, len(argv), 2):
        paths = [p for p in argv[i + 1].split(",") if p]
        if not paths:
            continue
        runs, per = evaluate(paths)
        text, met = section(argv[i], runs, per)
        sections.append(text)
        results.append((argv[i], runs, per, met))
    print(overview(results))
    print("\n".join(sections))


if __name__ == "__main__":
    main(sys.argv)
