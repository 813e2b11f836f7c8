# SPDX-License-Identifier: GPL-2.0-or-later
"""Slurm's timers in the test clusters, in one place: nvlcluster's
slurm.conf (slurmconf.py), the harnesses that wait on them (test/cluster
nvltest.py, test/netns) and the docs read them here. Each is the smallest
value that still tests what production does on a loaded two-core host;
the comment says why it is not smaller.

docker/etc/slurm.conf (the Docker cluster, a static file a site may copy)
repeats these values; unit.python.nvlblock_cluster checks that it does."""

# AuthInfo=cred_expire: a requeued job may not start again before
# cred_expire + 1 s (Slurm's default 120). Slurm clamps it below 5 s;
# 10 leaves a node failure's requeue and the epilog room to finish first
# (the failover test kills the primary inside that window).
CRED_EXPIRE = 10

# SchedulerParameters sched_interval / bf_interval: how often the main and
# backfill schedulers pass over the queue (default 60 and 30). 5 s: at 2 s,
# four clusters side by side on two cores spend their CPU scheduling.
SCHED_INTERVAL = 5
BF_INTERVAL = 5

# SlurmdTimeout: a stopped slurmd is marked DOWN after this (default 300).
# 30 s keeps slurmd restarts of a loaded host from reading as failures;
# tests that stop slurmd (stop-node) shorten it with --slurmd-timeout.
SLURMD_TIMEOUT = 30

# MessageTimeout (default 10): forwarded pings to a dead slurmd fail after
# it. 30 without --slurmd-timeout: a busy host answers late, not never.
MESSAGE_TIMEOUT = 30

# KillWait: SIGTERM to SIGKILL at the end of a job (default 30).
KILL_WAIT = 5

# MinJobAge: finished jobs stay visible to squeue/scontrol this long
# (default 300), long enough for every test to read their end.
MIN_JOB_AGE = 300

# The earliest a requeued job starts again: cred_expire + 1 s, then a
# scheduling pass must reach it (nvltest.REQUEUE_DELAY adds nothing for it:
# tests add the pass to their own timeouts).
REQUEUE_DELAY = CRED_EXPIRE + 1


def message_timeout(slurmd_timeout=None):
    """MessageTimeout for a --slurmd-timeout: short enough that a forwarded
    ping to a dead slurmd fails soon, long enough for a busy two-core host."""
    return MESSAGE_TIMEOUT if not slurmd_timeout else max(5, min(10, slurmd_timeout))
