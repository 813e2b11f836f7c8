#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The reliability sampler (bench/reliability/harness.py) compares
nvlblock's accounting only where nothing moved while it read it, and
reports a mismatch where nothing did. Driven by scripted command outputs
in the order sample() reads them; no cluster, standard library only."""

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


if __name__ == "__main__":
    unittest.main()
