# SPDX-License-Identifier: GPL-2.0-or-later
"""The test clusters' Slurm timers are stated once (timers.py): nvlcluster's
slurm.conf uses them, and the Docker cluster's static slurm.conf repeats
them."""
import os
import re
import unittest

from nvlblock_cluster import timers
from nvlblock_cluster.common import REPO


def conf_values(path):
    values = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^\s*([A-Za-z]+)\s*=\s*(\S+)", line)
            if m:
                values[m.group(1).lower()] = m.group(2)
    return values


class TimersTest(unittest.TestCase):
    def test_docker_cluster_repeats_them(self):
        v = conf_values(os.path.join(REPO, "docker", "etc", "slurm.conf"))
        self.assertEqual(v["authinfo"], f"cred_expire={timers.CRED_EXPIRE}")
        self.assertEqual(v["schedulerparameters"],
                         f"sched_interval={timers.SCHED_INTERVAL},bf_interval={timers.BF_INTERVAL}")
        self.assertEqual(v["slurmdtimeout"], str(timers.SLURMD_TIMEOUT))
        self.assertEqual(v["killwait"], str(timers.KILL_WAIT))

    def test_requeue_delay_follows_cred_expire(self):
        self.assertEqual(timers.REQUEUE_DELAY, timers.CRED_EXPIRE + 1)


if __name__ == "__main__":
    unittest.main()
