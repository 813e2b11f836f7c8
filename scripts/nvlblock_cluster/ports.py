# SPDX-License-Identifier: GPL-2.0-or-later
"""Port blocks for test clusters that run side by side: a block of `step`
ports claimed through a lock file per block (held while the cluster lives)
and a check that nothing listens on the ports the cluster will use."""

import fcntl
import os
import socket
import tempfile
from typing import Optional

# Lock files of every harness that claims ports (test/cluster, test/examples).
LOCK_DIR = os.path.join(tempfile.gettempdir(), "nvlt-ports")


def port_free(port: int) -> bool:
    """Nothing listens on `port` (SO_REUSEADDR, as Slurm binds: sockets in
    TIME_WAIT of a cluster that just went down do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError:
            return False
    return True


# up --accounting: slurmdbd and MariaDB listen on the two ports after the
# slurmd's (the slurmctld port, then one per slurmd, then these two).
ACCOUNTING_PORTS = 2


def accounting_ports(port_base: int, slurmd_ports: int) -> "tuple[int, int]":
    """(slurmdbd's port, MariaDB's port) of a cluster whose slurmctld listens
    on port_base and whose slurmd take the next slurmd_ports ports."""
    return port_base + slurmd_ports + 1, port_base + slurmd_ports + 2


class PortBlock:
    """A context manager: `base` is the first of `count` + 1 free ports (the
    slurmctld port, then one per slurmd), at a multiple of `step` from
    `first`, claimed until exit."""

    def __init__(self, count: int, first: int, last: int, step: int = 100, lock_dir: str = LOCK_DIR):
        if count >= step:
            raise ValueError(f"a cluster of {count} ports does not fit in {step}")
        self.count, self.first, self.last, self.step, self.lock_dir = count, first, last, step, lock_dir
        self.base: Optional[int] = None
        self.fd: Optional[int] = None

    def __enter__(self) -> "PortBlock":
        os.makedirs(self.lock_dir, exist_ok=True)
        for base in range(self.first, self.last - self.step + 2, self.step):
            fd = os.open(os.path.join(self.lock_dir, f"{base}.lock"), os.O_CREAT | os.O_RDWR, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            if all(port_free(p) for p in range(base, base + self.count + 1)):
                self.base, self.fd = base, fd
                return self
            os.close(fd)
        raise RuntimeError(f"no free block of {self.step} ports in {self.first}-{self.last}")

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
