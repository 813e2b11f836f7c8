# SPDX-License-Identifier: GPL-2.0-or-later
import unittest

from nvlblock_cluster.naming import (block_containing, extra_names, extra_range, node_index, node_name,
                                     node_range, node_width, rack_counts, rack_index_of, rack_name_of,
                                     rack_nodes, racks_of)


class NamingTest(unittest.TestCase):
    def test_node_names_widen_past_9999(self):
        self.assertEqual(node_width(9999), 4)
        self.assertEqual(node_width(10000), 5)
        self.assertEqual(node_name(7, 4), "gb0007")

    def test_ranges(self):
        self.assertEqual(node_range(1, 18, 4), "gb[0001-0018]")
        self.assertEqual(node_range(3, 3, 4), "gb0003")
        self.assertEqual(extra_names(2), ["cpu01", "cpu02"])
        self.assertEqual(extra_range(1), "cpu01")
        self.assertEqual(extra_range(12), "cpu[01-12]")

    def test_racks_hold_consecutive_nodes(self):
        self.assertEqual(racks_of(2, 18), [("rack01", 1, 18), ("rack02", 19, 36)])
        self.assertEqual(racks_of(100, 1)[-1], ("rack100", 100, 100))

    def test_names_back_to_racks(self):
        self.assertEqual(node_index("gb0019"), 19)
        self.assertIsNone(node_index("cpu01"))
        self.assertEqual(rack_name_of("gb0018"), "rack01")
        self.assertEqual(rack_name_of("gb0019"), "rack02")
        self.assertEqual(rack_name_of("gb0005", per_rack=4), "rack02")
        self.assertIsNone(rack_name_of("cpu01"))
        self.assertEqual(rack_nodes("rack02", per_rack=2), ["gb0003", "gb0004"])
        self.assertEqual(rack_counts(["gb0001", "gb0002", "gb0019", "cpu01"]),
                         {"rack01": 2, "rack02": 1, None: 1})

    def test_rack_index_of_a_0_based_offset(self):
        self.assertEqual([rack_index_of(i) for i in (0, 17, 18, 71)], [0, 0, 1, 3])
        self.assertEqual(rack_index_of(4, per_rack=4), 1)

    def test_block_containing_reads_the_member_lists(self):
        blocks = {"rack01": ["gb0001", "gb0003"], "rack02": ["gb0002"]}
        self.assertEqual(block_containing("gb0003", blocks), "rack01")
        self.assertEqual(block_containing("gb0002", blocks), "rack02")
        self.assertIsNone(block_containing("gb0004", blocks))


if __name__ == "__main__":
    unittest.main()
