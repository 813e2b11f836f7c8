#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Placement on a real slurmctld, each case run with
topology/nvlblock and with the stock topology/block on the same 3-rack
cluster (18 nodes per rack). Where the two agree the assertions are
shared; where nvlblock differs on purpose (spares) or differently from
block (-N min-max), each class states what its plugin does.

Jobs that set up a scenario are pinned with --nodelist, so the scenario
does not depend on how either plugin breaks ties between idle racks
(topology/block takes the last of equal blocks, nvlblock the first).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import Cluster, ClusterTest, main, rack_nodes, rack_name_of, rack_counts  # noqa: E402


class PlacementCases:
    """Shared cases; subclasses set PLUGIN."""

    PLUGIN = None

    def cluster(self, name, **kw):
        return Cluster(f"{name}-{self.PLUGIN}", racks=3, plugin=self.PLUGIN, **kw)

    def pin(self, c, rack, first, count, *extra):
        """A job on nodes first..first+count-1 (0-based) of a rack."""
        nodes = rack_nodes(rack)[first:first + count]
        job = c.sbatch(f"-N{count}", "-w", ",".join(nodes), *extra)
        self.assertEqual(c.wait_running(job), nodes)
        return job

    # -- --segment ---------------------------------------------------------

    def test_segments(self):
        with self.cluster("seg") as c:
            # -N16 --segment=16: one rack.
            j16 = c.sbatch("-N16", "--segment=16")
            n16 = c.wait_running(j16)
            self.assertEqual(len(n16), 16)
            self.assertEqual(len(rack_counts(n16)), 1, n16)
            c.cancel(j16)
            c.wait_idle()

            # -N32 --segment=16: two racks, 16 each.
            j32 = c.sbatch("-N32", "--segment=16")
            n32 = c.wait_running(j32)
            self.assertEqual(sorted(rack_counts(n32).values()), [16, 16], rack_counts(n32))

            # -N5 --segment=2: refused at submission (from 26.05 by sbatch
            # itself, before slurmctld sees it).
            job, err = c.try_sbatch("-N5", "--segment=2")
            self.assertIsNone(job, "-N5 --segment=2 was accepted")
            self.assertIn(self.SEGMENT_REJECT if c.slurm_version < (26, 5, 0)
                          else "node count must be evenly divisible by segment size", err)

    def test_segments_never_split_across_blocks(self):
        with self.cluster("split") as c:
            # rack01 and rack02 partly used: 8-node segments fit once in
            # each, twice in rack03, never across.
            self.pin(c, "rack01", 0, 4)
            self.pin(c, "rack02", 0, 2)
            job = c.sbatch("-N24", "--segment=8")
            nodes = c.wait_running(job)
            per_rack = rack_counts(nodes)
            self.assertEqual(sum(per_rack.values()), 24)
            for rack, count in per_rack.items():
                self.assertEqual(count % 8, 0, f"a segment split across racks: {per_rack}")
            # Four segments of 4 on what is left: still whole in each rack.
            job2 = c.sbatch("-N8", "--segment=4")
            per_rack2 = rack_counts(c.wait_running(job2))
            for rack, count in per_rack2.items():
                self.assertEqual(count % 4, 0, f"a segment split across racks: {per_rack2}")

    # -- --exclusive=topo ---------------------------------------------------

    def test_exclusive_topo_blocks_rest_of_block(self):
        with self.cluster("excl") as c:
            job = c.sbatch("-N4", "--exclusive=topo")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            self.assertOnRack(nodes, rack)
            states = c.wait_for(
                lambda: (lambda s: s if all(s[n] == "block" for n in set(rack_nodes(rack)) - set(nodes))
                         else None)(c.node_states_short()),
                15, f"the rest of {rack} to show state 'block' in sinfo -N")
            for n in nodes:
                self.assertEqual(states[n], "alloc")
            for other in {"rack01", "rack02", "rack03"} - {rack}:
                self.assertTrue(all(states[n] == "idle" for n in rack_nodes(other)), states)
            # Ordinary work stays off the blocked rack.
            small = c.sbatch("-N2")
            self.assertNotIn(rack, rack_counts(c.wait_running(small)))

    # -- -N min-max ---------------------------------------------------------

    def test_min_max_nodes(self):
        with self.cluster("minmax") as c:
            job = c.sbatch("-N", "4-16")
            nodes = c.wait_running(job)
            self.assertTrue(4 <= len(nodes) <= 16, nodes)
            self.assertEqual(len(rack_counts(nodes)), 1, f"-N 4-16 split across racks: {nodes}")
            self.assertEqual(len(nodes), self.MIN_MAX_COUNT,
                             f"{self.PLUGIN}: -N 4-16 on an idle cluster got {len(nodes)} nodes")
            job2 = c.sbatch("-N", "4-16")
            nodes2 = c.wait_running(job2)
            self.assertEqual(len(rack_counts(nodes2)), 1, nodes2)
            self.assertFalse(set(nodes) & set(nodes2))

    # -- packing --------------------------------------------------------------

    def test_small_jobs_fill_partly_used_block_first(self):
        with self.cluster("pack") as c:
            # The middle rack is partly used; best fit must prefer it over
            # either idle rack, whichever way a plugin breaks ties.
            self.pin(c, "rack02", 0, 4)
            for count in (2, 8):
                job = c.sbatch(f"-N{count}")
                self.assertOnRack(c.wait_running(job), "rack02",
                                  f"-N{count} did not fill the partly used rack02")
            # rack02 is now nearly full: a 12-node job takes an idle rack,
            # whole, rather than split.
            big = c.sbatch("-N12")
            nodes = c.wait_running(big)
            self.assertEqual(len(rack_counts(nodes)), 1, nodes)
            self.assertNotIn("rack02", rack_counts(nodes))

    # -- a job that only needs a repair --------------------------------------

    def test_job_needing_repair_waits_and_is_not_held(self):
        with self.cluster("repair") as c:
            # Every rack has 3 failed nodes: no rack has 16 healthy ones.
            failed = [n for r in ("rack01", "rack02", "rack03") for n in rack_nodes(r)[5:8]]
            c.drain(*failed)
            job, err = c.try_sbatch("-N16")
            self.assertIsNotNone(job, f"-N16 refused at submission although a repair makes it fit: {err}")
            time.sleep(7)  # scheduling passes, each asking Slurm's "could it ever run?"
            j = c.job(job)
            self.assertEqual(j["JobState"], "PENDING")
            self.assertNotEqual(j["Reason"], "BadConstraints", f"held as never runnable: {j}")
            self.assertNotEqual(j["Priority"], "0", f"held as never runnable: {j}")
            c.resume(*rack_nodes("rack02")[5:8])
            self.assertOnRack(c.wait_running(job, 30), "rack02")

    # -- spares -------------------------------------------------------------

    def spares_scenario(self, c):
        """rack01 runs 4 nodes of work (14 free); rack02 and rack03 run 16
        (2 free each). A 14-node job has rack01 as its only candidate."""
        self.pin(c, "rack01", 0, 4)
        self.pin(c, "rack02", 0, 16)
        self.pin(c, "rack03", 0, 16)
        return c.sbatch("-N14")


class NvlblockPlacement(PlacementCases, ClusterTest):
    PLUGIN = "nvlblock"
    # The same refusal as topology/block's (the plugin returns its code).
    SEGMENT_REJECT = "Requested topology configuration is not available"
    # nvlblock takes the most nodes it can (docs: a range is tried largest first).
    MIN_MAX_COUNT = 16

    def test_spares_withheld_from_ordinary_jobs(self):
        with self.cluster("spares") as c:
            job = self.spares_scenario(c)
            reason = c.wait_pending_reason(job, "nvlblock:", 20)
            self.assertIn("no block has 14 healthy free non-spare nodes", reason)
            self.assertIn("spares are kept for in-place recovery", reason)
            # Over more scheduling passes: still waiting, and the reason
            # stays nvlblock's (Slurm resets it after each pass; the plugin
            # shows it again within a couple of seconds). From 26.05 Slurm's
            # own topology reason comes first, for scripts that match it, and
            # is always there; nvlblock's sentence follows it.
            slurm_text = "No suitable topology unit found" if c.slurm_version >= (26, 5, 0) else ""
            samples = []
            for _ in range(16):
                time.sleep(0.5)
                samples.append(c.reason(job).replace("_", " "))
            self.assertEqual(c.state(job), "PENDING")
            shown = sum(1 for r in samples if r.startswith(f"{slurm_text}; nvlblock:" if slurm_text else "nvlblock:"))
            self.assertGreaterEqual(shown, len(samples) // 2, f"the reason flips: {samples}")
            self.assertTrue(all(r.startswith(slurm_text) for r in samples), samples)
            b = c.topology_block("rack01")
            self.assertEqual((b["Free"], b["SparesFree"]), ("14", "2"), b)
            # 12 nodes fit in rack01's ordinary capacity (18 - 2 spares - 4).
            job12 = c.sbatch("-N12")
            self.assertEqual(c.wait_running(job12), rack_nodes("rack01")[4:16])
            self.assertEqual(c.state(job), "PENDING")


class BlockPlacement(PlacementCases, ClusterTest):
    PLUGIN = "block"
    SEGMENT_REJECT = "Requested topology configuration is not available"
    # topology/block always allocates min_nodes (eval_nodes_block.c: "Always use min_nodes").
    MIN_MAX_COUNT = 4

    def test_spares_taken_by_ordinary_jobs(self):
        """Where nvlblock differs on purpose: stock topology/block gives the
        14-node job rack01's last 14 nodes, the 2 that nvlblock keeps as
        spares included."""
        with self.cluster("spares") as c:
            job = self.spares_scenario(c)
            self.assertEqual(c.wait_running(job), rack_nodes("rack01")[4:18])


if __name__ == "__main__":
    main()
