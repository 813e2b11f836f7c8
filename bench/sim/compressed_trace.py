#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a deep-queue trace from a real one: its jobs as they are (node
counts, GPUs per node, run times), submitted FACTOR times as far apart
(0.3: the same work in 30% of the time, 3.3 times the offered load), the
whole trace COPIES times one after the other. The queue of a trace that
offered about a full cluster's load then grows for the whole run.

usage: compressed_trace.py TRACE.csv FACTOR COPIES OUT.csv
  e.g. compressed_trace.py data/traces/philly_scaled2304.csv 0.3 5 deep.csv
"""
import csv
import sys


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    source, factor, copies, out = argv[1], float(argv[2]), int(argv[3]), argv[4]
    with open(source, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or factor <= 0 or copies < 1:
        sys.exit("compressed_trace.py: an empty trace, or FACTOR <= 0, or COPIES < 1")
    span = max(int(r["submit_s"]) for r in rows) * factor
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["job_id", "submit_s", "nodes", "gpus_per_node", "duration_s", "priority", "user_vc"])
        n = 0
        for copy in range(copies):
            for r in rows:
                submit = int(int(r["submit_s"]) * factor + copy * span)
                w.writerow([n, submit, r["nodes"], r["gpus_per_node"], r["duration_s"], "", r.get("user_vc", "")])
                n += 1
    print(f"{out}: {n} jobs, submissions {factor} times as far apart, {copies} copies")


if __name__ == "__main__":
    main(sys.argv)
