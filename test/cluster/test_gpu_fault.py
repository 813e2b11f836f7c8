#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""In-place recovery for the failures racks mostly have: a GPU or NVLink
fault on a node that stays up (docs/placement.md rule 5). The job's
processes die, its script exits with a status the site's RequeueExit lists
(or its wrapper runs `scontrol requeue`), and the node is drained: by the
job itself before it exits, or by the node's Epilog after it (an Epilog that
fails: slurmctld drains the node with "Epilog error"). Slurm requeues the
job; nvlblock puts it back on its rack, on its healthy nodes plus a spare,
while other work waits for that rack.

Two racks: the 16-node job on one, a 16-node job on the other, an 8-node
job waiting that fits only where the failed job's healthy nodes are.
"""
import os
import shutil
import stat
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, main, rack_counts, rack_name_of  # noqa: E402

RECOVERY_WAIT = 25
REQUEUE_EXIT = 75
HOLD_EXIT = 76
RESTART_TIMEOUT = REQUEUE_DELAY + 40
# The node Epilog of the faulty node runs this long before it fails: the
# job's other nodes are released well before the drain shows.
EPILOG_DELAY = 4


def epilog_script(directory):
    """A node Epilog that fails (so slurmctld drains the node) on the node
    named in DIR/bad_node, once, after EPILOG_DELAY s; elsewhere it succeeds."""
    bad = os.path.join(directory, "bad_node")
    path = os.path.join(directory, "epilog.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f'[ "$SLURMD_NODENAME" = "$(cat {bad} 2>/dev/null)" ] || exit 0\n'
                f"rm -f {bad}\n"
                f"sleep {EPILOG_DELAY}\n"
                "exit 1\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def gpu_fault_cluster(name, epilog_dir=None, extra=()):
    conf = [f"RequeueExit={REQUEUE_EXIT}", f"RequeueExitHold={HOLD_EXIT}"] + list(extra)
    if epilog_dir:
        conf.append(f"Epilog={epilog_script(epilog_dir)}")
    flags = ["--status-interval", "1", "--recovery-wait", str(RECOVERY_WAIT), "--extra-conf"] + conf
    return Cluster(name, racks=2, plugin="nvlblock", flags=flags)


def faulting_job_script(directory, node_index, status):
    """A --requeue job that, on its first run only, once DIR/go exists,
    drains its node number node_index (as a health check would on an XID)
    and exits with `status`."""
    marker, go = os.path.join(directory, "failed-once"), os.path.join(directory, "go")
    return ("#!/bin/sh\n"
            f"if [ ! -e {marker} ]; then\n"
            f"  while [ ! -e {go} ]; do sleep 0.2; done\n"
            f"  touch {marker}\n"
            f"  bad=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n {node_index + 1}p)\n"
            "  scontrol update nodename=$bad state=drain reason=gpu-xid-79\n"
            f"  exit {status}\n"
            "fi\n"
            "sleep 3600\n")


class GpuFault(ClusterTest):

    def _start(self, c, script=None, wrap="sleep 3600"):
        """The slice job on one rack (`script`, or `wrap`), a 16-node job on
        the other (its two spares stay idle), an 8-node job waiting. Returns
        (job, nodes, rack, waiting job)."""
        if script:
            path = os.path.join(c.cwd, "slice.sh")
            with open(path, "w") as f:
                f.write(script)
            job = c.sbatch("-N16", "--requeue", "-J", "slice", path, wrap=None)
        else:
            job = c.sbatch("-N16", "--requeue", "-J", "slice", wrap=wrap)
        nodes = c.wait_running(job)
        rack = rack_name_of(nodes[0])
        self.assertOnRack(nodes, rack)
        other = c.sbatch("-N16", "-J", "other")
        self.assertNotIn(rack, rack_counts(c.wait_running(other)))
        waiting = c.sbatch("-N8", "-J", "waiting")
        return job, nodes, rack, waiting

    def _assert_in_place(self, c, job, nodes, bad, rack, waiting):
        new = c.wait_restarted(job, RESTART_TIMEOUT)
        self.assertEqual(len(new), 16)
        self.assertOnRack(new, rack)
        self.assertTrue(set(nodes) - {bad} <= set(new), f"lost prior healthy nodes: {sorted(set(nodes) - set(new))}")
        self.assertEqual(len(set(new) - set(nodes)), 1, f"expected one spare, got {sorted(set(new) - set(nodes))}")
        self.assertNotIn(bad, new)
        self.assertEqual(c.state(waiting), "PENDING", "the waiting job took the failed job's rack")
        c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}: 15 prior nodes \+ 1 spares", 10)
        return new

    def test_drained_by_the_job_requeued_by_its_exit_code(self):
        with gpu_fault_cluster("gpu1") as c:
            job, nodes, rack, waiting = self._start(c, faulting_job_script(c.cwd, 4, REQUEUE_EXIT))
            bad = nodes[4]
            t_fail = time.monotonic()
            open(os.path.join(c.cwd, "go"), "w").close()
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes \({bad}\) on {rack}; holding {rack} "
                       rf".*; drained: {bad} \(gpu-xid-79\); requeued by its exit status \(RequeueExit\)", 30)
            self._assert_in_place(c, job, nodes, bad, rack, waiting)
            print(f"gpu fault (drained by the job, RequeueExit): running again {time.monotonic() - t_fail:.1f} s "
                  "after it exited", file=sys.stderr)
            status = c.wait_status(lambda s: s["recoveries"]["in_place"] == 1, 10, "the in-place restart counted")
            self.assertEqual(status["recoveries"]["by_trigger"]["drained"], 1, status["recoveries"])
            self.assertEqual(status["recoveries"]["by_path"]["exit_code"], 1, status["recoveries"])
            summary = c.topology_summary()
            self.assertEqual(summary["RecoveriesByTrigger"], "node_down:0,drained:1,after_end:0", summary)
            self.assertEqual(summary["RecoveriesByPath"], "node_fail:0,exit_code:1,requeue:0", summary)

    def test_drained_by_the_node_epilog_after_an_scontrol_requeue(self):
        d = tempfile.mkdtemp(prefix="nvlt-epilog-", dir="/tmp")
        self.addCleanup(shutil.rmtree, d, True)
        with gpu_fault_cluster("gpu2", epilog_dir=d) as c:
            # A step on every node: slurmd runs the Epilog where the job ran
            # (without PrologFlags=Alloc).
            job, nodes, rack, waiting = self._start(c, wrap="srun sleep 3600")
            time.sleep(2)  # the step has started on every node
            bad = nodes[9]
            with open(os.path.join(d, "bad_node"), "w") as f:
                f.write(bad + "\n")
            c.run("scontrol", "requeue", str(job))
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes \({bad}\) on {rack}; .*; {bad} failed or "
                       r"drained \d+ s after the job ended; requeued by scontrol requeue", EPILOG_DELAY + 20)
            self.assertIn("drain", c.node_states()[bad])
            self._assert_in_place(c, job, nodes, bad, rack, waiting)
            status = c.wait_status(lambda s: s["recoveries"]["in_place"] == 1, 10, "the in-place restart counted")
            self.assertEqual(status["recoveries"]["by_trigger"]["after_end"], 1, status["recoveries"])
            self.assertEqual(status["recoveries"]["by_path"]["requeue"], 1, status["recoveries"])

    def test_a_requeue_with_no_failed_node_opens_nothing(self):
        with gpu_fault_cluster("gpu3") as c:
            job, nodes, rack, waiting = self._start(c)
            c.run("scontrol", "requeue", str(job))
            # The waiting job takes the rack as soon as the nodes are free.
            got = c.wait_running(waiting, REQUEUE_DELAY + 20)
            self.assertOnRack(got, rack)
            self.assertEqual(c.log_lines(rf"nvlblock: recovery JobId={job} "), [])
            status = c.wait_status(lambda s: s["recoveries"]["failures"] == 0, 10, "no recovery")
            self.assertEqual(status["recoveries"]["pending"], [])

    def test_a_draining_node_under_a_running_job_keeps_a_spare_for_it(self):
        with gpu_fault_cluster("gpu4") as c:
            job = c.sbatch("-N16", "--requeue", "-J", "slice")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            other = c.sbatch("-N16", "-J", "other")
            c.wait_running(other)
            bad = nodes[3]
            c.drain(bad, reason="gpu-xid-48")  # announced: the job carries on meanwhile
            b = c.wait_for(lambda: (lambda b: b if b["Failed"] == "1" else None)(c.topology_block(rack)), 15,
                           f"{rack} to count the draining node")
            self.assertEqual((b["FailedNodes"], b["SpareDeficit"], b["ShortOfSliceSeconds"]), (bad, "1", "0"), b)
            # One of the two free nodes may run other work; the other is kept.
            first = c.sbatch("-N1", "-J", "small1")
            self.assertEqual(rack_name_of(c.wait_running(first)[0]), rack)
            second = c.sbatch("-N1", "-J", "small2")
            time.sleep(8)
            self.assertEqual(c.state(second), "PENDING")
            self.assertEqual(c.state(job), "RUNNING", "the job that carries on was disturbed")
            self.assertEqual(c.log_lines(rf"nvlblock: recovery JobId={job} "), [])
            c.run("scontrol", "requeue", str(job))
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            self.assertOnRack(new, rack)
            self.assertTrue(set(nodes) - {bad} <= set(new))
            self.assertNotIn(bad, new)

    def test_a_held_requeue_releases_its_rack_after_the_wait(self):
        with gpu_fault_cluster("gpu5") as c:
            job, nodes, rack, waiting = self._start(c, faulting_job_script(c.cwd, 2, HOLD_EXIT))
            t0 = time.monotonic()
            open(os.path.join(c.cwd, "go"), "w").close()
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes .*requeued held by its exit status "
                       r"\(RequeueExitHold\)", 30)
            self.assertEqual(c.job(job)["Priority"], "0", "RequeueExitHold did not hold the job")
            got = c.wait_running(waiting, RECOVERY_WAIT + REQUEUE_DELAY + 40)
            took = time.monotonic() - t0
            self.assertOnRack(got, rack)
            self.assertLessEqual(took, RECOVERY_WAIT + REQUEUE_DELAY + 40)
            self.assertGreaterEqual(took, RECOVERY_WAIT - 2, "the rack was not held for the held job at all")
            self.assertEqual(c.state(job), "SPECIAL_EXIT")  # held until released

    def test_time_to_recovery_gpu_fault_beside_node_down(self):
        """Failure to running again, the GPU-fault path (drained by the job,
        RequeueExit) and the node-down path side by side on one cluster,
        failed at the same moment: within 10 s of each other (issue 35;
        docs/operations.md "Time to recovery")."""
        with gpu_fault_cluster("gpu6") as c:
            script = os.path.join(c.cwd, "gpu.sh")
            with open(script, "w") as f:
                f.write(faulting_job_script(c.cwd, 4, REQUEUE_EXIT))
            gpu = c.sbatch("-N16", "--requeue", "-J", "gpu", script, wrap=None)
            gpu_nodes = c.wait_running(gpu)
            down = c.sbatch("-N16", "--requeue", "-J", "down")
            down_nodes = c.wait_running(down)
            self.assertNotEqual(rack_name_of(gpu_nodes[0]), rack_name_of(down_nodes[0]))
            t0 = time.monotonic()
            open(os.path.join(c.cwd, "go"), "w").close()
            c.set_down(down_nodes[7])
            took = {}

            def both_running():
                for name, job in (("gpu", gpu), ("down", down)):
                    j = c.job(job)
                    if name not in took and j.get("JobState") == "RUNNING" and int(j.get("Restarts", "0")) >= 1:
                        took[name] = time.monotonic() - t0
                return len(took) == 2
            c.wait_for(both_running, RESTART_TIMEOUT + 20, "both jobs to run again")
            for job, nodes in ((gpu, gpu_nodes), (down, down_nodes)):
                new = c.nodes(job)
                self.assertOnRack(new, rack_name_of(nodes[0]))
                self.assertEqual(len(set(new) - set(nodes)), 1, new)
            print(f"time to recovery: GPU fault (drained by the job, RequeueExit) {took['gpu']:.1f} s, "
                  f"node down {took['down']:.1f} s (requeue delay {REQUEUE_DELAY} s)", file=sys.stderr)
            self.assertLessEqual(abs(took["gpu"] - took["down"]), 10, took)


if __name__ == "__main__":
    main()
