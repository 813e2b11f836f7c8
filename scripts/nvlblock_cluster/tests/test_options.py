# SPDX-License-Identifier: GPL-2.0-or-later
import unittest

from nvlblock_cluster.common import ClusterError
from nvlblock_cluster.options import validate_up_opts
from nvlblock_cluster.tests.test_slurmconf import up_opts


class UpOptionsTest(unittest.TestCase):
    def refused(self, message, **kw):
        with self.assertRaisesRegex(ClusterError, message):
            validate_up_opts(up_opts(dir="/tmp/c", plugin_dir=None, **kw))

    def test_valid_options_pass_and_set_no_fragment_nodes(self):
        opts = up_opts(dir="/tmp/c", plugin_dir=None)
        validate_up_opts(opts)
        self.assertIsNone(opts.nodes)

    def test_a_front_end_cluster_may_preempt_by_partition(self):
        # bench/reliability/run scale --scale-lend: lent work on 18,432 nodes.
        validate_up_opts(up_opts(dir="/tmp/c", plugin_dir=None, front_end=True, preempt_partition=True))

    def test_refusals_name_the_flag(self):
        self.refused("--racks is required", racks=None)
        self.refused("--slice must be between 1 and --nodes-per-rack", slice=19)
        self.refused("--spares applies to --plugin nvlblock only", plugin="block", spares=1)
        self.refused("--spares sets nvlblock.yaml", topology_conf=True, spares=1)
        self.refused("--lend-grace-time sets the GraceTime of --preempt-partition", lend_grace_time=10)
        self.refused("--lend-grace-time must not be negative", preempt_partition=True, lend_grace_time=-1)
        self.refused("--block-fault must be a fraction", block_fault=1.5)
        self.refused("--slurm-conf-fragment and --topology go together", topology="/x.conf")
        with self.assertRaisesRegex(ClusterError, "must not contain blanks"):
            validate_up_opts(up_opts(dir="/tmp/a b", plugin_dir=None))


if __name__ == "__main__":
    unittest.main()
