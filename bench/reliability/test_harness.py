#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The reliability sampler (bench/reliability/harness.py) compares
nvlblock's accounting only where nothing moved while it read it, and
reports a mismatch where nothing did; its count of restarts in place on
failed nodes sets apart nodes slurmctld itself returned to service. Driven
by scripted command outputs and log lines; no cluster, standard library
only."""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

NODES = ["gb0001", "gb0002", "gb0003", "gb0004"]


def nodes_out(busy):
    return "".join(f"NodeName={n} Arch=x86_64 State={'ALLOCATED' if n in busy else 'IDLE'} Partitions=gpu\n"
                   for n in NODES)


def topo_out(free, busy):
    return (f"BlockName=rack01 Nodes=gb[0001-0004] Spares=0 Reserve=reclaim Health=ok Failed=0 Free={free} "
            f"Busy={busy} Lent=0 SparesUsed=0 SparesFree=0 SparesLent=0 Held=0\n")


class Scripted:
    """A cluster whose commands answer from a script, in call order."""

    def __init__(self, answers):
        self.answers = list(answers)

    def run(self, *argv, check=False, timeout=30):
        if argv[:2] == ("scontrol", "ping"):
            return subprocess.CompletedProcess(argv, 0, "Slurmctld(primary) at x is UP\n", "")
        want, out = self.answers.pop(0)
        assert argv[:len(want)] == want, (argv, want)
        return subprocess.CompletedProcess(argv, 0, out, "")

    def ctld_pid(self):
        return os.getpid()


def one_sample(squeue_before, topo, squeue_after):
    """sample() over two busy nodes read the same on both sides."""
    nodes = nodes_out({"gb0001", "gb0002"})
    c = Scripted([(("squeue",), squeue_before), (("scontrol", "show", "nodes"), nodes),
                  (("scontrol", "show", "topology"), topo), (("squeue",), squeue_after),
                  (("scontrol", "show", "nodes"), nodes)])
    s = harness.Sampler(c)
    s.sample()
    assert not c.answers, "sample() read less than scripted"
    return s


class AccountingSample(unittest.TestCase):
    def test_a_mismatch_with_nothing_moving_is_reported(self):
        q = "7|RUNNING|gb[0001-0002]|2\n"
        s = one_sample(q, topo_out(free=4, busy=0), q)
        self.assertEqual(s.accounting_samples, 1)
        self.assertEqual(s.accounting_mismatches, 1, s.violations)

    def test_equal_accounting_is_not_a_violation(self):
        q = "7|RUNNING|gb[0001-0002]|2\n"
        s = one_sample(q, topo_out(free=2, busy=2), q)
        self.assertEqual((s.accounting_samples, s.violations), (1, []))

    def test_a_turnover_between_the_reads_is_not_compared(self):
        # Job 7 ended and queued job 8 started on its nodes between the two
        # node reads: both read ALLOCATED, the topology may have seen them
        # free in between (CI, stop 44: a false accounting violation).
        s = one_sample("7|RUNNING|gb[0001-0002]|2\n", topo_out(free=4, busy=0), "8|RUNNING|gb[0001-0002]|2\n")
        self.assertEqual((s.accounting_samples, s.accounting_skipped, s.violations), (0, 1, []))


# slurmctld's lines of CI's storm with slurmctld killed (stop 60, run 1):
# gb0002's slurmd was stopped, slurmctld set it DOWN and, on a loaded host,
# returned it to service 3 ms later; job 1 then restarted on it in place.
FAILED = ("[2026-12-07T21:07:50.000] nvlblock: recovery JobId=1 lost 3 of 16 nodes (gb[0002,0009,0016]) on "
          "rack01; holding rack01 for an in-place restart (13 prior nodes + 3 spares), fallback after 60 s")
REVIVED = "[2026-12-07T21:07:50.003] node_did_resp: node gb0002 returned to service"
RESTARTED = ("[2026-12-07T21:08:37.482] nvlblock: recovery JobId=1 restarted in place on rack01: 14 prior nodes "
             "+ 2 spares (gb[0017-0018]) 47 s after the failure")
REPAIRED = 1e12  # the storm's repair came after every line


class RestartsOnFailedNodes(unittest.TestCase):
    def counts(self, lines):
        r = harness.tally_recoveries(lines, repaired_at=REPAIRED)
        return r["in_place"], r["in_place_on_failed_nodes"], r["in_place_on_revived_nodes"]

    def test_a_restart_on_more_prior_nodes_than_the_failure_left_is_counted(self):
        self.assertEqual(self.counts([FAILED, RESTARTED]), (1, 1, 0))

    def test_one_slurmctld_returned_to_service_is_counted_apart(self):
        self.assertEqual(self.counts([FAILED, REVIVED, RESTARTED]), (1, 0, 1))

    def test_a_node_returned_to_service_before_the_failure_explains_nothing(self):
        before = REVIVED.replace("21:07:50.003", "21:07:40.000")
        self.assertEqual(self.counts([before, FAILED, RESTARTED]), (1, 1, 0))

    def test_a_revived_node_explains_one_extra_prior_node_not_two(self):
        fifteen = RESTARTED.replace("14 prior nodes + 2 spares", "15 prior nodes + 1 spares")
        self.assertEqual(self.counts([FAILED, REVIVED, fifteen]), (1, 1, 0))


if __name__ == "__main__":
    unittest.main()
