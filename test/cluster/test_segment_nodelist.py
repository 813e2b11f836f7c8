#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Slurm's own topology/block scenarios, test_150_1 and test_150_2 of its
testsuite (testsuite/python/tests/ on upstream master), run side by side
under topology/block and topology/nvlblock on the same topology.conf: two
blocks of 4 nodes, BlockSizes=4,8, no nvlblock.yaml (drop-in mode).

Each scenario's outcome per job (refused at submission with sbatch's
message, completed, running, or pending with its reason) must be the same
under both plugins, and the one topology/block gives on this Slurm release:

- test_150_1 (every release): -N2 and -N3 run, a second -N3 waits; -N3 and
  -N5 run together (-N5 spans both blocks through the level-8 block);
  -N4 --segment=2 runs, -N5 --segment=2 is refused.
- test_150_2, --segment with --nodelist: from Slurm 25.11 the listed nodes
  are the job's candidates and each segment still lies in one block, so
  -N4 -w <4 nodes of b1> --segment=2, -N4 -w <2 of each> --segment=2 and
  -N6 -w <3 of each> --segment=3 complete, -N6 -w <4 of b1 + 2 of b2>
  --segment=3 (never runnable) and -N6 -w <5 nodes> --segment=3 (not
  supported) are refused. Slurm 24.11
  refuses a nodelist with more than one segment, except -N6 -w <all 8>,
  which Slurm turns into "any 6 of these" before the topology plugin sees it.
- On 26.05 a job that waits because no block fits has Slurm's reason text
  "No suitable topology unit found" under both plugins (where nvlblock's
  placement refuses, its own sentence follows; test_placement checks that).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import Cluster, ClusterTest, main, rack_nodes  # noqa: E402

PER_RACK = 4
NODES = rack_nodes("rack01", PER_RACK) + rack_nodes("rack02", PER_RACK)


def node(i):
    """Slurm's test numbering node1..node8 -> this cluster's names."""
    return NODES[i - 1]


def w(*numbers):
    return ",".join(node(i) for i in numbers)


# test_150_1: (name, [sbatch args of each job]) run in order; the jobs of
# one scenario are cancelled before the next.
SCENARIOS_150_1 = [
    ("const1", [["-N2", "--exclusive"], ["-N3", "--exclusive"], ["-N3", "--exclusive"]]),
    ("const2", [["-N3", "--exclusive"], ["-N5", "--exclusive"]]),
    ("segment1", [["-N4", "--segment=2", "--exclusive"], ["-N5", "--segment=2", "--exclusive"]]),
]
SCENARIOS_150_2 = [
    ["-N4", "-w", w(1, 2, 3, 4), "--segment=2", "--exclusive"],
    ["-N4", "-w", w(1, 2, 5, 6), "--segment=2", "--exclusive"],
    ["-N6", "-w", w(*range(1, 9)), "--segment=3", "--exclusive"],
    ["-N6", "-w", w(1, 2, 3, 5, 6, 7), "--segment=3", "--exclusive"],
    ["-N6", "-w", w(1, 2, 3, 4, 5, 6), "--segment=3", "--exclusive"],
    ["-N6", "-w", w(1, 2, 3, 4, 5), "--segment=3", "--exclusive"],
]
TOPO_REFUSAL = "refused: Requested topology configuration is not available"


def expected_150_1(version):
    waiting = "pending: No suitable topology unit found" if version >= (26, 5, 0) else "pending"
    # From 26.05 sbatch itself refuses a --segment that does not divide -N.
    not_divisible = ("refused: sbatch: fatal: --segment=2 does not fit the job size (5): node count must be "
                     "evenly divisible by segment size") if version >= (26, 5, 0) else TOPO_REFUSAL
    return {
        "const1": ["running", "running", waiting],
        "const2": ["running", "running"],
        "segment1": ["running", not_divisible],
    }


def expected_150_2(version):
    if version >= (25, 11, 0):
        # -w <4 of b1 + 2 of b2>: accepted as a request, but no placement
        # of the listed nodes fits, so slurmctld refuses it as never runnable.
        return ["completed", "completed", "completed", "completed",
                "refused: Requested node configuration is not available", TOPO_REFUSAL]
    return [TOPO_REFUSAL, TOPO_REFUSAL, "completed", TOPO_REFUSAL, TOPO_REFUSAL, TOPO_REFUSAL]


def refusal(stderr):
    m = re.search(r"error: Batch job submission failed: (.*)", stderr)
    return "refused: " + (m.group(1).strip() if m else stderr.strip())


class SegmentNodelist(ClusterTest):

    def cluster(self, plugin):
        flags = ["--slice", str(PER_RACK)]
        if plugin == "nvlblock":
            flags.append("--topology-conf")
        return Cluster(f"t150-{plugin}", racks=2, nodes_per_rack=PER_RACK, plugin=plugin,
                       flags=flags + ["--extra-conf", "SchedulerParameters=sched_interval=1,bf_interval=1"])

    def set_block_sizes(self, c, sizes):
        """BlockSizes=4,8 as test_150_*'s topology.conf has it; topology.conf
        is read at slurmctld start."""
        path = c.path("etc", "topology.conf")
        with open(path) as f:
            text = f.read()
        text = re.sub(r"(?m)^BlockSizes=.*$", f"BlockSizes={sizes}", text)
        if "BlockSizes=" not in text:
            text += f"BlockSizes={sizes}\n"
        with open(path, "w") as f:
            f.write(text)
        c.restart_ctld(kill=False)

    def outcome_now(self, c, job):
        info = c.job(job)
        state = info.get("JobState", "GONE")
        if state == "PENDING":
            # scontrol writes the reason text with underscores.
            reason = info.get("Reason", "").replace("_", " ")
            return "pending" + (": No suitable topology unit found"
                                if "No suitable topology unit found" in reason else "")
        return state.lower()

    def run_150_1(self, c):
        out = {}
        for name, jobs in SCENARIOS_150_1:
            ids, results = [], []
            for args in jobs:
                job, err = c.try_sbatch(*args, wrap="sleep 300")
                if job is None:
                    results.append(refusal(err))
                    continue
                ids.append(job)
                results.append(job)
            # Running jobs start within a few scheduling passes (1 s each);
            # a job that cannot start keeps waiting.
            for job in ids:
                try:
                    c.wait_state(job, ["RUNNING"], 10)
                except AssertionError:
                    pass
            # The reason of a waiting job settles over a few scheduling
            # passes (main scheduler and backfill); on 26.05 wait for Slurm's
            # topology text, which either plugin should give.
            settled = (lambda r: "No suitable topology unit found" in r.replace("_", " ")) \
                if c.slurm_version >= (26, 5, 0) \
                else (lambda r: r not in ("None", ""))
            try:
                c.wait_for(lambda: all(self.outcome_now(c, j) != "pending" or settled(c.job(j).get("Reason", ""))
                                       for j in ids), 20, "reasons of waiting jobs")
            except AssertionError:
                pass  # recorded as it is; the comparison below tells
            out[name] = [self.outcome_now(c, r) if isinstance(r, int) else r for r in results]
            c.cancel(*ids)
            c.wait_idle(60)
        return out

    def run_150_2(self, c):
        out = []
        for args in SCENARIOS_150_2:
            job, err = c.try_sbatch(*args, wrap="exit 0")
            if job is None:
                out.append(refusal(err))
                continue
            c.wait_state(job, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"], 30,
                         f"job {job} ({' '.join(args)}) to end")
            out.append(c.job(job).get("JobState", "GONE").lower())
            c.wait_idle(60)
        return out

    def test_slurm_test_150_scenarios(self):
        results = {}
        for plugin in ("block", "nvlblock"):
            with self.cluster(plugin) as c:
                version = c.slurm_version
                self.set_block_sizes(c, f"{PER_RACK},{2 * PER_RACK}")
                results[plugin] = (self.run_150_1(c), self.run_150_2(c))
        print(f"Slurm {'.'.join(map(str, version))}: block {results['block']}\n"
              f"{' ' * 12}nvlblock {results['nvlblock']}", file=sys.stderr)
        self.assertEqual(results["block"], (expected_150_1(version), expected_150_2(version)),
                         "topology/block no longer behaves as this test expects on this Slurm")
        self.assertEqual(results["nvlblock"], results["block"])


if __name__ == "__main__":
    main()
