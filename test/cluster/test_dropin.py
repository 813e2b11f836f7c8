#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""topology/nvlblock as a drop-in for topology/block:

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
from nvltest import Cluster, ClusterTest, main, rack_name_of, rack_counts  # noqa: E402

# Plain jobs whose every placement is unique up to renaming idle racks.
PLAIN_SEQUENCE = [["-N4"], ["-N2"], ["-N16"], ["-N8", "--segment=4"], ["-N18"], ["-N3"], ["-N1"]]


def run_sequence(test, c):
    placements = []
    for args in PLAIN_SEQUENCE:
        job = c.sbatch(*args)
        placements.append(c.wait_running(job))
    return placements


# Requests topology/block refuses at submission in 24.11.
REFUSED_SEQUENCE = [["-N5", "--segment=2"], ["-N60"]]


def refusals(c):
    """Which of REFUSED_SEQUENCE sbatch refuses on this cluster."""
    out = []
    for args in REFUSED_SEQUENCE:
        job, _ = c.try_sbatch(*args)
        out.append(job is None)
    return out


def canonical(placements, per_rack=18):
    """Placements with racks renamed A, B, C in order of first use and
    nodes as offsets within their rack: what must match between plugins."""
    names = {}
    out = []
    for nodes in placements:
        job = []
        for n in nodes:
            rack = rack_name_of(n)
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
            nvl_refused = refusals(c)
            version = c.slurm_version
        with Cluster("dropin-blk", racks=3, plugin="block") as c:
            blk = run_sequence(self, c)
            blk_refused = refusals(c)
        print(f"nvlblock (topology.conf): {nvl}\ntopology/block:          {blk}", file=sys.stderr)
        if version >= (26, 5, 0):
            # 26.05's topology/block lets cons_tres place one-node jobs
            # by node order (its one-node shortcut); nvlblock keeps best
            # fit: the -N1 job goes to the partly used rack of the -N3.
            i = PLAIN_SEQUENCE.index(["-N1"])
            self.assertEqual(rack_name_of(nvl[i][0]), rack_name_of(nvl[i - 1][0]), nvl)
            nvl, blk = nvl[:i] + nvl[i + 1:], blk[:i] + blk[i + 1:]
        self.assertEqual(canonical(nvl), canonical(blk))
        # The same refusals as block at submission. 24.11 refuses both;
        # 26.05 refuses the first in sbatch and queues -N60 (more nodes than
        # the cluster has) with either plugin.
        self.assertEqual(nvl_refused, blk_refused)
        self.assertTrue(blk_refused[0], blk_refused)


class ExtraNodes(ClusterTest):
    """2 racks plus servers cpu01, cpu02 in the same partition, in no block."""

    def scenario(self, plugin):
        with Cluster(f"extra-{plugin}", racks=2, plugin=plugin, extra_nodes=2) as c:
            self.version = c.slurm_version
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
            # (26.05 capitalises block's warning.)
            self.assertRegex("\n".join(c.log_lines(r"(?i)blocks lack access|nvlblock: \d+ blocks")),
                             r"(?i)blocks lack access to 2 nodes: cpu\[01-02\]" if plugin == "block"
                             else r"nvlblock: 2 blocks, 38 nodes")
            return result

    def test_servers_outside_blocks(self):
        nvl = self.scenario("nvlblock")
        blk = self.scenario("block")
        print(f"nvlblock: {nvl}\ntopology/block: {blk}", file=sys.stderr)
        for r in (nvl, blk):
            self.assertNotIn(None, rack_counts(r["idle_cluster"]), r)
            self.assertEqual(r["blocks_full"], ["cpu01", "cpu02"], r)
        # Where they differ: 24.11's topology/block refuses --nodelist of a
        # server outside every block at submission whenever the partition
        # has block nodes; nvlblock runs it there (rule 9 hands it to
        # Slurm's common selection). 26.05's block runs such a one-node
        # job too (cons_tres's one-node shortcut).
        self.assertEqual(nvl["nodelist_server"], ["cpu01"])
        if self.version < (26, 5, 0):
            self.assertIn("Requested topology configuration is not available", blk["nodelist_server"])
        else:
            self.assertEqual(blk["nodelist_server"], ["cpu01"])


if __name__ == "__main__":
    main()
