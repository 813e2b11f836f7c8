#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The soak's invariants fire (bench/soak/checker.py): each kind of
violation injected into a sequence of samples as the soak's sampler would
feed them is reported, with its evidence, and the same sequence without the
fault is not. A checker that cannot fail would make the soak's
"0 violations" worthless. Standard library only; no cluster."""

import os
import sys
import unittest
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402

T0 = 1_800_000_000.0


def stamp(t):
    """slurmctld's log time stamp of epoch t (local time)."""
    from datetime import datetime
    return "[" + datetime.fromtimestamp(t).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "]"


def lost_line(t, job, wait=60):
    return (f"{stamp(t)} nvlblock: recovery JobId={job} lost 1 of 6 nodes (gb0003) on rack01; holding rack01 "
            f"for an in-place restart (5 prior nodes + 1 spares), fallback after {wait} s")


def status(t, pending=()):
    return {"generated_at": int(t), "recoveries": {"pending": list(pending)}}


class Checker(unittest.TestCase):

    def kinds(self, ck):
        return [v["kind"] for v in ck.violations]

    def test_a_clean_run_has_no_violation(self):
        ck = checker.Checker()
        ck.track(1, {"requeue": True})
        ck.track(2, {"requeue": False})
        for i in range(40):
            t = T0 + 2 * i
            ck.ctld(t, True, True)
            state1 = "RUNNING" if i < 10 else ("PENDING" if i < 15 else ("RUNNING" if i < 25 else "COMPLETED"))
            nodes1 = ["gb0001", "gb0002"] if state1 == "RUNNING" else []
            ck.queue(t, {1: (state1, nodes1), 2: ("RUNNING" if i < 20 else "COMPLETED", ["gb0003"])})
            ck.processes(t, {1: {(1 if i >= 15 else 0, "gb0001")}} if state1 == "RUNNING" else {})
            ck.status(t, status(t), t - 1)
            ck.overdue(t)
        ck.log([lost_line(T0 + 20, 1), f"{stamp(T0 + 50)} nvlblock: recovery JobId=1 restarted in place on rack01: "
                "5 prior nodes + 1 spares (gb0007) 30 s after the failure"])
        ends = ck.finish(T0 + 100, {1: ("COMPLETED", ""), 2: ("COMPLETED", "")})
        self.assertEqual(ck.violations, [])
        self.assertEqual(ends, {"COMPLETED": 2})
        self.assertEqual(ck.recoveries["in_place"], 1)

    def test_a_node_in_two_running_jobs(self):
        ck = checker.Checker()
        ck.queue(T0, {1: ("RUNNING", ["gb0001", "gb0002"]), 2: ("RUNNING", ["gb0002"]), 3: ("PENDING", [])})
        self.assertEqual(self.kinds(ck), ["double"])
        self.assertIn("gb0002", ck.violations[0]["text"])
        # A pending job's (empty or stale) list does not count.
        ck2 = checker.Checker()
        ck2.queue(T0, {1: ("RUNNING", ["gb0001"]), 2: ("COMPLETING", ["gb0001"])})
        self.assertEqual(ck2.violations, [])

    def test_a_job_gone_from_the_list_is_lost(self):
        ck = checker.Checker()
        ck.track(7, {"requeue": True})
        ck.queue(T0, {7: ("RUNNING", ["gb0001"])})
        ck.queue(T0 + 2, {})
        self.assertEqual(ck.violations, [], "one missing listing is not yet a loss")
        ck.queue(T0 + 4, {})
        self.assertEqual(self.kinds(ck), ["lost"])
        self.assertIn("last seen RUNNING", ck.violations[0]["evidence"][0])

    def test_missing_while_slurmctld_restarts_is_not_lost(self):
        ck = checker.Checker()
        ck.track(7, {"requeue": True})
        ck.queue(T0, {7: ("RUNNING", ["gb0001"])})
        ck.pause(T0 + 1)
        ck.queue(T0 + 2, {})
        ck.queue(T0 + 4, {})
        ck.resume(T0 + 5)
        ck.queue(T0 + 6, {7: ("PENDING", [])})
        self.assertEqual(ck.violations, [])

    def test_a_job_running_twice(self):
        ck = checker.Checker()
        two = {3: {(0, "gb0001"), (1, "gb0009")}}
        for i in range(10):
            ck.processes(T0 + 5 * i, two if i < 3 else {3: {(1, "gb0009")}})
        self.assertEqual(ck.violations, [], "an old run being killed for 10 s is not running twice")
        for i in range(10):
            ck.processes(T0 + 100 + 5 * i, two)
        self.assertEqual(self.kinds(ck), ["run_twice"])
        self.assertEqual(ck.summary()["most_batch_scripts_seen_at_once"], 2)

    def test_unexplained_ends(self):
        ck = checker.Checker()
        for j, spec in {1: {"requeue": True}, 2: {"requeue": False}, 3: {"requeue": False},
                        4: {"requeue": True, "preemptible": True}, 5: {"requeue": True}, 6: {"requeue": True},
                        7: {"requeue": False}, 8: {"requeue": True}}.items():
            ck.track(j, spec)
        ck.chaos(2, "gpu")
        ck.chaos(5, "cancel")
        ck.chaos(6, "gpu")
        final = {1: ("TIMEOUT", ""), 2: ("FAILED", ""), 3: ("NODE_FAIL", ""), 4: ("PREEMPTED", ""),
                 5: ("CANCELLED", ""), 6: ("FAILED", ""), 7: ("COMPLETED", ""), 8: ("PENDING", "Reason=Priority")}
        ck.finish(T0, final)
        bad = sorted(int(v["text"].split()[1]) for v in ck.violations)
        # 1 timed out; 3 failed with no fault of the soak; 6 is requeueable:
        # a GPU fault must requeue it; 8 never ended. 2, 4, 5, 7 are explained.
        self.assertEqual(bad, [1, 3, 6, 8])
        self.assertEqual(set(self.kinds(ck)), {"ended"})

    def test_a_node_slurm_sets_down_itself_explains_a_no_requeue_job_on_it(self):
        # Soak, 2-hour run: slurmctld, restarted twice in a minute on a loaded
        # host, set live nodes DOWN as not responding; a --no-requeue job on
        # one ended NODE_FAIL. Slurm's decision, counted apart.
        ck = checker.Checker(expand_hostlist=lambda e: {"gb[0030,0032]": ["gb0030", "gb0032"]}.get(e, [e]))
        for j in (1, 2, 3):
            ck.track(j, {"requeue": False})
        ck.queue(T0, {3: ("RUNNING", ["gb0032"])})
        ck.queue(T0 + 90, {1: ("RUNNING", ["gb0030"]), 2: ("RUNNING", ["gb0001"]), 3: ("PENDING", [])})
        at = datetime.fromtimestamp(T0 + 100).strftime("%Y-%m-%dT%H:%M:%S")
        ck.log([f"[{at}] Nodes gb[0030,0032] not responding, setting DOWN"])
        ck.finish(T0 + 200, {1: ("NODE_FAIL", ""), 2: ("NODE_FAIL", ""), 3: ("NODE_FAIL", "")})
        # 3 was last seen there 100 s before: another job's node by then.
        self.assertEqual(sorted(int(v["text"].split()[1]) for v in ck.violations), [2, 3])
        self.assertEqual(ck.summary()["jobs_on_nodes_slurm_set_down"], [1])
        ck.chaos(1, "node")  # the soak's own kill: not listed apart
        self.assertEqual(ck.summary()["jobs_on_nodes_slurm_set_down"], [])
        # Without the line, nothing explains it.
        ck2 = checker.Checker()
        ck2.track(1, {"requeue": False})
        ck2.queue(T0 + 90, {1: ("RUNNING", ["gb0030"])})
        ck2.finish(T0 + 200, {1: ("NODE_FAIL", "")})
        self.assertEqual(self.kinds(ck2), ["ended"])

    def test_a_start_slurmctld_lost_to_its_kill_explains_a_failed_end(self):
        # Soak CI seed on a loaded host: slurmctld SIGKILLed 2-4 s after a
        # requeueable job restarted, before its state save held the start;
        # back, it recovered the job PENDING, aborted the run it found on a
        # node, and the job ended FAILED. Slurm lost the start, counted apart.
        ck = checker.Checker()
        for j in (22, 23):
            ck.track(j, {"requeue": True})
        at = datetime.fromtimestamp(T0 + 30).strftime("%Y-%m-%dT%H:%M:%S")
        ck.log([f"[{at}] error: Registered PENDING JobId=22 StepId=22.batch on node gb0019"])
        ck.finish(T0 + 200, {22: ("FAILED", ""), 23: ("FAILED", "")})
        self.assertEqual(sorted(int(v["text"].split()[1]) for v in ck.violations), [23])
        self.assertEqual(ck.summary()["jobs_whose_start_slurm_lost"], [22])

    def test_a_script_slurmd_purged_explains_a_failed_end(self):
        # Soak CI (stop 60, run 1): gb0035's slurmd took a refused connection
        # to job 2's batch step, not yet listening, for a stray step and
        # deleted its script; the script's execve failed, exit 2. Slurm lost
        # the run, counted apart; the same end without the line is a violation.
        ck = checker.Checker()
        for j in (2, 3):
            ck.track(j, {"requeue": True})
        ck.slurmd_log(["[2026-12-07T21:02:11.514] _handle_stray_script: Purging vestigial job script "
                       "/tmp/nvlt-soak-ci-x/spool/gb0035/job00002/slurm_script"])
        ck.finish(T0 + 200, {2: ("FAILED", ""), 3: ("FAILED", "")})
        self.assertEqual(sorted(int(v["text"].split()[1]) for v in ck.violations), [3])
        self.assertEqual(ck.summary()["jobs_whose_script_slurmd_purged"], [2])

    def test_a_job_never_listed_at_the_end_is_lost(self):
        ck = checker.Checker()
        ck.track(9, {"requeue": True})
        ck.finish(T0, {})
        self.assertEqual(self.kinds(ck), ["lost"])

    def test_a_recovery_decided_late_or_never(self):
        ck = checker.Checker()
        ck.log([lost_line(T0, 11, wait=60), lost_line(T0, 12, wait=60), lost_line(T0, 13, wait=60)])
        ck.log([f"{stamp(T0 + 61)} nvlblock: recovery JobId=11 fallback after 61 s: rack01 has room for 5 of "
                "the 6 nodes it needs; placing it anywhere (had rack01)",
                f"{stamp(T0 + 200)} nvlblock: recovery JobId=12 fallback after 200 s: rack01 is down"])
        self.assertEqual(self.kinds(ck), ["recovery"])
        self.assertIn("job 12", ck.violations[0]["text"])
        ck.overdue(T0 + 70)
        self.assertEqual(len(ck.violations), 1, "13 is still within 60 + slack")
        ck.overdue(T0 + 60 + checker.DECISION_SLACK_S + 1)
        self.assertEqual(self.kinds(ck), ["recovery", "recovery"])
        self.assertIn("job 13", ck.violations[1]["text"])

    def test_slurmctld_down_time_extends_a_recovery_bound(self):
        ck = checker.Checker()
        ck.log([lost_line(T0, 21, wait=60)])
        ck.pause(T0 + 10)
        ck.resume(T0 + 40)  # 30 s down, then SETTLE_S to settle
        ck.overdue(T0 + 60 + checker.DECISION_SLACK_S + 30)
        self.assertEqual(ck.violations, [])
        ck.overdue(T0 + 60 + checker.DECISION_SLACK_S + 30 + checker.SETTLE_S + 1)
        self.assertEqual(self.kinds(ck), ["recovery"])

    def test_a_status_record_past_its_fallback_time(self):
        ck = checker.Checker()
        rec = {"job_id": 5, "failed_at": int(T0), "fallback_at": int(T0 + 60), "fallback": False}
        ck.status(T0 + 70, status(T0 + 70, [rec]), T0 + 70)
        self.assertEqual(ck.violations, [])
        t = T0 + 60 + checker.DECISION_SLACK_S + 2
        ck.status(t, status(t, [rec]), t)
        self.assertEqual(self.kinds(ck), ["recovery"])
        ck2 = checker.Checker()
        ck2.status(t, status(t, [dict(rec, fallback=True)]), t)
        self.assertEqual(ck2.violations, [], "a record that fell back waits for any nodes, without a bound")

    def test_frozen_status_files(self):
        ck = checker.Checker()
        ck.status(T0, status(T0 - 5), T0 - 5)
        self.assertEqual(ck.violations, [])
        ck.status(T0 + 60, status(T0 - 5), T0 + 59)
        self.assertEqual(self.kinds(ck), ["frozen"])
        self.assertIn("JSON", ck.violations[0]["text"])
        ck.status(T0 + 60, status(T0 + 59), T0 - 5)
        self.assertEqual(self.kinds(ck), ["frozen", "frozen"])
        self.assertIn("Prometheus", ck.violations[1]["text"])

    def test_frozen_files_are_not_judged_while_slurmctld_restarts(self):
        ck = checker.Checker()
        ck.pause(T0)
        ck.status(T0 + 60, None, None)
        ck.resume(T0 + 61)
        ck.status(T0 + 62, None, None)
        self.assertEqual(ck.violations, [])
        ck.status(T0 + 61 + checker.SETTLE_S + 1, None, None)
        self.assertEqual(self.kinds(ck), ["frozen", "frozen"])

    def test_slurmctld_dies_or_hangs(self):
        ck = checker.Checker()
        ck.pause(T0)
        ck.ctld(T0 + 1, False, False)
        ck.resume(T0 + 2)
        self.assertEqual(ck.violations, [], "a kill the soak made is not a death")
        ck.ctld(T0 + 3, False, False, ["last log line"])
        self.assertEqual(self.kinds(ck), ["slurmctld"])
        self.assertEqual(ck.violations[0]["evidence"], ["last log line"])
        ck2 = checker.Checker()
        for i in range(40):
            ck2.ctld(T0 + 2 * i, True, False)
        self.assertEqual(self.kinds(ck2), ["slurmctld"])
        self.assertIn("not answered", ck2.violations[0]["text"])

    def test_crash_signatures_in_the_log(self):
        ck = checker.Checker()
        ck.log([f"{stamp(T0)} Resuming operation, reconfigure failed.",
                f"{stamp(T0)} error: Could not open job state file"])
        self.assertEqual(ck.violations, [])
        ck.log([f"{stamp(T0)} fatal: something broke", "slurmctld: plugin.c:12: f: Assertion `x' failed."],
               source="slurmctld.stderr")
        self.assertEqual(self.kinds(ck), ["slurmctld", "slurmctld"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
