# SPDX-License-Identifier: GPL-2.0-or-later
"""The reliability scenarios (bench/reliability/run, test/cluster/test_reliability.py):
each starts its own cluster, injects its faults with the invariant sampler
running (harness.py), and returns its figures as a dict. Times are bounded:
every wait has a deadline.
"""

import os
import re
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from harness import Cluster, Churn, Sampler, log, rack_name_of  # noqa: E402,F401
from nvlblock_cluster.common import poll  # noqa: E402

# cred_expire=10 on test clusters: a requeued job may start 11 s later; a
# failed job's nodes are held 11 + 30 s at least, so the recovery wait is
# longer than that (its hold then ends at its fallback time).
RECOVERY_WAIT = 60
SLURMD_TIMEOUT = 10
EXTRA_CONF = ["MinJobAge=3600"]  # finished jobs stay visible for the whole run


def cluster_flags(reserve, extra=()):
    flags = ["--recovery-wait", str(RECOVERY_WAIT), "--slurmd-timeout", str(SLURMD_TIMEOUT),
             "--status-interval", "5", "--extra-conf", *EXTRA_CONF]
    if reserve == "reclaim":
        flags += ["--reserve", "reclaim"]
    return flags + list(extra)


def start_slice_jobs(c, sampler, count, nodes=16):
    jobs = []
    for _ in range(count):
        job = c.sbatch(f"-N{nodes}", "--requeue", "-J", "slice", "-t", "60", wrap="sleep 3600")
        sampler.track(job, nodes)
        jobs.append(job)
    for job in jobs:
        c.wait_running(job, 120)
    return jobs


def storm(c, sampler, rng, racks, settle, on_failures=None):
    """Slice jobs on every rack, small jobs around them; 10% of the nodes
    stopped within 10 s; then `settle` seconds of recovery."""
    slices = start_slice_jobs(c, sampler, racks)
    churn = Churn(c, sampler, count=2 * racks + 4, seed=rng.random())
    churn.start()
    time.sleep(15)  # small jobs fill what the slices leave
    nodes = [f"gb{i:04d}" for i in range(1, racks * 18 + 1)]
    victims = sorted(rng.sample(nodes, max(1, round(0.10 * len(nodes)))))
    log(f"storm: stopping {len(victims)} nodes within 10 s: {','.join(victims)}")
    t_fail = time.time()
    spread = harness.stop_nodes(c, victims, 10)
    if on_failures:
        on_failures(victims, churn)
    time.sleep(settle)
    churn.stop()
    # The failed nodes come back (repair): they rejoin their blocks' spares.
    repaired_at = time.time()
    harness.start_nodes(c, victims)
    time.sleep(15)
    restarted = sum(1 for j in slices if int(c.job(j).get("Restarts", "0")) >= 1)
    running = sum(1 for j in slices if c.state(j) == "RUNNING")
    return {"nodes": len(nodes), "faults": len(victims), "fault_spread_s": round(spread, 1),
            "slice_jobs": len(slices), "slice_jobs_restarted": restarted, "slice_jobs_running_at_end": running,
            "small_jobs": churn.submitted, "failed_at": t_fail, "repaired_at": repaired_at}


def run_storm(args, rng, extra_action=None, name=None):
    racks = 4
    with Cluster(name or f"rel-storm-{args.reserve}", racks=racks, flags=cluster_flags(args.reserve)) as c:
        sampler = Sampler(c, reserve=args.reserve)
        sampler.start()
        t0 = time.monotonic()
        try:
            out = storm(c, sampler, rng, racks, args.settle,
                        on_failures=(lambda v, churn: extra_action(c, sampler, churn, v)) if extra_action else None)
        finally:
            sampler.stop()
        out["seconds"] = round(time.monotonic() - t0)
        out["recoveries"] = harness.recoveries(c, repaired_at=out.pop("repaired_at"))
        out["invariants"] = sampler.summary()
        out["reserve"] = args.reserve
        out["slurmctld_kills"] = sampler.kills
        out["rejected_reconfigures"] = getattr(sampler, "rejected_reconfigures", None)
        keep_logs_if_violated(c, out)
        return out


def keep_logs_if_violated(c, out):
    """A run whose invariants failed keeps its cluster's logs, state and
    configuration (the directory is removed on return): the cause of a
    failure is in slurmctld's log, and a CI run that cannot show it leaves
    only a guess."""
    if not harness.passed(out["invariants"]) or out["recoveries"].get("in_place_on_failed_nodes"):
        out["logs_kept"] = c.keep_logs()
        log(f"invariants failed: logs of {c.dir} kept in {out['logs_kept']}")


def kill_ctld(c, sampler, churn, why):
    # slurmctld saves its state asynchronously, at most every 5 s: a job
    # submitted just before a SIGKILL may be lost by Slurm itself. No
    # submissions in the 8 s before each kill, so every loss seen is ours.
    churn.paused.set()
    time.sleep(8)
    wait_for_a_state_save(c)
    log(f"kill: SIGKILL slurmctld {why}")
    sampler.pause_ctld()
    try:
        c.restart_ctld(kill=True)
    finally:
        sampler.resume_ctld()
        churn.paused.clear()
    sampler.kills.append(why)


def kill_actions(c, sampler, churn, victims):
    # Mid-storm: right after the last node was stopped (slurmctld has not
    # declared most of them down yet).
    kill_ctld(c, sampler, churn, "mid-storm")
    # Mid-recovery: once a job waits to restart in place (requeued, its
    # record saved, not yet running again).
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if any(ln.startswith("RecoveryPending ") and "Fallback=no" in ln
               for ln in c.run("scontrol", "show", "topology", check=False).stdout.splitlines()):
            kill_ctld(c, sampler, churn, "mid-recovery")
            return
        time.sleep(0.5)


def wait_for_a_state_save(c, within=7.0):
    """Return right after slurmctld next writes its job state (or after
    `within` s: with nothing to save it writes nothing). Mid-storm, Slurm
    requeues jobs and declares nodes down all the time; a SIGKILL loses what
    it did since its last save (up to 5 s), and a job whose requeue is lost
    is restored RUNNING on nodes that killed it, and ends FAILED by Slurm's
    own doing (the likely cause of a project CI run's failure: all four
    slice jobs FAILED after the mid-storm kill, never requeued). Killed just
    after a save, what is lost is Slurm's last fraction of a second."""
    t = time.time()
    poll(lambda: c.state_saved_since(t, ("job_state",)), within, 0.05)
    poll(lambda: c.state_saved_since(t), 0.5, 0.05)  # nodes: the same pass, right after the jobs


def reconfigure(c, sampler):
    # A reconfigure starts slurmctld afresh (Slurm 23.11+; in the foreground
    # it re-executes itself): it does not answer for a moment.
    sampler.pause_ctld()
    try:
        c.run("scontrol", "reconfigure", check=False)
        c.wait_for(lambda: "UP" in c.run("scontrol", "ping", check=False).stdout, 60, "slurmctld to answer")
    finally:
        sampler.resume_ctld()


def badconf_action(c, sampler, churn, victims):
    conf = c.path("etc", "nvlblock.yaml")
    with open(conf) as f:
        good = f.read()
    # Mid-storm: a broken file (a YAML syntax error) and a reconfigure.
    with open(conf, "w") as f:
        f.write(good + "blocks_typo: [\nnot yaml at all: : :\n")
    reconfigure(c, sampler)
    c.wait_log(r"nvlblock: keeping the previous topology", 30)
    time.sleep(20)  # recoveries go on under the previous topology
    with open(conf, "w") as f:
        f.write(good)
    accepted = len(c.log_lines(rf"nvlblock: \d+ blocks, \d+ nodes from {re.escape(conf)}"))
    reconfigure(c, sampler)
    c.wait_for(lambda: len(c.log_lines(rf"nvlblock: \d+ blocks, \d+ nodes from {re.escape(conf)}")) > accepted,
               30, "the good nvlblock.yaml to be read again")
    sampler.rejected_reconfigures = len(c.log_lines(r"nvlblock: keeping the previous topology"))


def run_flap(args, rng):
    with Cluster("rel-flap", racks=2, flags=cluster_flags(args.reserve)) as c:
        sampler = Sampler(c, reserve=args.reserve)
        sampler.start()
        t0 = time.monotonic()
        try:
            job = start_slice_jobs(c, sampler, 1)[0]
            flapper = c.nodes(job)[5]
            flaps = 0
            end = time.monotonic() + args.flap_seconds
            while time.monotonic() < end:
                c.set_down(flapper, reason="flap")
                flaps += 1
                time.sleep(rng.uniform(10, 20))
                c.resume(flapper)
                time.sleep(rng.uniform(10, 20))
            time.sleep(30)
            final = c.job(job)
        finally:
            sampler.stop()
        nodes = c.expand(final.get("NodeList", "")) if final.get("NodeList") else None
        out = {"nodes": 36, "faults": flaps, "flapping_node": flapper, "slice_jobs": 1,
               "slice_job_restarts": int(final.get("Restarts", "0")), "slice_job_state": final.get("JobState"),
               "slice_job_rack": rack_name_of(nodes[0]) if nodes else None,
               "seconds": round(time.monotonic() - t0), "recoveries": harness.recoveries(c),
               "invariants": sampler.summary(), "reserve": args.reserve}
        keep_logs_if_violated(c, out)
        return out


def rack_others(nodes):
    """The nodes of the 18-node rack of `nodes` that are not in it (names as theirs)."""
    width = len(nodes[0]) - 2
    first = (int(nodes[0][2:]) - 1) // 18 * 18 + 1
    return [f"gb{i:0{width}d}" for i in range(first, first + 18) if f"gb{i:0{width}d}" not in set(nodes)]


def fill_spares_with_lent_work(c, placed):
    """--scale-lend: a preemptable 1-node job (partition lend) on each other
    node of every slice job's rack, so that each failure is answered by a
    reclaim: the pass plans, asks Slurm and preempts under its locks."""
    lent = [c.sbatch("-N1", "-p", "lend", "--requeue", "-J", "lent", "-w", n, "-t", "60", wrap="sleep 3600")
            for nodes in placed.values() for n in rack_others(nodes)]
    c.wait_for(lambda: sum(1 for j in c.squeue() if j["state"] == "RUNNING") >= len(placed) + len(lent), 600,
               f"{len(lent)} lent jobs to run")
    return lent


def set_down_retrying(c, nodes, tries=4):
    """scontrol update state=down, again if slurmctld was too busy to answer
    within MessageTimeout (18,432 nodes, hundreds of requeues at once): the
    storm goes on as planned, and the retries are counted in the log."""
    for attempt in range(tries):
        try:
            c.set_down(*nodes, reason="scale")
            return
        except Exception as e:  # CommandError: "Socket timed out on send/recv operation"
            if "timed out" not in str(e) or attempt == tries - 1:
                raise
            log(f"scale: scontrol timed out setting {len(nodes)} nodes down; again ({attempt + 1})")
            time.sleep(2)


def run_scale(args, rng):
    racks = args.scale_racks
    flags = ["--front-end", "--recovery-wait", str(RECOVERY_WAIT), "--status-interval", "10",
             "--extra-conf", *EXTRA_CONF, "SchedulerParameters=sched_interval=5,bf_interval=5,default_queue_depth=1000"]
    if args.reserve == "reclaim":
        flags += ["--reserve", "reclaim"]
    if args.scale_lend:
        flags += ["--preempt-partition"]
    with Cluster("rel-scale", racks=racks, flags=flags) as c:
        sampler = Sampler(c, interval=1.0, accounting_every=5, reserve=args.reserve)
        sampler.start()
        t0 = time.monotonic()
        try:
            jobs = []
            for _ in range(args.scale_jobs):
                job = c.sbatch("-N16", "--requeue", "-J", "slice", "-t", "60", wrap="sleep 3600")
                sampler.track(job, 16)
                jobs.append(job)
            c.wait_for(lambda: sum(1 for j in c.squeue() if j["state"] == "RUNNING") >= len(jobs), 600,
                       f"{len(jobs)} slice jobs to run")
            placed = {j["id"]: c.expand(j["nodes"]) for j in c.squeue() if j["id"] in set(jobs)}
            lent = fill_spares_with_lent_work(c, placed) if args.scale_lend else []
            # One node of each job fails; a tenth lose three (more than their
            # rack's spares: they restart elsewhere once their wait is over).
            order = list(jobs)
            rng.shuffle(order)
            heavy = set(order[: len(order) // 10])
            victims = []
            for j in order:
                nodes = placed[j]
                victims.append(nodes[3:6] if j in heavy else [nodes[3]])
            log(f"scale: failing {sum(len(v) for v in victims)} nodes under {len(order)} slice jobs within 60 s")
            t_fail = time.monotonic()
            batch = 16
            for i in range(0, len(victims), batch):
                target = t_fail + 60 * i / len(victims)
                time.sleep(max(0.0, target - time.monotonic()))
                set_down_retrying(c, [n for v in victims[i:i + batch] for n in v])
            spread = time.monotonic() - t_fail
            # Every job back: in place within Slurm's requeue delay, the rest
            # after their recovery wait.
            c.wait_for(lambda: sum(1 for j in jobs if int(c.job(j).get("Restarts", "0")) >= 1
                                   and c.state(j) == "RUNNING") >= len(jobs),
                       RECOVERY_WAIT + 600, "every slice job to run again")
            time.sleep(10)
        finally:
            sampler.stop()
        summary = c.topology_summary()
        passes = c.status_json()["recoveries"].get("reclaim_passes")
        return {"nodes": racks * 18, "faults": sum(len(v) for v in victims), "fault_spread_s": round(spread, 1),
                "slice_jobs": len(jobs), "slice_jobs_losing_more_than_spares": len(heavy),
                "lent_jobs": len(lent), "reclaim_passes": passes,
                "seconds": round(time.monotonic() - t0), "recoveries": harness.recoveries(c),
                "ledger": summary, "invariants": sampler.summary(), "reserve": args.reserve}


def options(**overrides):
    """The scenarios' settings, as the command line gives them."""
    base = dict(reserve="idle", seed=1, settle=90, flap_seconds=120, scale_jobs=320, scale_lend=False, scale_racks=1024)
    base.update(overrides)
    return SimpleNamespace(**base)
