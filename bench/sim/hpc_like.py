#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a synthetic HPC-like job trace in the simulator's CSV format.

The shipped traces are GPU-cluster traces dominated by small jobs (Philly,
openb) or the LLM large-job mix. A site running classic HPC work has many
multi-node jobs of every size, hours-long runs and no preemptible QOS. This
generator stands in for such a trace (it is not a real one): Poisson
arrivals, node counts drawn per size class (log-uniform inside the class),
log-normal run times (median 1 hour, clamped to 1 minute - 48 hours),
arrival rate set so that the offered load is LOAD of the cluster's nodes.

usage: hpc_like.py SEED LOAD DAYS ONE_NODE_SHARE OUT.csv [NODES]
  e.g. hpc_like.py 2 0.85 30 0.3 hpc.csv        (2,304 nodes)
"""
import math
import random
import sys

# (smallest, largest node count, share of the jobs that are not 1-node jobs)
MULTI_NODE_CLASSES = [(2, 4, 0.36), (5, 16, 0.33), (17, 64, 0.22), (65, 256, 0.09)]


def draw_nodes(rng, one_node_share):
    if rng.random() < one_node_share:
        return 1
    r = rng.random()
    for lo, hi, p in MULTI_NODE_CLASSES:
        if r < p:
            return min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
        r -= p
    return MULTI_NODE_CLASSES[-1][1]


def draw_duration(rng):
    return int(min(48 * 3600, max(60, rng.lognormvariate(math.log(3600), 1.3))))


def main(argv):
    if len(argv) not in (6, 7):
        sys.exit(__doc__)
    seed, load, days, one_node_share, out = int(argv[1]), float(argv[2]), float(argv[3]), float(argv[4]), argv[5]
    nodes = int(argv[6]) if len(argv) == 7 else 2304
    rng = random.Random(seed)
    # The mean node-seconds of a job, estimated from a sample of the same distributions.
    sample = random.Random(seed + 1)
    mean = sum(min(nodes // 4, draw_nodes(sample, one_node_share)) * draw_duration(sample)
               for _ in range(50000)) / 50000
    rate = load * nodes / mean
    t, rows = 0.0, []
    while True:
        t += rng.expovariate(rate)
        if t >= days * 86400:
            break
        rows.append((len(rows) + 1, int(t), min(nodes // 4, draw_nodes(rng, one_node_share)), draw_duration(rng)))
    with open(out, "w") as f:
        f.write("job_id,submit_s,nodes,gpus_per_node,duration_s,priority,user_vc\n")
        for job, submit, n, d in rows:
            f.write(f"{job},{submit},{n},4,{d},,\n")
    print(f"{out}: {len(rows)} jobs over {days:g} days, offered load {load:g} on {nodes} nodes")


if __name__ == "__main__":
    main(sys.argv)
