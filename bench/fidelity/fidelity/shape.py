# SPDX-License-Identifier: GPL-2.0-or-later
"""The replayed cluster and the scheduler settings both sides share."""


RACKS = 4
PER_RACK = 18
NODES = RACKS * PER_RACK
SLICE = 16
SPARES = 2
GPUS_PER_NODE = 4
REQUEUE_DELAY = 11          # AuthInfo=cred_expire=10 (nvlcluster) + 1
BF_INTERVAL = 5             # SchedulerParameters=sched_interval=5,bf_interval=5 (nvlcluster)
BF_MAX_JOB_TEST = 500       # Slurm's default
POLICIES = ("block", "nvlblock")
PORT_BASE = {"block": 31000, "nvlblock": 31100}
