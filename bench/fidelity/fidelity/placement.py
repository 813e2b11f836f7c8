# SPDX-License-Identifier: GPL-2.0-or-later
"""Where each job's first run went, real against simulated."""

import statistics

from .metrics import nearest_rank
from .names import compress, mirror, racks


def first_run_match(a, b):
    """(same racks, same nodes, same racks mirrored, same nodes mirrored) of a real
    and a simulated run."""
    mb = [mirror(x) for x in b["nodes"]]
    return (racks(a["nodes"]) == racks(b["nodes"]), sorted(a["nodes"]) == sorted(b["nodes"]),
            racks(a["nodes"]) == racks(mb), sorted(a["nodes"]) == sorted(mb))


def slice_row(j, rr, sr, match):
    """The slice-job table's row: first runs real and simulated."""
    a, b = rr[0], sr[0]
    return {"job": j["name"], "submit": j["submit"],
            "real_start": round(a["start"], 1), "sim_start": b["start"],
            "real_nodes": compress(a["nodes"]), "sim_nodes": compress(b["nodes"]),
            "same_rack": match[0], "same_nodes": match[1], "same_rack_mirrored": match[2],
            "real_runs": len(rr), "sim_runs": len(sr)}


def start_offsets(dstart):
    """Real first start - simulated first start, over the jobs compared."""
    return {
        "mean": round(statistics.mean(dstart), 2) if dstart else None,
        "p50": round(nearest_rank(dstart, 50), 2) if dstart else None,
        "p5": round(nearest_rank(dstart, 5), 2) if dstart else None,
        "p95": round(nearest_rank(dstart, 95), 2) if dstart else None,
        "abs_le_1s": sum(1 for d in dstart if abs(d) <= 1.0),
        "abs_le_5s": sum(1 for d in dstart if abs(d) <= 5.0)}


def match_counts(matches):
    """{same_racks, same_nodes, same_racks_mirrored, same_nodes_mirrored}: how many matched."""
    keys = ("same_racks", "same_nodes", "same_racks_mirrored", "same_nodes_mirrored")
    return {k: sum(m[i] for m in matches) for i, k in enumerate(keys)}


def placement_comparison(real, sim, jobs):
    """Per job: the first run's racks and nodes, and its start time, real vs simulated;
    also with the simulated racks mirrored (stock topology/block breaks ties between
    equally good racks towards the last one, the placement engine towards the first)."""
    compared = []  # (job, match) of every job that ran on both sides
    dstart, slice_rows = [], []
    for j in jobs:
        rr, sr = real["runs"][j["name"]], sim["runs"][j["name"]]
        if not rr or not sr:
            continue
        match = first_run_match(rr[0], sr[0])
        compared.append((j, match))
        dstart.append(rr[0]["start"] - sr[0]["start"])
        if j["kind"] == "slice":
            slice_rows.append(slice_row(j, rr, sr, match))
    by_kind = {}
    for j, m in compared:
        by_kind.setdefault(j["kind"] if j["kind"] == "slice" else "trace", []).append(m)
    early = [m for j, m in compared if j["submit"] < 60]
    return {
        "jobs_compared": len(compared), **match_counts([m for _, m in compared]),
        "first_60s": {"jobs": len(early), **match_counts(early)},
        "by_kind": {k: {"jobs": len(v), "same_racks": sum(m[0] for m in v), "same_nodes": sum(m[1] for m in v)}
                    for k, v in by_kind.items()},
        "start_real_minus_sim_s": start_offsets(dstart),
        "slice_jobs": slice_rows,
    }
