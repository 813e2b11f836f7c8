# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/fidelity's modules; bench/fidelity/run is the command line.

Modules, from the bottom up:
    common       paths (bench/fidelity, results/) and the progress lines
    shape        the replayed cluster and scheduler settings both sides share
    names        node offsets (node 0 = gb0001), racks, host lists for tables
    workload     the job mix (trace rows and slice jobs) and the failure schedule
    simulator    nvlblock-sim on the workload, and its runs per job
    ctld_log     the real side's runs per job from slurmctld's log; scontrol check
    replay       the real cluster per policy and the replay of jobs and failures
    metrics      utilization, waits, restarts, refill gaps: one code for both sides
    placement    where each job's first run went, real against simulated
    diagnostics  what explains the real side's differences
    plot         fidelity-busy.png (gnuplot)
    report       fidelity.md
    goals        utilization within 5 %, the same in-place decisions
    compare      fidelity.json: everything above per policy
"""
