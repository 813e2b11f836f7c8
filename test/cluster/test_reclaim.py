#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reclaimed spares (`reserve: reclaim`, docs/placement.md rule 3b) on a real
slurmctld: nothing is held back, so ordinary work runs on a rack's spares; when
a node under a slice job fails, nvlblock requeues the cheapest job on that
rack (the one that has run for the shortest time) and the slice job restarts
in place on its 15 healthy nodes and the reclaimed node. topology/block side
by side restarts the job on another rack. A job that cannot be requeued is
never reclaimed: the slice job then waits for its rack and falls back. A job
that filled a whole rack itself gets its node back on its other rack.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, main, rack_nodes, rack_of  # noqa: E402

RECLAIM = ["--reserve", "reclaim", "--recovery-wait", "40", "--status-interval", "1"]


class Reclaim(ClusterTest):

    def slice_and_small(self, c, *small_args):
        """A 16-node slice job, then two 1-node jobs, the second one younger."""
        job = c.sbatch("-N16", "--requeue", "-J", "slice")
        nodes = c.wait_running(job)
        rack = rack_of(nodes[0])
        self.assertOnRack(nodes, rack)
        old = c.sbatch("-N1", "-J", "old", *small_args)
        old_nodes = c.wait_running(old)
        time.sleep(3)
        young = c.sbatch("-N1", "-J", "young", *small_args)
        young_nodes = c.wait_running(young)
        return job, nodes, rack, old, old_nodes, young, young_nodes

    def test_ordinary_work_uses_the_spares_and_the_youngest_job_is_reclaimed(self):
        with Cluster("reclaim1", racks=2, flags=RECLAIM) as c:
            job, nodes, rack, old, old_nodes, young, young_nodes = self.slice_and_small(c)
            spares = sorted(set(rack_nodes(rack)) - set(nodes))
            # Nothing is withheld: best fit puts both small jobs on the slice
            # job's rack, on the two nodes idle spares would have kept free.
            self.assertEqual(sorted(old_nodes + young_nodes), spares)
            b = c.topology_block(rack)
            self.assertEqual(b["SparesFree"], "0", b)

            failed = nodes[5]
            c.set_down(failed)
            c.wait_log(rf"nvlblock: recovery JobId={job} reclaiming 1 spare node on {rack}: "
                       rf"requeueing JobId={young} ", 20)
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertOnRack(new, rack)
            self.assertEqual(len(new), 16)
            self.assertTrue(set(nodes) - {failed} <= set(new))
            self.assertEqual(set(new) - set(nodes), set(young_nodes))
            c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}: "
                       r"15 prior nodes \+ 1 spares", 10)
            # The older job ran on; the younger one was requeued (as preempted).
            self.assertEqual(c.state(old), "RUNNING")
            self.assertEqual(c.nodes(old), old_nodes)
            self.assertGreaterEqual(int(c.job(young)["Restarts"]), 1)
            self.assertFalse(set(c.nodes(young)) & set(new))

    def test_topology_block_restarts_the_job_on_another_rack(self):
        with Cluster("reclaim2", racks=2, plugin="block") as c:
            job, nodes, rack, old, old_nodes, young, young_nodes = self.slice_and_small(c)
            failed = nodes[5]
            c.set_down(failed)
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertNotIn(rack, {rack_of(n) for n in new}, f"block restarted {job} on {rack}: {new}")
            for small in (old, young):
                self.assertEqual((c.state(small), c.job(small)["Restarts"]), ("RUNNING", "0"))

    def test_a_job_that_cannot_be_requeued_is_never_reclaimed(self):
        with Cluster("reclaim3", racks=2, flags=RECLAIM) as c:
            job, nodes, rack, old, old_nodes, young, young_nodes = self.slice_and_small(c, "--no-requeue")
            failed = nodes[5]
            c.set_down(failed)
            # Its rack has room for 15 of 16 and nothing there may be
            # requeued: the job waits for its rack, then falls back.
            c.wait_log(rf"nvlblock: recovery JobId={job} fallback after \d+ s: {rack} has room for 15 of the "
                       r"16 nodes it needs", 40 + REQUEUE_DELAY + 40)
            new = c.wait_restarted(job, 60)
            self.assertNotIn(rack, {rack_of(n) for n in new})
            self.assertEqual(c.log_lines(rf"JobId={job} reclaiming"), [])
            for small in (old, young):
                self.assertEqual((c.state(small), c.job(small)["Restarts"]), ("RUNNING", "0"))

    def test_a_job_that_filled_its_rack_gets_its_node_back_on_its_other_rack(self):
        with Cluster("reclaim4", racks=2, flags=RECLAIM) as c:
            # 20 nodes: a whole rack and two nodes of the other, which other
            # work then fills (14 nodes, then an older and a younger 1-node job).
            job = c.sbatch("-N20", "--requeue", "-J", "wide")
            nodes = c.wait_running(job)
            racks = sorted({rack_of(n) for n in nodes})
            self.assertEqual(len(racks), 2, nodes)
            full = next(r for r in racks if set(rack_nodes(r)) <= set(nodes))
            filler = c.sbatch("-N14", "-J", "filler")
            filler_nodes = c.wait_running(filler)
            old = c.sbatch("-N1", "-J", "old")
            old_nodes = c.wait_running(old)
            time.sleep(3)
            young = c.sbatch("-N1", "-J", "young")
            young_nodes = c.wait_running(young)
            others = set(filler_nodes + old_nodes + young_nodes)
            self.assertEqual({rack_of(n) for n in others}, set(racks) - {full})

            # A node of the rack the job filled fails: nothing to reclaim
            # there, so the younger job on its other rack is requeued and the
            # job restarts on its own two racks, one node shifted.
            failed = rack_nodes(full)[4]
            c.set_down(failed)
            c.wait_log(rf"nvlblock: recovery JobId={job} reclaiming 1 spare node on {racks[0]},{racks[1]}: "
                       rf"requeueing JobId={young} ", 20)
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertEqual(set(new), (set(nodes) - {failed}) | set(young_nodes))
            c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on [a-z0-9,]+: "
                       r"19 prior nodes \+ 1 spares", 10)
            for small in (filler, old):
                self.assertEqual((c.state(small), c.job(small)["Restarts"]), ("RUNNING", "0"))
            self.assertGreaterEqual(int(c.job(young)["Restarts"]), 1)


if __name__ == "__main__":
    main()
