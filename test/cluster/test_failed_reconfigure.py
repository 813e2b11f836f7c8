#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A failed `scontrol reconfigure` on slurmctld run as sites run it
(daemonized, not -D): Slurm logs "Resuming operation, reconfigure failed."
and goes on in the same process, with its control_time left at 0
(design.md 8). nvlblock must go on acting: recording failures, saving its
state, moving its clock (a job whose rack cannot take it falls back after
recovery.wait) and writing its status file (issue 36; before, its status
thread read control_time 0 as "not in control" and stopped for good).
In the foreground (-D, every other test cluster) Slurm exits instead.
"""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, main, rack_counts, rack_name_of  # noqa: E402

RECOVERY_WAIT = 10


class FailedReconfigure(ClusterTest):

    def _fail_a_reconfigure(self, c):
        """Break slurm.conf, ask for a reconfigure (scontrol reads a good
        copy: it refuses a file it cannot parse), mend slurm.conf."""
        conf = c.env["SLURM_CONF"]
        good = conf + ".good"
        shutil.copy(conf, good)
        with open(conf, "a") as f:
            f.write("NoSuchSlurmKeyword=1\n")
        subprocess.run(["scontrol", "reconfigure"], env=dict(c.env, SLURM_CONF=good), cwd=c.cwd,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        c.wait_log(r"Resuming operation, reconfigure failed", 60)
        shutil.copy(good, conf)

    def test_recovery_goes_on_after_a_failed_reconfigure(self):
        flags = ["--ctld-daemonized", "--status-interval", "1", "--recovery-wait", str(RECOVERY_WAIT)]
        with Cluster("badreconf", racks=2, flags=flags) as c:
            pid = c.ctld_pid()
            c.wait_status(lambda s: True, 15, "nvlblock's first status file")
            self._fail_a_reconfigure(c)
            self.assertEqual(c.ctld_pid(), pid)
            self.assertIn("UP", c.run("scontrol", "ping").stdout)
            before = c.status_json()["generated_at"]
            c.wait_status(lambda s: s["generated_at"] > before + 1, 15, "the status file to be written again")

            # Three nodes lost, two spares: the job waits for its rack, then
            # falls back to the other one, empty: only the status thread
            # moves that clock.
            job = c.sbatch("-N16", "--requeue", "-J", "slice")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            t0 = time.monotonic()
            c.set_down(*nodes[2:5])
            c.wait_log(rf"nvlblock: recovery JobId={job} lost \d of 16 nodes", 15)
            c.wait_for(lambda: any(ln.startswith(f"record {job} ") for ln in c.read_state_file().splitlines()),
                       10, "the saved state to hold the record")
            c.wait_log(rf"nvlblock: recovery JobId={job} fallback after \d+ s", RECOVERY_WAIT + REQUEUE_DELAY + 30)
            new = c.wait_restarted(job, REQUEUE_DELAY + 40)
            self.assertNotIn(rack, rack_counts(new))
            print(f"after a failed reconfigure: fell back and ran again {time.monotonic() - t0:.1f} s after "
                  "the failure", file=sys.stderr)


if __name__ == "__main__":
    main()
