# SPDX-License-Identifier: GPL-2.0-or-later
import os
import unittest
from unittest import mock

from nvlblock_cluster.client import CommandError, env_from_exports, parse_exports, parse_kv
from nvlblock_cluster.daemons import export_lines, summarize
from nvlblock_cluster.layout import Layout


class ExportsTest(unittest.TestCase):
    def test_round_trip_through_export_lines(self):
        layout = Layout("/tmp/some cluster")
        text = export_lines(layout, "/opt/slurm")
        self.assertEqual(parse_exports(text), ("/tmp/some cluster/etc/slurm.conf", "/opt/slurm/bin:/opt/slurm/sbin"))

    def test_env_drops_the_callers_slurm_variables(self):
        text = "export SLURM_CONF=/c/etc/slurm.conf\nexport PATH=/p/bin:/p/sbin:$PATH\n"
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("NVLCLUSTER_PRELOAD", None)
            env = env_from_exports(text, base={"PATH": "/usr/bin", "SLURM_JOB_ID": "7", "HOME": "/root"})
        self.assertEqual(env, {"PATH": "/p/bin:/p/sbin:/usr/bin", "SLURM_CONF": "/c/etc/slurm.conf",
                               "HOME": "/root"})

    def test_no_slurm_conf_is_an_error(self):
        with self.assertRaises(CommandError):
            parse_exports("nvlcluster: start failed\n")


class ParseTest(unittest.TestCase):
    def test_values_may_hold_blanks(self):
        line = "JobId=12 JobName=wrap Reason=nvlblock: no rack has 16 free nodes NodeList=gb[0001-0002]"
        self.assertEqual(parse_kv(line), {"JobId": "12", "JobName": "wrap",
                                          "Reason": "nvlblock: no rack has 16 free nodes",
                                          "NodeList": "gb[0001-0002]"})

    def test_a_field_named_in_free_text_keeps_the_first(self):
        # A reclaim victim's comment names the job it was requeued for
        # (plugin/topology/reclaim.c): read as a field, it made job 16's
        # line job 21's, and the soak reported job 16 lost.
        line = ("JobId=16 JobName=wrap JobState=COMPLETED SystemComment=nvlblock: requeued for the in-place "
                "restart of JobId=21 on rack04 NodeList=gb[0007-0009]")
        self.assertEqual(parse_kv(line), {"JobId": "16", "JobName": "wrap", "JobState": "COMPLETED",
                                          "SystemComment": "nvlblock: requeued for the in-place restart of "
                                                           "JobId=21 on rack04",
                                          "NodeList": "gb[0007-0009]"})

    def test_summarize_counts_states(self):
        self.assertEqual(summarize(["idle", "down*", "idle"]), "1 down*, 2 idle")
        self.assertEqual(summarize([]), "no nodes")


if __name__ == "__main__":
    unittest.main()
