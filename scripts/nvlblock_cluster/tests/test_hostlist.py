# SPDX-License-Identifier: GPL-2.0-or-later
import unittest

from nvlblock_cluster.common import ClusterError
from nvlblock_cluster.hostlist import compress_hostlist, expand_hostlist


class ExpandTest(unittest.TestCase):
    def test_ranges_and_singles(self):
        self.assertEqual(expand_hostlist("gb[0001-0003,0007],cpu01"),
                         ["gb0001", "gb0002", "gb0003", "gb0007", "cpu01"])

    def test_zero_padding_follows_the_lower_bound(self):
        self.assertEqual(expand_hostlist("n[08-11]"), ["n08", "n09", "n10", "n11"])

    def test_several_brackets_last_varies_fastest(self):
        self.assertEqual(expand_hostlist("a[1-2]-n[01-02]"), ["a1-n01", "a1-n02", "a2-n01", "a2-n02"])

    def test_empty_markers_are_no_nodes(self):
        for expr in ("", "(null)", "None"):
            self.assertEqual(expand_hostlist(expr), [], expr)

    def test_bad_range_is_an_error(self):
        with self.assertRaises(ClusterError):
            expand_hostlist("gb[a-3]")


class CompressTest(unittest.TestCase):
    def test_consecutive_names_become_ranges(self):
        self.assertEqual(compress_hostlist(["gb0003", "gb0001", "gb0002", "gb0007"]), "gb[0001-0003,0007]")

    def test_lone_name_stays_bare(self):
        self.assertEqual(compress_hostlist(["gb0005"]), "gb0005")
        self.assertEqual(compress_hostlist([]), "")

    def test_round_trip(self):
        names = [f"gb{i:04d}" for i in (1, 2, 3, 5, 18, 19, 20)] + ["cpu01", "cpu02"]
        self.assertEqual(sorted(expand_hostlist(compress_hostlist(names))), sorted(names))


if __name__ == "__main__":
    unittest.main()
