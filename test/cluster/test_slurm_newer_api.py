#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What the topology APIs of Slurm 25.05, 25.11 and 26.05 add, on a real
slurmctld of any of them (registered only when the build targets one; the
rest of the cluster tests run there unchanged):

- jobinfo (25.11+): with --network=unique-channel-per-segment the job
  carries its segments' node lists (what switch/nvidia_imex turns into one
  IMEX channel each), one per segment, each inside one block; they survive
  a slurmctld restart (packed with the job state and read back without
  error);
- get_rank (26.05): Slurm lays out a job's tasks block by block, so
  consecutive MPI ranks share an NVLink domain even when node names
  interleave the blocks;
- allow_one_node (26.05) is false: cons_tres's one-node shortcut would
  bypass the spares, so a 1-node job still keeps off a rack's spares
  (before 26.05 there is no shortcut and the same holds);
- add_rm_node (25.05+): `scontrol update node topology=` that would split a
  running job's block is refused with a message;
- scontrol show topology block=NAME / nodes=LIST select (a bare name is a
  topology name from 25.05 on);
- expedited requeue (25.11+: --requeue=expedite with SlurmctldParameters=
  enable_expedited_requeue): the requeued job gets top priority and no
  start delay, and nvlblock still restarts it in place on its own rack,
  with a spare, although another rack has exactly room for it (stock
  topology/block does not keep it home, design.md 6).
"""
import os
import sys
import tempfile
import time
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import Cluster, ClusterTest, main, rack_nodes, rack_name_of  # noqa: E402

# One 18-node rack split into two interleaved 9-node blocks: odd-numbered
# nodes in "odd", even-numbered in "even". Node order and block order differ.
INTERLEAVED = textwrap.dedent("""\
    defaults:
      slice: 8
      spares: 1
      reserve: idle
    status:
      interval: 1
    blocks:
      - name: odd
        nodes: gb[0001,0003,0005,0007,0009,0011,0013,0015,0017]
      - name: even
        nodes: gb[0002,0004,0006,0008,0010,0012,0014,0016,0018]
    """)


def block_of(node):
    return "odd" if int(node[2:]) % 2 else "even"


class NewerSlurmApi(ClusterTest):

    @classmethod
    def setUpClass(cls):
        fd, cls.yaml = tempfile.mkstemp(prefix="nvlt-newapi-", suffix=".yaml")
        with os.fdopen(fd, "w") as f:
            f.write(INTERLEAVED)

    @classmethod
    def tearDownClass(cls):
        os.unlink(cls.yaml)

    def cluster(self, name):
        return Cluster(name, racks=1, flags=["--config", self.yaml,
                                             "--extra-conf", "DebugFlags=SelectType",
                                             "SlurmctldDebug=verbose"])

    def test_segments_ranks_one_node_jobs_and_topology_args(self):
        with self.cluster("newapi") as c:
            self.assertGreaterEqual(c.slurm_version, (25, 5, 0), "needs Slurm 25.05 or later")
            # 16 nodes in segments of 8: 8 in each block.
            job = c.sbatch("-N16", "--segment=8", "--network=unique-channel-per-segment")
            nodes = c.wait_running(job)
            self.assertEqual({block_of(n) for n in nodes}, {"odd", "even"}, nodes)

            if c.slurm_version >= (25, 11, 0):
                self.check_segments_recorded(c, job)
            if c.slurm_version >= (26, 5, 0):
                self.check_ranks_follow_blocks(c, job)

            # The one free node of each block is its spare: a 1-node job
            # must wait, not take it (26.05: allow_one_node is false).
            small = c.sbatch("-N1")
            c.wait_pending_reason(small, "spare", 20)

            # The job state (25.11+: with the segments) was packed and read back.
            c.restart_ctld(kill=False)
            self.assertEqual(c.state(job), "RUNNING")
            self.assertEqual(c.log_lines(r"unpack|Unpack"), [])

            # topology= that would split the running job's block is refused
            # (test_runtime_topology.py has the rest of add_rm_node).
            mine = nodes[0]
            there = "even" if block_of(mine) == "odd" else "odd"
            p = c.run("scontrol", "update", f"nodename={mine}", f"topology=default:{there}", check=False)
            self.assertNotEqual(p.returncode, 0, p.stdout)
            c.wait_log(rf"topology/nvlblock: cannot put node {mine} into '{there}': node {mine} runs JobId={job}, "
                       rf"which has 7 more nodes in block {block_of(mine)}", 10)

            # scontrol show topology block= / nodes= (25.05+ syntax).
            self.assertEqual([ln.split()[0] for ln in c.run("scontrol", "show", "topology", "block=even")
                              .stdout.splitlines()], ["BlockName=even"])
            self.assertEqual([ln.split()[0] for ln in c.run("scontrol", "show", "topology", "nodes=gb0003")
                              .stdout.splitlines()], ["BlockName=odd"])
            # A bare name is a topology's name: "odd" is none (scontrol says
            # so, and exits 0).
            p = c.run("scontrol", "show", "topology", "odd", check=False)
            self.assertNotIn("BlockName=", p.stdout)
            self.assertRegex(p.stderr, r"Requested topology configuration is not available")

    def test_expedited_requeue_restarts_in_place(self):
        with Cluster("expedite", racks=2, flags=["--extra-conf", "SlurmctldParameters=enable_expedited_requeue"]) as c:
            if c.slurm_version < (25, 11, 0):
                self.skipTest("--requeue=expedite came with Slurm 25.11")
            job = c.sbatch("-N16", "--requeue=expedite")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            self.assertOnRack(nodes, rack)
            # The other rack is left with exactly 16 free nodes: the best
            # fit anywhere else.
            bait_rack = "rack02" if rack == "rack01" else "rack01"
            bait = c.sbatch("-N2", "-w", ",".join(rack_nodes(bait_rack)[:2]))
            c.wait_running(bait)
            failed = nodes[5]
            t_fail = time.monotonic()
            c.set_down(failed)
            c.wait_log(rf"nvlblock: recovery JobId={job} lost 1 of 16 nodes \({failed}\) on {rack}", 20)
            again = c.wait_restarted(job, 90)
            print(f"expedited requeue: running again on {rack} {time.monotonic() - t_fail:.1f} s after the "
                  "failure", file=sys.stderr)
            self.assertOnRack(again, rack)
            self.assertNotIn(failed, again)
            self.assertEqual(len(set(again) - set(nodes)), 1, "exactly one spare")
            c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}: 15 prior nodes \+ 1 spares", 10)

    def check_segments_recorded(self, c, job):
        # Segments recorded for IMEX channels: two, one per block.
        line = c.wait_log(rf"nvlblock: JobId={job}: 2 segments for IMEX channels: ", 10)[-1]
        segments = line.split("IMEX channels: ", 1)[1].split()
        self.assertEqual(len(segments), 2, line)
        for seg in segments:
            members = c.expand(seg)
            self.assertEqual(len(members), 8, seg)
            self.assertEqual(len({block_of(n) for n in members}), 1, f"segment {seg} spans blocks")

    def check_ranks_follow_blocks(self, c, job):
        # A step of 2 tasks per node with the default distribution:
        # "<rank>: <node>". Ranks 0-15 share one block, 16-31 the other
        # (by node index they would alternate between the blocks).
        layout = c.run("srun", f"--jobid={job}", "--overlap", "-l", "-N16", "-n32",
                       "printenv", "SLURMD_NODENAME", timeout=60).stdout
        by_rank = {int(k): v.strip() for k, v in (ln.split(": ", 1) for ln in layout.splitlines() if ": " in ln)}
        self.assertEqual(sorted(by_rank), list(range(32)), layout)
        first = {block_of(by_rank[r]) for r in range(16)}
        second = {block_of(by_rank[r]) for r in range(16, 32)}
        self.assertEqual(len(first), 1, f"ranks 0-15 on {[by_rank[r] for r in range(16)]}")
        self.assertEqual(len(second), 1, f"ranks 16-31 on {[by_rank[r] for r in range(16, 32)]}")
        self.assertNotEqual(first, second)


if __name__ == "__main__":
    main()
