#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Topology changes at run time and reconfigure with open recoveries, on a
real slurmctld (Slurm 25.05 and later: add_rm_node; registered only when the
build targets one):

- `scontrol update NodeName=... Topology=default:<block>` re-applying every
  node's current block (what a generator does) changes nothing: a 36-node
  --segment=12 job on three 17-node blocks runs 12+12+12 before and after
  (stock topology/block drops the node and runs it 17+17+2, SchedMD/slurm
  PR #225);
- refused with a clear error in slurmctld's log (scontrol: "Requested
  topology configuration is not available"): a node of a running job whose
  other nodes share its block, a block nvlblock does not know;
- accepted: a free node into another known block (until slurmctld starts
  again, as Slurm keeps a static node's topology only with -R), back to its
  file's block with an empty Topology=; a spare leaving its block (Topology=default,
  no block) stops being a spare: the block's spare count is over the nodes
  it has now, and a job waiting for that node runs on it;
- `scontrol reconfigure` with a changed nvlblock.yaml keeps a recovery whose
  rack kept its nodes (it still restarts in place there) and ends one whose
  rack changed with a logged fallback: the job restarts elsewhere, never lost.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, main  # noqa: E402
from nvltest import rack_counts  # noqa: E402

PER_RACK = 17
UNAVAILABLE = "Requested topology configuration is not available"
RESTART_TIMEOUT = REQUEUE_DELAY + 40


def rack_counts17(nodes):
    return rack_counts(nodes, PER_RACK)


def rack17(rack):
    r = int(rack[4:])
    return [f"gb{i:04d}" for i in range((r - 1) * PER_RACK + 1, r * PER_RACK + 1)]


def rack18(rack):
    r = int(rack[4:])
    return [f"gb{i:04d}" for i in range((r - 1) * 18 + 1, r * 18 + 1)]


def spec(rack, expr, spares=None):
    """A block of reconfigure(): (name, node expression, spares)."""
    return (rack, f"gb[{expr}]", spares)


class RuntimeTopology(ClusterTest):

    def update_topology(self, c, nodes, topology):
        return c.run("scontrol", "update", f"nodename={nodes}", f"topology={topology}", check=False)

    def block_size(self, c, block):
        return int(c.topology_block(block)["BlockSize"])

    def reapply_all(self, c, racks):
        """A generator re-applying its whole (unchanged) assignment."""
        for rack in racks:
            first, last = rack17(rack)[0], rack17(rack)[-1]
            p = self.update_topology(c, f"gb[{first[2:]}-{last[2:]}]", f"default:{rack}")
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([self.block_size(c, r) for r in racks], [17, 17, 17])

    def test_update_accepted_idempotent_and_refused(self):
        with Cluster("rtopo", racks=3, nodes_per_rack=PER_RACK,
                     flags=["--slice", "12", "--spares", "2", "--status-interval", "1"]) as c:
            self.assertGreaterEqual(c.slurm_version, (25, 5, 0), "needs Slurm 25.05 or later")
            racks = ("rack01", "rack02", "rack03")
            job, nodes = self.check_reapply_changes_nothing(c, racks)
            free3 = self.check_update_refused(c, racks, job, nodes)
            self.check_free_node_moves_until_restart(c, racks, job, free3[-1])
            self.check_spare_leaves_its_block(c, job)

    def check_reapply_changes_nothing(self, c, racks):
        """Re-applying every node's block moves nothing: --segment=12 jobs run
        12+12+12, before and after (SchedMD/slurm PR #225). Returns the
        second job, left running, and its nodes."""
        self.reapply_all(c, racks)
        self.assertEqual(c.log_lines(r"nvlblock: node gb\d+ (moved|left|joined)"), [])
        job = c.sbatch("-N36", "--segment=12")
        self.assertEqual(rack_counts17(c.wait_running(job)), {r: 12 for r in racks})
        # Re-applied under the running job, then a new job: still 12+12+12.
        self.reapply_all(c, racks)
        self.assertEqual(c.state(job), "RUNNING")
        c.cancel(job)
        c.wait_idle()
        job = c.sbatch("-N36", "--segment=12")
        nodes = c.wait_running(job)
        self.assertEqual(rack_counts17(nodes), {r: 12 for r in racks}, "the #225 case")
        return job, nodes

    def check_update_refused(self, c, racks, job, nodes):
        """Moving a node of the running job, or into an unknown block, is
        refused and logged; returns rack03's nodes the job does not use."""
        # Refused: a node of the job, whose 11 other rack01 nodes it would leave.
        mine = next(n for n in nodes if n in rack17("rack01"))
        p = self.update_topology(c, mine, "default:rack02")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn(UNAVAILABLE, p.stderr)
        c.wait_log(rf"topology/nvlblock: cannot put node {mine} into 'rack02': node {mine} runs JobId={job}, "
                   r"which has 11 more nodes in block rack01: moving it would split the job's block", 10)
        self.assertEqual([self.block_size(c, r) for r in racks], [17, 17, 17])
        # Refused: a block nvlblock does not know.
        free3 = [n for n in rack17("rack03") if n not in nodes]
        p = self.update_topology(c, free3[0], "default:rack09")
        self.assertNotEqual(p.returncode, 0, p.stdout)
        c.wait_log(rf"topology/nvlblock: cannot put node {free3[0]} into 'rack09': there is no block 'rack09' "
                   r"in \S+ \(blocks: rack01, rack02, rack03\); a new block is described in nvlblock.yaml", 10)
        self.assertEqual(self.block_size(c, "rack03"), 17)
        return free3

    def check_free_node_moves_until_restart(self, c, racks, job, moved):
        """Accepted: a free rack03 node into rack01; gone when slurmctld
        starts again; an empty Topology= puts it back."""
        p = self.update_topology(c, moved, "default:rack01")
        self.assertEqual(p.returncode, 0, p.stderr)
        c.wait_log(rf"nvlblock: node {moved} moved from block rack03 \(now 16 nodes\) to block rack01 "
                   r"\(now 18 nodes\)", 10)
        self.assertEqual([self.block_size(c, r) for r in racks], [18, 17, 16])
        self.assertIn(moved, c.expand(c.topology_block("rack01")["Nodes"]))
        # Like any `scontrol update` of a node of slurm.conf, it lasts until
        # slurmctld starts again (Slurm restores a static node's topology
        # only with -R): then the file's blocks are back, and the job runs on.
        c.restart_ctld(kill=False)
        self.assertEqual([self.block_size(c, r) for r in racks], [17, 17, 17])
        self.assertEqual(c.state(job), "RUNNING")
        p = self.update_topology(c, moved, "default:rack01")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([self.block_size(c, r) for r in racks], [18, 17, 16])
        # An empty Topology=: back to the block of nvlblock.yaml.
        p = self.update_topology(c, moved, "")
        self.assertEqual(p.returncode, 0, p.stderr)
        c.wait_log(rf"nvlblock: node {moved} moved from block rack01 \(now 17 nodes\) to block rack03 "
                   r"\(now 17 nodes\)", 10)
        self.assertEqual([self.block_size(c, r) for r in racks], [17, 17, 17])

    def check_spare_leaves_its_block(self, c, job):
        """A spare leaving its block. rack03 runs 15 nodes (17 less its 2
        spares); a job asks for one of the two free nodes, a spare: it runs
        there once the spare is outside every block."""
        c.cancel(job)
        c.wait_idle()
        rack3 = rack17("rack03")
        big = c.sbatch("-N15", "-w", ",".join(rack3[:15]))
        c.wait_running(big)
        spare = rack3[15]
        small = c.sbatch("-N1", "-w", spare)
        c.wait_pending_reason(small, "spare", 20)
        c.wait_status(lambda s: c.status_block("rack03", s)["spares_free"] == 2, 10, "rack03 with 2 free spares")
        p = self.update_topology(c, spare, "default")
        self.assertEqual(p.returncode, 0, p.stderr)
        c.wait_log(rf"nvlblock: node {spare} left block rack03 \(now 16 nodes\); it is outside every block now",
                   10)
        self.assertEqual(c.wait_running(small, 30), [spare])
        b = c.topology_block("rack03")
        self.assertEqual((b["BlockSize"], b["Spares"], b["SparesFree"]), ("16", "2", "1"), b)
        self.assertNotIn(spare, c.expand(b["Nodes"]))
        self.assertIn("UP", c.run("scontrol", "ping").stdout)

    def waits_for_its_rack(self, c, job, rack):
        """The job is queued and nvlblock shows its recovery open, not fallen back."""
        pending = rf"RecoveryPending JobId={job} Blocks={rack} .* Fallback=no"
        c.wait_for(lambda: c.state(job) == "PENDING" and any(
            re.search(pending, ln) for ln in c.run("scontrol", "show", "topology").stdout.splitlines()),
            30, f"job {job} to wait for {rack}")

    def failed_and_waiting(self, c, name):
        """A 16-node job that lost 3 nodes and waits for its rack; returns the
        job, its rack and the nodes it lost."""
        # 3 of 16 lost (Slurm requeues it at the first), 2 spares: it
        # waits for its rack (recovery.wait 900 s).
        job = c.sbatch("-N16", "--requeue", "-J", name)
        nodes = c.wait_running(job)
        (rack, count), = rack_counts(nodes).items()
        self.assertEqual(count, 16)
        lost = nodes[2:5]
        c.set_down(*lost)
        c.wait_log(rf"nvlblock: recovery JobId={job} lost \d+ of 16 nodes", 20)
        self.waits_for_its_rack(c, job, rack)
        return job, rack, lost

    def test_reconfigure_keeps_unchanged_recoveries_and_ends_changed_ones(self):
        with Cluster("rtreconf", racks=2, flags=["--recovery-wait", "900", "--status-interval", "1"]) as c:
            self.assertGreaterEqual(c.slurm_version, (25, 5, 0), "needs Slurm 25.05 or later")
            conf = c.path("etc", "nvlblock.yaml")
            with open(conf) as f:
                original = f.read()
            head = original[:original.index("blocks:\n")]

            def reconfigure(blocks=None):
                """nvlblock.yaml with these blocks [(name, nodes, spares)] (None: as
                nvlcluster wrote it), then scontrol reconfigure."""
                text = original
                if blocks is not None:
                    text = head + "blocks:\n"
                    for name, expr, spares in blocks:
                        text += f"  - name: {name}\n    nodes: {expr}\n"
                        if spares is not None:
                            text += f"    spares: {spares}\n"
                with open(conf, "w") as f:
                    f.write(text)
                mark = len(c.log_lines(r"nvlblock: \d+ blocks, \d+ nodes from"))
                c.run("scontrol", "reconfigure")
                c.wait_for(lambda: len(c.log_lines(r"nvlblock: \d+ blocks, \d+ nodes from")) > mark, 60,
                           "slurmctld to read the new nvlblock.yaml")
                c.wait_for(lambda: "UP" in c.run("scontrol", "ping", check=False).stdout, 30, "slurmctld up")

            self.check_unchanged_rack_keeps_recovery(c, reconfigure)
            self.check_changed_rack_ends_recovery(c, reconfigure)
            self.assertIn("UP", c.run("scontrol", "ping").stdout)

    def check_unchanged_rack_keeps_recovery(self, c, reconfigure):
        """Kept: the other rack loses its last node (and a spare), this one
        keeps its nodes; a repaired node lets the job restart in place."""
        job, rack, lost = self.failed_and_waiting(c, "kept")
        other = "rack02" if rack == "rack01" else "rack01"
        r, o = rack18(rack), rack18(other)
        reconfigure([spec(rack, f"{r[0][2:]}-{r[-1][2:]}"), spec(other, f"{o[0][2:]}-{o[-2][2:]}", 1)])
        self.assertEqual(c.topology_block(other)["BlockSize"], "17")
        self.assertEqual(c.topology_block(rack)["BlockSize"], "18")
        self.waits_for_its_rack(c, job, rack)
        self.assertEqual(c.log_lines(rf"nvlblock: recovery JobId={job} fallback"), [])
        # A repaired node: it restarts in place on its rack, as before.
        c.resume(lost[0])
        again = c.wait_restarted(job, RESTART_TIMEOUT)
        self.assertEqual(rack_counts(again), {rack: 16}, again)
        c.wait_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}", 10)

    def check_changed_rack_ends_recovery(self, c, reconfigure):
        """Ended: the rack of a waiting job loses a node at reconfigure; the
        recovery falls back (logged) and the job restarts elsewhere."""
        c.reset()
        reconfigure()
        self.assertEqual([c.topology_block(b)["BlockSize"] for b in ("rack01", "rack02")], ["18", "18"])
        job, rack, lost = self.failed_and_waiting(c, "ended")
        other = "rack02" if rack == "rack01" else "rack01"
        r = rack18(rack)
        blocks = {rack: spec(rack, f"{r[0][2:]}-{r[-2][2:]}", 1),
                  other: spec(other, f"{rack18(other)[0][2:]}-{rack18(other)[-1][2:]}")}
        reconfigure([blocks["rack01"], blocks["rack02"]])
        c.wait_log(rf"nvlblock: recovery JobId={job} fallback after \d+ s: block {rack} has 17 nodes \(\S+\) "
                   rf"now, 18 nodes \(\S+\) when the job failed \(the topology changed\); placing it anywhere",
                   20)
        again = c.wait_restarted(job, RESTART_TIMEOUT)
        self.assertEqual(len(again), 16)
        self.assertEqual(c.state(job), "RUNNING")
        c.wait_log(rf"nvlblock: recovery JobId={job} restarted elsewhere", 10)


if __name__ == "__main__":
    main()
