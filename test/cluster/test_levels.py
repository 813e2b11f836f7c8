#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The network above the racks on a real slurmctld.

BlockSizes levels: the same topology.conf under stock topology/block and
under topology/nvlblock (no nvlblock.yaml), the same scenarios, side by side:
an aligned aggregate is chosen and unaligned free racks are not used; a job
larger than every listed level still runs, spread over at most as many
aggregates of the largest level as it needs (measured: Slurm 24.11.5 does not
refuse it); Slurm's default levels without BlockSizes; the submission-time
refusals and their messages. Where two aggregates fit equally, block takes the
last and nvlblock the first, so placements are compared by their shape
(which aligned aggregates a job lies in), and outcomes (running, pending,
refused with which message) exactly.

nvlblock.yaml groups (nvlblock only: topology/block has no such thing): a
multi-rack job goes to the smallest group that holds it, best fit among
groups; waits with a reason naming the level, crosses after
hierarchy.crossing; a fallback restart prefers its own group; scontrol,
the status JSON and Prometheus show the groups.

Racks of 4 nodes: rack01 = gb0001-gb0004, ... rack08 = gb0029-gb0032.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import (REQUEUE_DELAY, Cluster, ClusterTest, main,  # noqa: E402
                     read_prometheus)

PER_RACK = 4
# How long to watch a job that must not start: a few scheduling passes
# (sched_interval=5) after its first evaluation.
PENDING_WATCH = 12


def node(i):
    return f"gb{i:04d}"


def rack_nodes(r):
    return [node(i) for i in range((r - 1) * PER_RACK + 1, r * PER_RACK + 1)]


def rack_number(n):
    return (int(n[2:]) - 1) // PER_RACK + 1


def racks(nodes):
    return sorted({rack_number(n) for n in nodes})


def hold(c, *nodes):
    """A job on exactly these nodes (of one rack), to make them busy."""
    job = c.sbatch(f"-N{len(nodes)}", "-w", ",".join(nodes), "-J", "hold")
    c.wait_running(job)
    return job


def outcome(c, *args):
    """('refused', sbatch's message), ('running', racks) or ('pending', reason)
    of a job submitted now; a running or pending job is cancelled after."""
    job, err = c.try_sbatch(*args)
    if job is None:
        return ("refused", err.strip().split("submission failed: ")[-1])
    deadline = time.monotonic() + PENDING_WATCH
    state = None
    while time.monotonic() < deadline:
        state = c.state(job)
        if state == "RUNNING":
            nodes = c.nodes(job)
            c.cancel(job)
            c.wait_for(lambda: all(s.rstrip("*~#") == "idle" for n, s in c.node_states().items() if n in nodes),
                       30, f"the nodes of job {job} to be idle again")
            return ("running", racks(nodes), len(nodes))
        time.sleep(0.5)
    reason = c.reason(job)
    c.cancel(job)
    c.wait_for(lambda: c.state(job) != "PENDING", 30, f"job {job} to leave the queue")
    return ("pending", reason)


def pairs_of(rack_list):
    """The aligned pairs (1: racks 1-2, 2: racks 3-4, ...) a job touches."""
    return sorted({(r + 1) // 2 for r in rack_list})


def quads_of(rack_list):
    return sorted({(r + 3) // 4 for r in rack_list})


class LevelCluster(Cluster):
    """A cluster of racks of 4 nodes; its topology.conf has the given BlockSizes."""

    def __init__(self, name, plugin, block_sizes, racks_count=8, flags=()):
        flags = ["--block-sizes", block_sizes] + list(flags)
        if plugin == "nvlblock":
            flags.append("--topology-conf")
        super().__init__(name, racks=racks_count, plugin=plugin, flags=flags, nodes_per_rack=PER_RACK)


def blocksizes_4_8(plugin):
    """Scenarios on 8 racks with BlockSizes=4,8 (aggregates: aligned pairs)."""
    out = {}
    with LevelCluster(f"lv48-{plugin}", plugin, "4,8") as c:
        out["version"] = c.slurm_version
        # Every pair is one node short: racks 02+03 and 06+07 are free but
        # not aligned, so -N8 waits. Freeing gb0001 makes pair 1 whole.
        holds = [hold(c, node(1)), hold(c, node(16)), hold(c, node(17)), hold(c, node(32))]
        out["unaligned"] = outcome(c, "-N8")
        # Segments are placed one by one, each in one block, anywhere.
        out["segments"] = outcome(c, "-N8", "--segment=4")
        c.cancel(holds[0])
        c.wait_for(lambda: c.state(holds[0]) not in ("RUNNING", "COMPLETING"), 30, "the hold to end")
        out["aligned"] = outcome(c, "-N8")
        c.reset()
        # Larger than every listed level: spread over at most ceil(12/8) = 2
        # pairs. With 5 free nodes in every pair, -N12 waits though 20 nodes
        # are free, and -N10 runs on two whole pairs' free nodes.
        for r in (1, 3, 5, 7):
            hold(c, *rack_nodes(r)[:3])
        out["limit_12"] = outcome(c, "-N12")
        out["limit_10"] = outcome(c, "-N10")
        c.reset()
        # Measured on 24.11.5: no refusal beyond the largest level.
        out["beyond"] = outcome(c, "-N24")
        # Refused at submission.
        out["refusals"] = [outcome(c, *a) for a in (
            ["-N8", "--segment=8"],                                # a segment larger than the base block
            ["-N6", "--segment=4"],                                # does not divide the job
            ["-N4", "-w", "gb[0001-0004]", "--segment=2"],         # --nodelist with 2 segments (before 25.11)
            ["-N12", "-w", "gb0001,gb0009,gb0017"],                # required in 3 pairs; at most 2
            ["-N6", "-w", "gb0001,gb0009"],                        # required in two aggregates of 8
        )]
        if plugin == "nvlblock":
            # The pending reason names the level.
            holds = [hold(c, node(1)), hold(c, node(16)), hold(c, node(17)), hold(c, node(32))]
            job = c.sbatch("-N8")
            out["reason"] = c.wait_pending_reason(job, "aggregated block of 8 nodes", 30)
            out["topology"] = c.run("scontrol", "show", "topology").stdout
    return out


def default_levels(plugin):
    """Scenarios on 8 racks without BlockSizes (levels 1x-16x of the base)."""
    out = {}
    with LevelCluster(f"lvdef-{plugin}", plugin, "none") as c:
        hold(c, node(1))
        hold(c, node(16))
        out["pair"] = outcome(c, "-N8")
        c.reset()
        hold(c, node(16))
        hold(c, node(17))
        out["quad"] = outcome(c, "-N12")
        hold(c, node(1))
        hold(c, node(32))
        out["no_pair"] = outcome(c, "-N8")
    return out


def side_by_side(scenarios):
    """The scenarios under topology/nvlblock and under topology/block."""
    nvl = scenarios("nvlblock")
    blk = scenarios("block")
    print(f"nvlblock: {nvl}\ntopology/block: {blk}", file=sys.stderr)
    return nvl, blk


class BlockSizesLevels(ClusterTest):

    def test_blocksizes_4_8_as_topology_block(self):
        nvl, blk = side_by_side(blocksizes_4_8)
        for r in (nvl, blk):
            self.assertEqual(r["unaligned"][0], "pending", r)
            self.assertEqual(r["segments"][0], "running", r)
            self.assertTrue(set(r["segments"][1]) <= {2, 3, 6, 7}, r)
            self.assertEqual(r["aligned"][:2], ("running", [1, 2]), r)
            self.assertEqual(r["limit_12"][0], "pending", r)
            self.assertEqual(r["limit_10"][0], "running", r)
            self.assertEqual(len(pairs_of(r["limit_10"][1])), 2, r)
            self.assertEqual(r["beyond"][0], "running", r)
            self.assertEqual(len(pairs_of(r["beyond"][1])), 3, r)
        # The same refusals with the same messages.
        self.assertEqual(nvl["refusals"], blk["refusals"])
        topo = "Requested topology configuration is not available"
        node_cfg = "Requested node configuration is not available"
        if blk["version"] < (25, 11, 0):
            self.assertEqual([o[1] for o in blk["refusals"]],
                             [topo, topo, topo, topo, node_cfg], blk["refusals"])
        self.assertIn("aggregated block of 8 nodes (2 blocks)", nvl["reason"])
        self.assertIn("GroupName=rack[01-02] Level=2x Blocks=rack[01-02] BlockCount=2 Nodes=8", nvl["topology"])

    def test_default_levels_without_blocksizes(self):
        for r in side_by_side(default_levels):
            # An aligned pair without rack01 or rack04: 05-06 or 07-08, never 02-03.
            self.assertEqual(r["pair"][0], "running", r)
            self.assertIn(r["pair"][1], ([5, 6], [7, 8]), r)
            # -N12 inside one aligned quad (01-04 or 05-08).
            self.assertEqual(r["quad"][0], "running", r)
            self.assertEqual(len(quads_of(r["quad"][1])), 1, r)
            self.assertEqual(r["no_pair"][0], "pending", r)


GROUPS_YAML = """defaults:
  slice: 4
  spares: 0
recovery:
  wait: {wait}
status:
  interval: 1
  prometheus: {prom}
blocks:
{blocks}hierarchy:
  crossing: {crossing}
  levels:
    - name: su
      label: scalable unit
      groups:
        su1: rack[01-03]
        su2: rack[04-06]
"""

CROSSING = 25
RECOVERY_WAIT = 8


def groups_cluster(name, state_dir_hint):
    blocks = "".join(f"  - name: rack{r:02d}\n    nodes: gb[{(r - 1) * 4 + 1:04d}-{r * 4:04d}]\n"
                     for r in range(1, 7))
    fd, path = tempfile.mkstemp(prefix="nvlt-groups-", suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        f.write(GROUPS_YAML.format(wait=RECOVERY_WAIT, prom=state_dir_hint, blocks=blocks,
                                   crossing=f"{CROSSING}s"))
    return path, Cluster(name, racks=6, nodes_per_rack=PER_RACK, plugin="nvlblock", flags=["--config", path])


class YamlGroups(ClusterTest):

    def test_groups_place_wait_cross_and_show(self):
        prom = os.path.join(tempfile.gettempdir(), f"nvlt-groups-{os.getpid()}.prom")
        path, cluster = groups_cluster("groups", prom)
        try:
            with cluster as c:
                self.run_groups(c, prom)
        finally:
            os.unlink(path)
            if os.path.exists(prom):
                os.unlink(prom)

    def run_groups(self, c, prom):
        # Smallest group, best fit: with rack01 busy su1 has 8 free nodes,
        # su2 12; an 8-node job takes su1's racks 02-03.
        hold(c, *rack_nodes(1))
        job = c.sbatch("-N8")
        self.assertEqual(racks(c.wait_running(job)), [2, 3])
        # scontrol, the status JSON and Prometheus show both SUs.
        lines = [ln for ln in c.run("scontrol", "show", "topology").stdout.splitlines()
                 if ln.startswith("GroupName=")]
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("GroupName=su1 Level=su Blocks=rack[01-03] BlockCount=3 Nodes=12 Healthy=12 Failed=0 Free=0",
                      lines[0])
        one = c.run("scontrol", "show", "topology", *c.topology_args(block="su2")).stdout
        self.assertTrue(one.startswith("GroupName=su2 Level=su Blocks=rack[04-06]"), one)
        status = c.wait_status(lambda s: s.get("groups") and s["groups"][0]["free"] == 0, 10,
                               "the status JSON to show su1 full")
        self.assertEqual([(g["name"], g["free"]) for g in status["groups"]], [("su1", 0), ("su2", 12)])
        c.wait_for(lambda: read_prometheus(prom).get('nvlblock_group_free_nodes{group="su2",level="su"}') == 12,
                   10, "the Prometheus group series")
        c.reset()

        # 8 free nodes per SU: a 10-node job waits, saying why, then crosses
        # to the cluster level after hierarchy.crossing.
        hold(c, *rack_nodes(1))
        hold(c, *rack_nodes(4))
        t0 = time.monotonic()
        job = c.sbatch("-N10")
        reason = c.wait_pending_reason(job, "no scalable unit can take 10 nodes now", 20)
        self.assertIn("the closest is su1 with 8 usable", reason)
        self.assertIn(f"it may cross to a larger level after waiting {CROSSING} s", reason)
        nodes = c.wait_running(job, CROSSING + 30)
        waited = time.monotonic() - t0
        self.assertGreaterEqual(waited, CROSSING - 2, "crossed before hierarchy.crossing")
        self.assertTrue(set(racks(nodes)) & {2, 3} and set(racks(nodes)) & {5, 6}, nodes)
        print(f"nvlblock: -N10 crossed SUs after {waited:.0f} s", file=sys.stderr)
        c.reset()

        # A fallback restart prefers its own SU. An 8-node job runs on su1
        # (racks 01-02: su1 is the fuller SU); it loses a node; its racks
        # cannot take it back; after recovery.wait it falls back: su2 (9 free)
        # would be the best fit, su1 (11 free) is its own.
        hold(c, *rack_nodes(3)[:1])
        job = c.sbatch("-N8", "--requeue", "-J", "trainer")
        had = c.wait_running(job)
        self.assertEqual(racks(had), [1, 2])
        c.cancel(*[j["id"] for j in c.squeue() if j["id"] != job])
        hold(c, *rack_nodes(4)[:3])
        c.set_down(had[1])
        new = c.wait_restarted(job, REQUEUE_DELAY + RECOVERY_WAIT + 60)
        self.assertTrue(set(racks(new)) <= {1, 2, 3}, f"left its SU: {new}")
        c.wait_log(rf"nvlblock: recovery JobId={job} fallback after", 10)


if __name__ == "__main__":
    main()
