# SPDX-License-Identifier: GPL-2.0-or-later
"""Stopping a daemon waits until it has exited, SIGKILL included: a daemon
started in its place before then cannot bind its ports (cluster.restart
failed so on slurmctld 26.11 under CI load)."""
import signal
import subprocess
import sys
import unittest
from unittest import mock

from nvlblock_cluster import procs


class StopPidsTest(unittest.TestCase):
    def stop_dying_slowly(self, sig, polls_alive):
        """stop_pids on one process that is still alive for `polls_alive`
        looks after the signal; returns (result, looks, signals sent)."""
        looks = []
        sent = []

        def alive(pid, start):
            looks.append(pid)
            return len(looks) <= 1 + polls_alive  # the first look finds it before the signal

        with mock.patch.object(procs, "is_alive", alive), \
                mock.patch.object(procs, "signal_pid", lambda pid, s: sent.append(s)), \
                mock.patch("nvlblock_cluster.common.time.sleep", lambda s: None):
            result = procs.stop_pids([(4242, 1)], sig, timeout=30)
        return result, len(looks), sent

    def test_sigkill_waits_until_the_process_is_gone(self):
        result, looks, sent = self.stop_dying_slowly(signal.SIGKILL, polls_alive=3)
        self.assertEqual(sent, [signal.SIGKILL])
        self.assertEqual(result, 0)
        # Looked again until it read the process gone (1 before, 3 alive, 1 gone).
        self.assertEqual(looks, 5)

    def test_sigterm_that_works_needs_no_sigkill(self):
        result, _, sent = self.stop_dying_slowly(signal.SIGTERM, polls_alive=2)
        self.assertEqual((result, sent), (0, [signal.SIGTERM]))

    def test_a_real_process_is_gone_when_sigkill_returns(self):
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        try:
            st = procs.proc_stat(p.pid)
            procs.stop_pids([(p.pid, st[2])], signal.SIGKILL, timeout=10)
            self.assertFalse(procs.is_alive(p.pid, st[2]))
        finally:
            p.kill()
            p.wait()


if __name__ == "__main__":
    unittest.main()
