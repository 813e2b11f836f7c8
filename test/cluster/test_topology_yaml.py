#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A topology.yaml beside slurm.conf (Slurm 25.05 and later), on a real
slurmctld (registered only when the build targets 25.05+):

- What Slurm does: it reads topology.yaml instead of TopologyPlugin= and
  topology.conf and can only name its own plugins, so with
  TopologyPlugin=topology/nvlblock and no prep/nvlblock it starts without
  nvlblock, silently: `scontrol show config` still says topology/nvlblock,
  nvlblock never builds its blocks, `scontrol show topology` shows Slurm's
  topology/block, and a job may take a rack's spare. nvlblock-check on that
  slurm.conf is an error naming topology.yaml.
- With prep/nvlblock configured (as nvlcluster and docs/admin.md do),
  slurmctld refuses to start and its log says why and what to run.
- `nvlblock-check --from-topology-yaml` converts the file; with topology.yaml
  moved away slurmctld starts with nvlblock on the converted blocks.
- A generator's file kept under another name (nvlblock.yaml
  `topology_yaml: topology.d/racks.yaml`): nvlblock takes its blocks and
  block_sizes, and --segment jobs land as topology/block places them from
  the same file read as topology.yaml (the two plugins side by side).
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REPO, Cluster, ClusterTest, CommandError, main, rack_nodes, rack_name_of  # noqa: E402

PER_RACK = 4
# A Slinky-style file: CPU-style flat default, the racks as a block topology.
TOPOLOGY_YAML = f"""\
- topology: default
  cluster_default: true
  block:
    block_sizes: [{PER_RACK}]
    blocks:
      - block: rack01
        nodes: "gb[0001-0004]"
      - block: rack02
        nodes: "gb[0005-0008]"
- topology: cpus
  flat: true
"""


# A generator's file whose blocks are not nvlcluster's racks: two blocks of 6
# over the 12 nodes, named and ordered unlike the racks, beside a tree topology.
GENERATED = """\
- topology: fabric
  tree:
    switches:
      - switch: s0
        nodes: "gb[0001-0012]"
- topology: nvl
  cluster_default: true
  block:
    block_sizes: [6]
    blocks:
      - block: domain-b
        nodes: "gb[0007-0012]"
      - block: domain-a
        nodes: "gb[0001-0006]"
"""
DOMAIN = {f"gb{i:04d}": ("domain-a" if i <= 6 else "domain-b") for i in range(1, 13)}
# Two jobs of 4 (one per block, 2 nodes left on each), then a --segment=2
# job of 4 that can only run as one segment on each block.
SEGMENT_SEQUENCE = [["-N4"], ["-N4"], ["-N4", "--segment=2"]]


def canonical_by_domain(placements):
    """Placements with the generator's blocks renamed A, B in order of first
    use and nodes as offsets within their block."""
    names = {}
    out = []
    for nodes in placements:
        job = []
        for n in nodes:
            if DOMAIN[n] not in names:
                names[DOMAIN[n]] = "AB"[len(names)]
            job.append(f"{names[DOMAIN[n]]}{(int(n[2:]) - 1) % 6}")
        out.append(sorted(job))
    return out


def place_sequence(c):
    placements = []
    for args in SEGMENT_SEQUENCE:
        placements.append(c.wait_running(c.sbatch(*args)))
    return placements


def nvlblock_check():
    build = os.environ.get("NVLCLUSTER_BUILD_DIR") or os.path.join(REPO, "build")
    path = os.path.join(build, "tools", "check", "nvlblock-check")
    if not os.access(path, os.X_OK):
        raise AssertionError(f"{path} is not built")
    return path


class TopologyYaml(ClusterTest):

    def test_topology_yaml_is_never_silent(self):
        with Cluster("topoyaml", racks=2, nodes_per_rack=PER_RACK,
                     flags=["--slice", "3", "--spares", "1"]) as c:
            self.assertGreaterEqual(c.slurm_version, (25, 5, 0), "needs Slurm 25.05 or later")
            etc = c.path("etc")
            conf = os.path.join(etc, "slurm.conf")
            yaml = os.path.join(etc, "topology.yaml")
            self.assertEqual(c.topology_block("rack01")["Slice"], "3")
            with open(yaml, "w") as f:
                f.write(TOPOLOGY_YAML)

            # Slurm on its own: TopologyPlugin=topology/nvlblock without
            # prep/nvlblock starts with Slurm's block plugin instead.
            with open(conf) as f:
                original = f.read()
            self.assertIn("PrEpPlugins=prep/script,prep/nvlblock\n", original)
            with open(conf, "w") as f:
                f.write(original.replace("PrEpPlugins=prep/script,prep/nvlblock\n", ""))
            mark = len(c.log_lines(r"nvlblock: \d+ blocks, \d+ nodes from"))
            c.restart_ctld(kill=False)
            self.assertIn("topology/nvlblock", c.run("scontrol", "show", "config").stdout)
            self.assertEqual(len(c.log_lines(r"nvlblock: \d+ blocks, \d+ nodes from")), mark,
                             "nvlblock built its blocks although topology.yaml is there")
            shown = c.run("scontrol", "show", "topology").stdout
            self.assertNotIn("Slice=", shown)
            self.assertIn("BlockName=rack01", shown)
            # The rack's spare is not withheld any more: 4 nodes in one rack run.
            job = c.sbatch("-N4", "-w", ",".join(rack_nodes("rack01", PER_RACK)))
            c.wait_running(job)
            c.cancel(job)
            p = subprocess.run([nvlblock_check(), "--slurm-conf", conf], capture_output=True, text=True)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertIn(f"{yaml}: Slurm 25.05 and later read this file and ignore TopologyPlugin= and "
                          "topology.conf, so topology/nvlblock would not run", p.stderr)  # problems on stderr

            # With prep/nvlblock (what docs/admin.md configures): slurmctld
            # does not start, and says why.
            with open(conf, "w") as f:
                f.write(original)
            with self.assertRaises(CommandError):
                c.restart_ctld(kill=False)
            c.wait_log(rf"prep/nvlblock: {yaml} exists: Slurm reads it instead of TopologyPlugin=topology/nvlblock "
                       r"and topology.conf, so nvlblock would not run\. Convert its block topology with "
                       rf"`nvlblock-check --from-topology-yaml {yaml}`", 10)
            c.wait_log(r"fatal: failed to initialize prep plugin", 10)

            # The conversion, then topology.yaml moved away: nvlblock runs on
            # the same racks, with slices and a spare as asked.
            p = subprocess.run([nvlblock_check(), "--from-topology-yaml", yaml, "--slurm-conf", conf,
                                "--output-dir", etc, "--force", "--slice", "3", "--spares", "1"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("topology 'cpus' (flat) is not carried over", p.stdout)
            shutil.move(yaml, yaml + ".orig")
            p = subprocess.run([nvlblock_check(), "--slurm-conf", conf], capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            c.restart_ctld(kill=False)
            c.wait_log(r"nvlblock: 2 blocks, 8 nodes from .*nvlblock\.yaml", 10)
            for rack in ("rack01", "rack02"):
                b = c.topology_block(rack)
                self.assertEqual((b["Nodes"], b["Slice"], b["Spares"]),
                                 (f"gb[{rack_nodes(rack, PER_RACK)[0][2:]}-{rack_nodes(rack, PER_RACK)[-1][2:]}]",
                                  "3", "1"), b)
            job = c.sbatch("-N3")
            nodes = c.wait_running(job)
            self.assertEqual(len({rack_name_of(n, PER_RACK) for n in nodes}), 1, nodes)

    def test_a_generators_file_under_another_name_places_like_block(self):
        with Cluster("topoyaml-nvl", racks=3, nodes_per_rack=4, flags=["--slice", "4", "--spares", "0"]) as c:
            self.assertGreaterEqual(c.slurm_version, (25, 5, 0), "needs Slurm 25.05 or later")
            os.makedirs(c.path("etc", "topology.d"))
            with open(c.path("etc", "topology.d", "racks.yaml"), "w") as f:
                f.write(GENERATED)
            with open(c.path("etc", "nvlblock.yaml"), "w") as f:
                f.write("topology_yaml: topology.d/racks.yaml\ndefaults:\n  slice: 6\n  spares: 0\n")
            p = subprocess.run([nvlblock_check(), "--slurm-conf", c.path("etc", "slurm.conf")],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("topology 'fabric' (tree) is not used", p.stdout + p.stderr)
            c.restart_ctld(kill=False)
            c.wait_log(r"nvlblock: 2 blocks, 12 nodes from .*nvlblock\.yaml", 10)
            self.assertEqual([b["BlockName"] for b in c.topology()], ["domain-b", "domain-a"])
            self.assertEqual(c.topology_block("domain-a")["Nodes"], "gb[0001-0006]")
            nvl = place_sequence(c)
            # The generator writes a broken file and the site reconfigures:
            # slurmctld starts afresh (re-executed), keeps the blocks it last
            # accepted (its copy of nvlblock.yaml and of topology.d/racks.yaml)
            # and its jobs.
            running = sorted(i for i, j in c.jobs().items() if j.get("JobState") == "RUNNING")
            self.assertEqual(len(running), len(SEGMENT_SEQUENCE), c.jobs_text())
            with open(c.path("etc", "topology.d", "racks.yaml"), "w") as f:
                f.write(GENERATED.replace("block_sizes: [6]", "block_sizes: [six]"))
            c.run("scontrol", "reconfigure", check=False)
            c.wait_log(r"keeping the previous topology \(.*nvlblock-config/nvlblock\.yaml", 30)
            c.wait_for(lambda: c.topology(), 30, "slurmctld answering after the reconfigure")
            self.assertEqual([b["BlockName"] for b in c.topology()], ["domain-b", "domain-a"])
            self.assertEqual(sorted(i for i, j in c.jobs().items() if j.get("JobState") == "RUNNING"), running,
                             c.jobs_text())
        with Cluster("topoyaml-blk", racks=3, nodes_per_rack=4, plugin="block") as c:
            # topology/block reads the same file as topology.yaml beside slurm.conf.
            with open(c.path("etc", "topology.yaml"), "w") as f:
                f.write(GENERATED)
            c.restart_ctld(kill=False)
            self.assertIn("BlockName=domain-a", c.run("scontrol", "show", "topology").stdout)
            blk = place_sequence(c)
        print(f"nvlblock (topology_yaml): {nvl}\ntopology/block (topology.yaml): {blk}", file=sys.stderr)
        for placements in (nvl, blk):
            self.assertEqual([len({DOMAIN[n] for n in nodes}) for nodes in placements], [1, 1, 2], placements)
            self.assertEqual(sorted(DOMAIN[n] for n in placements[2]), ["domain-a"] * 2 + ["domain-b"] * 2)
        self.assertEqual(canonical_by_domain(nvl), canonical_by_domain(blk))


if __name__ == "__main__":
    main()
