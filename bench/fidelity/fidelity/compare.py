# SPDX-License-Identifier: GPL-2.0-or-later
"""The comparison per policy (results/fidelity.{json,md}) from the records in
results/: the figures of both sides, placement, diagnostics and the goals."""

import json
import os

from .common import REPO, RESULTS
from .ctld_log import check_against_scontrol, real_records
from .diagnostics import real_diagnostics
from .goals import goals
from .metrics import busy_series, metrics
from .placement import placement_comparison
from .plot import PLOT_BUCKET, plot
from .replay import load_real
from .report import report_md
from .shape import BF_INTERVAL, PER_RACK, RACKS, REQUEUE_DELAY, SLICE, SPARES
from .simulator import sim_records


def inputs(args, jobs, failures, sim_argv):
    """What the comparison was run on (fidelity.json's "inputs")."""
    return {
        "trace": os.path.relpath(args.trace, REPO), "window_s": args.window, "every": args.every,
        "min_duration_s": args.min_duration, "max_duration_s": args.max_duration,
        "slices": os.path.relpath(args.slices, REPO) if args.slices else None,
        "failures": os.path.relpath(args.failures, REPO), "recovery_wait_s": args.recovery_wait,
        "requeue_delay_s": REQUEUE_DELAY, "bf_interval_s": BF_INTERVAL, "racks": RACKS,
        "nodes_per_rack": PER_RACK, "slice": SLICE, "spares": SPARES,
        "jobs": len(jobs), "trace_jobs": sum(j["kind"] == "trace" for j in jobs),
        "slice_jobs": sum(j["kind"] == "slice" for j in jobs),
        "offered_node_s": sum(j["nodes"] * j["duration"] for j in jobs),
        "failure_schedule": failures, "nvlblock_sim": sim_argv}


def other_replays(policy, jobs, window, sm):
    """The other replays of the same plugin: the real cluster's own spread."""
    others = []
    k = 2
    while (extra := load_real(policy, k)) is not None:
        om = metrics(real_records(extra, jobs), jobs, window)
        others.append({"replay": k, "utilization": om["utilization"], "wait_s": om["wait_s"]["all"],
                       "restarts": om["restarts"], "restarts_in_place": om["restarts_in_place"],
                       "last_end_s": om["last_end_s"],
                       "loadavg_max": max((l for _, l in extra.get("loadavg", [])), default=None),
                       "utilization_gap_relative": round((sm["utilization"] - om["utilization"])
                                                         / om["utilization"], 4)})
        k += 1
    return others


def policy_entry(policy, args, jobs, failures, sim_json, series):
    """fidelity.json's entry of one policy; adds its busy-node curves to `series`."""
    raw = load_real(policy)
    sim = sim_records(policy, jobs, failures)
    sm = metrics(sim, jobs, args.window)
    km = metrics(sim_records(policy, jobs, failures, "sim-keep"), jobs, args.window)
    entry = {"policy": policy, "sim": sm,
             "sim_keep_place": {k: km[k] for k in ("utilization", "utilization_to_last_end", "last_end_s",
                                                   "wait_s", "restarts", "restarts_in_place",
                                                   "restart_list")},
             "sim_json": {k: sim_json[policy].get(k) for k in ("utilization", "restarts", "wait_s", "jobs")}}
    if raw is None:
        entry["real"] = None
        return entry
    real = real_records(raw, jobs)
    rm = metrics(real, jobs, args.window)
    entry["real"] = rm
    entry["real_checks"] = check_against_scontrol(real, raw)
    entry["placement"] = placement_comparison(real, sim, jobs)
    entry["diagnostics"] = real_diagnostics(raw, real, jobs)
    entry["real_node_events"] = raw["node_events"]
    entry["goals"] = goals(sm, rm)
    entry["other_replays"] = other_replays(policy, jobs, args.window, sm)
    end = max(rm["last_end_s"], sm["last_end_s"])
    series[f"{policy} real"] = busy_series(real, jobs, PLOT_BUCKET, end)
    series[f"{policy} sim"] = busy_series(sim, jobs, PLOT_BUCKET, end)
    return entry


def compare(args, jobs, failures, sim_argv):
    """Write results/fidelity.{json,md} (and the plot) and print the Markdown."""
    out = {"tool": "bench/fidelity/run", "schema": 1, "inputs": inputs(args, jobs, failures, sim_argv),
           "policies": []}
    with open(os.path.join(RESULTS, "sim.json")) as f:
        sim_json = {p["policy"]: p for p in json.load(f)["policies"]}
    series = {}
    for policy in args.all_policies:
        out["policies"].append(policy_entry(policy, args, jobs, failures, sim_json, series))
    if series:
        plot(series, args.window, os.path.join(RESULTS, "fidelity-busy"))
    with open(os.path.join(RESULTS, "fidelity.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    md = report_md(out)
    with open(os.path.join(RESULTS, "fidelity.md"), "w") as f:
        f.write(md)
    print(md)
