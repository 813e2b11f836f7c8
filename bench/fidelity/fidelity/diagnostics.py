# SPDX-License-Identifier: GPL-2.0-or-later
"""What explains the real side's differences: harness and Slurm latencies."""

import re
import statistics

from .metrics import wait_stats


def real_diagnostics(raw, rec, jobs):
    """What explains differences: harness and Slurm latencies."""
    lags = [rec["submits"][n] - j["submit"] for j in jobs for n in [j["name"]] if n in rec["submits"]]
    overrun = []
    how = {"main": 0, "backfill": 0}
    for j in jobs:
        for r in rec["runs"][j["name"]]:
            how[r["how"]] = how.get(r["how"], 0) + 1
            if r["cause"] == "done":
                overrun.append(r["end"] - r["start"] - j["duration"])
    bf = {}
    text = raw.get("sdiag", "")
    main_part = text.split("Main schedule statistics", 1)[-1].split("Main scheduler exit", 1)[0]
    bf_part = text.split("Backfilling stats", 1)[-1].split("Backfill exit", 1)[0]
    for key, part, pat in (("main_cycles", main_part, r"Total cycles:\s*(\d+)"),
                           ("main_cycles_per_minute", main_part, r"Cycles per minute:\s*(\d+)"),
                           ("main_mean_cycle_us", main_part, r"Mean cycle:\s*(\d+)"),
                           ("backfill_cycles", bf_part, r"Total cycles:\s*(\d+)"),
                           ("backfill_mean_cycle_us", bf_part, r"Mean cycle:\s*(\d+)"),
                           ("backfill_depth_mean", bf_part, r"Depth Mean:\s*(\d+)"),
                           ("backfill_state_changed_exits", text, r"System state changed:\s*(\d+)")):
        m = re.search(pat, part)
        if m:
            bf[key] = int(m.group(1))
    starts_by = {k: v for k, v in how.items() if v}
    return {
        "submit_lag_s": wait_stats(lags),
        "run_overrun_s": wait_stats(overrun),
        "starts_by": starts_by,
        "sdiag": bf,
        "drained_s": raw.get("drained_s"),
        "replay_wall_s": raw.get("replay_wall_s"),
        "loadavg_max": max((l for _, l in raw.get("loadavg", [])), default=None),
        "loadavg_mean": round(statistics.mean(l for _, l in raw["loadavg"]), 2) if raw.get("loadavg") else None,
    }
