# SPDX-License-Identifier: GPL-2.0-or-later
"""Where each job's first run went, real against simulated."""

import statistics

from .metrics import nearest_rank
from .names import compress, mirror, racks


def placement_comparison(real, sim, jobs):
    """Per job: the first run's racks and nodes, and its start time, real vs simulated;
    also with the simulated racks mirrored (stock topology/block breaks ties between
    equally good racks towards the last one, the placement engine towards the first)."""
    same_rack = same_nodes = n = 0
    m_rack = m_nodes = 0
    early = [0, 0, 0, 0, 0]  # jobs submitted in the first 60 s: n, same racks, same nodes, mirrored racks, nodes
    by_kind = {}
    dstart = []
    slice_rows = []
    for j in jobs:
        rr, sr = real["runs"][j["name"]], sim["runs"][j["name"]]
        if not rr or not sr:
            continue
        n += 1
        a, b = rr[0], sr[0]
        racks_eq = racks(a["nodes"]) == racks(b["nodes"])
        nodes_eq = sorted(a["nodes"]) == sorted(b["nodes"])
        mb = [mirror(x) for x in b["nodes"]]
        m_racks_eq = racks(a["nodes"]) == racks(mb)
        m_nodes_eq = sorted(a["nodes"]) == sorted(mb)
        same_rack += racks_eq
        same_nodes += nodes_eq
        m_rack += m_racks_eq
        m_nodes += m_nodes_eq
        if j["submit"] < 60:
            for i, v in enumerate((1, racks_eq, nodes_eq, m_racks_eq, m_nodes_eq)):
                early[i] += v
        k = by_kind.setdefault(j["kind"] if j["kind"] == "slice" else "trace", [0, 0, 0])
        k[0] += 1
        k[1] += racks_eq
        k[2] += nodes_eq
        dstart.append(a["start"] - b["start"])
        if j["kind"] == "slice":
            slice_rows.append({
                "job": j["name"], "submit": j["submit"],
                "real_start": round(a["start"], 1), "sim_start": b["start"],
                "real_nodes": compress(a["nodes"]), "sim_nodes": compress(b["nodes"]),
                "same_rack": racks_eq, "same_nodes": nodes_eq, "same_rack_mirrored": m_racks_eq,
                "real_runs": len(rr), "sim_runs": len(sr)})
    return {
        "jobs_compared": n, "same_racks": same_rack, "same_nodes": same_nodes,
        "same_racks_mirrored": m_rack, "same_nodes_mirrored": m_nodes,
        "first_60s": {"jobs": early[0], "same_racks": early[1], "same_nodes": early[2],
                      "same_racks_mirrored": early[3], "same_nodes_mirrored": early[4]},
        "by_kind": {k: {"jobs": v[0], "same_racks": v[1], "same_nodes": v[2]} for k, v in by_kind.items()},
        "start_real_minus_sim_s": {
            "mean": round(statistics.mean(dstart), 2) if dstart else None,
            "p50": round(nearest_rank(dstart, 50), 2) if dstart else None,
            "p5": round(nearest_rank(dstart, 5), 2) if dstart else None,
            "p95": round(nearest_rank(dstart, 95), 2) if dstart else None,
            "abs_le_1s": sum(1 for d in dstart if abs(d) <= 1.0),
            "abs_le_5s": sum(1 for d in dstart if abs(d) <= 5.0)},
        "slice_jobs": slice_rows,
    }
