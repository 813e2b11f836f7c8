#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The docker-compose cluster's multi-host layout, under Linux network namespaces.

This machine has no Docker engine, so the layout of docker/docker-compose.yml
(slurmctld on host nvlctld, one slurmd per node host gb0001-gb0008, two racks
of four) runs here with one network namespace per host, joined by veth pairs
to a bridge that lives in a namespace of its own (nothing touches the root
namespace's network). Each daemon also gets its own UTS namespace, so
`hostname` on a node answers that node's name, and ip-netns's /etc/netns/NS
a private mount namespace gives every host the cluster's /etc/hosts.

The configuration is docker/etc itself: slurm.conf (node addresses, host
names, TreeWidth=2 so messages fan out through the slurmd), topology.conf and
nvlblock.yaml, with only paths and ports rewritten for a shared file system.
The plugins come from `cmake --install BUILD --prefix DIR/install`, the
installed layout a site gets (RUNPATH $ORIGIN finds libnvlblock).

Checks:
  1. all 8 nodes register from their own addresses and become idle;
  2. `scontrol show node` reports each node's NodeAddr/NodeHostName;
  3. a client on a node host decodes `scontrol show topology` (packed by
     slurmctld): two blocks, slice 3, 1 spare;
  4. `sbatch -N4 --segment=2` runs `srun hostname` across four hosts: two
     nodes on each rack (a rack's ordinary capacity is 3, so one segment of 2
     per rack), every task reporting the host name of its own node;
  5. `sbatch -N4 --segment=4` is refused at submission (a segment never
     exceeds the slice, and no block's slice is 4);
  6. with 3 nodes of each rack busy, a 1-node job pends with nvlblock's
     reason: the fourth node of each rack is its spare.

The namespaces, the bridge and the driver are netns_hosts.py's, shared with
failover_cluster.py. Namespaces are named nvlpkg-<pid>-<host>; they and every
process in them are removed at the end, whatever happens, and leftovers of runs whose
driver died (pid gone) are removed at the start. Exit status 77 (CTest
SKIP_RETURN_CODE) when network namespaces are unavailable (not root, no
iproute2, no CAP_SYS_ADMIN). Python 3 standard library only.
"""

import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import netns_hosts  # noqa: E402
from netns_hosts import Failure, Network, log  # noqa: E402
from nvlblock_cluster.naming import block_containing  # noqa: E402

REPO = netns_hosts.REPO
DOCKER_ETC = os.path.join(REPO, "docker", "etc")
CTLD_PORT = 29000
SLURMD_PORT = 29001


# --------------------------------------------------------------------------
# The layout, read from docker/etc/slurm.conf


class Layout:
    def __init__(self, conf_text):
        self.lines = conf_text.splitlines()
        self.nodes = []  # [(name, addr, hostname)]
        self.ctld_name = self.ctld_addr = None
        for line in self.lines:
            m = re.match(r"\s*SlurmctldHost=([^(\s]+)\(([\d.]+)\)", line, re.I)
            if m:
                self.ctld_name, self.ctld_addr = m.group(1), m.group(2)
            m = re.match(r"\s*NodeName=(\S+)\s+NodeAddr=(\S+)\s+NodeHostname=(\S+)", line, re.I)
            if m:
                self.nodes.append((m.group(1), m.group(2), m.group(3)))
        if not self.ctld_name or len(self.nodes) < 2:
            raise Failure("docker/etc/slurm.conf: expected SlurmctldHost=NAME(ADDR) and one "
                          "NodeName= line per node with NodeAddr= and NodeHostname=")

    def hosts(self):
        """[(namespace suffix, host name, address)], slurmctld first."""
        return [(self.ctld_name, self.ctld_name, self.ctld_addr)] + \
               [(name, host, addr) for name, addr, host in self.nodes]

    def rewritten(self, d, plugin_dirs):
        """slurm.conf for a shared file system: per-node paths (%n), our
        directory, our ports and plugin directories. Everything else -
        addresses, host names, plugins, TreeWidth - stays as in docker/etc."""
        replace = {
            "pluginDir": ":".join(plugin_dirs),
            "StateSaveLocation": f"{d}/state",
            "SlurmdSpoolDir": f"{d}/spool/%n",
            "SlurmctldPidFile": f"{d}/run/slurmctld.pid",
            "SlurmdPidFile": f"{d}/run/slurmd-%n.pid",
            "SlurmctldLogFile": f"{d}/log/slurmctld.log",
            "SlurmdLogFile": f"{d}/log/slurmd-%n.log",
            "SlurmctldPort": str(CTLD_PORT),
            "SlurmdPort": str(SLURMD_PORT),
            "ClusterName": "nvlnetns",
        }
        keys = {k.lower(): v for k, v in replace.items()}
        out, seen = [], set()
        for line in self.lines:
            key = line.split("=", 1)[0].strip().lower()
            if key in keys and "=" in line and not line.lstrip().startswith("#"):
                out.append(f"{line.split('=', 1)[0].strip()}={keys[key]}")
                seen.add(key)
            else:
                out.append(line)
        missing = set(keys) - seen
        if missing:
            raise Failure(f"docker/etc/slurm.conf lacks {', '.join(sorted(missing))}")
        return "\n".join(out) + "\n"


def wait_all_idle(c, names):
    """1. Every node registered and idle."""
    log(f"waiting for {len(names)} nodes to be idle")

    def all_idle():
        states = c.node_states()
        if states is None:
            return False, "slurmctld not answering"
        return (len(states) == len(names) and all(s == "idle" for s in states.values()),
                states)
    c.wait("all nodes idle", all_idle, 90)


def check_node_addresses(c, layout):
    # 2. Node addressing, as slurmctld has it.
    for name, addr, host in layout.nodes:
        out = c.run("scontrol", "show", "node", name).stdout
        if f"NodeAddr={addr}" not in out or f"NodeHostName={host}" not in out:
            raise Failure(f"scontrol show node {name}: expected NodeAddr={addr} NodeHostName={host}:\n{out}")
    log("every node registered from its own address")


def check_topology(c, names):
    """3. A client on another host decodes the topology slurmctld packed;
    {block name: set of nodes}."""
    topo = c.run("scontrol", "show", "topology", host=names[-1]).stdout
    print(topo, end="")
    blocks = {}
    for line in topo.splitlines():
        m = re.match(r"BlockName=(\S+) Nodes=(\S+) .*\bSlice=(\d+) Spares=(\d+)", line)
        if m:
            blocks[m.group(1)] = set(c.expand(m.group(2)))
            if (m.group(3), m.group(4)) != ("3", "1"):
                raise Failure(f"block {m.group(1)}: expected Slice=3 Spares=1 from nvlblock.yaml: {line}")
    if sorted(blocks) != ["rack01", "rack02"] or set().union(*blocks.values()) != set(names):
        raise Failure(f"scontrol show topology: expected rack01 and rack02 covering every node:\n{topo}")
    return blocks


def check_segment_job(c, blocks):
    # 4. A segment job across hosts.
    out_dir = os.path.join(c.d, "out")
    script = ("#!/bin/sh\n"
              "echo \"batch host $(hostname) nodes $SLURM_JOB_NODELIST\"\n"
              "srun -l hostname\n")
    script_path = os.path.join(c.d, "etc", "segment.sh")
    with open(script_path, "w") as f:
        f.write(script)
    p = c.run("sbatch", "--parsable", "-N4", "--segment=2", "-o", f"{out_dir}/%j.out", script_path)
    job = p.stdout.strip().split(";")[0]
    log(f"job {job}: sbatch -N4 --segment=2 (srun -l hostname)")

    def finished():
        state = c.job_field(job, "JobState")
        return state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY"), state
    state = c.wait(f"job {job} to finish", finished, 120)
    nodes = c.expand(c.job_field(job, "NodeList"))
    with open(os.path.join(out_dir, f"{job}.out")) as f:
        output = f.read()
    print(output, end="")
    if state != "COMPLETED":
        raise Failure(f"job {job} ended {state}; output:\n{output}")
    per_rack = {}
    for n in nodes:
        per_rack.setdefault(block_containing(n, blocks), []).append(n)
    log(f"job {job} ran on {','.join(nodes)}: {per_rack}")
    if len(nodes) != 4 or sorted(len(v) for v in per_rack.values()) != [2, 2] or None in per_rack:
        raise Failure(f"job {job}: expected 2 nodes on each rack (one segment of 2 per rack), got {per_rack}")
    task_hosts = sorted(m.group(1) for m in re.finditer(r"^\d+: (\S+)$", output, re.M))
    if task_hosts != sorted(nodes):
        raise Failure(f"job {job}: tasks ran on {task_hosts}, expected one on each of {sorted(nodes)}")
    batch = re.search(r"^batch host (\S+)", output, re.M)
    if not batch or batch.group(1) != nodes[0]:
        raise Failure(f"job {job}: batch script should run on {nodes[0]}: {output}")
    log("every task answered with its own node's host name")


def check_oversized_segment_refused(c):
    # 5. A segment larger than every slice can never run: sbatch refuses it,
    # with topology/block's message for such a segment.
    p = c.run("sbatch", "--parsable", "-N4", "--segment=4", "-o", "/dev/null", "--wrap", "true", check=False)
    if p.returncode == 0 or "Requested topology configuration is not available" not in p.stderr:
        raise Failure(f"sbatch -N4 --segment=4 (slice 3): expected a refusal, got {p.returncode}: "
                      f"{p.stdout}{p.stderr}")
    log("sbatch -N4 --segment=4 refused: " + p.stderr.strip())


def check_spares_withheld(c):
    # 6. Spares are withheld from ordinary work: with 3 of each rack's 4
    # nodes busy, a 1-node job waits, and says why.
    held = []
    for _ in range(2):
        p = c.run("sbatch", "--parsable", "-N3", "-o", "/dev/null", "--wrap", "sleep 300")
        held.append(p.stdout.strip().split(";")[0])
    c.wait("two 3-node jobs running", lambda: (all(c.job_field(j, "JobState") == "RUNNING" for j in held),
                                               [c.job_field(j, "NodeList") for j in held]), 60)
    p = c.run("sbatch", "--parsable", "-N1", "-o", "/dev/null", "--wrap", "true")
    small = p.stdout.strip().split(";")[0]

    def reason():
        r = c.run("squeue", "-h", "-j", small, "-o", "%T|%r").stdout.strip()
        return r.startswith("PENDING|nvlblock:"), r
    r = c.wait(f"job {small}'s nvlblock pending reason", reason, 60)
    log(f"job {small} (-N1, every rack's ordinary capacity in use): {r}")
    if "spares" not in r:
        raise Failure(f"job {small}: expected a reason about withheld spares, got {r}")
    # How the other views show it (docs/users.md quotes them).
    log(f"  squeue -o %R: {c.run('squeue', '-h', '-j', small, '-o', '%R').stdout.strip()}")
    log(f"  scontrol show job: Reason={c.job_field(small, 'Reason')}")
    c.run("scancel", small, *held)


def scenario(c, layout):
    names = [n for n, _, _ in layout.nodes]
    wait_all_idle(c, names)
    check_node_addresses(c, layout)
    blocks = check_topology(c, names)
    check_segment_job(c, blocks)
    check_oversized_segment_refused(c)
    check_spares_withheld(c)


def body(s):
    with open(os.path.join(DOCKER_ETC, "slurm.conf")) as f:
        layout = Layout(f.read())
    d, prefix = s.d, s.prefix
    # The installed layout, as a site gets it.
    plugin_dir = netns_hosts.install_plugins(s.opts.build_dir, os.path.join(d, "install"))
    for name, _, _ in layout.nodes:
        os.makedirs(os.path.join(d, "spool", name))
    with open(os.path.join(d, "etc", "slurm.conf"), "w") as f:
        f.write(layout.rewritten(d, [os.path.join(prefix, "lib", "slurm"), plugin_dir]))
    for extra in ("topology.conf", "nvlblock.yaml", "cgroup.conf"):
        shutil.copy(os.path.join(DOCKER_ETC, extra), os.path.join(d, "etc", extra))

    s.net = Network(layout.hosts(), os.path.join(d, "etc", "hosts"))
    s.net.up()
    log(f"{len(layout.hosts())} hosts on a bridge: " +
        ", ".join(f"{h}={a}" for _, h, a in layout.hosts()))
    cluster = s.cluster = netns_hosts.Cluster(d, prefix, s.net, layout.ctld_name)
    cluster.start(layout.ctld_name, layout.ctld_name,
                  [os.path.join(prefix, "sbin", "slurmctld"), "-D", "-c", "-f", cluster.conf],
                  "slurmctld")
    cluster.wait("slurmctld to answer",
                 lambda: (cluster.run("scontrol", "ping", check=False).returncode == 0, None), 60)
    for name, _, host in layout.nodes:
        cluster.start(name, host, [os.path.join(prefix, "sbin", "slurmd"), "-D", "-N", name,
                                   "-f", cluster.conf], f"slurmd-{name}")
    scenario(cluster, layout)


def main():
    return netns_hosts.main(__doc__.split("\n\n")[0], "nvlpkg-netns-",
                            ("etc", "state", "spool", "log", "run", "out", "install"), body)


if __name__ == "__main__":
    sys.exit(main())
