#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""topology/nvlblock as a drop-in for topology/block (issue 3):

- an unchanged topology.conf (BlockName=/BlockSizes=, no nvlblock.yaml)
  works and gives the same placements as topology/block for plain jobs,
  up to which of several equal idle racks is taken first (block takes the
  last, nvlblock the first);
- nodes outside every block (ordinary servers in the same partition) are
  scheduled as topology/block schedules them: only when no block node is
  usable for the job.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import Cluster, ClusterTest, main, rack_of, racks_of  # noqa: E402

# Plain jobs whose every placement is unique up to renaming idle racks.
PLAIN_SEQUENCE = [["-N4"], ["-N2"], ["-N16"], ["-N8", "--segment=4"], ["-N18"], ["-N3"], ["-N1"]]


def run_sequence(test, c):
    placements = []
    for args in PLAIN_SEQUENCE:
        job = c.sbatch(*args)
        placements.append(c.wait_running(job))
    return placements


def canonical(placements, per_rack=18):
    """Placements with racks renamed A, B, C in order of first use and
    nodes as offsets within their rack: what must match between plugins."""
    names = {}
    out = []
    for nodes in placements:
        job = []
        for n in nodes:
            rack = rack_of(n)
            label = names.setdefault(rack, "ABCDEFGH"[len(names)])
            job.append(f"{label}{(int(n[2:]) - 1) % per_rack}")
        out.append(sorted(job))
    return out


class DropIn(ClusterTest):

    def test_unchanged_topology_conf_places_like_block(self):
        with Cluster("dropin-nvl", racks=3, plugin="nvlblock", flags=["--topology-conf"]) as c:
            self.assertFalse(os.path.exists(c.path("etc", "nvlblock.yaml")))
            self.assertTrue(c.log_lines(r"nvlblock: 3 blocks, 54 nodes from .*/topology\.conf "
                                        r"\(topology\.conf syntax"), "did not read topology.conf")
            topo = c.topology()
            self.assertEqual([b["BlockName"] for b in topo], ["rack01", "rack02", "rack03"])
            for b in topo:
                # BlockSizes=18: slices of the base block size, no spares.
                self.assertEqual((b["BlockSize"], b["Slice"], b["Spares"]), ("18", "18", "0"), b)
            nvl = run_sequence(self, c)
            # The same refusals as block at submission.
            for args in (["-N5", "--segment=2"], ["-N60"]):
                job, err = c.try_sbatch(*args)
                self.assertIsNone(job, f"{args} accepted")
        with Cluster("dropin-blk", racks=3, plugin="block") as c:
            blk = run_sequence(self, c)
        print(f"nvlblock (topology.conf): {nvl}\ntopology/block:          {blk}", file=sys.stderr)
        self.assertEqual(canonical(nvl), canonical(blk))


class ExtraNodes(ClusterTest):
    """2 racks plus servers cpu01, cpu02 in the same partition, in no block."""

    def scenario(self, plugin):
        with Cluster(f"extra-{plugin}", racks=2, plugin=plugin, extra_nodes=2) as c:
            result = {}
            # Asking for a server by name.
            job, err = c.try_sbatch("-N1", "-w", "cpu01")
            result["nodelist_server"] = (c.wait_running(job) if job else err.strip())
            if job:
                c.cancel(job)
                c.wait_idle()
            # While block nodes are usable, a job never lands on a server.
            small = c.sbatch("-N2")
            result["idle_cluster"] = c.wait_running(small)
            c.cancel(small)
            c.wait_idle()
            # Every block node busy or out of service: the servers serve.
            for _ in range(2):
                c.wait_running(c.sbatch("-N16"))
            idle_gb = [n for n, s in c.node_states().items() if s == "idle" and n.startswith("gb")]
            c.drain(*idle_gb)
            job = c.sbatch("-N2")
            result["blocks_full"] = c.wait_running(job, 30)
            self.assertIn("blocks lack access to 2 nodes: cpu[01-02]" if plugin == "block"
                          else "nvlblock: 2 blocks, 38 nodes", "\n".join(
                              c.log_lines(r"blocks lack access|nvlblock: \d+ blocks")))
            return result

    def test_servers_outside_blocks(self):
        nvl = self.scenario("nvlblock")
        blk = self.scenario("block")
        print(f"nvlblock: {nvl}\ntopology/block: {blk}", file=sys.stderr)
        for r in (nvl, blk):
            self.assertNotIn(None, racks_of(r["idle_cluster"]), r)
            self.assertEqual(r["blocks_full"], ["cpu01", "cpu02"], r)
        # Where they differ: topology/block refuses --nodelist of a server
        # outside every block at submission whenever the partition has
        # block nodes; nvlblock runs it there (rule 9 hands it to Slurm's
        # common selection).
        self.assertIn("Requested topology configuration is not available", blk["nodelist_server"])
        self.assertEqual(nvl["nodelist_server"], ["cpu01"])


if __name__ == "__main__":
    main()
