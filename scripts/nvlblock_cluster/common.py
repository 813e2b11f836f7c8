# SPDX-License-Identifier: GPL-2.0-or-later
"""What every module of the package shares: the error type, progress
messages, polling and the repository's paths."""

import os
import sys
import time


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
BUILD_SLURM = os.path.join(REPO, "scripts", "build-slurm")


# Marker put into every daemon's environment (see cluster_processes).
ENV_DIR = "NVLCLUSTER_DIR"


DEFAULT_PORT_BASE = 17000
DAEMON_NAMES = ("slurmctld", "slurmd", "slurmstepd")
# --preempt-partition: the low-priority partition whose jobs are preemptible.
LEND_PARTITION = "lend"


class ClusterError(Exception):
    """A failure to report to the user as one clear message (exit status 1)."""


def log(msg):
    """Progress goes to stderr: stdout is reserved for `eval "$(nvlcluster up)"`."""
    print(f"nvlcluster: {msg}", file=sys.stderr, flush=True)


def wait_until(predicate, timeout, interval=0.2):
    """Poll `predicate` until it is true or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def tail(path, lines=20):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])
