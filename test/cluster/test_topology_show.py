#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""`scontrol show topology` and the client commands:
per block Nodes, Slice, SparesFree/SparesUsed, Failed/FailedNodes,
Health, packed by slurmctld so every client prints the same; filtering by
block name and by node name; the JSON status agrees; sinfo, squeue,
scontrol, sbatch and srun on the same slurm.conf (which names the plugin,
so each loads it) run without crashing, with nvlblock and with block.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import Cluster, ClusterTest, main, rack_nodes, read_prometheus  # noqa: E402

FIELDS = ["BlockName", "Nodes", "BlockSize", "Slice", "Spares", "SparesFree", "SparesUsed", "SparesLent",
          "Health", "Failed", "FailedNodes"]

CLIENT_COMMANDS = [
    ["sinfo"], ["sinfo", "-N"], ["sinfo", "-s"], ["squeue"], ["squeue", "-l"],
    ["scontrol", "show", "topology"], ["scontrol", "show", "topology", {"block": "rack02"}],
    ["scontrol", "show", "nodes"], ["scontrol", "show", "partitions"], ["scontrol", "show", "config"],
    ["scontrol", "show", "jobs"], ["scontrol", "ping"], ["sdiag"],
    ["srun", "-N1", "-t", "1", "true"],
]


def crash_signs(text):
    return [w for w in ("Segmentation fault", "core dumped", "fatal:", "Aborted", "plugin_load_from_file")
            if w in text]


class ClientsMixin:
    PLUGIN = None

    def test_clients_do_not_crash(self):
        with Cluster(f"clients-{self.PLUGIN}", racks=2, plugin=self.PLUGIN) as c:
            job = c.sbatch("-N4")
            c.wait_running(job)
            for argv in CLIENT_COMMANDS:
                argv = [a for x in argv for a in (c.topology_args(**x) if isinstance(x, dict) else [x])]
                p = c.run(*argv, check=False, timeout=60)
                out = p.stdout + p.stderr
                self.assertEqual(p.returncode, 0, f"{' '.join(argv)} exited {p.returncode}: {out}")
                self.assertEqual(crash_signs(out), [], f"{' '.join(argv)}: {out}")
            # Filtering by an unknown name is an error message, not a crash.
            p = c.run("scontrol", "show", "topology", *c.topology_args(block="nosuch"), check=False)
            self.assertGreaterEqual(p.returncode, 0, p)
            self.assertEqual(crash_signs(p.stdout + p.stderr), [])
            self.assertIn("nosuch", p.stderr)


class NvlblockClients(ClientsMixin, ClusterTest):
    PLUGIN = "nvlblock"


class BlockClients(ClientsMixin, ClusterTest):
    PLUGIN = "block"


class ShowTopology(ClusterTest):

    def test_show_topology_fields_and_filters(self):
        with Cluster("showtopo", racks=3, flags=["--status-interval", "1"]) as c:
            job = c.sbatch("-N16", "-w", ",".join(rack_nodes("rack01")[:16]))
            c.wait_running(job)
            c.set_down("gb0020")
            c.drain("gb0040", "gb0041", "gb0042")

            full, blocks = self.check_fields(c)
            self.check_filters(c, full)
            prom = self.check_status_and_metrics(c, blocks)
            victim = self.check_planted_symlinks_replaced(c, prom, blocks)
            self.check_world_writable_metrics_dir_refused(c, prom, victim)

    def check_fields(self, c):
        """Every block shows every field, with the counts of its busy, down
        and drained nodes; returns the full output lines and the blocks."""
        full = c.run("scontrol", "show", "topology").stdout.splitlines()
        blocks = c.topology()
        self.assertEqual(len(full), 4, full)  # 3 blocks + the summary line
        self.assertEqual([b["BlockName"] for b in blocks], ["rack01", "rack02", "rack03"])
        for b in blocks:
            for f in FIELDS:
                self.assertIn(f, b, f"{f} missing from {b}")
        r1, r2, r3 = blocks
        self.assertEqual((r1["Nodes"], r1["BlockSize"], r1["Slice"], r1["Spares"]),
                         ("gb[0001-0018]", "18", "16", "2"))
        self.assertEqual((r1["Busy"], r1["Free"], r1["SparesFree"], r1["SparesUsed"], r1["Failed"],
                          r1["FailedNodes"], r1["Health"]),
                         ("16", "2", "2", "0", "0", "(null)", "healthy"), r1)
        self.assertEqual((r2["Failed"], r2["FailedNodes"], r2["SparesUsed"], r2["SparesFree"], r2["Health"]),
                         ("1", "gb0020", "1", "1", "healthy"), r2)
        # 3 failed > 2 spares: degraded, not healthy (and not a block fault).
        self.assertEqual((r3["Failed"], r3["FailedNodes"], r3["SparesUsed"], r3["SparesFree"], r3["Health"]),
                         ("3", "gb[0040-0042]", "2", "0", "degraded"), r3)
        summary = c.topology_summary()
        self.assertEqual((summary["Blocks"], summary["Nodes"], summary["Failed"]), ("3", "54", "4"), summary)
        return full, blocks

    def check_filters(self, c, full):
        """Filters: a block name, a node name, several nodes of one block.
        (ShortOfSliceSeconds is a clock: rack03 is short of a slice, so it
        moves between two calls.)"""
        def show(**selector):
            return c.run("scontrol", "show", "topology", *c.topology_args(**selector), check=False)

        def steady(lines):
            return [re.sub(r"ShortOfSliceSeconds=\d+", "ShortOfSliceSeconds=N", ln) for ln in lines]
        self.assertEqual(steady(show(block="rack02").stdout.splitlines()), steady([full[1]]))
        self.assertEqual(steady(show(nodes="gb0020").stdout.splitlines()), steady([full[1]]))
        self.assertEqual(steady(show(nodes="gb[0037-0039]").stdout.splitlines()), steady([full[2]]))
        c.wait_for(lambda: int(c.topology_block("rack03")["ShortOfSliceSeconds"]) > 0, 10,
                   "rack03's time short of a slice to move")
        p = show(block="nosuch")
        self.assertEqual(p.stdout, "")
        self.assertRegex(p.stderr, r"no block (or node )?named nosuch")
        if c.slurm_version >= (25, 5, 0):
            # Block and nodes together: the block, if it holds them.
            self.assertEqual(show(block="rack03", nodes="gb0040").stdout.splitlines(), [full[2]])
            p = show(block="rack01", nodes="gb0040")
            self.assertEqual(p.stdout, "")
            self.assertIn("no block rack01 holding gb0040", p.stderr)

    def check_status_and_metrics(self, c, blocks):
        """The JSON status and the Prometheus textfile say what `scontrol show
        topology` said; returns the Prometheus file's path."""
        status = c.wait_status(lambda s: c.status_block("rack03", s)["failed"] == 3, 10,
                               "the status JSON to show rack03's failures")
        for b in blocks:
            s = c.status_block(b["BlockName"], status)
            self.assertEqual((str(s["spares_free"]), str(s["spares_used"]), str(s["failed"]), s["health"]),
                             (b["SparesFree"], b["SparesUsed"], b["Failed"], b["Health"]), s)

        # ...and so does the Prometheus textfile, written right after it.
        prom = c.path("state", "nvlblock.prom")
        c.wait_for(lambda: read_prometheus(prom).get('nvlblock_block_failed_nodes{block="rack03"}') == 3, 10,
                   "the Prometheus file to show rack03's failures")
        self.assertMetricsMatchTopology(read_prometheus(prom), blocks)
        return prom

    def check_planted_symlinks_replaced(self, c, prom, blocks):
        """Someone who may write in the metrics directory plants a symlink
        where the metrics file goes: slurmctld (often root) replaces it with
        its file and never writes through it; reports are 0644. Returns the
        path of the file the symlinks pointed to."""
        victim = c.path("victim")
        with open(victim, "w") as f:
            f.write("precious\n")
        for p in (prom, c.path("state", "nvlblock-status.json")):
            os.replace(p, p + ".old")
            os.symlink(victim, p)
        c.wait_for(lambda: not os.path.islink(prom) and
                   not os.path.islink(c.path("state", "nvlblock-status.json")), 10,
                   "slurmctld to replace the planted symlinks with its files")
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        for p in (prom, c.path("state", "nvlblock-status.json")):
            self.assertEqual(os.lstat(p).st_mode & 0o7777, 0o644, p)
        self.assertMetricsMatchTopology(read_prometheus(prom), blocks)
        return victim

    def check_world_writable_metrics_dir_refused(self, c, prom, victim):
        """A metrics directory anyone may write, without the sticky bit:
        refused with an error naming it; nothing is written there."""
        hostile = c.path("hostile")
        os.mkdir(hostile)
        os.chmod(hostile, 0o777)
        os.symlink(victim, os.path.join(hostile, "nvlblock.prom"))
        conf = c.path("etc", "nvlblock.yaml")
        with open(conf) as f:
            text = f.read()
        with open(conf, "w") as f:
            f.write(text.replace(prom, os.path.join(hostile, "nvlblock.prom")))
        c.run("scontrol", "reconfigure")
        c.wait_log(r"nvlblock: cannot write metrics .*hostile/nvlblock.prom: refusing to write .*"
                   r"writable by every user and has no sticky bit", 15)
        with open(victim) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertEqual(os.listdir(hostile), ["nvlblock.prom"])
        self.assertTrue(os.path.islink(os.path.join(hostile, "nvlblock.prom")))
        self.assertIn("UP", c.run("scontrol", "ping").stdout)


if __name__ == "__main__":
    main()
