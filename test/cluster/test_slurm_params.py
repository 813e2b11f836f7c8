#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Slurm settings under which Slurm's own topology code, linked into our
plugin (libtopology_common.a), reads slurmctld's globals:

- SchedulerParameters=bf_busy_nodes: backfill's will-run evaluations prefer
  busy nodes and read slurmctld's idle_node_bitmap;
- TopologyParam=RoutePart: slurmctld fans messages out along partitions and
  reads slurmctld's part_list.

Slurm's archive defines both as fallbacks for processes that are not
slurmctld; slurmctld's own definitions must win by symbol interposition.
When the plugin kept its private copies (NULL), slurmctld died with SIGSEGV
at the first such evaluation or fan-out. topology/block runs the same
scenario as the control.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import Cluster, ClusterTest, main, rack_name_of  # noqa: E402

FLAGS = ["--extra-conf", "SchedulerParameters=sched_interval=5,bf_interval=5,bf_busy_nodes",
         "TopologyParam=RoutePart", "DebugFlags=Route",
         # The ROUTE lines of the partition split are verbose-level.
         "SlurmctldDebug=verbose"]


class SlurmParams(ClusterTest):

    def scenario(self, c):
        """Two 16-node jobs fill both racks' slices; a third must wait, and
        backfill's will-run test (with bf_busy_nodes) estimates its start
        by removing running jobs. Then one ends and the third runs."""
        first = c.sbatch("-N16", "-t", "10")
        nodes_first = c.wait_running(first)
        second = c.sbatch("-N16", "-t", "10")
        c.wait_running(second)
        third = c.sbatch("-N16", "-t", "10")
        # Backfill sets an expected start time once it has evaluated the job.
        c.wait_for(lambda: c.job(third).get("StartTime", "Unknown") not in ("Unknown", "None"), 40,
                   f"backfill to estimate a start time for job {third}")
        self.assertEqual(c.state(third), "PENDING")
        # Fan-out along partitions: slurmctld pings and launches through
        # RoutePart; its ROUTE log lines show the split.
        c.wait_log(r"ROUTE: sp_hl\[0\]: ", 60)
        self.assertEqual(c.log_lines(r"didn't find partition containing nodes"), [],
                         "RoutePart did not see slurmctld's partitions")
        c.cancel(first)
        again = c.wait_running(third, timeout=60)
        self.assertEqual({rack_name_of(n) for n in again}, {rack_name_of(nodes_first[0])})
        ping = c.run("scontrol", "ping").stdout
        self.assertIn("is UP", ping)

    def test_nvlblock(self):
        with Cluster("params-nvl", racks=2, plugin="nvlblock", flags=FLAGS) as c:
            self.scenario(c)
            self.assertEqual(c.log_lines(r"fatal|Segmentation|core dumped"), [])

    def test_block_control(self):
        with Cluster("params-block", racks=2, plugin="block", flags=FLAGS) as c:
            self.scenario(c)


if __name__ == "__main__":
    main()
