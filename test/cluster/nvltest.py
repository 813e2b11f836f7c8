# SPDX-License-Identifier: GPL-2.0-or-later
"""nvltest: the test side of the integration tests on a real local Slurm
cluster started with scripts/nvlcluster (Python 3 standard library only).

    with Cluster("spares", racks=3, flags=["--recovery-wait", "15"]) as c:
        job = c.sbatch("-N16", "--requeue")
        nodes = c.wait_running(job)
        c.set_down(nodes[4])
        ...

Cluster is nvlblock_cluster.scratch.ScratchCluster (a fresh directory and
port block per cluster, logs kept on failure; the benches use it too); this
module adds what only tests need: the ClusterTest base class, Prometheus
file reading and main(), and re-exports the names the tests import.

Node and rack names follow nvlcluster: gb0001.., 18 nodes per rack by
default, rack01 holds gb0001-gb0018; --extra-nodes servers are cpu01...
"""

import os
import sys
import time
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster import timers  # noqa: E402
from nvlblock_cluster.client import CommandError, parse_kv  # noqa: E402,F401
from nvlblock_cluster.naming import rack_counts, rack_name_of, rack_nodes  # noqa: E402,F401
from nvlblock_cluster.scratch import ScratchCluster as Cluster, log  # noqa: E402,F401

# A requeued job may not start before cred_expire + 1 s; then a scheduling
# pass must reach it (nvlblock_cluster/timers.py, where every timer is set).
REQUEUE_DELAY = timers.REQUEUE_DELAY
SCHED_INTERVAL = timers.SCHED_INTERVAL
# Under reclaim a failed job waits only the hold delay for its rack, counted
# from its end: KillWait (its nodes may complete that long before Slurm
# requeues it) + cred_expire + 1 (the plugin's requeue delay), plus the 30 s
# scheduling slack (src/recovery/rules.hpp).
HOLD_DELAY = timers.KILL_WAIT + REQUEUE_DELAY + 30


def read_prometheus(path):
    """{'name{labels}': value} of a Prometheus text file; {} while it is missing."""
    metrics = {}
    try:
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    name, value = line.rsplit(" ", 1)
                    metrics[name] = float(value)
    except FileNotFoundError:
        pass
    return metrics


HEALTH_METRIC = {"healthy": 0, "degraded": 1, "down": 2}


def job_time(value):
    """Seconds since the epoch of a time scontrol shows (StartTime=2026-12-02T17:03:49)."""
    return time.mktime(time.strptime(value, "%Y-%m-%dT%H:%M:%S"))


class Rack:
    """A 16-node slice job submitted now (`sbatch -N16 --requeue`), the rack
    it runs on, that rack's two other nodes (spares) and the node the tests
    fail (its sixth)."""

    def __init__(self, c, test, taken=()):
        self.job = c.sbatch("-N16", "--requeue", "-J", "slice")
        self.nodes = c.wait_running(self.job, 60)
        self.rack = rack_name_of(self.nodes[0])
        test.assertOnRack(self.nodes, self.rack)
        test.assertNotIn(self.rack, taken, f"slice job {self.job} on a rack already used")
        self.spares = sorted(set(rack_nodes(self.rack)) - set(self.nodes))
        self.failed = self.nodes[5]


class ClusterTest(unittest.TestCase):
    """Base class: prints each test's duration; maxDiff off."""

    maxDiff = None

    def setUp(self):
        self._t0 = time.monotonic()
        log(f"--- {self.id()}")

    def tearDown(self):
        log(f"--- {self.id()} took {time.monotonic() - self._t0:.1f} s")

    def assertMetricsMatchTopology(self, metrics, blocks):
        """The per-block Prometheus metrics say what `scontrol show topology` says."""
        for b in blocks:
            label = '{block="%s"}' % b["BlockName"]
            for metric, field in (("nvlblock_block_nodes", "BlockSize"), ("nvlblock_block_spares", "Spares"),
                                  ("nvlblock_block_spares_free", "SparesFree"),
                                  ("nvlblock_block_spares_used", "SparesUsed"),
                                  ("nvlblock_block_failed_nodes", "Failed")):
                self.assertEqual(metrics[metric + label], float(b[field]), metric + label)
            self.assertEqual(metrics["nvlblock_block_health" + label], HEALTH_METRIC[b["Health"]], label)

    def assertOnRack(self, nodes, rack, msg=None):
        self.assertEqual(rack_counts(nodes), {rack: len(nodes)}, msg or f"{nodes} not all on {rack}")


def main():
    unittest.main(verbosity=2)
