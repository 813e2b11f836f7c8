#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Lending: with `lending: true` and a preemptible partition
(`lend`, PriorityTier=1, PreemptType=preempt/partition_prio,
PreemptMode=REQUEUE), a preemptible job runs on a rack's spares; when a
recovery on that rack needs a spare, Slurm's own preemption requeues the
lent job and the recovering job takes the node. Without a recovery the lent
job runs to completion.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, main, rack_nodes, rack_name_of  # noqa: E402

FLAGS = ["--lending", "--preempt-partition", "--recovery-wait", "120", "--status-interval", "1"]


def lending_cluster(name):
    return Cluster(name, racks=2, flags=FLAGS)


class Lending(ClusterTest):

    def start_slice_and_lent(self, c, lent_wrap="sleep 3600"):
        job = c.sbatch("-N16", "--requeue", "-J", "slice")
        nodes = c.wait_running(job)
        rack = rack_name_of(nodes[0])
        self.assertOnRack(nodes, rack)
        spares = sorted(set(rack_nodes(rack)) - set(nodes))
        lent = c.sbatch("-p", "lend", "-N2", "--requeue", "-J", "lent", wrap=lent_wrap)
        lent_nodes = c.wait_running(lent)
        # Best fit: the rack with exactly its 2 spares free; lending lets it in.
        self.assertEqual(sorted(lent_nodes), spares, "the preemptible job is not on the spares")
        c.wait_for(lambda: (lambda b: b if b["SparesLent"] == "2" else None)(c.topology_block(rack)),
                   10, f"{rack} to show SparesLent=2")
        # Ordinary work may not borrow spares: an ordinary 2-node job goes
        # to the other rack.
        other = c.sbatch("-N2", "-J", "ordinary")
        self.assertNotIn(rack, {rack_name_of(n) for n in c.wait_running(other)})
        return job, nodes, rack, lent, lent_nodes

    def test_lent_job_preempted_when_recovery_needs_the_spare(self):
        with lending_cluster("lend1") as c:
            job, nodes, rack, lent, lent_nodes = self.start_slice_and_lent(c)
            failed = nodes[3]
            c.set_down(failed)
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertOnRack(new, rack)
            self.assertEqual(len(new), 16)
            self.assertTrue(set(nodes) - {failed} <= set(new))
            taken = set(new) - set(nodes)
            self.assertEqual(len(taken), 1)
            self.assertTrue(taken <= set(lent_nodes), f"took {taken}, not a lent spare {lent_nodes}")
            c.wait_log(rf"preempted JobId={lent} has been requeued to reclaim resources for JobId={job}", 10)
            j = c.job(lent)
            self.assertGreaterEqual(int(j["Restarts"]), 1, j)
            # Requeued: pending again, or already running elsewhere.
            self.assertFalse(set(c.nodes(lent)) & set(new), f"lent job {lent} still shares nodes with {job}")
            c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}: "
                       r"15 prior nodes \+ 1 spares", 10)
            # Only as many lent nodes as the recovery needed were taken: the
            # lent job's other node is not held for anyone.
            b = c.topology_block(rack)
            self.assertEqual((b["Failed"], b["Held"]), ("1", "0"), b)

    def test_lent_job_runs_to_completion_without_recovery(self):
        with lending_cluster("lend2") as c:
            job, nodes, rack, lent, lent_nodes = self.start_slice_and_lent(c, lent_wrap="sleep 12")
            j = c.wait_state(lent, "COMPLETED", 40)
            self.assertEqual((j["Restarts"], j["ExitCode"]), ("0", "0:0"), j)
            self.assertEqual(c.log_lines(rf"preempted JobId={lent}"), [])
            # The slice job ran on, untouched.
            self.assertEqual(c.state(job), "RUNNING")
            self.assertEqual(c.nodes(job), nodes)
            self.assertEqual(c.job(job)["Restarts"], "0")
            c.wait_for(lambda: (lambda b: b if (b["SparesLent"], b["SparesFree"]) == ("0", "2") else None)(
                c.topology_block(rack)), 10, f"{rack} to show its spares free again")


if __name__ == "__main__":
    main()
