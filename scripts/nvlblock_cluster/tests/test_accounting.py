# SPDX-License-Identifier: GPL-2.0-or-later
"""up --accounting's pure parts: ports, slurm.conf and slurmdbd.conf lines,
the config.h comparison, the option check."""
import os
import tempfile
import unittest

from nvlblock_cluster.accounting import config_h_differences, slurmdbd_conf
from nvlblock_cluster.common import ClusterError
from nvlblock_cluster.layout import Layout
from nvlblock_cluster.options import validate_up_opts
from nvlblock_cluster.ports import accounting_ports
from nvlblock_cluster.slurmconf import slurm_conf
from nvlblock_cluster.tests.test_slurmconf import up_opts


class AccountingTest(unittest.TestCase):
    layout = Layout("/c")

    def test_slurmdbd_and_mariadb_follow_the_slurmd_ports(self):
        # 2 racks of 18 and 2 servers: slurmd on 17001-17038.
        self.assertEqual(accounting_ports(17000, 38), (17039, 17040))
        conf = slurm_conf(self.layout, up_opts(accounting=True, extra_nodes=2), "/opt/slurm", None)
        self.assertIn("AccountingStorageType=accounting_storage/slurmdbd", conf)
        self.assertIn("AccountingStoragePort=17039", conf)
        self.assertIn("AccountingStorageEnforce=associations,limits,qos", conf)
        self.assertIn("AccountingStorageTRES=gres/gpu", conf)
        without = slurm_conf(self.layout, up_opts(), "/opt/slurm", None)
        self.assertFalse([line for line in without if line.startswith("Accounting")])

    def test_extra_conf_replaces_accounting_lines(self):
        conf = slurm_conf(self.layout, up_opts(accounting=True, extra_conf=["AccountingStorageEnforce=qos"]),
                          "/opt/slurm", None)
        self.assertEqual([line for line in conf if line.startswith("AccountingStorageEnforce")],
                         ["AccountingStorageEnforce=qos"])

    def test_slurmdbd_conf_uses_the_clusters_own_mariadb_over_tcp(self):
        text = slurmdbd_conf(self.layout, "/opt/slurm", 17039, 17040).splitlines()
        for line in ("DbdPort=17039", "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1",
                     "StoragePort=17040", "LogFile=/c/log/slurmdbd.log", "PluginDir=/opt/slurm/lib/slurm"):
            self.assertIn(line, text)

    def test_config_h_may_differ_in_have_mysql_and_the_prefix_only(self):
        with tempfile.TemporaryDirectory() as d:
            for name, body in (("a", "#define HAVE_X 1\n/* #undef HAVE_MYSQL */\n#define SLURM_PREFIX \"/a\"\n"),
                               ("b", "#define HAVE_X 1\n#define HAVE_MYSQL 1\n#define SLURM_PREFIX \"/b\"\n"),
                               ("c", "#define HAVE_X 1\n#define HAVE_FRONT_END 1\n")):
                os.makedirs(os.path.join(d, name))
                with open(os.path.join(d, name, "config.h"), "w") as f:
                    f.write(body)
            self.assertEqual(config_h_differences(os.path.join(d, "a"), os.path.join(d, "b")), [])
            self.assertEqual(config_h_differences(os.path.join(d, "a"), os.path.join(d, "c")),
                             ["#define HAVE_FRONT_END 1"])
            # A name that merely starts like one of them still counts.
            with open(os.path.join(d, "c", "config.h"), "a") as f:
                f.write("#define HAVE_MYSQLX 1\n")
            self.assertIn("#define HAVE_MYSQLX 1",
                          config_h_differences(os.path.join(d, "a"), os.path.join(d, "c")))

    def test_not_with_front_end(self):
        with self.assertRaisesRegex(ClusterError, "--accounting is not supported with --front-end"):
            validate_up_opts(up_opts(dir="/tmp/c", plugin_dir=None, accounting=True, front_end=True))


if __name__ == "__main__":
    unittest.main()
