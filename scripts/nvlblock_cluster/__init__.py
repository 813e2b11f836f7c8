# SPDX-License-Identifier: GPL-2.0-or-later
"""nvlblock_cluster: local Slurm test clusters for nvlblock (Python 3
standard library only).

Modules, from the bottom up:
    common     ClusterError, log (the one progress printer), wait_until, the repository's paths
    naming     gb0001.., rack01.., cpu01.. and back (rack_name_of, rack_index_of, rack_nodes,
               block_containing)
    hostlist   Slurm hostlist expressions: expand_hostlist, compress_hostlist
    ports      port blocks claimed through lock files, for clusters side by side
    procs      /proc scanning: which processes belong to a cluster; stopping them
    layout     a cluster directory (Layout), its record (Record) and lock (DirLock)
    builds     Slurm builds (scripts/build-slurm) and the plugins built against them
    slurmconf  slurm.conf, topology.conf, nvlblock.yaml, gres.conf; fragments
    daemons    spawning and stopping daemons, client commands, waiting for nodes
    options    checks of `nvlcluster up`'s options
    lifecycle  the nvlcluster commands (up, down, status, env, restart-ctld, ...)
    client     a handle on a running cluster: export lines, jobs, node failures
    observe    what it reports beyond jobs: topology, status JSON, state file, logs
    scratch    a throw-away cluster for a `with` block (own directory and ports)
    ctest_log  why tests failed, from ctest's logs (scripts/ctest-failures)

scripts/nvlcluster is the command line over lifecycle; the demo, the benches
and the cluster tests drive clusters through client (the tests and the
reliability and recovery benches through scratch). Programs outside
scripts/ put the scripts directory on sys.path to import it.
"""
