# SPDX-License-Identifier: GPL-2.0-or-later
"""What every module of the package shares: the error type, progress
messages, polling and the repository's paths."""

import os
import re
import sys
import time
from datetime import datetime
from typing import Callable, Optional, Tuple, TypeVar

T = TypeVar("T")


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
BUILD_SLURM = os.path.join(REPO, "scripts", "build-slurm")


# Marker put into every daemon's environment (see cluster_processes).
ENV_DIR = "NVLCLUSTER_DIR"


DEFAULT_PORT_BASE = 17000
DAEMON_NAMES = ("slurmctld", "slurmd", "slurmstepd")
# up --accounting: the record's names of slurmdbd and its MariaDB, in the
# order `down` stops them (slurmdbd first, so that it leaves nothing unwritten).
ACCOUNTING_DAEMONS = ("slurmdbd", "mariadb")
# --preempt-partition: the low-priority partition whose jobs are preemptible.
LEND_PARTITION = "lend"


class ClusterError(Exception):
    """A failure to report to the user as one clear message (exit status 1)."""


def log(msg: str, tag: str = "nvlcluster", clock: bool = False, stdout: bool = False) -> None:
    """One progress line: "tag: msg", or "[tag HH:MM:SS] msg" with `clock`
    (the harnesses, whose lines are read back against daemon logs). To
    stderr by default: stdout is reserved for `eval "$(nvlcluster up)"`;
    programs whose stdout is their log pass stdout=True. The stream is looked
    up per call, so a redirected sys.stderr is honoured."""
    head = f"[{tag} {time.strftime('%H:%M:%S')}]" if clock else f"{tag}:"
    print(f"{head} {msg}", file=sys.stdout if stdout else sys.stderr, flush=True)


def log_time(line: str) -> Optional[float]:
    """Seconds since the epoch of a Slurm log line ("[2026-12-02T17:03:49.747] ...",
    local time), or None for a line without that stamp."""
    m = re.match(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\]", line)
    return datetime.fromisoformat(m.group(1)).timestamp() if m else None


def poll(predicate: Callable[[], T], timeout: float, interval: float = 0.2) -> Tuple[bool, T]:
    """Call `predicate` until it returns something true or `timeout` seconds
    pass: (True, that value), or (False, the last value) for the message."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return True, value
        if time.monotonic() >= deadline:
            return False, value
        time.sleep(interval)


def wait_until(predicate: Callable[[], object], timeout: float, interval: float = 0.2) -> bool:
    """Poll `predicate` until it is true or `timeout` seconds pass."""
    return poll(predicate, timeout, interval)[0]


def tail(path: str, lines: int = 20) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
