#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Reclaimed spares (`reserve: reclaim`, docs/placement.md rule 3b) on a real
slurmctld. Nothing is held back while nothing fails, so other work runs on a
rack's spares. When a node under a slice job fails, Slurm's preemption
configuration decides which work on that rack may lose its node, and
nvlblock.yaml's recovery.reclaim_from may name more:

- a job Slurm lets the slice job preempt (partition `lend`, PriorityTier=1,
  under partition `gpu`'s 10) is preempted through Slurm: it gets its
  partition's GraceTime and SIGTERM inside the job, is requeued when the grace
  ends, its SystemComment says why, and the slice job restarts in place on its
  15 healthy nodes and that node;
- an ordinary job (same tier, not preemptable) is never touched by default,
  nor a --no-requeue one that Slurm could preempt: "nothing reclaimed", and
  the slice job falls back after the hold delay (KillWait + cred_expire + 1 + 30 s) and
  restarts elsewhere, as topology/block restarts it;
- an ordinary job of an account that recovery.reclaim_from names is requeued
  (through Slurm's preemption call where preemption is configured, through
  the release's requeue call where it is not) and the slice job restarts in
  place;
- without any PreemptType (preempt/none) and with no reclaim_from naming
  them, nothing is requeued;
- a job that filled a whole rack gets its node back on its other rack, from
  a preemptable job there;
- topology/block side by side, with the same preemption settings, restarts
  the slice job on another rack and preempts nothing.

The scenarios of one configuration share one cluster, one rack each, and fail
their nodes together: their waits overlap.

The test cluster has no slurmdbd, so the preemption is partition preemption
(nvlcluster up --preempt-partition) with GraceTime on `lend`
(--lend-grace-time). The nvlblock.yaml is written here (--config) so that it
has no `preemptible:` selector: that is lending, another path.
"""
import contextlib
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import (HOLD_DELAY as HOLD, Cluster, ClusterTest, Rack, REQUEUE_DELAY, job_time, main,  # noqa: E402
                     rack_name_of, rack_nodes)
from nvlblock_cluster.common import log_time  # noqa: E402

# GraceTime of partition lend: a preempted job there gets SIGCONT and
# SIGTERM, and Slurm requeues it this long afterwards (at its next time-limit
# check or scheduling pass for the preemptor: up to PERIODIC_TIMEOUT, 30 s,
# later).
GRACE = 10
GRACE_END_CHECK = 30
# The account recovery.reclaim_from names (accounts need no slurmdbd here).
SCAVENGER = "scavenger"
PREEMPT = ["--preempt-partition", "--lend-grace-time", str(GRACE)]

# The preemptable job's work runs as a job step: Slurm's grace-time SIGTERM
# goes to a job's steps (KILL_STEPS_ONLY), not to its batch shell. The step
# traps it, says so in the job's output and works on until Slurm requeues
# the job when the grace ends.
VICTIM_SCRIPT = r"""#!/bin/bash
srun -n1 bash -c '
trap "echo nvltest: SIGTERM at \$(date +%s)" TERM
echo nvltest: step started
while :; do sleep 1 & wait $!; done'
"""


def reclaim_yaml(racks, reclaim_from=None):
    lines = ["# test_reclaim.py: reserve: reclaim, no preemptible: selector.",
             "defaults:", "  slice: 16", "  spares: 2", "  reserve: reclaim",
             "recovery:"]
    if reclaim_from:
        lines += ["  reclaim_from:", f"    accounts: [{reclaim_from}]"]
    # Up to 3 jobs are requeued at once here; the default limit on a
    # cluster this small is 2 an hour.
    lines += ["  reclaim_limits:", "    per_hour: 100",
              "status:", "  interval: 1",
              "blocks:"]
    for r in range(1, racks + 1):
        lines += [f"  - name: rack{r:02d}", f"    nodes: gb[{(r - 1) * 18 + 1:04d}-{r * 18:04d}]"]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def reclaim_cluster(name, racks, reclaim_from=None, flags=()):
    fd, path = tempfile.mkstemp(prefix=f"nvlt-{name}-", suffix=".yaml")
    with os.fdopen(fd, "w") as f:
        f.write(reclaim_yaml(racks, reclaim_from))
    try:
        with Cluster(name, racks=racks, flags=["--config", path, *flags]) as c:
            yield c
    finally:
        os.unlink(path)


class Reclaim(ClusterTest):

    def victim_script(self, c):
        path = os.path.join(c.jobs_dir, "victim.sh")
        with open(path, "w") as f:
            f.write(VICTIM_SCRIPT)
        os.chmod(path, 0o755)
        return path

    def system_comment(self, c, job):
        out = c.run("scontrol", "show", "job", str(job)).stdout
        m = re.search(r"^\s*SystemComment=(.*)$", out, re.M)
        return m.group(1).strip() if m else ""

    def sigterm_times(self, c, job):
        try:
            with open(os.path.join(c.jobs_dir, f"victim-{job}.out"), errors="replace") as f:
                return [int(t) for t in re.findall(r"nvltest: SIGTERM at (\d+)", f.read())]
        except FileNotFoundError:
            return []

    def wait_victim_ready(self, c, job):
        """The victim's step runs and has set its SIGTERM trap."""
        def ready():
            try:
                with open(os.path.join(c.jobs_dir, f"victim-{job}.out"), errors="replace") as f:
                    return "nvltest: step started" in f.read()
            except FileNotFoundError:
                return False
        c.wait_for(ready, 30, f"job {job}'s step to start")

    def assertUntouched(self, c, jobs):
        """Each job (id: nodes) still runs on its nodes, never requeued."""
        for job, nodes in jobs.items():
            j = c.job(job)
            self.assertEqual((j.get("JobState"), j.get("Restarts")), ("RUNNING", "0"), f"job {job}: {j}")
            self.assertEqual(c.expand(j["NodeList"]), nodes, f"job {job} moved")

    def assertRequeued(self, c, victim, restarted):
        j = c.job(victim)
        self.assertGreaterEqual(int(j["Restarts"]), 1, j)
        self.assertFalse(set(c.expand(j.get("NodeList"))) & set(restarted),
                         f"job {victim} still shares nodes with the restarted job")

    def assertInPlace(self, c, r, new, taken):
        self.assertOnRack(new, r.rack)
        self.assertEqual(len(new), 16)
        self.assertEqual(set(new), (set(r.nodes) - {r.failed}) | {taken})
        c.wait_log(rf"nvlblock: recovery JobId={r.job} restarted in place on {r.rack}: "
                   rf"15 prior nodes \+ 1 spares \({taken}\)", 10)

    def assertPreemptedWithGrace(self, c, victim, recovering, restarted_at):
        """The victim's step got SIGTERM when Slurm preempted it, Slurm
        requeued it GraceTime later, and the recovering job started after."""
        signalled = self.sigterm_times(c, victim)
        self.assertTrue(signalled, f"no SIGTERM marker in victim-{victim}.out")
        requeued = c.log_lines(rf"preempted JobId={victim} has been requeued to reclaim resources for ")
        self.assertEqual(len(requeued), 1, requeued)
        grace = log_time(requeued[0]) - signalled[0]
        self.assertGreaterEqual(grace, GRACE - 1, f"requeued {grace:.1f} s after its SIGTERM")
        self.assertLessEqual(grace, GRACE + GRACE_END_CHECK + 5, f"requeued {grace:.1f} s after its SIGTERM")
        self.assertGreaterEqual(restarted_at, signalled[0] + GRACE - 1,
                                f"JobId={recovering} restarted before JobId={victim}'s grace ended")

    # ------------------------------------------------------------------

    def test_slurm_preemption_decides_what_is_reclaimed(self):
        # One rack for each scenario (a, b, c), one left empty for b's fallback.
        with reclaim_cluster("reclaim-p", 4, reclaim_from=SCAVENGER, flags=PREEMPT) as c:
            script = self.victim_script(c)

            def victim(*args):
                return c.sbatch("-N1", "--requeue", "-o", "victim-%j.out", "--open-mode=append", *args,
                                script, wrap=None)

            # a: a preemptable job and an ordinary one on the spares. The
            # victims are pinned to their node (-w): requeued, they wait for
            # it, and the empty rack stays whole for b's fallback.
            a = Rack(c, self)
            lent = victim("-p", "lend", "-J", "lent", "-w", a.spares[0])
            c.wait_running(lent)
            self.wait_victim_ready(c, lent)
            ord_a = c.sbatch("-N1", "-J", "ordinary")
            # Nothing is withheld: best fit puts ordinary work on the spare.
            self.assertEqual(c.wait_running(ord_a), [a.spares[1]])
            b = Rack(c, self, {a.rack})
            # b: an ordinary job, and a --no-requeue one Slurm could preempt.
            ord_b = c.sbatch("-N1", "-J", "ordinary")
            norq = c.sbatch("-N1", "-p", "lend", "--no-requeue", "-J", "norequeue")
            self.assertEqual(sorted(c.wait_running(ord_b) + c.wait_running(norq)), b.spares)
            # c: an ordinary job of the account reclaim_from names.
            r3 = Rack(c, self, {a.rack, b.rack})
            scav = c.sbatch("-N1", "--requeue", "-A", SCAVENGER, "-J", "scavenger", "-w", r3.spares[0])
            c.wait_running(scav)
            ord_c = c.sbatch("-N1", "-J", "ordinary")
            self.assertEqual(c.wait_running(ord_c), [r3.spares[1]])
            empty = ({"rack01", "rack02", "rack03", "rack04"} - {a.rack, b.rack, r3.rack}).pop()
            untouched = {j: c.nodes(j) for j in (ord_a, ord_b, norq, ord_c)}

            c.set_down(a.failed, b.failed, r3.failed)
            c.wait_log(rf"nvlblock: recovery JobId={a.job} reclaiming 1 spare node on {a.rack}: "
                       rf"preempting JobId={lent} \(Slurm's preemption\) ", 20)
            c.wait_log(rf"nvlblock: recovery JobId={r3.job} reclaiming 1 spare node on {r3.rack}: "
                       rf"requeueing JobId={scav} \(recovery.reclaim_from\) ", 20)
            c.wait_log(rf"nvlblock: recovery JobId={b.job}: nothing reclaimed: not enough work there may "
                       r"lose its nodes \(jobs there: 1 not_allowed, 1 not_requeueable\)", 20)

            # c: requeued at once (gpu has no GraceTime), through Slurm's
            # preemption call; the slice job restarts in place.
            new3 = c.wait_restarted(r3.job, REQUEUE_DELAY + 30)
            self.assertInPlace(c, r3, new3, r3.spares[0])
            c.wait_log(rf"preempted JobId={scav} has been requeued to reclaim resources for JobId={r3.job}", 5)
            self.assertRequeued(c, scav, new3)
            self.assertEqual(self.system_comment(c, scav),
                             f"nvlblock: requeued as recovery.reclaim_from allows for the in-place restart "
                             f"of JobId={r3.job} on {r3.rack}")

            # a: SIGTERM inside the job, requeued after its GraceTime, the
            # slice job restarted in place on that node.
            new_a = c.wait_restarted(a.job, GRACE + GRACE_END_CHECK + REQUEUE_DELAY + 15)
            self.assertInPlace(c, a, new_a, a.spares[0])
            self.assertPreemptedWithGrace(c, lent, a.job, job_time(c.job(a.job)["StartTime"]))
            self.assertRequeued(c, lent, new_a)
            self.assertEqual(self.system_comment(c, lent),
                             f"nvlblock: requeued by Slurm's preemption for the in-place restart of "
                             f"JobId={a.job} on {a.rack}")

            # b: nothing there may lose its node, and Slurm's own scheduling
            # of the job in place must not preempt the --no-requeue job
            # either; after the hold delay the job is placed anywhere: the
            # empty rack.
            new_b = c.wait_restarted(b.job, HOLD + 40)
            self.assertUntouched(c, untouched)
            self.assertEqual(self.system_comment(c, norq), "")
            self.assertOnRack(new_b, empty)
            self.assertEqual(len(new_b), 16)
            c.wait_log(rf"nvlblock: recovery JobId={b.job} fallback after \d+ s: {b.rack} has room for 15 of "
                       r"the 16 nodes it needs", 5)
            c.wait_log(rf"nvlblock: recovery JobId={b.job} restarted elsewhere on {empty} \(had {b.rack}\)", 10)

            self.assertEqual(len(c.log_lines(r"nvlblock: recovery JobId=\d+ reclaiming")), 2)
            self.assertEqual(c.log_lines(r"preempted JobId=(?!(%d|%d) )" % (lent, scav)), [])

    def test_nobody_is_moved_for_a_restart_slurm_would_not_start_there(self):
        """The slice job excludes (-x) the spare a preemptable job runs on:
        Slurm would not start it there, so that job is not preempted for it
        (before, it was, and the restart still could not happen); the slice
        job falls back to the other rack after the hold (issue 36)."""
        with reclaim_cluster("reclaim-x", 2, flags=PREEMPT) as c:
            script = self.victim_script(c)
            job = c.sbatch("-N16", "--requeue", "-J", "slice", "-x", "gb0018")
            nodes = c.wait_running(job, 60)
            self.assertEqual(nodes, c.expand("gb[0001-0016]"))
            ordinary = c.sbatch("-N1", "-J", "ordinary", "-w", "gb0017")
            lent = c.sbatch("-N1", "--requeue", "-p", "lend", "-J", "lent", "-w", "gb0018", "-o", "victim-%j.out",
                            script, wrap=None)
            untouched = {ordinary: c.wait_running(ordinary), lent: c.wait_running(lent)}
            self.wait_victim_ready(c, lent)
            c.set_down("gb0006")
            c.wait_log(rf"nvlblock: recovery JobId={job}: nothing reclaimed: Slurm would not start it on the nodes "
                       r"a reclaim would free on rack01 \(it excludes some of them\)", 20)
            new = c.wait_restarted(job, HOLD + 40)
            self.assertOnRack(new, "rack02")
            self.assertUntouched(c, untouched)
            self.assertEqual(self.sigterm_times(c, lent), [])
            self.assertEqual(self.system_comment(c, lent), "")
            self.assertEqual(c.log_lines(r"nvlblock: recovery JobId=\d+ reclaiming"), [])

    def test_the_victims_own_signal_warning_is_sent(self):
        """PreemptParameters=send_user_signal: a job moved by a reclaim gets
        the warning signal it asked for (--signal=USR1@60), as under
        Slurm's own preemption, though Slurm's scheduler has preempted
        nothing since slurmctld started (it sets that flag only when it
        preempts itself; before, the reclaim sent SIGTERM only)."""
        flags = PREEMPT + ["--extra-conf", "PreemptParameters=send_user_signal"]
        with reclaim_cluster("reclaim-s", 2, flags=flags) as c:
            path = os.path.join(c.jobs_dir, "warned.sh")
            with open(path, "w") as f:
                f.write(VICTIM_SCRIPT.replace('trap "echo nvltest: SIGTERM',
                                              'trap "echo nvltest: USR1 at \\$(date +%s)" USR1\n'
                                              'trap "echo nvltest: SIGTERM'))
            os.chmod(path, 0o755)
            r = Rack(c, self)
            ordinary = c.sbatch("-N1", "-J", "ordinary", "-w", r.spares[1])
            lent = c.sbatch("-N1", "--requeue", "-p", "lend", "--signal=USR1@60", "-J", "lent", "-w", r.spares[0],
                            "-o", "victim-%j.out", "--open-mode=append", path, wrap=None)
            c.wait_running(ordinary)
            c.wait_running(lent)
            self.wait_victim_ready(c, lent)
            c.set_down(r.failed)
            c.wait_log(rf"nvlblock: recovery JobId={r.job} reclaiming 1 spare node on {r.rack}: "
                       rf"preempting JobId={lent} \(Slurm's preemption\) ", 20)
            new = c.wait_restarted(r.job, GRACE + GRACE_END_CHECK + REQUEUE_DELAY + 15)
            self.assertInPlace(c, r, new, r.spares[0])
            with open(os.path.join(c.jobs_dir, f"victim-{lent}.out"), errors="replace") as f:
                out = f.read()
            self.assertIn("nvltest: USR1 at", out, "the victim's --signal warning was not sent")
            self.assertIn("nvltest: SIGTERM at", out)
            self.assertRequeued(c, lent, new)

    def test_a_suspended_job_is_not_counted_on(self):
        """The only job recovery.reclaim_from names on the failed job's rack
        is suspended (scontrol suspend): the core must not plan with it, since the plugin
        moves running jobs only and would skip it while the round counted
        as a reclaim. It is reported as one Slurm is preempting already
        (before, as a requeue candidate)."""
        with reclaim_cluster("reclaim-u", 2, reclaim_from=SCAVENGER) as c:
            r = Rack(c, self)
            ordinary = c.sbatch("-N1", "-J", "ordinary", "-w", r.spares[1])
            lent = c.sbatch("-N1", "--requeue", "-A", SCAVENGER, "-J", "scavenger", "-w", r.spares[0])
            c.wait_running(ordinary)
            c.wait_running(lent)
            c.run("scontrol", "suspend", str(lent))
            c.wait_for(lambda: c.state(lent) == "SUSPENDED", 10, "the lent job suspended")
            c.set_down(r.failed)
            # Counted as one Slurm is preempting already (before: a "requeue" candidate).
            c.wait_log(rf"nvlblock: recovery JobId={r.job}: nothing reclaimed: not enough work there may lose its "
                       r"nodes \(jobs there: 1 not_allowed, 1 being_preempted\)", 20)
            self.assertEqual(c.log_lines(r"nvlblock: recovery JobId=\d+ reclaiming"), [])
            self.assertEqual(c.state(lent), "SUSPENDED")
            self.assertEqual(self.system_comment(c, lent), "")

    def test_a_reclaim_from_job_whose_own_mode_cancels_is_requeued_not_cancelled(self):
        """A job recovery.reclaim_from names runs in a partition Slurm does
        not let the slice job preempt (same PriorityTier) whose own
        PreemptMode is CANCEL with a GraceTime. Through Slurm's preemption
        it would only be signalled and, when the grace ends, cancelled by
        its own mode (issue 36): it is requeued at once instead, through the
        release's requeue call, and the slice job restarts in place."""
        scav = ("PartitionName=scav Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE PriorityTier=10 "
                f"PreemptMode=CANCEL GraceTime={GRACE}")
        with reclaim_cluster("reclaim-g", 2, reclaim_from=SCAVENGER, flags=PREEMPT + ["--extra-conf", scav]) as c:
            r = Rack(c, self)
            ordinary = c.sbatch("-N1", "-J", "ordinary", "-w", r.spares[1])
            victim = c.sbatch("-N1", "--requeue", "-p", "scav", "-A", SCAVENGER, "-J", "scavenger",
                              "-w", r.spares[0])
            untouched = {ordinary: c.wait_running(ordinary)}
            c.wait_running(victim)
            c.set_down(r.failed)
            # (Before: Slurm's preemption signalled it and, when the grace
            # ended, ended it PREEMPTED by its own mode, never requeued.)
            new = c.wait_restarted(r.job, GRACE + GRACE_END_CHECK + REQUEUE_DELAY + 15)
            self.assertNotIn(c.state(victim), ("CANCELLED", "PREEMPTED"), c.job(victim))
            self.assertInPlace(c, r, new, r.spares[0])
            self.assertRequeued(c, victim, new)
            c.wait_log(rf"nvlblock: recovery JobId={r.job} reclaiming 1 spare node on {r.rack}: "
                       rf"requeueing JobId={victim} at once \(recovery.reclaim_from\) ", 5)
            # Past the grace a Slurm preemption would have ended: still queued, never cancelled.
            time.sleep(GRACE + 2)
            self.assertIn(c.state(victim), ("PENDING", "RUNNING"), c.job(victim))
            self.assertEqual(c.log_lines(rf"preempted JobId={victim} "), [])
            self.assertUntouched(c, untouched)
            # The passes' hold of Slurm's write locks, as the plugin timed it.
            status = c.wait_status(lambda s: s["recoveries"].get("reclaim_passes", {}).get("passes"), 10,
                                   "the reclaim passes in the status JSON")
            passes = status["recoveries"]["reclaim_passes"]
            self.assertGreaterEqual(passes["recoveries"], 1, passes)
            self.assertGreater(passes["lock_held_us_total"], 0, passes)
            self.assertLessEqual(passes["lock_held_us_max"], passes["lock_held_us_total"], passes)
            self.assertLess(passes["lock_held_us_max"], 1_000_000, passes)

    def test_a_preemptable_job_on_a_shared_node_is_not_moved_for_it(self):
        """OverSubscribe partitions: a preemptable job shares a spare with a
        job that may not be preempted (different cores of the node).
        Preempting it would free no node (issue 36: it was credited with the
        node, preempted, and the restart still could not fit): nothing is
        reclaimed, and the slice job falls back to the empty rack after the
        hold."""
        shared = ["PartitionName=lendshared Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=NO PriorityTier=1",
                  "PartitionName=shared Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=NO PriorityTier=10"]
        flags = PREEMPT + [f for line in shared for f in ("--extra-conf", line)]
        with reclaim_cluster("reclaim-o", 2, flags=flags) as c:
            r = Rack(c, self)
            ordinary = c.sbatch("-N1", "-J", "ordinary", "-w", r.spares[1])
            keeper = c.sbatch("-n1", "-p", "shared", "-J", "keeper", "-w", r.spares[0])
            lent = c.sbatch("-n1", "--requeue", "-p", "lendshared", "-J", "lent", "-w", r.spares[0])
            untouched = {j: c.wait_running(j) for j in (ordinary, keeper, lent)}
            self.assertEqual(untouched[keeper], untouched[lent], "the two jobs do not share the spare")
            c.set_down(r.failed)
            c.wait_log(rf"nvlblock: recovery JobId={r.job}: nothing reclaimed: not enough work there may lose its "
                       r"nodes", 20)
            new = c.wait_restarted(r.job, HOLD + 40)
            other = ({"rack01", "rack02"} - {r.rack}).pop()
            self.assertOnRack(new, other)
            self.assertUntouched(c, untouched)
            self.assertEqual(c.log_lines(r"nvlblock: recovery JobId=\d+ reclaiming"), [])
            self.assertEqual(c.log_lines(r"preempted JobId="), [])

    def test_a_job_that_filled_its_rack_gets_its_node_back_on_its_other_rack(self):
        with reclaim_cluster("reclaim-w", 2, flags=PREEMPT) as c:
            script = self.victim_script(c)
            # 20 nodes: a whole rack and two of the other, which a 14-node
            # job, a preemptable and an ordinary 1-node job then fill.
            wide = c.sbatch("-N20", "--requeue", "-J", "wide")
            wide_nodes = c.wait_running(wide, 60)
            wide_racks = sorted({rack_name_of(n) for n in wide_nodes})
            self.assertEqual(len(wide_racks), 2, wide_nodes)
            full = next(r for r in wide_racks if set(rack_nodes(r)) <= set(wide_nodes))
            part = next(r for r in wide_racks if r != full)
            filler = c.sbatch("-N14", "-J", "filler")
            filler_nodes = c.wait_running(filler)
            self.assertOnRack(filler_nodes, part)
            lend_w = c.sbatch("-N1", "--requeue", "-p", "lend", "-J", "lent", "-o", "victim-%j.out",
                              "--open-mode=append", script, wrap=None)
            ord_w = c.sbatch("-N1", "--requeue", "-J", "ordinary")
            lent_node = c.wait_running(lend_w)[0]
            self.wait_victim_ready(c, lend_w)
            untouched = {filler: filler_nodes, ord_w: c.wait_running(ord_w)}
            wide_failed = rack_nodes(full)[4]

            # Nothing to reclaim on the rack it filled: the preemptable job
            # on its other rack is preempted, and the job restarts on its own
            # two racks, one node shifted: 19 prior nodes + 1.
            c.set_down(wide_failed)
            blocks = ",".join(wide_racks)
            c.wait_log(rf"nvlblock: recovery JobId={wide} reclaiming 1 spare node on {blocks}: "
                       rf"preempting JobId={lend_w} \(Slurm's preemption\) ", 20)
            new_w = c.wait_restarted(wide, GRACE + GRACE_END_CHECK + REQUEUE_DELAY + 15)
            self.assertEqual(set(new_w), (set(wide_nodes) - {wide_failed}) | {lent_node})
            c.wait_log(rf"nvlblock: recovery JobId={wide} restarted in place on {blocks}: "
                       rf"19 prior nodes \+ 1 spares \({lent_node}\)", 10)
            self.assertPreemptedWithGrace(c, lend_w, wide, job_time(c.job(wide)["StartTime"]))
            self.assertRequeued(c, lend_w, new_w)
            self.assertEqual(self.system_comment(c, lend_w),
                             f"nvlblock: requeued by Slurm's preemption for the in-place restart of "
                             f"JobId={wide} on {blocks}")
            self.assertUntouched(c, untouched)

    def test_without_preemption_only_reclaim_from_work_is_requeued(self):
        # No PreemptType (preempt/none): Slurm preempts nothing. A partition
        # lend exists as in the test above, only nothing may preempt it.
        lend = ("PartitionName=lend Nodes=ALL MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE "
                "PriorityTier=1")
        with reclaim_cluster("reclaim-n", 3, reclaim_from=SCAVENGER, flags=["--extra-conf", lend]) as c:
            preempt_type = re.search(r"^PreemptType\s*=\s*(\S+)", c.run("scontrol", "show", "config").stdout, re.M)
            self.assertIn(preempt_type and preempt_type.group(1), (None, "(null)", "preempt/none"))
            # a: a job of lend, which nothing names, and a --no-requeue job
            # of the account reclaim_from names, both taken by best fit to
            # the spares.
            a = Rack(c, self)
            lent = c.sbatch("-N1", "--requeue", "-p", "lend", "-J", "lent")
            norq = c.sbatch("-N1", "--no-requeue", "-A", SCAVENGER, "-J", "norequeue")
            self.assertEqual(sorted(c.wait_running(lent) + c.wait_running(norq)), a.spares)
            # b: an ordinary job of the account reclaim_from names.
            b = Rack(c, self, {a.rack})
            scav = c.sbatch("-N1", "--requeue", "-A", SCAVENGER, "-J", "scavenger")
            ord_b = c.sbatch("-N1", "--requeue", "-J", "ordinary")
            scav_nodes = c.wait_running(scav)
            self.assertEqual(sorted(scav_nodes + c.wait_running(ord_b)), b.spares)
            empty = ({"rack01", "rack02", "rack03"} - {a.rack, b.rack}).pop()
            untouched = {j: c.nodes(j) for j in (lent, norq, ord_b)}

            c.set_down(a.failed, b.failed)
            # b: requeued at once through the release's requeue call (its
            # own PreemptMode is OFF: no grace could end in a requeue); in place.
            c.wait_log(rf"nvlblock: recovery JobId={b.job} reclaiming 1 spare node on {b.rack}: "
                       rf"requeueing JobId={scav} at once \(recovery.reclaim_from\) ", 20)
            c.wait_log(rf"nvlblock: recovery JobId={a.job}: nothing reclaimed: not enough work there may "
                       r"lose its nodes \(jobs there: 1 not_allowed, 1 not_requeueable\)", 20)
            new_b = c.wait_restarted(b.job, REQUEUE_DELAY + 30)
            self.assertInPlace(c, b, new_b, scav_nodes[0])
            self.assertRequeued(c, scav, new_b)
            self.assertEqual(self.system_comment(c, scav),
                             f"nvlblock: requeued as recovery.reclaim_from allows for the in-place restart "
                             f"of JobId={b.job} on {b.rack}")
            # a: nothing requeued; after the hold delay it restarts where
            # there is room, as topology/block would restart it.
            c.wait_log(rf"nvlblock: recovery JobId={a.job} fallback after \d+ s: {a.rack} has room for 15 of "
                       r"the 16 nodes it needs", HOLD + 30)
            new_a = c.wait_restarted(a.job, 30)
            self.assertOnRack(new_a, empty)
            self.assertEqual(len(new_a), 16)
            c.wait_log(rf"nvlblock: recovery JobId={a.job} restarted elsewhere on {empty} \(had {a.rack}\)", 10)
            self.assertUntouched(c, untouched)
            self.assertEqual(self.system_comment(c, lent), "")
            self.assertEqual(c.log_lines(r"preempted JobId="), [])
            self.assertEqual(c.log_lines(r"nvlblock: recovery JobId=.*cannot requeue"), [])

    def test_topology_block_restarts_the_job_on_another_rack(self):
        # The preemption settings of the first test, topology/block.
        with Cluster("reclaim-b", racks=2, plugin="block", flags=PREEMPT) as c:
            job = c.sbatch("-N16", "--requeue", "-J", "slice")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            self.assertOnRack(nodes, rack)
            spares = sorted(set(rack_nodes(rack)) - set(nodes))
            lent = c.sbatch("-N1", "--requeue", "-p", "lend", "-J", "lent", "-w", spares[0])
            ordinary = c.sbatch("-N1", "--requeue", "-J", "ordinary", "-w", spares[1])
            untouched = {lent: c.wait_running(lent), ordinary: c.wait_running(ordinary)}
            c.set_down(nodes[5])
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertNotIn(rack, {rack_name_of(n) for n in new}, f"block restarted {job} on {rack}: {new}")
            self.assertUntouched(c, untouched)
            self.assertEqual(c.log_lines(r"preempted JobId="), [])


if __name__ == "__main__":
    main()
