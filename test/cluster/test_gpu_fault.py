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


def lemon_cluster(name, directory):
    """2 racks as gpu_fault_cluster's, but one failure under a job makes a
    lemon (recovery.lemon.failures: 1), so that one test can make one."""
    path = os.path.join(directory, "nvlblock.yaml")
    lines = ["defaults:", "  slice: 16", "  spares: 2", "  reserve: idle",
             "recovery:", f"  wait: {RECOVERY_WAIT}", "  lemon:", "    failures: 1", "    window: 1d",
             "status:", "  interval: 1", "blocks:"]
    for r in (1, 2):
        lines += [f"  - name: rack{r:02d}", f"    nodes: gb[{(r - 1) * 18 + 1:04d}-{r * 18:04d}]"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return Cluster(name, racks=2, plugin="nvlblock",
                   flags=["--config", path, "--extra-conf", f"RequeueExit={REQUEUE_EXIT}"])


def faulting_on_request_script(bad_file):
    """A --requeue job that, whenever `bad_file` appears, drains the node it
    names (as a health check would on an XID), removes it and exits with
    the RequeueExit status; otherwise it runs on."""
    return ("#!/bin/sh\n"
            "while :; do\n"
            f"  if [ -e {bad_file} ]; then\n"
            f"    bad=$(cat {bad_file}); rm -f {bad_file}\n"
            "    scontrol update nodename=$bad state=drain reason=gpu-xid-79\n"
            f"    exit {REQUEUE_EXIT}\n"
            "  fi\n"
            "  sleep 0.2\n"
            "done\n")


def status_tool():
    build = os.environ.get("NVLCLUSTER_BUILD_DIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build")
    return os.path.join(build, "tools", "status", "nvlblock-status")


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

    def test_a_lemon_is_the_last_choice_for_a_replacement(self):
        """A node that failed under a job (one failure makes a lemon here),
        repaired and resumed, is not the spare a second in-place restart
        takes while another is free, though it comes first in the rack; it
        is listed, and an operator's nvlblock-status --clear-lemon forgets it
        (docs/placement.md rule 5a)."""
        d = tempfile.mkdtemp(prefix="nvlt-lemon-", dir="/tmp")
        self.addCleanup(shutil.rmtree, d, True)
        with lemon_cluster("gpu7", d) as c:
            bad_file = os.path.join(d, "bad")
            script = os.path.join(d, "slice.sh")
            with open(script, "w") as f:
                f.write(faulting_on_request_script(bad_file))
            job = c.sbatch("-N16", "--requeue", "-J", "slice", script, wrap=None)
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            rack_nodes = sorted(n for n in c.node_states() if rack_name_of(n) == rack)
            spares = sorted(set(rack_nodes) - set(nodes))
            lemon = nodes[2]
            self.assertLess(lemon, spares[-1])
            with open(bad_file, "w") as f:
                f.write(lemon + "\n")
            c.wait_log(rf"nvlblock: recovery {lemon} is a lemon: 1 failures under jobs within 86400 s", 30)
            first = c.wait_restarted(job, RESTART_TIMEOUT)
            self.assertEqual(sorted(set(first) - set(nodes)), spares[:1])
            c.resume(lemon)
            b = c.wait_for(lambda: (lambda b: b if b["Failed"] == "0" else None)(c.topology_block(rack)), 15,
                           f"{lemon} back in service")
            self.assertEqual(b["Lemons"], lemon, b)
            status = c.wait_status(lambda s: s.get("lemons") and s["lemons"][0]["in_service"], 10,
                                   "the lemon listed in service")
            self.assertEqual((status["lemons"][0]["node"], status["lemons"][0]["block"]), (lemon, rack), status)
            # A second fault: the free nodes are the lemon and the last spare.
            restarts = int(c.job(job)["Restarts"])
            second_bad = first[5]
            with open(bad_file, "w") as f:
                f.write(second_bad + "\n")
            c.wait_for(lambda: int(c.job(job)["Restarts"]) > restarts and c.state(job) == "RUNNING",
                       RESTART_TIMEOUT, "the second restart")
            second = c.nodes(job)
            self.assertOnRack(second, rack)
            self.assertIn(spares[-1], second)
            self.assertNotIn(lemon, second, "the lemon was taken while another spare was free")
            out = c.run(status_tool(), "--clear-lemon", lemon).stdout
            self.assertIn("clear-lemon." + lemon, out)
            c.wait_log(rf"nvlblock: recovery failures of {lemon} cleared by an operator: no longer a lemon", 15)
            # The second fault's node is one too (one failure makes one here).
            c.wait_for(lambda: c.topology_block(rack)["Lemons"] == second_bad, 10, "the lemon cleared")
            self.assertEqual(os.listdir(c.path("state", "nvlblock-requests")), [])

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
