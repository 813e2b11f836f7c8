# SPDX-License-Identifier: GPL-2.0-or-later
import contextlib
import io
import socket
import tempfile
import unittest
from unittest import mock

from nvlblock_cluster.common import log, poll, wait_until
from nvlblock_cluster.ports import PortBlock, port_free


class PollTest(unittest.TestCase):
    def test_returns_the_first_true_value(self):
        values = iter([0, None, "found", "later"])
        self.assertEqual(poll(lambda: next(values), timeout=5, interval=0), (True, "found"))

    def test_timeout_returns_the_last_value(self):
        self.assertEqual(poll(lambda: [], timeout=0, interval=0), (False, []))
        self.assertFalse(wait_until(lambda: False, timeout=0, interval=0))


class LogTest(unittest.TestCase):
    def lines(self, **kw):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                mock.patch("time.strftime", return_value="12:34:56"):
            log("hello", **kw)
        return out.getvalue(), err.getvalue()

    def test_plain_tagged_and_clocked_lines(self):
        self.assertEqual(self.lines(), ("", "nvlcluster: hello\n"))
        self.assertEqual(self.lines(tag="sched-cost"), ("", "sched-cost: hello\n"))
        self.assertEqual(self.lines(tag="nvltest", clock=True), ("", "[nvltest 12:34:56] hello\n"))
        self.assertEqual(self.lines(tag="netns", clock=True, stdout=True), ("[netns 12:34:56] hello\n", ""))


class PortBlockTest(unittest.TestCase):
    def test_a_claimed_block_is_skipped_and_a_listening_port_too(self):
        with tempfile.TemporaryDirectory() as locks:
            for _ in range(50):
                with socket.socket() as listener:
                    listener.bind(("", 0))
                    listener.listen()
                    busy = listener.getsockname()[1]
                    self.assertFalse(port_free(busy))
                    # Blocks of 2 ports starting at the busy one, then the next.
                    first = busy if busy + 7 <= 65535 else busy - 8
                    # The kernel's ephemeral range: on a CI host with a dozen
                    # clusters, a neighbour may be some client's port. Only a
                    # range whose other ports are free tests what it means to.
                    if not all(port_free(p) for p in range(first, first + 8) if p != busy):
                        continue
                    with PortBlock(1, first, first + 7, step=2, lock_dir=locks) as a, \
                            PortBlock(1, first, first + 7, step=2, lock_dir=locks) as b:
                        self.assertNotEqual(a.base, b.base)
                        for block in (a, b):
                            self.assertNotIn(busy, (block.base, block.base + 1))
                    return
            self.skipTest("no free 8-port range around an ephemeral port in 50 tries")

    def test_too_many_ports_for_a_block(self):
        with self.assertRaises(ValueError):
            PortBlock(100, 23000, 29999, step=100)


if __name__ == "__main__":
    unittest.main()
