# SPDX-License-Identifier: GPL-2.0-or-later
import os
import tempfile
import unittest

from nvlblock_cluster.ctest_log import MAX_REASONS, digest, outputs, reasons

# The shape of ctest's Testing/Temporary/LastTest.log (ctest 3.25).
LOG = """Start testing: Dec 02 01:48 UTC
----------------------------------------------------------
3/5 Testing: cluster.reliability
3/5 Test: cluster.reliability
Command: "python3" "test_reliability.py"
Directory: /b
"cluster.reliability" start time: Dec 02 01:48 UTC
Output:
----------------------------------------------------------
[nvltest 01:20:03] kill: SIGKILL slurmctld mid-storm
[nvltest 01:20:03] VIOLATION accounting: rack01: says 15, a recount says 0
[nvltest 01:20:04] VIOLATION accounting: rack01: says 15, a recount says 0
[2026-12-02T02:00:50.330] error: Could not open node state file
FAIL: test_storm (__main__.Reliability.test_storm)
AssertionError: Lists differ: [(1.0, 'accounting')] != []
<end of output>
Test time = 422.71 sec
----------------------------------------------------------
Test Failed.
4/5 Testing: unit.fast
4/5 Test: unit.fast
Output:
----------------------------------------------------------
ok
<end of output>
Test time = 0.01 sec
"""


class CtestLogTest(unittest.TestCase):
    def test_outputs_are_split_per_test(self):
        out = outputs(LOG)
        self.assertEqual(sorted(out), ["cluster.reliability", "unit.fast"])
        self.assertEqual(out["unit.fast"], ["ok"])
        self.assertEqual(out["cluster.reliability"][0], "[nvltest 01:20:03] kill: SIGKILL slurmctld mid-storm")

    def test_reasons_keep_what_went_wrong_once_and_not_slurms_routine_errors(self):
        got = reasons(outputs(LOG)["cluster.reliability"])
        self.assertEqual(got[:3], ["[nvltest 01:20:03] VIOLATION accounting: rack01: says 15, a recount says 0",
                                   "FAIL: test_storm (__main__.Reliability.test_storm)",
                                   "AssertionError: Lists differ: [(1.0, 'accounting')] != []"])
        self.assertEqual(got[3], "(last lines)")
        self.assertFalse(any("Could not open" in ln for ln in got[:3]))

    def test_many_reasons_are_cut_with_a_count(self):
        got = reasons([f"FAIL: case {i}" for i in range(20)])
        self.assertEqual(len(got[:got.index("(last lines)")]), MAX_REASONS)
        self.assertIn("more such lines", got[MAX_REASONS - 1])

    def test_digest_names_each_failed_test_and_nothing_when_none_failed(self):
        with tempfile.TemporaryDirectory() as build:
            tmp = os.path.join(build, "Testing", "Temporary")
            os.makedirs(tmp)
            self.assertEqual(digest(build), [])
            with open(os.path.join(tmp, "LastTest.log"), "w") as f:
                f.write(LOG)
            with open(os.path.join(tmp, "LastTestsFailed.log"), "w") as f:
                f.write("436:cluster.reliability\n")
            got = digest(build)
            self.assertEqual(got[0], "cluster.reliability:")
            self.assertTrue(got[1].startswith("    [nvltest 01:20:03] VIOLATION"))


if __name__ == "__main__":
    unittest.main()
