# SPDX-License-Identifier: GPL-2.0-or-later
"""The soak's invariants (bench/soak), kept apart from the cluster that
feeds them so that a unit test (test_checker.py) can inject every kind of
violation and see it fire.

The soak's sampler hands the Checker what it reads from a running cluster,
each with the wall-clock time it was read at:

  ctld(now, pid_alive, answers)      slurmctld's pid (from its pid file) and
                                     `scontrol ping`
  queue(now, {job: (state, [nodes])}) every job slurmctld lists
                                     (`squeue -t all`)
  processes(now, {job: {(restart, node)}}) the batch scripts alive on this
                                     host, by job (/proc)
  log(lines)                         new lines of slurmctld.log
  slurmd_log(lines)                  a slurmd's log, read at the end
  status(now, status_json, prom_mtime) nvlblock's status JSON and the
                                     Prometheus file's mtime

and tells it what the soak does on purpose: track(job, spec) for every
submitted job, pause()/resume() around a slurmctld kill or reconfigure,
chaos(job, why) when the soak fails a job's node, GPU or the job itself.
finish(now, final) checks how every job ended.

Invariants (each violation is kept with its evidence):

  slurmctld   it dies (its pid gone) other than while the soak kills or
              reconfigures it, or does not answer for UNRESPONSIVE_S in a
              row; a crash signature in its log (fatal, assertion, signal,
              sanitizer report)
  lost        a job slurmctld acknowledged is gone from its job list
              before it was seen ending
  double      a node in two running jobs at once (every partition of the
              soak's cluster is exclusive)
  run_twice   a job's batch script alive on this host for two runs (two
              restart counts, or two nodes) for RUN_TWICE_S in a row
  ended       a job that did not end COMPLETED, unless the chaos explains
              its end: CANCELLED by the soak; FAILED or NODE_FAIL for a
              --no-requeue job the soak hit (a GPU fault, a node failure),
              or whose node slurmctld itself set DOWN as not responding
              (Slurm's SlurmdTimeout on a loaded host: counted apart, as
              slurm_set_down, in the summary); FAILED or NODE_FAIL for any
              job whose start slurmctld lost: SIGKILLed before its state
              save held the start (Slurm saves up to 5 s after a change,
              SAVE_MAX_WAIT in src/slurmctld/state_save.c), it recovered the
              job PENDING while its batch step ran and aborted that run
              ("Registered PENDING JobId=..." in its log; counted apart, as
              slurm_lost_start); FAILED for a job whose batch script
              a slurmd deleted before it ran (24.11's "Purging vestigial
              job script" in that slurmd's log; counted apart, as
              slurm_purged_script);
              PREEMPTED for a job of the preemptible partition; anything
              else (TIMEOUT, BOOT_FAIL, OUT_OF_MEMORY, a requeueable job
              FAILED...) is a violation, and so is a job still pending or
              running when the soak's drain time is over
  recovery    an nvlblock recovery (log: "lost N of M nodes ... fallback
              after W s") has no decision (restarted in place or elsewhere,
              fallback, left the queue) by W + DECISION_SLACK_S after it
              opened, slurmctld's own down time in between added; the same
              for a record of the status JSON past its fallback_at
  frozen      the status JSON's generated_at or the Prometheus file's mtime
              older than STALE_S while slurmctld runs and is in control

The constants are set from Slurm's and nvlblock's own timers, not from
runs (each says why).
"""

import re
from datetime import datetime

# nvlblock's status thread moves the recovery clock every 2 s (TICK_SECONDS,
# plugin/topology/status_thread.c) under Slurm's job read lock, which a
# scheduling pass holds for seconds on a loaded host; its log line then
# goes through slurmctld's log. 15 s is several ticks and passes.
DECISION_SLACK_S = 15
# The status files are written every status.interval (2 s in the soak) by
# the file writer; 30 s is many intervals: a file older than that was not
# being written.
STALE_S = 30
# After slurmctld starts (a kill, a reconfigure) its nodes register again
# and its first status pass runs; nothing about freshness is judged in
# this window (bench/reliability/harness.py SETTLE_AFTER_START).
SETTLE_S = 30
# A slurmctld that answers no `scontrol ping` for this long is as good as
# dead for its users (MessageTimeout is 10 s in the soak's cluster).
UNRESPONSIVE_S = 60
# A requeued job's old run is killed at once (KillWait 5 s) and its new run
# may start no sooner than cred_expire + 1 = 11 s later: two runs alive at
# once for 30 s are not a kill in progress.
RUN_TWICE_S = 30
# A job in a terminal state this long, and not requeued, has ended (a
# requeue passes through NODE_FAIL, PREEMPTED or FAILED for seconds).
FINAL_STABLE_S = 20

TERMINAL = {"COMPLETED", "FAILED", "NODE_FAIL", "CANCELLED", "TIMEOUT", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
            "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"}
CRASH = re.compile(r"\bfatal\b|[Aa]ssertion|\bassert\b|Segmentation|SIGSEGV|SIGABRT|SIGBUS|double free|"
                   r"corrupted|terminate called|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                   r"stack smashing|core dumped")
LOG_TIME = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\]")
LOST = re.compile(r"nvlblock: recovery JobId=(\d+) lost (\d+) of (\d+) nodes .*fallback after (\d+) s")
RESTARTED = re.compile(r"nvlblock: recovery JobId=(\d+) restarted (in place|elsewhere) .* (-?\d+) s after the failure")
FALLBACK = re.compile(r"nvlblock: recovery JobId=(\d+) fallback after (-?\d+) s")
LEFT = re.compile(r"nvlblock: recovery JobId=(\d+) left the queue")
RECLAIM = re.compile(r"nvlblock: recovery JobId=(\d+) reclaiming ")
SET_DOWN = re.compile(r"Nodes? (\S+) not responding, setting DOWN")
# slurmctld recovered a job PENDING whose batch step a node still runs: the
# state it read was saved before the job started (src/slurmctld/job_mgr.c).
LOST_START = re.compile(r"Registered PENDING JobId=(\d+)\b")
# slurmd 24.11 took a refused connection to a batch step not yet listening
# for a stray step and deleted the job's script before it ran (its
# src/common/stepd_api.c _handle_stray_script; gone from 25.05 on).
PURGED_SCRIPT = re.compile(r"_handle_stray_script: Purging vestigial job script \S*/job0*(\d+)/slurm_script")
# A job seen running on a node this recently was on it when slurmctld set
# the node DOWN (the queue is sampled every 2 s; a loaded host's sample can
# lag by a scheduling pass).
SET_DOWN_LOOKBACK_S = 30


def log_time(line):
    """slurmctld's [2026-12-05T11:46:24.123] (local time) -> epoch seconds, or None."""
    m = LOG_TIME.match(line)
    if not m:
        return None
    text = m.group(1)
    fmt = "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S"
    return datetime.strptime(text, fmt).timestamp()


class Checker:

    def __init__(self, decision_slack=DECISION_SLACK_S, stale=STALE_S, settle=SETTLE_S,
                 unresponsive=UNRESPONSIVE_S, run_twice=RUN_TWICE_S, final_stable=FINAL_STABLE_S,
                 expand_hostlist=lambda expr: expr.split(",")):
        self.expand_hostlist = expand_hostlist
        self.decision_slack = decision_slack
        self.stale = stale
        self.settle = settle
        self.unresponsive = unresponsive
        self.run_twice_s = run_twice
        self.final_stable = final_stable
        self.violations = []
        self._seen_violation = set()
        # slurmctld
        self.pause_depth = 0
        self.pauses = []            # [start, end or None]
        self.settle_until = 0.0
        self.unanswered_since = None
        self.ctld_samples = 0
        self.ctld_unanswered_samples = 0
        # jobs
        self.jobs = {}              # job -> spec dict (size, partition, requeue, ...)
        self.explained = {}         # job -> set of reasons the soak gave
        self.last = {}              # job -> (state, since)
        self.ended = {}             # job -> terminal state, once stable
        self.missing = {}           # job -> consecutive samples missing
        self.seen_on = {}           # node -> {job: last time seen running on it}
        self.slurm_set_down = set()  # jobs on a node slurmctld set DOWN on its own
        self.slurm_lost_start = set()  # jobs whose start slurmctld lost to a SIGKILL
        self.slurm_purged_script = set()  # jobs whose batch script a slurmd deleted before it ran
        self.max_running = 0
        self.queue_samples = 0
        self.twice_since = {}       # job -> first time seen with two runs
        self.process_samples = 0
        self.max_scripts = 0        # most batch scripts seen at once: 0 would mean the scan sees nothing
        # recoveries
        self.open = {}              # job -> {"at", "wait", "line"}
        self.recoveries = {"failures": 0, "in_place": 0, "elsewhere": 0, "fallbacks": 0, "abandoned": 0,
                           "reclaims": 0, "decision_seconds_max": 0.0}
        self.crash_lines = 0
        self.status_samples = 0
        self.last_generated = None

    # -- what the soak does on purpose ---------------------------------------

    def violation(self, kind, text, evidence=None, key=None):
        key = key or (kind, text)
        if key in self._seen_violation:
            return
        self._seen_violation.add(key)
        self.violations.append({"kind": kind, "text": text, "evidence": evidence or []})

    def pause(self, now):
        """slurmctld goes down or restarts on purpose until resume()."""
        if self.pause_depth == 0:
            self.pauses.append([now, None])
        self.pause_depth += 1

    def resume(self, now):
        self.pause_depth -= 1
        if self.pause_depth == 0:
            self.pauses[-1][1] = now
            self.settle_until = now + self.settle
            self.unanswered_since = None

    @property
    def paused(self):
        return self.pause_depth > 0

    def settled(self, now):
        return not self.paused and now >= self.settle_until

    def down_seconds(self, start, end):
        """Seconds of [start, end] slurmctld spent in pauses and their settling."""
        total = 0.0
        for a, b in self.pauses:
            b = end if b is None else b + self.settle
            lo, hi = max(a, start), min(b, end)
            if hi > lo:
                total += hi - lo
        return total

    def track(self, job, spec):
        self.jobs[job] = dict(spec)

    def chaos(self, job, why):
        """The soak hit job's node, GPU, or the job itself (why: 'node',
        'gpu', 'cancel', 'preempt')."""
        self.explained.setdefault(job, set()).add(why)

    # -- samples --------------------------------------------------------------

    def ctld(self, now, pid_alive, answers, evidence=None):
        self.ctld_samples += 1
        if self.paused:
            return
        if not pid_alive:
            self.violation("slurmctld", f"slurmctld died at {now:.0f} (its pid is gone) and the soak did not "
                           "kill it", evidence, key=("slurmctld-died", round(now)))
            return
        if answers:
            self.unanswered_since = None
            return
        self.ctld_unanswered_samples += 1
        if self.unanswered_since is None:
            self.unanswered_since = now
        elif now - self.unanswered_since >= self.unresponsive:
            self.violation("slurmctld", f"slurmctld has not answered scontrol ping since {self.unanswered_since:.0f} "
                           f"({now - self.unanswered_since:.0f} s)", evidence,
                           key=("unanswered", self.unanswered_since))

    def queue(self, now, jobs):
        """jobs: {job id: (state, [node names])} from one listing."""
        self.queue_samples += 1
        owner = {}
        running = 0
        for job, (state, nodes) in sorted(jobs.items()):
            if state != "RUNNING":
                continue
            running += 1
            for n in nodes:
                if n in owner:
                    self.violation("double", f"{n} is in running jobs {owner[n]} and {job}",
                                   [f"{j}: {jobs[j][0]} {','.join(jobs[j][1])}" for j in (owner[n], job)],
                                   key=("double", n, owner[n], job))
                else:
                    owner[n] = job
                self.seen_on.setdefault(n, {})[job] = now
        self.max_running = max(self.max_running, running)
        for job in self.jobs:
            if job in self.ended:
                continue
            if job not in jobs:
                if self.paused:
                    continue
                self.missing[job] = self.missing.get(job, 0) + 1
                if self.missing[job] == 2:
                    last = self.last.get(job)
                    self.violation("lost", f"job {job} is gone from slurmctld's job list",
                                   [f"last seen {last[0]} at {last[1]:.0f}" if last else "never seen listed",
                                    f"spec {self.jobs[job]}"], key=("lost", job))
                continue
            self.missing.pop(job, None)
            state = jobs[job][0]
            prev = self.last.get(job)
            if prev is None or prev[0] != state:
                self.last[job] = (state, now)
            elif state in TERMINAL and now - prev[1] >= self.final_stable:
                self.ended[job] = state

    def processes(self, now, runs):
        """runs: {job id: {(restart count, node)}} of batch scripts alive."""
        self.process_samples += 1
        self.max_scripts = max(self.max_scripts, sum(len(v) for v in runs.values()))
        for job, seen in runs.items():
            if len(seen) > 1:
                since = self.twice_since.setdefault(job, now)
                if now - since >= self.run_twice_s:
                    self.violation("run_twice", f"job {job} has run twice at once for {now - since:.0f} s",
                                   [f"runs (restart count, node): {sorted(seen)}"], key=("run_twice", job))
            else:
                self.twice_since.pop(job, None)
        for job in list(self.twice_since):
            if job not in runs:
                del self.twice_since[job]

    def log(self, lines, source="slurmctld.log"):
        for line in lines:
            if CRASH.search(line):
                self.crash_lines += 1
                self.violation("slurmctld", f"crash signature in {source}", [line.rstrip()],
                               key=("crash", line))
            m = SET_DOWN.search(line)
            if m:
                self._set_down(m.group(1), log_time(line))
                continue
            m = LOST_START.search(line)
            if m:
                self._slurm_lost(int(m.group(1)), "slurm_lost_start", self.slurm_lost_start)
                continue
            if "nvlblock: recovery JobId=" not in line:
                continue
            at = log_time(line)
            m = LOST.search(line)
            if m:
                job = int(m.group(1))
                self.recoveries["failures"] += 1
                self.open[job] = {"at": at, "wait": int(m.group(4)), "line": line.rstrip()}
                continue
            m = RESTARTED.search(line)
            if m:
                self.recoveries["in_place" if m.group(2) == "in place" else "elsewhere"] += 1
                self._decided(int(m.group(1)), at, line)
                continue
            m = FALLBACK.search(line)
            if m:
                self.recoveries["fallbacks"] += 1
                self._decided(int(m.group(1)), at, line)
                continue
            m = LEFT.search(line)
            if m:
                self.recoveries["abandoned"] += 1
                self._decided(int(m.group(1)), at, line)
                continue
            if RECLAIM.search(line):
                self.recoveries["reclaims"] += 1

    def slurmd_log(self, lines):
        """A slurmd's log: only the batch scripts it deleted as strays count."""
        for line in lines:
            m = PURGED_SCRIPT.search(line)
            if m:
                self._slurm_lost(int(m.group(1)), "slurm_purged_script", self.slurm_purged_script)

    def _slurm_lost(self, job, why, jobs):
        """Slurm itself ended the job's run (`why`): explained, and listed in `jobs`."""
        self.explained.setdefault(job, set()).add(why)
        jobs.add(job)

    def _set_down(self, hostlist, at):
        """slurmctld set these nodes DOWN itself: the jobs on them lost a
        node as surely as by the soak's hand."""
        for node in self.expand_hostlist(hostlist):
            for job, seen in self.seen_on.get(node, {}).items():
                if at is None or seen >= at - SET_DOWN_LOOKBACK_S:
                    self._slurm_lost(job, "slurm_set_down", self.slurm_set_down)

    def _decided(self, job, at, line):
        rec = self.open.pop(job, None)
        if rec is None or rec["at"] is None or at is None:
            return
        took = at - rec["at"]
        self.recoveries["decision_seconds_max"] = max(self.recoveries["decision_seconds_max"], round(took, 1))
        bound = rec["wait"] + self.decision_slack + self.down_seconds(rec["at"], at)
        if took > bound:
            self.violation("recovery", f"job {job}'s recovery was decided {took:.0f} s after it opened, past its "
                           f"bound of {bound:.0f} s (wait {rec['wait']} s)", [rec["line"], line.rstrip()],
                           key=("recovery", job, rec["at"]))

    def overdue(self, now):
        """Open recoveries past their bound with no decision yet."""
        for job, rec in self.open.items():
            if rec["at"] is None:
                continue
            bound = rec["wait"] + self.decision_slack + self.down_seconds(rec["at"], now)
            if now - rec["at"] > bound:
                self.violation("recovery", f"job {job}'s recovery has had no decision for {now - rec['at']:.0f} s, "
                               f"past its bound of {bound:.0f} s (wait {rec['wait']} s)", [rec["line"]],
                               key=("recovery", job, rec["at"]))

    def status(self, now, status, prom_mtime):
        """status: the parsed status JSON or None (missing or unreadable)."""
        if not self.settled(now):
            return
        self.status_samples += 1
        generated = status.get("generated_at") if status else None
        if generated is None or now - generated > self.stale:
            self.violation("frozen", f"nvlblock's status JSON was last written at {generated} ({now:.0f} now)",
                           [], key=("frozen-json", generated))
        if prom_mtime is None or now - prom_mtime > self.stale:
            self.violation("frozen", f"nvlblock's Prometheus file was last written at {prom_mtime} ({now:.0f} now)",
                           [], key=("frozen-prom", prom_mtime))
        if generated is not None and self.last_generated is not None and generated < self.last_generated - 1:
            self.violation("frozen", f"the status JSON went back in time ({self.last_generated} -> {generated})",
                           [], key=("backwards", generated))
        if generated is not None:
            self.last_generated = generated
        for r in (status or {}).get("recoveries", {}).get("pending", []):
            if r.get("fallback") or r.get("fallback_at") is None:
                continue
            bound = r["fallback_at"] + self.decision_slack + self.down_seconds(r.get("failed_at", now), now)
            if now > bound:
                self.violation("recovery", f"job {r.get('job_id')} still waits for its block in the status JSON "
                               f"{now - r['fallback_at']:.0f} s after its fallback time", [str(r)],
                               key=("recovery", r.get("job_id"), r.get("failed_at")))

    # -- the end --------------------------------------------------------------

    def explain(self, job, state, info):
        """None if the job's end is explained, else why not."""
        spec = self.jobs.get(job, {})
        why = self.explained.get(job, set())
        if state == "COMPLETED":
            return None
        if state == "CANCELLED" and "cancel" in why:
            return None
        if state in ("FAILED", "NODE_FAIL") and not spec.get("requeue") and why & {"gpu", "node", "slurm_set_down"}:
            return None
        if state in ("FAILED", "NODE_FAIL") and "slurm_lost_start" in why:
            return None
        if state == "FAILED" and "slurm_purged_script" in why:
            return None
        if state == "PREEMPTED" and spec.get("preemptible"):
            return None
        if state in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "SUSPENDED"):
            return f"still {state} when the soak ended ({info})"
        return f"ended {state} ({info}; requeue={spec.get('requeue')}, soak did: {sorted(why) or 'nothing'})"

    def finish(self, now, final):
        """final: {job: (state, info text)} after the drain: every tracked job."""
        ends = {}
        for job in sorted(self.jobs):
            state, info = final.get(job, (self.ended.get(job), "not listed at the end"))
            if state is None:
                if ("lost", job) not in self._seen_violation:
                    self.violation("lost", f"job {job} is not in slurmctld's job list at the end", [],
                                   key=("lost", job))
                ends["LOST"] = ends.get("LOST", 0) + 1
                continue
            ends[state] = ends.get(state, 0) + 1
            bad = self.explain(job, state, info)
            if bad:
                self.violation("ended", f"job {job} {bad}", [f"spec {self.jobs[job]}"], key=("ended", job))
        self.overdue(now)
        return ends

    def summary(self):
        kinds = {}
        for v in self.violations:
            kinds[v["kind"]] = kinds.get(v["kind"], 0) + 1
        return {"violations": len(self.violations), "violations_by_kind": kinds,
                "samples": {"ctld": self.ctld_samples, "ctld_unanswered": self.ctld_unanswered_samples,
                            "queue": self.queue_samples, "status": self.status_samples,
                            "processes": self.process_samples},
                "most_batch_scripts_seen_at_once": self.max_scripts,
                "max_running_jobs": self.max_running, "recoveries": dict(self.recoveries),
                # Only those the soak's own node failures do not explain
                # (its kills show up as "not responding" too).
                "jobs_on_nodes_slurm_set_down": sorted(j for j in self.slurm_set_down
                                                       if not self.explained.get(j, set()) & {"node", "gpu"}),
                "jobs_whose_start_slurm_lost": sorted(self.slurm_lost_start),
                "jobs_whose_script_slurmd_purged": sorted(self.slurm_purged_script),
                "recoveries_open_at_end": sorted(self.open), "slurmctld_pauses": len(self.pauses),
                "slurmctld_paused_seconds": round(sum((b or a) - a for a, b in self.pauses), 1)}
