# SPDX-License-Identifier: GPL-2.0-or-later
"""The goals the fidelity check sets itself, per policy, from both sides'
metrics: utilization within 5 %, and the same in-place decisions."""


def goals(sm, rm):
    """sm, rm: metrics() of the simulated and the real side."""
    # Goals: utilization within 5% (relative), identical in-place decisions. The
    # decisions that matter are those about multi-node jobs (a 1-node job needs no
    # NVLink domain and restarts anywhere under both policies): the same jobs must be
    # hit on both sides and each restarted in place (and on as many prior nodes) or not.
    util_gap = (sm["utilization"] - rm["utilization"]) / rm["utilization"] if rm["utilization"] else None
    sr = {r["job"]: r for r in sm["restart_list"]}
    rl = {r["job"]: r for r in rm["restart_list"]}
    decisions = []
    for job in sorted(set(rl) | set(sr), key=lambda n: ((rl.get(n) or sr.get(n))["failed_at"], n)):
        a, b = rl.get(job), sr.get(job)
        decisions.append({"job": job, "nodes": (a or b)["nodes"],
                          "real_in_place": a["in_place"] if a else None,
                          "sim_in_place": b["in_place"] if b else None,
                          "real_prior_nodes_kept": a["same_nodes_plus_spares"] if a else None,
                          "sim_prior_nodes_kept": b["same_nodes_plus_spares"] if b else None})
    multi = [d for d in decisions if d["nodes"] > 1]
    single = [d for d in decisions if d["nodes"] == 1]
    return {
        "utilization_gap_relative": round(util_gap, 4) if util_gap is not None else None,
        "utilization_within_5pct": util_gap is not None and abs(util_gap) <= 0.05,
        "in_place_decisions": decisions,
        "multi_node_same_jobs_hit": all(d["real_in_place"] is not None and d["sim_in_place"] is not None
                                        for d in multi),
        "multi_node_in_place_identical": bool(multi) and all(
            d["real_in_place"] == d["sim_in_place"] and d["real_prior_nodes_kept"] == d["sim_prior_nodes_kept"]
            for d in multi),
        "multi_node_in_place": [sum(1 for d in multi if d["real_in_place"]),
                                sum(1 for d in multi if d["sim_in_place"])],
        "single_node_restarts": [sum(1 for d in single if d["real_in_place"] is not None),
                                 sum(1 for d in single if d["sim_in_place"] is not None)],
        "single_node_in_place": [sum(1 for d in single if d["real_in_place"]),
                                 sum(1 for d in single if d["sim_in_place"])],
    }
