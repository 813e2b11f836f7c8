#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# nvlblock-node ROLE: the entry point of the test-cluster image.
#   slurmctld   run slurmctld in the foreground (this host is SlurmctldHost)
#   slurmd      run slurmd in the foreground as the node named like this host
#   anything else is run as a command (e.g. bash, sinfo)
# slurm.conf, topology.conf and nvlblock.yaml come from /etc/slurm (a
# read-only mount of docker/etc); state, spool and logs stay in the container.
set -eu
SLURM_CONF=${SLURM_CONF:-/etc/slurm/slurm.conf}
export SLURM_CONF
role=${1:-slurmd}

case "$role" in
slurmctld)
	mkdir -p /var/spool/slurmctld /var/log/slurm
	exec slurmctld -D -f "$SLURM_CONF"
	;;
slurmd)
	# Node name = host name (hostname: in docker-compose.yml). slurm.conf
	# gives every node its NodeAddr and NodeHostname.
	node=$(hostname -s)
	mkdir -p /var/spool/slurmd /var/log/slurm
	exec slurmd -D -N "$node" -f "$SLURM_CONF"
	;;
*)
	exec "$@"
	;;
esac
