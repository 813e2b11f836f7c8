# SPDX-License-Identifier: GPL-2.0-or-later
"""A cluster directory: its paths, the record of what `up` started, and
the lock that serialises commands on it."""

import fcntl
import json
import os
from typing import Dict, List, Optional

from .common import ENV_DIR, ClusterError
from .naming import FRONTEND_NAME, extra_names, node_name, node_width
from .procs import is_alive, proc_environ, proc_exe_name, proc_stat


RECORD_VERSION = 1


class Layout:
    """Paths of one cluster directory."""

    def __init__(self, directory: str):
        self.dir = os.path.abspath(directory)
        self.etc = os.path.join(self.dir, "etc")
        self.state = os.path.join(self.dir, "state")
        self.spool = os.path.join(self.dir, "spool")
        self.log = os.path.join(self.dir, "log")
        self.run = os.path.join(self.dir, "run")
        self.dev = os.path.join(self.dir, "dev")
        self.plugin = os.path.join(self.dir, "plugin")
        self.slurm_conf = os.path.join(self.etc, "slurm.conf")
        self.record = os.path.join(self.run, "cluster.json")
        self.lock = os.path.join(self.dir, ".nvlcluster.lock")

    def daemon_log(self, name: str) -> str:
        """The log Slurm itself writes for daemon `name` (slurmctld or a node)."""
        if name == "slurmctld":
            return os.path.join(self.log, "slurmctld.log")
        return os.path.join(self.log, f"slurmd-{name}.log")

    def daemon_stderr(self, name: str) -> str:
        """Where a daemon's stderr goes: fatal errors before its log file is
        open (a bad slurm.conf, a plugin that fails to load) only appear here."""
        if name == "slurmctld":
            return os.path.join(self.log, "slurmctld.stderr")
        return os.path.join(self.log, f"slurmd-{name}.stderr")


class Record:
    """DIR/run/cluster.json: the configuration `up` was given and the
    daemons it started, as {"name": {"pid", "start", "argv"}}."""

    def __init__(self, layout: Layout, data: dict):
        self.layout = layout
        self.data = data

    @classmethod
    def load(cls, layout: Layout) -> Optional["Record"]:
        try:
            with open(layout.record) as f:
                data = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise ClusterError(f"cannot read {layout.record}: {e}") from e
        return cls(layout, data)

    def save(self) -> None:
        # Write then rename, so a crash never leaves a half-written record.
        tmp = self.layout.record + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, self.layout.record)

    @property
    def daemons(self) -> Dict[str, dict]:
        return self.data.setdefault("daemons", {})

    def alive(self, name: str) -> bool:
        d = self.daemons.get(name)
        return bool(d) and is_alive(d.get("pid"), d.get("start"))

    def live_daemons(self) -> List[str]:
        return [n for n in self.daemons if self.alive(n)]

    @property
    def prefix(self) -> str:
        return self.data["prefix"]

    @property
    def front_end(self) -> bool:
        return self.data["front_end"]

    def node_names(self) -> List[str]:
        """Every node: the rack nodes, then the --extra-nodes servers (or the
        nodes of an `up --slurm-conf-fragment`)."""
        if self.data.get("nodes"):
            return list(self.data["nodes"])
        total = self.data["racks"] * self.data["nodes_per_rack"]
        width = node_width(total)
        return ([node_name(i, width) for i in range(1, total + 1)]
                + extra_names(self.data.get("extra_nodes", 0)))

    def slurmd_names(self) -> List[str]:
        """The names slurmd is started with: the front end, or every node."""
        return [FRONTEND_NAME] if self.front_end else self.node_names()

    def served_nodes(self, slurmd: str) -> List[str]:
        """The nodes the slurmd named `slurmd` answers for."""
        return self.node_names() if self.front_end else [slurmd]


def is_cluster_dir(layout: Layout) -> bool:
    """Whether DIR was made by nvlcluster. `up` wipes sub-directories of DIR
    and `down` kills what refers to it: neither may touch a directory that
    is not ours (think of --dir / or --dir $HOME)."""
    return os.path.exists(layout.lock) or os.path.exists(layout.record)


class DirLock:
    """An exclusive lock on a cluster directory, so that two nvlcluster
    commands never start or stop the same cluster at once."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.fd = None

    def __enter__(self):
        os.makedirs(self.layout.dir, exist_ok=True)
        self.fd = os.open(self.layout.lock, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def require_record(layout: Layout) -> Record:
    record = Record.load(layout)
    if record is None:
        raise ClusterError(f"no cluster in {layout.dir} (no {layout.record})")
    adopt_daemonized_ctld(record)
    return record


def adopt_daemonized_ctld(record: Record) -> None:
    """A daemonized slurmctld (up --ctld-daemonized) that reconfigured
    successfully is a new process with a new pid (Slurm 23.11+ forks one and
    the old one exits): take its pid from SlurmctldPidFile, when that process
    is a slurmctld of this cluster, so that restart-ctld, start-node and
    status find it instead of the pid `up` recorded."""
    if not record.data.get("ctld_daemonized") or record.alive("slurmctld"):
        return
    try:
        with open(os.path.join(record.layout.run, "slurmctld.pid")) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return
    st = proc_stat(pid)
    mine = f"{ENV_DIR}={record.layout.dir}".encode()
    if st is None or st[0] in ("Z", "X") or proc_exe_name(pid) != "slurmctld" or mine not in proc_environ(pid):
        return
    record.daemons.setdefault("slurmctld", {}).update(pid=pid, start=st[2])
    record.save()
