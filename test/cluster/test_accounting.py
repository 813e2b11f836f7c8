#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Accounting for real: QOS preemption (preempt/qos, QOS defined in slurmdbd
with sacctmgr) and nvlblock's `reserve: reclaim` on a cluster with slurmdbd
and a real MariaDB (`nvlcluster up --accounting`), and what `sacct` keeps.

The most common GPU-site preemption setup: a `scavenger` QOS that `normal`
may preempt, PreemptMode=REQUEUE, and a per-QOS PreemptExemptTime that
protects a scavenger job for its first EXEMPT seconds.

- Rack A: a 16-node slice job (QOS normal), a scavenger job that has run
  longer than EXEMPT on one spare, an ordinary job (normal cannot preempt
  normal) on the other. A node of the slice job fails: nvlblock's reclaim
  preempts the scavenger job through Slurm's preemption (requeued), and the
  slice job restarts in place on its 15 healthy nodes and that spare.
- Rack B, failed at the same moment: the same, except that its scavenger
  job started just before the failure and is inside its QOS's
  PreemptExemptTime: nothing is taken ("1 not_allowed, 1 exempt"), and the
  slice job restarts on the empty rack C after the hold delay, well before
  that exemption would end.
- sacct (slurmdbd's database): the scavenger job's preempted run is a
  PREEMPTED row whose AdminComment says why (nvlblock's sentence, as
  SystemComment has it in `scontrol show job`); the slice job's runs are two
  rows, the second on its own rack; nothing else was preempted or carries
  a comment.
- topology/block on the same setup (2 racks) restarts the slice job on the
  other rack and preempts nothing.

The AdminComment assertion is the one that needs the plugin to set the
field slurmdbd stores: Slurm's slurmdbd accounting plugin sends a job's
admin_comment with every completion record (the preempted run included) and
never its system_comment (docs/admin.md 4.1).
"""
import contextlib
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import (HOLD_DELAY as HOLD, Cluster, ClusterTest, Rack, REQUEUE_DELAY, job_time, log,  # noqa: E402
                     main, rack_name_of, rack_nodes)

# The scavenger QOS's PreemptExemptTime. Rack B's fallback comes
# HOLD (46 s: nvltest.HOLD_DELAY) after the failure; its scavenger job started
# just before the failure, so EXEMPT leaves it exempt for about 40 s more than
# the test needs.
EXEMPT = 90
EXEMPT_TEXT = f"00:{EXEMPT // 60:02d}:{EXEMPT % 60:02d}"
# slurmctld hands slurmdbd each record through its agent, at once but not
# synchronously: sacct sees it within seconds.
DBD_LAG = 30

PREEMPT_QOS = ["--extra-conf", "PreemptType=preempt/qos", "PreemptMode=REQUEUE"]


def reclaim_yaml(racks):
    lines = ["# test_accounting.py: reserve: reclaim; Slurm's QOS preemption decides.",
             "defaults:", "  slice: 16", "  spares: 2", "  reserve: reclaim",
             "recovery:", "  reclaim_limits:", "    per_hour: 100",
             "status:", "  interval: 1",
             "blocks:"]
    for r in range(1, racks + 1):
        lines += [f"  - name: rack{r:02d}", f"    nodes: gb[{(r - 1) * 18 + 1:04d}-{r * 18:04d}]"]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def accounting_cluster(name, racks, plugin="nvlblock"):
    flags = ["--accounting", *PREEMPT_QOS]
    path = None
    if plugin == "nvlblock":
        fd, path = tempfile.mkstemp(prefix=f"nvlt-{name}-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(reclaim_yaml(racks))
        flags += ["--config", path]
    try:
        with Cluster(name, racks=racks, plugin=plugin, flags=flags) as c:
            define_qos(c)
            yield c
    finally:
        if path:
            os.unlink(path)


def define_qos(c):
    """The scavenger QOS in slurmdbd, as a site defines it, and wait until
    slurmctld has it (slurmdbd pushes QOS changes to the registered slurmctld)."""
    def sacctmgr(*args):
        return c.run("sacctmgr", "-i", *args)
    sacctmgr("add", "qos", "scavenger", "Priority=0", "PreemptMode=requeue",
             f"PreemptExemptTime={EXEMPT_TEXT}")
    sacctmgr("modify", "qos", "normal", "set", "Preempt=scavenger")
    sacctmgr("modify", "user", "root", "set", "qos+=scavenger")
    out = c.run("sacctmgr", "-n", "-P", "show", "qos", "format=name,preempt,preemptmode,preemptexempttime").stdout
    qos = {line.split("|")[0]: line.split("|")[1:] for line in out.splitlines() if line}
    assert [v.lower() for v in qos.get("scavenger", [])[1:]] == ["requeue", EXEMPT_TEXT], qos
    assert qos.get("normal", [None])[0] == "scavenger", qos

    # sbatch --test-only checks the association's access to the QOS
    # (AccountingStorageEnforce=qos): "Invalid qos specification" until then.
    c.wait_for(lambda: c.run("sbatch", "--test-only", "--qos=scavenger", "-N1", "--wrap", "true",
                             check=False).returncode == 0,
               30, "slurmctld to know QOS scavenger and the association's access to it")


class Accounting(ClusterTest):

    # -- what sacct says -------------------------------------------------

    def sacct(self, c, job):
        """Every run of a job slurmdbd recorded (sacct -D: a requeued job's
        earlier runs too), oldest first: [{State, NodeList, AdminComment, ...}]."""
        fields = ["JobIDRaw", "State", "QOS", "NodeList", "FailedNode", "AdminComment"]
        out = c.run("sacct", "-j", str(job), "-D", "-X", "-n", "-P", "-o", ",".join(fields)).stdout
        return [dict(zip(fields, line.split("|", len(fields) - 1))) for line in out.splitlines() if line]

    def wait_sacct(self, c, job, predicate, what):
        return c.wait_for(lambda: (lambda rows: rows if predicate(rows) else None)(self.sacct(c, job)),
                          DBD_LAG, f"sacct to show job {job} {what}")

    def system_comment(self, c, job):
        m = re.search(r"^\s*SystemComment=(.*)$", c.run("scontrol", "show", "job", str(job)).stdout, re.M)
        return m.group(1).strip() if m else ""

    def assertUntouched(self, c, jobs):
        """Each job (id: nodes) still runs on its nodes, never requeued, and
        slurmdbd has one run of it, running, with no AdminComment."""
        for job, nodes in jobs.items():
            j = c.job(job)
            self.assertEqual((j.get("JobState"), j.get("Restarts")), ("RUNNING", "0"), f"job {job}: {j}")
            self.assertEqual(c.expand(j["NodeList"]), nodes, f"job {job} moved")
            rows = self.sacct(c, job)
            self.assertEqual([(r["State"], r["AdminComment"]) for r in rows], [("RUNNING", "")],
                             f"job {job} in sacct: {rows}")

    def assertRestartedInPlaceInSacct(self, c, r, new):
        """sacct: the slice job's first run ended with its node's failure, the
        second runs on the same rack."""
        rows = self.wait_sacct(c, r.job, lambda rows: len(rows) == 2 and rows[1]["State"] == "RUNNING",
                               "with two runs, the second running")
        self.assertIn(rows[0]["State"], ("NODE_FAIL", "REQUEUED"), rows)
        self.assertEqual(c.expand(rows[0]["NodeList"]), r.nodes, rows)
        self.assertEqual(c.expand(rows[1]["NodeList"]), sorted(new), rows)

    # ------------------------------------------------------------------

    def test_qos_preemption_reclaims_and_sacct_says_why(self):
        with accounting_cluster("acct-qos", 3) as c:
            a = Rack(c, self)
            scav_a = c.sbatch("-N1", "--requeue", "--qos=scavenger", "-J", "scavenger", "-w", a.spares[0])
            ord_a = c.sbatch("-N1", "--requeue", "-J", "ordinary", "-w", a.spares[1])
            c.wait_running(scav_a)
            c.wait_running(ord_a)
            b = Rack(c, self, {a.rack})
            ord_b = c.sbatch("-N1", "--requeue", "-J", "ordinary", "-w", b.spares[1])
            c.wait_running(ord_b)
            empty = ({"rack01", "rack02", "rack03"} - {a.rack, b.rack}).pop()

            # Rack A's scavenger job outlives its PreemptExemptTime; rack B's
            # starts just before the failure, inside its own.
            started_a = job_time(c.job(scav_a)["StartTime"])
            c.wait_for(lambda: time.time() >= started_a + EXEMPT + 2, EXEMPT + 30,
                       f"job {scav_a} to run past its PreemptExemptTime")
            scav_b = c.sbatch("-N1", "--requeue", "--qos=scavenger", "-J", "scavenger", "-w", b.spares[0])
            c.wait_running(scav_b)
            exempt_until = job_time(c.job(scav_b)["StartTime"]) + EXEMPT
            self.assertEqual(c.job(scav_b)["QOS"], "scavenger")
            untouched = {j: c.nodes(j) for j in (ord_a, ord_b)}

            c.set_down(a.failed, b.failed)
            c.wait_log(rf"nvlblock: recovery JobId={a.job} reclaiming 1 spare node on {a.rack}: "
                       rf"preempting JobId={scav_a} \(Slurm's preemption\) ", 20)
            c.wait_log(rf"nvlblock: recovery JobId={b.job}: nothing reclaimed: not enough work there may "
                       r"lose its nodes \(jobs there: 1 not_allowed, 1 exempt\)", 20)

            # A: the scavenger job requeued by Slurm's preemption, the slice
            # job in place on that spare.
            new_a = c.wait_restarted(a.job, REQUEUE_DELAY + 30)
            self.assertEqual(set(new_a), (set(a.nodes) - {a.failed}) | {a.spares[0]})
            c.wait_log(rf"nvlblock: recovery JobId={a.job} restarted in place on {a.rack}: "
                       rf"15 prior nodes \+ 1 spares \({a.spares[0]}\)", 10)
            c.wait_log(rf"preempted JobId={scav_a} has been requeued to reclaim resources for JobId={a.job}", 5)
            j = c.job(scav_a)
            self.assertEqual((j["JobState"], int(j["Restarts"])), ("PENDING", 1), j)
            reason = f"nvlblock: requeued by Slurm's preemption for the in-place restart of JobId={a.job} on {a.rack}"
            self.assertEqual(self.system_comment(c, scav_a), reason)

            # B: the exempt scavenger job kept its node; after the hold the
            # slice job restarted on the empty rack, before the exemption ended.
            new_b = c.wait_restarted(b.job, HOLD + 40)
            self.assertOnRack(new_b, empty)
            self.assertLess(job_time(c.job(b.job)["StartTime"]), exempt_until,
                            f"job {b.job} restarted after job {scav_b}'s PreemptExemptTime ended: the test "
                            "did not see an exempt job")
            c.wait_log(rf"nvlblock: recovery JobId={b.job} restarted elsewhere on {empty} \(had {b.rack}\)", 10)
            untouched[scav_b] = [b.spares[0]]
            self.assertEqual(self.system_comment(c, scav_b), "")

            # sacct: the preempted run of the scavenger job says why.
            rows = self.wait_sacct(c, scav_a, lambda rows: any(r["State"] == "PREEMPTED" for r in rows),
                                   "with a PREEMPTED run")
            log("sacct after the reclaim (docs/admin.md 4.1 shows it):\n" + c.run(
                "sacct", "-D", "-X", "-j", f"{a.job},{scav_a}", "-o",
                "JobID,QOS,State,NodeList%28,FailedNode,AdminComment%90").stdout)
            preempted = [r for r in rows if r["State"] == "PREEMPTED"]
            self.assertEqual(len(preempted), 1, rows)
            self.assertEqual(c.expand(preempted[0]["NodeList"]), [a.spares[0]], rows)
            self.assertEqual(preempted[0]["QOS"], "scavenger", rows)
            self.assertEqual(preempted[0]["AdminComment"], reason,
                             f"sacct -o AdminComment of job {scav_a}'s preempted run: {rows}")
            self.assertRestartedInPlaceInSacct(c, a, new_a)
            self.assertEqual(c.expand(self.sacct(c, a.job)[0]["FailedNode"]), [a.failed])
            self.assertUntouched(c, untouched)
            self.assertEqual(c.log_lines(r"preempted JobId=(?!%d )" % scav_a), [])
            self.assertEqual(len(c.log_lines(r"nvlblock: recovery JobId=\d+ reclaiming")), 1)

    def test_topology_block_preempts_nothing(self):
        # The same Slurm setup (slurmdbd, preempt/qos, the scavenger QOS
        # past its exemption), topology/block: the slice job restarts on the
        # other rack, the scavenger job runs on.
        with accounting_cluster("acct-block", 2, plugin="block") as c:
            job = c.sbatch("-N16", "--requeue", "-J", "slice")
            nodes = c.wait_running(job, 60)
            rack = rack_name_of(nodes[0])
            self.assertOnRack(nodes, rack)
            spares = sorted(set(rack_nodes(rack)) - set(nodes))
            scav = c.sbatch("-N1", "--requeue", "--qos=scavenger", "-J", "scavenger", "-w", spares[0])
            ordinary = c.sbatch("-N1", "--requeue", "-J", "ordinary", "-w", spares[1])
            untouched = {scav: c.wait_running(scav), ordinary: c.wait_running(ordinary)}
            started = job_time(c.job(scav)["StartTime"])
            c.wait_for(lambda: time.time() >= started + EXEMPT + 2, EXEMPT + 30,
                       f"job {scav} to run past its PreemptExemptTime")
            c.set_down(nodes[5])
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertNotIn(rack, {rack_name_of(n) for n in new}, f"block restarted {job} on {rack}: {new}")
            rows = self.wait_sacct(c, job, lambda rows: len(rows) == 2 and rows[1]["State"] == "RUNNING",
                                   "with two runs, the second running")
            self.assertEqual(c.expand(rows[1]["NodeList"]), sorted(new), rows)
            self.assertUntouched(c, untouched)
            self.assertEqual(c.log_lines(r"preempted JobId="), [])


if __name__ == "__main__":
    main()
