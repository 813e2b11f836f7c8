#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Start slurmctld with one topology example on a front-end cluster and check
that `scontrol show topology` lists exactly its blocks, with their nodes.

    example_cluster_test.py --example topology.conf.examples/partial-racks \
        --topology nvlblock.yaml --plugin nvlblock [--status-bin build/.../nvlblock-status]

The cluster uses the example's own node names (nvlcluster up
--slurm-conf-fragment EXAMPLE/slurm-nodes.conf --topology FILE). With the
nvlblock plugin it also waits for the status file slurmctld writes and runs
nvlblock-status on it, found the way an operator would: through SLURM_CONF and
StateSaveLocation. Ports: a block of 100 from 26000 up, claimed with the lock
files test/cluster/nvltest.py uses, so concurrent cluster tests never collide.
"""

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
NVLCLUSTER = os.path.join(REPO, "scripts", "nvlcluster")
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster import common  # noqa: E402
from nvlblock_cluster.hostlist import expand_hostlist  # noqa: E402
from nvlblock_cluster.ports import PortBlock  # noqa: E402
from nvlblock_cluster.slurmconf import fragment_conf  # noqa: E402
PORT_FIRST, PORT_LAST, PORT_STEP = 26000, 29999, 100


log = functools.partial(common.log, tag="example-cluster", clock=True)


def expected_blocks(path, expand):
    """{block name: set of nodes} as the topology file writes them."""
    blocks = {}
    with open(path) as f:
        text = f.read()
    if path.endswith((".yaml", ".yml")):
        for name, nodes in re.findall(r"^\s*- name:\s*(\S+)\s*\n\s*nodes:\s*(\S+)", text, re.M):
            blocks[name] = set(expand(nodes))
    else:
        for name, nodes in re.findall(r"^\s*BlockName=(\S+)\s+Nodes=(\S+)", text, re.M | re.I):
            blocks[name] = set(expand(nodes))
    if not blocks:
        raise AssertionError(f"no block found in {path}")
    return blocks


def run(argv, env, timeout=60):
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--example", required=True)
    ap.add_argument("--topology", required=True, help="file name inside the example directory")
    ap.add_argument("--plugin", choices=("nvlblock", "block"), default="nvlblock")
    ap.add_argument("--status-bin", help="nvlblock-status to run on the status file")
    return ap.parse_args()


def cluster_up(opts, cdir, base, fragment, topology, env):
    """`nvlcluster up` in cdir; then env's SLURM_CONF and PATH lead to the
    cluster and its Slurm."""
    rc, out, err = run([NVLCLUSTER, "up", "--dir", cdir, "--front-end", "--port-base", str(base),
                        "--plugin", opts.plugin, "--slurm-conf-fragment", fragment,
                        "--topology", topology], env, timeout=600)
    if rc != 0:
        raise AssertionError(f"nvlcluster up failed ({rc}):\n{err}")
    with open(os.path.join(cdir, "run", "cluster.json")) as f:
        prefix = json.load(f)["prefix"]
    env["SLURM_CONF"] = os.path.join(cdir, "etc", "slurm.conf")
    env["PATH"] = f"{prefix}/bin:{prefix}/sbin:{os.environ.get('PATH', '/usr/bin:/bin')}"


def check_topology_shown(opts, env, expected, name):
    """`scontrol show topology` lists exactly the file's blocks, with their
    nodes (and, with nvlblock, its summary line)."""
    rc, out, err = run(["scontrol", "show", "topology"], env)
    if rc != 0:
        raise AssertionError(f"scontrol show topology failed ({rc}): {err}")
    shown = {}
    for line in out.splitlines():
        m = re.match(r"BlockName=(\S+) (?:BlockIndex=\d+ )?Nodes=(\S+)", line)
        if m:
            shown[m.group(1)] = set(expand_hostlist(m.group(2)))
    if set(shown) != set(expected):
        raise AssertionError(f"scontrol show topology lists blocks {sorted(shown)}, "
                             f"the file has {sorted(expected)}:\n{out}")
    for block, nodes in expected.items():
        if shown[block] != nodes:
            raise AssertionError(f"block {block}: scontrol shows {len(shown[block])} nodes, "
                                 f"the file has {len(nodes)}:\n{out}")
    if opts.plugin == "nvlblock":
        in_blocks = sum(len(n) for n in expected.values())
        summary = f"nvlblock: Blocks={len(expected)} Nodes={in_blocks} "
        if summary not in out:
            raise AssertionError(f"no '{summary}' line in:\n{out}")
    log(f"{name}: scontrol show topology lists the {len(expected)} blocks")


def check_all_idle(env, all_nodes):
    rc, out, err = run(["sinfo", "-h", "-N", "-o", "%N %T"], env)
    idle = {ln.split()[0] for ln in out.splitlines() if ln.split()[1:] == ["idle"]}
    if idle != set(all_nodes):
        raise AssertionError(f"{len(all_nodes)} nodes expected idle, sinfo has {len(idle)}")


def check_status(opts, cdir, env, expected, name):
    """Wait for slurmctld's status file; nvlblock-status shows every block
    and all nodes healthy."""
    status = os.path.join(cdir, "state", "nvlblock-status.json")
    deadline = time.monotonic() + 30
    while not os.path.exists(status) and time.monotonic() < deadline:
        time.sleep(0.5)
    rc, out, err = run([opts.status_bin], env)  # SLURM_CONF -> StateSaveLocation
    if rc != 0:
        raise AssertionError(f"nvlblock-status failed ({rc}): {err}\n{out}")
    rows = {ln.split()[0] for ln in out.splitlines() if ln.strip()}
    missing = set(expected) - rows
    if missing or f"from {status}" not in out:
        raise AssertionError(f"nvlblock-status output lacks blocks {sorted(missing)}:\n{out}")
    total = next((ln for ln in out.splitlines() if ln.startswith("TOTAL")), "")
    if total.split()[1:3] != [str(sum(len(n) for n in expected.values()))] * 2:
        raise AssertionError(f"TOTAL row is not all nodes healthy: {total!r}")
    log(f"{name}: nvlblock-status shows the {len(expected)} blocks")


def main():
    opts = parse_args()

    example = os.path.abspath(opts.example)
    fragment = os.path.join(example, "slurm-nodes.conf")
    topology = os.path.join(example, opts.topology)
    expected = expected_blocks(topology, expand_hostlist)
    all_nodes, _ = fragment_conf(fragment)

    ports = PortBlock(1, PORT_FIRST, PORT_LAST, PORT_STEP).__enter__()
    base = ports.base
    name = f"{os.path.basename(example)}-{opts.plugin}-{os.path.basename(topology)}".replace(".", "-")
    cdir = tempfile.mkdtemp(prefix=f"nvlops-ex-{name}-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    failed = True
    try:
        log(f"{name}: up in {cdir}, ports {base}+")
        cluster_up(opts, cdir, base, fragment, topology, env)
        check_topology_shown(opts, env, expected, name)
        check_all_idle(env, all_nodes)
        if opts.plugin == "nvlblock" and opts.status_bin:
            check_status(opts, cdir, env, expected, name)
        failed = False
    finally:
        run([NVLCLUSTER, "down", "--dir", cdir], env, timeout=120)
        ports.__exit__()
        if failed:
            log(f"{name}: FAILED; cluster directory kept: {cdir}")
        else:
            shutil.rmtree(cdir, ignore_errors=True)
    log(f"{name}: OK")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
