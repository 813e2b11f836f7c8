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
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nvltest import REPO, Cluster, ClusterTest, CommandError, main, rack_nodes, rack_of  # noqa: E402

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
            self.assertIn("PrEpPlugins=prep/nvlblock\n", original)
            with open(conf, "w") as f:
                f.write(original.replace("PrEpPlugins=prep/nvlblock\n", ""))
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
            self.assertEqual(p.returncode, 1, p.stdout)
            self.assertIn(f"{yaml}: Slurm 25.05 and later read this file and ignore TopologyPlugin= and "
                          "topology.conf, so topology/nvlblock would not run", p.stdout)

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
            self.assertEqual(p.returncode, 0, p.stdout)
            c.restart_ctld(kill=False)
            c.wait_log(r"nvlblock: 2 blocks, 8 nodes from .*nvlblock\.yaml", 10)
            for rack in ("rack01", "rack02"):
                b = c.topology_block(rack)
                self.assertEqual((b["Nodes"], b["Slice"], b["Spares"]),
                                 (f"gb[{rack_nodes(rack, PER_RACK)[0][2:]}-{rack_nodes(rack, PER_RACK)[-1][2:]}]",
                                  "3", "1"), b)
            job = c.sbatch("-N3")
            nodes = c.wait_running(job)
            self.assertEqual(len({rack_of(n, PER_RACK) for n in nodes}), 1, nodes)


if __name__ == "__main__":
    main()
