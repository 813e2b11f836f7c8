# SPDX-License-Identifier: GPL-2.0-or-later
"""What a running cluster reports beyond jobs and nodes, for the cluster
tests and the benches that check nvlblock's own view: `scontrol show
topology`, the status JSON, the state file and the daemon logs, and waits
on them; also waits until a cluster is quiet again (wait_idle, reset)."""

import json
import os
import re

from . import client
from .client import CommandError, parse_kv


class Observed(client.Cluster):
    """A client.Cluster that also reads nvlblock's topology, status and
    state, and the daemon logs. A timed-out wait shows the topology and the
    end of slurmctld.log besides client.Cluster's context."""

    # -- paths -------------------------------------------------------------

    @property
    def jobs_dir(self):
        """Working directory of every client command: job output lands here."""
        return os.path.join(self.dir, "jobs")

    @property
    def ctld_log(self):
        return self.path("log", "slurmctld.log")

    @property
    def state_file(self):
        return self.path("state", "nvlblock_state")

    # -- commands ----------------------------------------------------------

    def node_states_short(self):
        """{node: state as plain `sinfo -N` prints it} (e.g. idle, alloc, block)."""
        p = self.run("sinfo", "-h", "-N", "-o", "%N %t")
        return dict(line.split() for line in p.stdout.splitlines())

    @property
    def slurm_version(self):
        """(major, minor, micro) of the Slurm this cluster runs."""
        if not hasattr(self, "_slurm_version"):
            out = self.run("scontrol", "--version").stdout
            m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
            if not m:
                raise CommandError(f"scontrol --version said {out!r}")
            self._slurm_version = tuple(int(x) for x in m.groups())
        return self._slurm_version

    def topology_args(self, block=None, nodes=None):
        """The `scontrol show topology` arguments that select a block or
        nodes: 24.11 takes either as its one argument; from 25.05 a bare
        argument names a topology, and block= / nodes= select."""
        if self.slurm_version < (25, 5, 0):
            return [block or nodes] if (block or nodes) else []
        return ([f"block={block}"] if block else []) + ([f"nodes={nodes}"] if nodes else [])

    def topology(self, arg=None):
        """`scontrol show topology [arg]`: one dict per block line (arg: a
        block name). nvlblock's summary line ("nvlblock: Blocks=...") is left
        out; use topology_summary()."""
        argv = ["scontrol", "show", "topology"] + self.topology_args(block=arg)
        p = self.run(*argv, check=False)
        self.last_topology_output = p.stdout + p.stderr
        return [parse_kv(line) for line in p.stdout.splitlines() if line.startswith("BlockName=")]

    def topology_block(self, name):
        for b in self.topology():
            if b.get("BlockName") == name:
                return b
        raise AssertionError(f"no block {name} in scontrol show topology: "
                             f"{self.last_topology_output}")

    def topology_summary(self):
        p = self.run("scontrol", "show", "topology")
        for line in p.stdout.splitlines():
            if line.startswith("nvlblock: "):
                return parse_kv(line[len("nvlblock: "):])
        return {}

    def status_json(self):
        with open(self.path("state", "nvlblock-status.json")) as f:
            return json.load(f)

    def status_block(self, name, status=None):
        status = status or self.status_json()
        for b in status["blocks"]:
            if b["name"] == name:
                return b
        raise AssertionError(f"no block {name} in the status JSON")

    def wait_status(self, predicate, timeout, what):
        """Wait until the status JSON (rewritten every status.interval)
        satisfies predicate(status); return it."""
        def check():
            try:
                s = self.status_json()
            except (OSError, ValueError):
                return None
            return s if predicate(s) else None
        return self.wait_for(check, timeout, what)

    def read_state_file(self):
        try:
            with open(self.state_file) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    # -- logs --------------------------------------------------------------

    def log_lines(self, pattern, which="slurmctld"):
        """Lines of a daemon log (slurmctld, or a node name) matching a regex."""
        path = self.ctld_log if which == "slurmctld" else self.path("log", f"slurmd-{which}.log")
        try:
            with open(path, errors="replace") as f:
                return [ln.rstrip("\n") for ln in f if re.search(pattern, ln)]
        except FileNotFoundError:
            return []

    def wait_log(self, pattern, timeout, which="slurmctld"):
        return self.wait_for(lambda: self.log_lines(pattern, which), timeout,
                             f"a line matching /{pattern}/ in the {which} log")

    # -- waiting -----------------------------------------------------------

    def failure_context(self):
        return (super().failure_context()
                + f"\ntopology now:\n{self._safe(self._topology_text)}"
                + f"\nslurmctld.log, last lines:\n{self._safe(self._ctld_log_tail)}")

    def _ctld_log_tail(self, lines=25):
        """The end of slurmctld's log: CI shows a failed test's output, not
        the logs keep_logs() saves on the machine it ran on."""
        with open(self.ctld_log, errors="replace") as f:
            return "".join(f.readlines()[-lines:])

    def _topology_text(self):
        return self.run("scontrol", "show", "topology", check=False).stdout

    def wait_restarted(self, jobid, timeout, old_nodes=None):
        """Wait until a requeued job runs again (a new start after its requeue);
        return its nodes."""
        def check():
            j = self.job(jobid)
            if j.get("JobState") == "RUNNING" and int(j.get("Restarts", "0")) >= 1:
                return self.expand(j.get("NodeList", ""))
            return None
        return self.wait_for(check, timeout, f"job {jobid} to run again after its requeue")

    def wait_pending_reason(self, jobid, needle, timeout):
        return self.wait_for(lambda: (lambda r: r if needle in r else None)(self.reason(jobid)),
                             timeout, f"job {jobid} to pend with a reason containing {needle!r}")

    def wait_idle(self, timeout=60):
        """Wait until no job is listed as running, completing or configuring
        and every node of the racks is idle, down or drained."""
        def check():
            if any(j["state"] in ("RUNNING", "COMPLETING", "CONFIGURING") for j in self.squeue()):
                return False
            return all(s.rstrip("*~#") in ("idle", "down", "drained", "draining")
                       for s in self.node_states().values())
        self.wait_for(check, timeout, "an idle cluster")

    def reset(self, timeout=60):
        """Cancel every job, resume every failed node, wait for quiet."""
        ids = [j["id"] for j in self.squeue()]
        self.cancel(*ids)
        failed = [n for n, s in self.node_states().items()
                  if s.rstrip("*~#$@") in ("down", "drained", "draining", "fail", "failing")]
        if failed:
            self.resume(*failed)
        self.wait_for(lambda: not self.squeue(), timeout, "an empty queue")
        self.wait_for(lambda: all(s == "idle" for s in self.node_states().values()), timeout,
                      "all nodes idle")
