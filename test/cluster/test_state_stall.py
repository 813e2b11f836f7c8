#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A blocked StateSaveLocation does not stall scheduling (no file I/O under
Slurm's locks). The cluster keeps its state on a small ext4 file system of
its own, which the test freezes (fsfreeze: every write there blocks until
it is thawed, as on a hung NFS server). While it is frozen, a node fails
under a 16-node slice job: the epilog records the failure (in memory),
slurmctld's nvlblock thread blocks saving it, and yet the job restarts in
place on its rack, jobs queued earlier start, and scontrol answers. Once
thawed, the saved state catches up: the recovery is recorded as done.

Slurm's own writes there wait too (its state-save thread writes outside its
locks; job submission writes the job script under them, so nothing is
submitted while frozen). Needs root, a loop device, mkfs.ext4 and fsfreeze;
exits 77 (skipped) without them.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, log, main, rack_nodes, rack_name_of  # noqa: E402

SKIP = 77


def run(*argv):
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=60)


def can_freeze():
    """Why this host cannot run the test, or None."""
    if os.geteuid() != 0:
        return "not root"
    for tool in ("losetup", "mkfs.ext4", "fsfreeze", "mount", "umount"):
        if not shutil.which(tool):
            return f"no {tool}"
    if run("losetup", "-f").returncode != 0:
        return "no free loop device"
    return None


class StateFileSystem:
    """A 64 MiB ext4 image, loop-mounted on a directory of its own: the
    cluster's StateSaveLocation."""

    def __init__(self):
        self.image = None
        self.mount = None
        self.frozen = False

    def prepare(self):
        fd, self.image = tempfile.mkstemp(prefix="nvlt-state-", suffix=".img", dir="/tmp")
        os.close(fd)
        os.truncate(self.image, 64 << 20)
        for argv in (["mkfs.ext4", "-q", "-F", self.image],):
            p = run(*argv)
            if p.returncode:
                raise RuntimeError(f"{' '.join(argv)}: {p.stderr.strip()}")
        self.mount = tempfile.mkdtemp(prefix="nvlt-state-", dir="/tmp")
        p = run("mount", "-o", "loop,noatime", self.image, self.mount)
        if p.returncode:
            raise RuntimeError(f"mount {self.image}: {p.stderr.strip()}")

    def freeze(self):
        p = run("fsfreeze", "-f", self.mount)
        if p.returncode:
            raise RuntimeError(f"fsfreeze -f: {p.stderr.strip()}")
        self.frozen = True
        log(f"froze {self.mount}")

    def thaw(self):
        if self.frozen:
            run("fsfreeze", "-u", self.mount)
            self.frozen = False
            log(f"thawed {self.mount}")

    def remove(self):
        self.thaw()
        if self.mount and os.path.ismount(self.mount):
            run("umount", self.mount)
        if self.mount:
            shutil.rmtree(self.mount, ignore_errors=True)
        if self.image:
            os.unlink(self.image)


class FrozenStateCluster(Cluster):
    """A cluster whose StateSaveLocation is `fs`'s mount."""

    def __init__(self, name, fs, **kwargs):
        kwargs["flags"] = list(kwargs.get("flags", ())) + ["--extra-conf", f"StateSaveLocation={fs.mount}"]
        super().__init__(name, **kwargs)
        self.fs = fs

    @property
    def state_file(self):
        return os.path.join(self.fs.mount, "nvlblock_state")


class StateStall(ClusterTest):

    def test_a_frozen_state_directory_does_not_stall_scheduling(self):
        fs = StateFileSystem()
        try:
            fs.prepare()
            with FrozenStateCluster("stall", fs, racks=2, flags=["--status-interval", "1"]) as c:
                try:
                    self.frozen_recovery(c, fs)
                finally:
                    fs.thaw()  # before `down`: a process writing there cannot die while frozen
        finally:
            fs.remove()

    def frozen_recovery(self, c, fs):
        job = c.sbatch("-N16", "--requeue", "-J", "slice")
        nodes = c.wait_running(job)
        rack = rack_name_of(nodes[0])
        other = next(r for r in ("rack01", "rack02") if r != rack)
        # Queued now, runnable later: it starts while the state is frozen.
        later = c.sbatch("-N2", "--begin=now+20", "-J", "later")
        c.wait_for(lambda: "record " not in c.read_state_file() and "counters" in c.read_state_file(), 15,
                   "the first state save")

        fs.freeze()
        failed = nodes[3]
        c.set_down(failed)
        c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes \({failed}\) on {rack}", 20)
        # The failure is recorded in memory; its save waits on the frozen file system.
        new = c.wait_restarted(job, REQUEUE_DELAY + 60)
        self.assertOnRack(new, rack)
        self.assertTrue(set(nodes) - {failed} <= set(new), new)
        c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}: 15 prior nodes \+ 1 spares", 20)
        self.assertTrue(set(c.wait_running(later, 60)) <= set(rack_nodes(other)) | set(rack_nodes(rack)))
        self.assertIn("UP", c.run("scontrol", "ping").stdout)
        self.assertEqual(c.topology_block(rack)["Failed"], "1")
        self.assertTrue(fs.frozen)
        # Nothing of the failure could be saved yet.
        self.assertNotIn(f"record {job} ", c.read_state_file())

        fs.thaw()
        c.wait_for(lambda: "record " not in c.read_state_file() and
                   c.read_state_file().startswith("nvlblock-state 2\ncounters 1 1 0 0 "), 20,
                   "the saved state to catch up (one failure, restarted in place)")


if __name__ == "__main__":
    reason = can_freeze()
    if reason:
        print(f"SKIP: cluster.state_stall: {reason}")
        sys.exit(SKIP)
    main()
