#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""In-place recovery on a real slurmctld: a 16-node --requeue job
hit by node failures restarts on its own rack on its healthy nodes plus
exactly as many spares as it lost; a third failure takes the documented
fallback; a repaired node returns to the spare pool; a whole-rack fault
sends jobs elsewhere without eating other racks' spares. Stock
topology/block runs the same single-failure scenario side by side.

Failures are `scontrol update state=down` with ReturnToService=1 and
AuthInfo=cred_expire=10 (nvlcluster's settings): a requeued job may start
again cred_expire + 1 = 11 s after the failure.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import (REQUEUE_DELAY, SCHED_INTERVAL, Cluster, ClusterTest, main, rack_nodes,  # noqa: E402
                     rack_name_of, rack_counts)

RECOVERY_WAIT = 25
# A restart takes the requeue delay plus a scheduling pass or two.
RESTART_TIMEOUT = REQUEUE_DELAY + 40


def nvlblock_cluster(name, **kw):
    flags = ["--status-interval", "1"] + kw.pop("flags", ["--recovery-wait", str(RECOVERY_WAIT)])
    return Cluster(name, racks=3, plugin="nvlblock", flags=flags, **kw)


def other_rack(rack):
    """A rack other than `rack`, for the job that makes it attractive."""
    return next(r for r in ("rack02", "rack01", "rack03") if r != rack)


def slice_job_with_bait(test, c):
    """The common scenario: a 16-node --requeue job on one rack, and a 2-node
    job on another rack so that rack has exactly 16 free nodes: the best fit
    for the 16-node job if it ever restarts elsewhere. Returns (job, nodes,
    rack, bait rack)."""
    job = c.sbatch("-N16", "--requeue", "-J", "slice")
    nodes = c.wait_running(job)
    rack = rack_name_of(nodes[0])
    test.assertOnRack(nodes, rack)
    bait_rack = other_rack(rack)
    bait = c.sbatch("-N2", "-w", ",".join(rack_nodes(bait_rack)[:2]), "-J", "bait")
    c.wait_running(bait)
    return job, nodes, rack, bait_rack


def state_records(c):
    return [ln for ln in c.read_state_file().splitlines() if ln.startswith("record ")]


def state_counters(c):
    """(failures, in_place, elsewhere, abandoned) from the saved nvlblock state
    (version 2 adds the reclaim counters after them)."""
    for line in c.read_state_file().splitlines():
        if line.startswith("counters "):
            return tuple(int(x) for x in line.split()[1:5])
    return None


class NvlblockRecovery(ClusterTest):

    def test_single_failure_restarts_in_place_with_one_spare(self):
        with nvlblock_cluster("rec1") as c:
            job, nodes, rack, bait_rack = slice_job_with_bait(self, c)
            failed = nodes[4]
            t_fail = time.monotonic()
            c.set_down(failed)
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes \({failed}\) on {rack}", 10)
            # Recorded, and saved by the status thread (woken by the
            # change, outside Slurm's locks) before the job can start again.
            c.wait_for(lambda: any(ln.startswith(f"record {job} ") for ln in state_records(c)), 5,
                       f"the saved state to hold the record of {job}")
            self.assertNotEqual(c.state(job), "RUNNING")
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            took = time.monotonic() - t_fail

            healthy = set(nodes) - {failed}
            spares = set(new) - set(nodes)
            self.assertEqual(len(new), 16)
            self.assertOnRack(new, rack)
            self.assertTrue(healthy <= set(new), f"lost prior healthy nodes: {sorted(healthy - set(new))}")
            self.assertEqual(len(spares), 1, f"expected exactly one spare, got {sorted(spares)}")
            self.assertNotIn(failed, new)
            self.assertNotIn(bait_rack, rack_counts(new))
            print(f"nvlblock: restarted in place on {rack} {took:.1f} s after the failure "
                  f"(spare {spares.pop()})", file=sys.stderr)
            c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}: "
                       r"15 prior nodes \+ 1 spares", 10)

            b = c.topology_block(rack)
            self.assertEqual((b["Failed"], b["FailedNodes"], b["SparesUsed"], b["SparesFree"], b["Health"]),
                             ("1", failed, "1", "1", "healthy"), b)
            status = c.wait_status(lambda s: s["recoveries"]["in_place"] == 1, 10,
                                   "the status JSON to count the in-place recovery")
            self.assertEqual(status["recoveries"]["pending"], [])
            self.assertEqual(status["recoveries"]["fallbacks"], 0)
            sb = c.status_block(rack, status)
            self.assertEqual((sb["failed"], sb["spares_used"], sb["spares_free"]), (1, 1, 1), sb)
            self.assertEqual(status["recoveries"]["recent"][-1]["outcome"], "in_place")
            c.wait_for(lambda: not state_records(c) and state_counters(c) == (1, 1, 0, 0), 10,
                       "the saved state to close the record (counters 1 1 0 0)")

    def test_two_failures_take_both_spares_then_third_falls_back(self):
        with nvlblock_cluster("rec2") as c:
            job, nodes, rack, _ = slice_job_with_bait(self, c)
            failed = [nodes[2], nodes[9]]
            c.set_down(*failed)
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            spares = set(new) - set(nodes)
            self.assertOnRack(new, rack)
            self.assertEqual(len(new), 16)
            self.assertTrue(set(nodes) - set(failed) <= set(new))
            self.assertEqual(len(spares), 2, f"expected both spares, got {sorted(spares)}")
            self.assertEqual(spares, set(rack_nodes(rack)) - set(nodes))
            b = c.topology_block(rack)
            self.assertEqual((b["Failed"], b["SparesUsed"], b["SparesFree"], b["Health"]),
                             ("2", "2", "0", "healthy"), b)

            # A third failure: 15 healthy nodes left for a 16-node job. It
            # waits for its rack (recovery.wait), then falls back anywhere.
            third = new[5]
            restarts = int(c.job(job)["Restarts"])
            t_fail = time.time()
            c.set_down(third)
            c.wait_pending_reason(job, "nvlblock: in-place restart after a node failure: "
                                       "waiting for its block", REQUEUE_DELAY + 15)
            self.assertEqual(c.topology_block(rack)["Health"], "degraded")
            c.wait_log(rf"nvlblock: recovery JobId={job} fallback after \d+ s: {rack} has room for "
                       r"15 of the 16 nodes it needs", RECOVERY_WAIT + 30)
            final = c.wait_for(lambda: (lambda j: c.expand(j["NodeList"])
                                        if j.get("JobState") == "RUNNING" and int(j["Restarts"]) > restarts
                                        else None)(c.job(job)),
                               RESTART_TIMEOUT, f"job {job} to restart after the fallback")
            waited = time.time() - t_fail
            self.assertEqual(len(final), 16)
            self.assertNotIn(rack, rack_counts(final), f"fell back onto its own degraded rack: {final}")
            self.assertEqual(len(rack_counts(final)), 1, final)
            self.assertGreaterEqual(waited, RECOVERY_WAIT - 1, "restarted before recovery.wait ran out")
            c.wait_log(rf"nvlblock: recovery JobId={job} restarted elsewhere", 10)
            status = c.wait_status(lambda s: s["recoveries"]["fallbacks"] == 1, 10,
                                   "the status JSON to count the fallback")
            self.assertEqual(status["recoveries"]["in_place"], 1)
            self.assertEqual(c.status_block(rack, status)["health"], "degraded")

    def test_repaired_node_returns_to_spare_pool(self):
        with nvlblock_cluster("rec3") as c:
            job, nodes, rack, _ = slice_job_with_bait(self, c)
            first = nodes[0]
            c.set_down(first)
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            self.assertOnRack(new, rack)
            self.assertEqual(c.topology_block(rack)["SparesFree"], "1")

            c.resume(first)
            c.wait_for(lambda: (lambda b: b if (b["SparesFree"], b["Failed"], b["SparesUsed"]) ==
                                ("2", "0", "0") else None)(c.topology_block(rack)), 15,
                       f"{rack} to show SparesFree=2 Failed=0 after the resume")
            c.wait_status(lambda s: (lambda b: b["spares_free"] == 2 and b["failed"] == 0)(
                c.status_block(rack, s)), 10, "the status JSON to show the spare pool whole")

            # The next failure is served in place again, from the whole pool.
            second = new[7]
            restarts = int(c.job(job)["Restarts"])
            c.set_down(second)
            again = c.wait_for(lambda: (lambda j: c.expand(j["NodeList"])
                                        if j.get("JobState") == "RUNNING" and int(j["Restarts"]) > restarts
                                        else None)(c.job(job)),
                               RESTART_TIMEOUT, f"job {job} to restart after the second failure")
            self.assertOnRack(again, rack)
            self.assertTrue(set(new) - {second} <= set(again))
            spare = set(again) - set(new)
            self.assertEqual(len(spare), 1)
            self.assertTrue(spare <= {first} | (set(rack_nodes(rack)) - set(nodes) - set(new)),
                            f"spare {spare} is not one of the free nodes of {rack}")
            c.wait_status(lambda s: s["recoveries"]["in_place"] == 2, 10,
                          "the status JSON to count two in-place recoveries")

    def test_slurmd_death_restarts_in_place_and_return_repairs(self):
        """A real failure: the node's slurmd and job processes killed
        (nvlcluster stop-node --kill), noticed by slurmctld's pings
        (SlurmdTimeout=10); then slurmd comes back and, with
        ReturnToService=1, the node returns to the spare pool by itself."""
        with nvlblock_cluster("rec5", flags=["--recovery-wait", "120", "--slurmd-timeout", "10"]) as c:
            job = c.sbatch("-N16", "--requeue")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            dead = nodes[11]
            c.nvlcluster("stop-node", dead, "--kill")
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes \({dead}\)", 60)
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            self.assertOnRack(new, rack)
            self.assertTrue(set(nodes) - {dead} <= set(new))
            self.assertEqual(len(set(new) - set(nodes)), 1)
            self.assertEqual(c.topology_block(rack)["FailedNodes"], dead)

            c.nvlcluster("start-node", dead)
            c.wait_for(lambda: (lambda b: b if (b["Failed"], b["SparesFree"]) == ("0", "2") else None)(
                c.topology_block(rack)), 30, f"{dead} back in {rack}'s spare pool after slurmd returned")

    def test_whole_rack_fault_moves_jobs_without_eating_spares(self):
        # The default recovery.wait (300 s): only the block fault may send
        # the job elsewhere at once.
        with nvlblock_cluster("rec4", flags=[]) as c:
            job, nodes, rack, bait_rack = slice_job_with_bait(self, c)
            bait_before = c.topology_block(bait_rack)
            self.assertEqual(bait_before["SparesFree"], "2")
            t_fail = time.monotonic()
            all_nodes = rack_nodes(rack)
            for i in range(0, 18, 6):  # a power fault: the rack within ~2 s
                c.set_down(*all_nodes[i:i + 6], reason="power")
                time.sleep(1)
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            took = time.monotonic() - t_fail
            # Not on the faulted rack, and not on the bait rack: 16 free
            # nodes there only with its 2 spares.
            self.assertNotIn(rack, rack_counts(new))
            self.assertNotIn(bait_rack, rack_counts(new), "the job ate another rack's spares")
            self.assertEqual(len(rack_counts(new)), 1)
            self.assertLess(took, 120, "the job waited for its faulted rack")

            b = c.topology_block(rack)
            self.assertEqual((b["Health"], b["Failed"]), ("down", "18"), b)
            bb = c.topology_block(bait_rack)
            self.assertEqual((bb["SparesFree"], bb["SparesUsed"], bb["Health"]), ("2", "0", "healthy"), bb)
            lines = c.log_lines(rf"nvlblock: recovery JobId={job} fallback")
            self.assertTrue(lines and "block fault" in lines[0], lines)
            status = c.wait_status(lambda s: s["recoveries"]["fallbacks"] == 1, 10,
                                   "the status JSON to count the fallback")
            self.assertEqual(c.status_block(rack, status)["health"], "down")

            # Power back: the rack is healthy again.
            c.resume(*all_nodes)
            c.wait_for(lambda: (lambda b: b if (b["Health"], b["Failed"]) == ("healthy", "0") else None)(
                c.topology_block(rack)), 20, f"{rack} healthy again after the resume")

    def test_exclusive_partition_job_keeps_off_a_rack_awaiting_recovery(self):
        """A partition with ExclusiveTopo=YES makes its jobs --exclusive=topo
        (Slurm's IS_JOB_WHOLE_TOPO). Such a job must not take a rack whose
        nodes are held for a job restarting in place: it would block the
        whole rack and push the recovery into its fallback."""
        flags = ["--recovery-wait", str(RECOVERY_WAIT), "--extra-conf",
                 "PartitionName=excl Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE "
                 "ExclusiveTopo=YES"]
        with nvlblock_cluster("recexcl", flags=flags) as c:
            # An 8-node job on one rack, a 2-node job on another: the third
            # rack is idle. After the failure the first rack still has room
            # for 8 ordinary nodes besides its held nodes and one spare, the
            # tightest fit for a small job.
            job = c.sbatch("-N8", "--requeue", "-J", "slice8")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            bait_rack = other_rack(rack)
            c.wait_running(c.sbatch("-N2", "-w", ",".join(rack_nodes(bait_rack)[:2]), "-J", "bait"))
            idle_rack = ({"rack01", "rack02", "rack03"} - {rack, bait_rack}).pop()
            c.set_down(nodes[3])
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 8 nodes", 10)
            excl = c.sbatch("-p", "excl", "-N2", "-J", "excl")
            excl_nodes = c.wait_running(excl, timeout=REQUEUE_DELAY)
            self.assertOnRack(excl_nodes, idle_rack,
                              f"the ExclusiveTopo job took {rack_counts(excl_nodes)}, not the idle {idle_rack}")
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            self.assertOnRack(new, rack, f"job {job} did not restart on {rack}: {new}")
            self.assertTrue(set(nodes) - {nodes[3]} <= set(new))

    def test_a_hold_never_makes_a_job_unrunnable(self):
        """While a job waits for its rack, that rack's nodes are held for it.
        Slurm also asks whether a job could ever run (its test-only question,
        on every node, failed ones included); a "no" there rejects the
        submission ("Requested node configuration is not available") or
        holds a pending job for good (BadConstraints, priority 0). A hold
        ends within recovery.wait, so it must never answer that question."""
        with nvlblock_cluster("rechold") as c:
            job = c.sbatch("-N16", "--requeue", "-J", "slice")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            c.set_down(*nodes[3:6])  # three failures, two spares: it waits for its rack
            c.wait_log(rf"nvlblock: recovery JobId={job} lost \d+ of 16 nodes", 10)
            # Every rack's 16 non-spare nodes: only possible once the nodes are repaired.
            whole = c.sbatch("-N48", "-J", "whole")
            # A later scheduling pass (LastSchedEval moves on) still finds it runnable one day.
            first = c.job(whole).get("LastSchedEval")
            j = c.wait_for(lambda: (lambda j: j if j.get("LastSchedEval") not in (None, first) else None)(
                c.job(whole)), 3 * SCHED_INTERVAL + 5, f"a scheduling pass to evaluate job {whole} again")
            self.assertEqual(j["JobState"], "PENDING", j)
            self.assertNotEqual(j["Reason"], "BadConstraints", j)
            self.assertNotEqual(j.get("Priority"), "0", f"job {whole} was held: {j}")
            self.assertNotEqual(c.topology_block(rack)["Held"], "0", "the hold ended before the check")
            self.assertEqual(c.topology_block(rack)["Health"], "degraded")


class BlockRecovery(ClusterTest):
    """Stock topology/block, same scenario: nothing keeps the job home."""

    def test_single_failure_job_leaves_its_rack(self):
        with Cluster("recblk", racks=3, plugin="block") as c:
            job, nodes, rack, bait_rack = slice_job_with_bait(self, c)
            failed = nodes[4]
            t_fail = time.monotonic()
            c.set_down(failed)
            new = c.wait_restarted(job, RESTART_TIMEOUT)
            took = time.monotonic() - t_fail
            print(f"topology/block: job {job} had {rack}, restarted on {rack_counts(new)} "
                  f"{took:.1f} s after the failure", file=sys.stderr)
            self.assertEqual(len(new), 16)
            # Best fit: the bait rack has exactly 16 free nodes, its own rack 17.
            self.assertOnRack(new, bait_rack, f"topology/block restarted job {job} on {new}; "
                                              f"expected the tighter {bait_rack}")


if __name__ == "__main__":
    main()
