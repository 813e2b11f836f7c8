#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A primary and a backup slurmctld, with the primary killed during a recovery.

Two controller hosts (nvlctld1, the primary, and nvlctld2, the backup: two
SlurmctldHost lines), a client host and eight node hosts (two racks of four,
slice 3, 1 spare), each host a network namespace with its own address and,
for every daemon, its own host name (Slurm picks a controller's index by its
host name) and its own /run-like directory for the pid file and the log; the
StateSaveLocation is one directory both controllers use, as a shared file
system is at a real site. Short timers: SlurmctldTimeout=8 (the backup takes
over about 10-15 s after the primary dies), cred_expire=10, sched_interval=2,
nvlblock's status file every second. The plugins come from `cmake --install`.

Every file written in StateSaveLocation is attributed to the process that
wrote it (fanotify(7): the kernel reports the writer's pid on each close
after writing), so "the standby writes nothing" is checked, not inferred.

Checks:
  1. only the primary took control: the claim <StateSaveLocation>/nvlblock_owner
     names its host and pid; the backup's log has no nvlblock line;
  2. a 3-node --requeue job A on one rack, a 3-node job B on the other, a
     3-node --requeue job C waiting; one of A's nodes set DOWN; once the
     failure is in nvlblock_state and Slurm saved its job and node state, the
     primary is killed (SIGKILL of every process of its host) before A may
     start again;
  3. no nvlblock file changes between the kill and the backup's takeover;
     the backup claims control (its host and pid), loads the saved state and
     restarts A in place: A's two healthy nodes plus its rack's spare, and the
     log line "nvlblock: recovery JobId=A restarted in place on rackNN";
  4. the primary is started again and is slow to load its state (stopped
     with SIGSTOP from its REQUEST_CONTROL until SLOW_START s after the
     backup is back in standby, as a large job state on a slow file system
     would keep it): the backup gives control back, writing nothing once in
     standby; `scontrol ping` says "Slurmctld(primary) at nvlctld1 is UP"
     and the backup UP; the claim is the new primary's; the primary knows
     the recovery the backup made (InPlace=1: the state the backup saved); A
     keeps running where it runs; B cancelled, the primary places C on B's
     rack; before 25.11 the backup logs "another slurmctld has taken
     control" (from 25.11 Slurm's own standby flag answers first);
  5. a second recovery under the primary (one of C's nodes DOWN, C restarted
     in place), then the primary killed again: the backup takes control again,
     logs "another slurmctld had control since: reading its saved state" and
     shows both recoveries (it remembered only one);
  6. throughout: no tracked job lost (each pending, running or finished), no
     node in two running jobs; by the writers' pids: the backup wrote no
     nvlblock file before its takeover, while giving control back or in
     standby; a killed primary nothing after its death; the restarted
     primary's writes and the backup's never interleave.

Slurm 24.11 and 26.05 both answer the primary's REQUEST_CONTROL only after
CONTROL_TIMEOUT - 1 = 29 s ("REQUEST_CONTROL reply but backup not completely
done relinquishing control"), stock topology/block too: a run takes about
100 s on two cores.

Exit status 77 (CTest SKIP_RETURN_CODE) when network namespaces are
unavailable; netns_hosts.py has the namespaces, the bridge and the driver.
Python 3 standard library only.
"""

import ctypes
import datetime
import hashlib
import os
import re
import select
import shutil
import signal
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import netns_hosts  # noqa: E402
from netns_hosts import Failure, Network, log  # noqa: E402
from nvlblock_cluster.naming import block_containing  # noqa: E402

netns_hosts.LOG_TAG[0] = "failover"
DOCKER_ETC = os.path.join(netns_hosts.REPO, "docker", "etc")
SUBNET = "172.28.78"
PRIMARY = ("ctld1", "nvlctld1", f"{SUBNET}.10")
BACKUP = ("ctld2", "nvlctld2", f"{SUBNET}.11")
LOGIN = ("login", "nvllogin", f"{SUBNET}.5")
NODES = [(f"gb{i:04d}", f"{SUBNET}.{20 + i}") for i in range(1, 9)]
RACKS = {"rack01": [n for n, _ in NODES[:4]], "rack02": [n for n, _ in NODES[4:]]}
CTLD_PORT = 29000
SLURMD_PORT = 29001
SLURMCTLD_TIMEOUT = 8
CRED_EXPIRE = 10
# How long the restarted primary takes to load its state after the backup
# let go (less than SlurmctldTimeout, or the backup would take over again).
SLOW_START = 4
LOCAL = "local"          # DIR/local: each host's own directory (pid file, log)
FINISHED = ("COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
            "BOOT_FAIL", "DEADLINE")


# --------------------------------------------------------------------------
# Who writes what in StateSaveLocation


class WriteWatch:
    """fanotify(7) on a directory: for every file of it closed after being
    written, (wall-clock time, writer's pid, file name). nvlblock writes each
    file as .NAME.tmp.XXXX renamed onto NAME; the name recorded is NAME."""

    FAN_CLOEXEC, FAN_NONBLOCK = 0x1, 0x2
    FAN_MARK_ADD = 0x1
    FAN_CLOSE_WRITE = 0x8
    FAN_EVENT_ON_CHILD = 0x08000000
    AT_FDCWD = -100
    META = struct.Struct("IBBHQii")

    def __init__(self, directory):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
        libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int,
                                       ctypes.c_char_p]
        self.fd = libc.fanotify_init(self.FAN_CLOEXEC | self.FAN_NONBLOCK, os.O_RDONLY | os.O_LARGEFILE)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), f"fanotify_init: {os.strerror(ctypes.get_errno())}")
        if libc.fanotify_mark(self.fd, self.FAN_MARK_ADD, self.FAN_CLOSE_WRITE | self.FAN_EVENT_ON_CHILD,
                              self.AT_FDCWD, directory.encode()) != 0:
            err = ctypes.get_errno()
            os.close(self.fd)
            raise OSError(err, f"fanotify_mark {directory}: {os.strerror(err)}")
        self.events = []
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @staticmethod
    def _name(path):
        base = os.path.basename(path.removesuffix(" (deleted)"))
        m = re.match(r"^\.(.+)\.tmp\.[^.]+$", base)
        return m.group(1) if m else base

    def _loop(self):
        while not self.stopping:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if not ready:
                continue
            now = time.time()
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                continue
            off = 0
            while off + self.META.size <= len(buf):
                length, _, _, _, mask, efd, pid = self.META.unpack_from(buf, off)
                off += length or self.META.size
                if efd < 0:
                    continue
                try:
                    path = os.readlink(f"/proc/self/fd/{efd}")
                except OSError:
                    path = "?"
                os.close(efd)
                with self.lock:
                    self.events.append((now, pid, self._name(path)))

    def nvlblock_writes(self):
        with self.lock:
            return [e for e in self.events if e[2].startswith("nvlblock")]

    def stop(self):
        self.stopping = True
        self.thread.join(5)
        os.close(self.fd)


# --------------------------------------------------------------------------
# The configuration


def slurm_conf(d, plugin_dirs):
    lines = [
        "# Generated by test/netns/failover_cluster.py: a primary and a backup",
        "# slurmctld sharing StateSaveLocation, two racks of four node hosts.",
        "ClusterName=nvlfailover",
        f"SlurmctldHost={PRIMARY[1]}({PRIMARY[2]})",
        f"SlurmctldHost={BACKUP[1]}({BACKUP[2]})",
        f"SlurmctldPort={CTLD_PORT}",
        f"SlurmdPort={SLURMD_PORT}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/none",
        "CredType=cred/none",
        # A requeued job may not restart before now + cred_expire + 1 s.
        f"AuthInfo=cred_expire={CRED_EXPIRE}",
        f"PluginDir={':'.join(plugin_dirs)}",
        f"StateSaveLocation={d}/state",
        f"SlurmdSpoolDir={d}/spool/%n",
        # Each controller host's own directory (bound over DIR/local).
        f"SlurmctldPidFile={d}/{LOCAL}/slurmctld.pid",
        f"SlurmctldLogFile={d}/{LOCAL}/slurmctld.log",
        f"SlurmdPidFile={d}/run/slurmd-%n.pid",
        f"SlurmdLogFile={d}/log/slurmd-%n.log",
        "SlurmdParameters=config_overrides",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "ProctrackType=proctrack/linuxproc",
        "MpiDefault=none",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=sched_interval=2,bf_interval=2",
        # A manual DOWN stays DOWN (design.md 5).
        "ReturnToService=1",
        # The backup pings every SlurmctldTimeout/3 s and takes over once the
        # primary has not answered for SlurmctldTimeout s (heartbeat still).
        f"SlurmctldTimeout={SLURMCTLD_TIMEOUT}",
        "SlurmdTimeout=30",
        "MessageTimeout=5",
        "InactiveLimit=0",
        "KillWait=2",
        "MinJobAge=600",
        "MailProg=/bin/true",
    ] + ([f"SlurmctldDebug={os.environ['NVLTEST_CTLD_DEBUG']}"] if os.environ.get("NVLTEST_CTLD_DEBUG") else []) + [
        "TopologyPlugin=topology/nvlblock",
        "PrEpPlugins=prep/script,prep/nvlblock",
    ]
    for name, addr in NODES:
        lines.append(f"NodeName={name} NodeAddr={addr} NodeHostname={name} CPUs=4 RealMemory=2000 "
                     "State=UNKNOWN")
    lines.append("PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE")
    return "\n".join(lines) + "\n"


NVLBLOCK_YAML = """\
# Generated by test/netns/failover_cluster.py: docker/etc's racks (slice 3,
# 1 spare, held idle), a recovery wait longer than any takeover, the status
# every second.
topology_conf: topology.conf
defaults:
  slice: 3
  spares: 1
  reserve: idle
recovery:
  wait: 180s
status:
  interval: 1s
"""


# --------------------------------------------------------------------------
# The cluster


def log_time(line):
    """Wall-clock time of a Slurm log line ([2026-12-02T16:48:28.123] ...)."""
    m = re.match(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?)\]", line)
    if not m:
        return None
    return datetime.datetime.fromisoformat(m.group(1)).timestamp()


class FailoverCluster(netns_hosts.Cluster):

    def __init__(self, s, net):
        super().__init__(s.d, s.prefix, net, LOGIN[0], log_globs=("log/*", "hosts/*/slurmctld.log"))
        self.ctlds = {}   # pid -> "primary#1" ...
        self.starts = {}  # suffix -> how many times started

    # -- controllers ---------------------------------------------------------

    def ctld_log(self, host):
        return os.path.join(self.d, "hosts", host[0], "slurmctld.log")

    def start_ctld(self, host):
        n = self.starts[host[0]] = self.starts.get(host[0], 0) + 1
        label = f"{'primary' if host is PRIMARY else 'backup'}#{n}"
        p = self.start(host[0], host[1], [os.path.join(self.prefix, "sbin", "slurmctld"), "-D",
                                          "-f", self.conf], f"slurmctld-{label}")
        self.ctlds[p.pid] = label
        log(f"slurmctld {label} started on {host[1]} (pid {p.pid})")
        return p

    def kill_ctld(self, host, proc):
        """SIGKILL of every process of the controller's host (slurmctld,
        slurmscriptd): the host died."""
        self.forget(f"slurmctld-{self.ctlds[proc.pid]}")
        if not netns_hosts.kill_ns_processes(self.net.ns(host[0])):
            raise Failure(f"processes of {host[1]} still alive after SIGKILL")
        proc.wait(10)
        log(f"slurmctld {self.ctlds[proc.pid]} on {host[1]} killed")
        return time.time()

    def log_lines(self, host, pattern, after=None):
        """[(time, line)] of a controller's log matching pattern, from `after` on."""
        try:
            with open(self.ctld_log(host), errors="replace") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            t = log_time(line)
            if re.search(pattern, line) and (after is None or (t is not None and t >= after)):
                out.append((t, line))
        return out

    def wait_log(self, host, pattern, timeout, after=None):
        """The first matching line (time, line) of a controller's log."""
        return self.wait(f"/{pattern}/ in {host[1]}'s slurmctld.log",
                         lambda: (lambda ls: (bool(ls), ls[0] if ls else None))(
                             self.log_lines(host, pattern, after)), timeout)

    def ping(self):
        """{host: UP/DOWN} as `scontrol ping` says."""
        out = self.run("scontrol", "ping", check=False).stdout
        return {m.group(2): m.group(3) for m in re.finditer(r"Slurmctld\((\w+)\) at (\S+) is (\w+)", out)}, out

    def owner(self):
        """(host, pid) of the claim in nvlblock_owner, None without one."""
        try:
            with open(os.path.join(self.d, "state", "nvlblock_owner")) as f:
                parts = f.read().split()
        except FileNotFoundError:
            return None
        return (parts[0], int(parts[1])) if len(parts) >= 2 and parts[1].isdigit() else tuple(parts)

    def wait_owner(self, host, proc, timeout=30):
        want = (host[1], proc.pid)
        self.wait(f"nvlblock_owner to name {want}", lambda: (lambda o: (o == want, o))(self.owner()), timeout)

    def state_text(self):
        try:
            with open(os.path.join(self.d, "state", "nvlblock_state")) as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def counters(self):
        """(failures, in place) of nvlblock_state's counters line."""
        m = re.search(r"^counters (\d+) (\d+)", self.state_text(), re.M)
        return (int(m.group(1)), int(m.group(2))) if m else None

    def summary(self):
        """The nvlblock: line of `scontrol show topology`, as a dict ({} when unanswered)."""
        p = self.run("scontrol", "show", "topology", check=False)
        for line in p.stdout.splitlines():
            if line.startswith("nvlblock: "):
                return dict(kv.split("=", 1) for kv in line[len("nvlblock: "):].split() if "=" in kv)
        return {}

    def nvlblock_files(self):
        """{name: (mtime_ns, sha256)} of StateSaveLocation's nvlblock files."""
        out = {}
        state = os.path.join(self.d, "state")
        for name in sorted(os.listdir(state)):
            path = os.path.join(state, name)
            if name.startswith("nvlblock") and os.path.isfile(path):
                with open(path, "rb") as f:
                    out[name] = (os.stat(path).st_mtime_ns, hashlib.sha256(f.read()).hexdigest()[:16])
        return out

    # -- jobs ------------------------------------------------------------------

    def sbatch_job(self, *args):
        p = self.run("sbatch", "--parsable", "-o", "/dev/null", *args, "--wrap", "sleep 3600")
        return int(p.stdout.strip().split(";")[0])

    def job_info(self, job):
        """`scontrol show job -o` as a dict; {} while no controller answers for it."""
        p = self.run("scontrol", "show", "job", "-o", str(job), check=False)
        if p.returncode != 0 or not p.stdout.strip():
            return {}
        return dict(kv.split("=", 1) for kv in p.stdout.split() if "=" in kv)

    def wait_job(self, job, predicate, timeout, what):
        def check():
            j = self.job_info(job)
            return (bool(j) and predicate(j), j.get("JobState"))
        self.wait(f"job {job} {what}", check, timeout)
        j = self.job_info(job)
        return self.expand(j.get("NodeList", "")), j

    def check_jobs(self, jobs):
        """No job lost, no node in two running jobs; {job: (state, nodes)}."""
        seen, owner = {}, {}
        for job in jobs:
            j = self.job_info(job)
            state = j.get("JobState")
            if not state:
                raise Failure(f"job {job} is unknown to the controller in control: lost")
            if state not in ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "REQUEUED") + FINISHED:
                raise Failure(f"job {job} is {state}")
            nodes = self.expand(j.get("NodeList", "")) if state == "RUNNING" else []
            for n in nodes:
                if n in owner:
                    raise Failure(f"node {n} in two running jobs: {owner[n]} and {job}")
                owner[n] = job
            seen[job] = (state, nodes)
        log("jobs: " + ", ".join(f"{j} {st}{' ' + ','.join(n) if n else ''}" for j, (st, n) in seen.items()))
        return seen


# --------------------------------------------------------------------------
# The scenario


def expect(cond, msg):
    if not cond:
        raise Failure(msg)


def in_place(c, job, old_nodes, failed, rack, timeout):
    """Wait for a requeued job to run again; check it restarted in place:
    its healthy nodes plus its rack's spare."""
    nodes, j = c.wait_job(job, lambda j: j.get("JobState") == "RUNNING" and int(j.get("Restarts", "0")) >= 1,
                          timeout, "running again after its requeue")
    healthy = [n for n in old_nodes if n != failed]
    expect(len(nodes) == 3 and all(block_containing(n, RACKS) == rack for n in nodes),
           f"job {job} restarted on {nodes}, not 3 nodes of {rack}")
    expect(set(healthy) <= set(nodes) and failed not in nodes,
           f"job {job} restarted on {nodes}: expected its healthy nodes {healthy} and a spare")
    log(f"job {job} restarted on {','.join(nodes)} ({rack}: {','.join(healthy)} + spare "
        f"{','.join(set(nodes) - set(healthy))})")
    return nodes


def fail_node(c, job, node):
    t = time.time()
    c.run("scontrol", "update", f"nodename={node}", "state=down", "reason=failover-test")
    log(f"{node} (job {job}) set DOWN")

    def recorded():
        # record <job> <failed_at> <fallback_at> <hold_until> <fallback> <nodes> <failed> [<block>=<nodes>...]
        return bool(re.search(rf"^record {job} (\S+ ){{5}}\S*\b{node}\b", c.state_text(), re.M)), c.counters()
    c.wait(f"job {job}'s failure in nvlblock_state", recorded, 15)
    return t


def wait_saved(c, job, what):
    """Wait until Slurm's saved job state holds everything that happened to
    `job` so far. A file's mtime cannot say so: a save packs the jobs under
    Slurm's lock and writes the file after, so a save packed before a start
    can be written after it. So the job's comment is set to a fresh token
    (slurmctld saves after an update) and the saved file searched for it:
    a file that holds the token was packed after the update. Without this,
    a primary killed 2 s after a restart left a save without it; the backup
    recovered the job PENDING, slurmd's registration of its running batch
    step made Slurm drain a node and requeue it (seen once on 25.05.8)."""
    token = f"nvlb-saved-{job}-{time.time_ns()}"
    c.run("scontrol", "update", f"JobId={job}", f"Comment={token}")

    def saved():
        try:
            with open(os.path.join(c.d, "state", "job_state"), "rb") as f:
                return token.encode() in f.read(), None
        except FileNotFoundError:
            return False, None
    c.wait(f"Slurm to save job {job}'s state ({what})", saved, 15)


def unchanged_between(c, before, t0, t1, what):
    """No nvlblock file written between t0 and t1 (mtime), as far as the
    files say."""
    after = c.nvlblock_files()
    changed = [f"{name} (mtime {mt / 1e9:.3f})" for name, (mt, _) in after.items()
               if t0 < mt / 1e9 < t1 and before.get(name) != after[name]]
    expect(not changed, f"{what}: written between {t0:.3f} and {t1:.3f}, while no slurmctld was in "
           f"control: {', '.join(changed)}")


class FailoverScenario:
    """The scenario's steps, in the order scenario() runs them. What a step
    learns (controllers, jobs, their nodes, the times of the handovers) is
    kept here for the steps after it."""

    def __init__(self, c, watch):
        self.c = c
        self.watch = watch

    def start_daemons(self):
        """The primary, every node's slurmd, then the backup; all nodes idle
        and the backup answering, in standby."""
        c = self.c
        nodes = [n for n, _ in NODES]
        p1 = c.start_ctld(PRIMARY)
        c.wait("the primary to answer", lambda: (lambda pg: (pg[0].get(PRIMARY[1]) == "UP", pg[1]))(c.ping()), 60)
        for name, _ in NODES:
            c.start(name, name, [os.path.join(c.prefix, "sbin", "slurmd"), "-D", "-N", name, "-f", c.conf],
                    f"slurmd-{name}")
        b = c.start_ctld(BACKUP)
        self.p1, self.b = p1, b

        def all_idle():
            st = c.node_states()
            return (st is not None and len(st) == len(nodes) and all(v == "idle" for v in st.values()), st)
        c.wait("all nodes idle", all_idle, 90)
        c.wait("the backup to answer pings", lambda: (lambda pg: (pg[0].get(BACKUP[1]) == "UP", pg[1]))(c.ping()),
               60)
        c.wait_log(BACKUP, r"slurmctld running in background mode", 30)

    def primary_alone(self):
        """1. The primary alone is in control."""
        c, p1 = self.c, self.p1
        c.wait_owner(PRIMARY, p1)
        c.wait_log(PRIMARY, r"nvlblock: in control", 10)
        expect(not c.log_lines(BACKUP, r"\] nvlblock: "), "the backup in standby logged nvlblock lines: "
               f"{c.log_lines(BACKUP, r'] nvlblock: ')}")
        log(f"primary in control (nvlblock_owner: {c.owner()}); backup in standby")

    def submit_jobs(self):
        """2, first half: job A (--requeue) on one rack, B on the other, C
        (--requeue) waiting."""
        c = self.c
        a = c.sbatch_job("-N3", "--requeue")
        a_nodes, _ = c.wait_job(a, lambda j: j.get("JobState") == "RUNNING", 60, "running")
        rack_a = block_containing(a_nodes[0], RACKS)
        expect(len(a_nodes) == 3 and all(block_containing(n, RACKS) == rack_a for n in a_nodes),
               f"job {a} on {a_nodes}")
        bj = c.sbatch_job("-N3")
        b_nodes, _ = c.wait_job(bj, lambda j: j.get("JobState") == "RUNNING", 60, "running")
        rack_b = block_containing(b_nodes[0], RACKS)
        expect(rack_b != rack_a and all(block_containing(n, RACKS) == rack_b for n in b_nodes),
               f"job {bj} on {b_nodes}")
        cj = c.sbatch_job("-N3", "--requeue")
        tracked = [a, bj, cj]
        self.a, self.a_nodes, self.rack_a = a, a_nodes, rack_a
        self.bj, self.b_nodes, self.rack_b = bj, b_nodes, rack_b
        self.cj, self.tracked = cj, tracked
        log(f"job {a} on {rack_a} {','.join(a_nodes)}; job {bj} on {rack_b} {','.join(b_nodes)}; job {cj} waits")
        c.check_jobs(tracked)

    def kill_primary_in_recovery(self):
        """2, second half: one of A's nodes DOWN; once nvlblock recorded the
        failure and Slurm saved the requeue, the primary killed before A may
        start again."""
        c, a, a_nodes, p1 = self.c, self.a, self.a_nodes, self.p1
        failed_a = self.failed_a = a_nodes[1]
        t_fail = fail_node(c, a, failed_a)

        # Saved after the requeue itself, not merely after the failure: a save
        # that began between the two (its file's mtime after the failure) holds
        # the job still RUNNING, and a backup recovering it would wait for a
        # batch step that died with its node (seen once on 25.11.7).
        t_requeued = c.wait_log(PRIMARY, rf"Requeuing JobId={a}\b", 10, after=t_fail - 1)[0]

        def slurm_saved():
            try:
                return (all(os.stat(os.path.join(c.d, "state", f)).st_mtime > t_requeued
                            for f in ("job_state", "node_state")), None)
            except FileNotFoundError:
                return False, None
        c.wait("Slurm to save its job and node state after the failure", slurm_saved, 10)
        state = c.job_info(a).get("JobState")
        expect(state == "PENDING", f"job {a} is {state} before the primary dies (expected PENDING: requeued)")
        expect(time.time() - t_fail < CRED_EXPIRE, "the failure took too long to be saved: the primary could "
               "restart the job before it dies")
        self.t_kill = c.kill_ctld(PRIMARY, p1)
        self.before = c.nvlblock_files()
        expect(not c.log_lines(PRIMARY, rf"JobId={a} restarted in place"),
               f"the primary restarted job {a} before it died")

    def backup_takes_over(self):
        """3. The backup takes over and restarts A in place."""
        c, a, a_nodes, rack_a, b = self.c, self.a, self.a_nodes, self.rack_a, self.b
        bj, b_nodes, cj, tracked, t_kill = self.bj, self.b_nodes, self.cj, self.tracked, self.t_kill
        t_take = self.t_take = c.wait_log(BACKUP, r"taking over", 60, after=t_kill)[0]
        log(f"the backup took over {t_take - t_kill:.1f} s after the kill")
        unchanged_between(c, self.before, t_kill, t_take, "nvlblock files")
        c.wait_log(BACKUP, r"nvlblock: in control", 30, after=t_take)
        c.wait_owner(BACKUP, b)
        self.new_a = in_place(c, a, a_nodes, self.failed_a, rack_a, 90)
        c.wait_log(BACKUP, rf"nvlblock: recovery JobId={a} restarted in place on {rack_a}: 2 prior nodes \+ 1 spares",
                   15, after=t_take)
        ping, text = c.ping()
        expect(ping.get(PRIMARY[1]) == "DOWN" and ping.get(BACKUP[1]) == "UP", f"scontrol ping:\n{text}")
        c.wait("nvlblock_state to count the recovery", lambda: (c.counters() == (1, 1), c.counters()), 15)
        summary = c.summary()
        expect((summary.get("InPlace"), summary.get("Pending")) == ("1", "0"), f"the backup's summary: {summary}")
        jobs = c.check_jobs(tracked)
        expect(jobs[cj][0] == "PENDING" and jobs[bj] == ("RUNNING", b_nodes), f"jobs under the backup: {jobs}")

    def primary_comes_back(self):
        """4, first half: the primary started again, slow to load its state;
        the backup gives control back and both answer `scontrol ping`."""
        c = self.c
        t_p2 = self.t_p2 = time.time()
        p2 = self.p2 = c.start_ctld(PRIMARY)
        t_rel = self.t_rel = c.wait_log(BACKUP, r"Performing RPC: REQUEST_CONTROL", 60, after=t_p2)[0]
        # A primary slow to load its state once the backup has let go (a large
        # job state, a slow shared file system): stopped from its request until
        # SLOW_START s after the backup is back in standby. Meanwhile nobody
        # is in control, and nvlblock must write nothing.
        os.kill(p2.pid, signal.SIGSTOP)
        try:
            t_standby = self.t_standby = c.wait_log(BACKUP, r"slurmctld running in background mode", 60,
                                                    after=t_rel)[0]
            time.sleep(max(0.0, t_standby + SLOW_START - time.time()))
        finally:
            os.kill(p2.pid, signal.SIGCONT)
        log(f"the primary held still from the backup's REQUEST_CONTROL until {SLOW_START} s after its standby")
        c.wait_log(PRIMARY, r"Running as primary controller", 60, after=t_p2)
        c.wait_log(PRIMARY, r"nvlblock: in control", 30, after=t_p2)
        c.wait_owner(PRIMARY, p2)
        log(f"the backup gave control back (REQUEST_CONTROL; standby {t_standby - t_rel:.1f} s later); "
            f"nvlblock_owner: {c.owner()}")
        c.wait("scontrol ping: both UP", lambda: (lambda pg: (
            pg[0].get(PRIMARY[1]) == "UP" and pg[0].get(BACKUP[1]) == "UP", pg[1]))(c.ping()), 30)
        log("scontrol ping: " + c.ping()[1].strip().replace("\n", "; "))

    def primary_takes_backup_state(self):
        """4, second half: the primary knows the backup's recovery, A runs
        where it ran; B cancelled, the primary places C on B's rack."""
        c, a, bj, cj, rack_b = self.c, self.a, self.bj, self.cj, self.rack_b
        new_a, tracked, t_p2, t_rel = self.new_a, self.tracked, self.t_p2, self.t_rel
        # slurmctld's control_time (0 in standby; every release) and, from
        # 25.11, slurmctld_listeners_in_standby() answer before the claim is
        # read: the backup may never read the primary's claim (no "another
        # slurmctld has taken control" line). What it wrote is checked below.
        log("backup: " + (c.log_lines(BACKUP, r"another slurmctld has taken control", after=t_rel)
                          or [(0, "(no 'another slurmctld has taken control' line: Slurm's standby signs)")])[0][1])
        expect(not c.log_lines(PRIMARY, r"saved state .* is unusable", after=t_p2),
               "the primary's saved state unusable")
        summary = c.summary()
        expect((summary.get("Recoveries"), summary.get("InPlace"), summary.get("Pending")) == ("1", "1", "0"),
               f"the primary did not take the state the backup saved: {summary}")
        j = c.job_info(a)
        expect(j.get("JobState") == "RUNNING" and c.expand(j.get("NodeList")) == new_a and j.get("Restarts") == "1",
               f"job {a} after the primary's return: {j.get('JobState')} {j.get('NodeList')} "
               f"Restarts={j.get('Restarts')}")
        c.run("scancel", str(bj))
        c_nodes, _ = c.wait_job(cj, lambda j: j.get("JobState") == "RUNNING", 60, "running (placed by the primary)")
        self.c_nodes = c_nodes
        expect(len(c_nodes) == 3 and all(block_containing(n, RACKS) == rack_b for n in c_nodes),
               f"job {cj} on {c_nodes}")
        log(f"job {cj} placed by the primary on {rack_b} {','.join(c_nodes)}")
        c.check_jobs(tracked)

    def second_recovery(self):
        """5, first half: a second recovery under the primary (one of C's
        nodes DOWN, C restarted in place)."""
        c, cj, c_nodes, rack_b = self.c, self.cj, self.c_nodes, self.rack_b
        failed_c = c_nodes[1]
        fail_node(c, cj, failed_c)
        self.new_c = in_place(c, cj, c_nodes, failed_c, rack_b, 90)
        c.wait_log(PRIMARY, rf"nvlblock: recovery JobId={cj} restarted in place on {rack_b}", 15, after=self.t_p2)
        c.wait("nvlblock_state to count both recoveries", lambda: (c.counters() == (2, 2), c.counters()), 15)

    def backup_takes_over_again(self):
        """5, second half: the primary killed again, with an nvlblock.yaml
        that no longer loads; the backup takes control with both recoveries."""
        c, a, bj, cj, b = self.c, self.a, self.bj, self.cj, self.b
        new_a, new_c, tracked = self.new_a, self.new_c, self.tracked
        # The backup takes control this time with an nvlblock.yaml that no
        # longer loads (an edit gone wrong between the two): it keeps the
        # topology it has and still takes control with the primary's state.
        wait_saved(c, cj, "its restart in place")
        yaml = os.path.join(c.d, "etc", "nvlblock.yaml")
        with open(yaml) as f:
            good_yaml = f.read()
        with open(yaml, "w") as f:
            f.write(good_yaml + "defaults:\n  slice: [\n")
        t_kill2 = self.t_kill2 = c.kill_ctld(PRIMARY, self.p2)
        before = c.nvlblock_files()
        t_take2 = self.t_take2 = c.wait_log(BACKUP, r"taking over", 60, after=t_kill2)[0]
        log(f"the backup took over again {t_take2 - t_kill2:.1f} s after the kill")
        unchanged_between(c, before, t_kill2, t_take2, "nvlblock files")
        c.wait_log(BACKUP, r"nvlblock: keeping the previous topology", 30, after=t_take2)
        c.wait_log(BACKUP, r"nvlblock: another slurmctld had control since: reading its saved state", 30,
                   after=t_take2)
        c.wait_log(BACKUP, r"nvlblock: in control", 30, after=t_take2)
        c.wait_owner(BACKUP, b)
        c.wait("the backup to answer for the topology", lambda: (lambda s: (bool(s), s))(c.summary()), 30)
        summary = c.summary()
        expect((summary.get("Recoveries"), summary.get("InPlace"), summary.get("Pending")) == ("2", "2", "0"),
               f"the backup did not re-read the state the primary saved: {summary}")
        jobs = c.check_jobs(tracked)
        expect(jobs[a] == ("RUNNING", new_a) and jobs[cj] == ("RUNNING", new_c) and jobs[bj][0] in FINISHED,
               f"jobs under the backup again: {jobs}")
        time.sleep(3)  # the backup, in control, writes its status again: attributed below
        with open(yaml, "w") as f:
            f.write(good_yaml)

    def attribute_writes(self):
        """6. Who wrote nvlblock's files, and when."""
        check_writers(self.c, self.watch, self.p1.pid, self.p2.pid, self.b.pid, self.t_kill, self.t_take,
                      self.t_rel, self.t_standby, self.t_kill2, self.t_take2)


def scenario(c, watch, version):
    steps = FailoverScenario(c, watch)
    steps.start_daemons()
    steps.primary_alone()
    steps.submit_jobs()
    steps.kill_primary_in_recovery()
    steps.backup_takes_over()
    steps.primary_comes_back()
    steps.primary_takes_backup_state()
    steps.second_recovery()
    steps.backup_takes_over_again()
    steps.attribute_writes()


def hms(t):
    return f"{time.strftime('%H:%M:%S', time.localtime(t))}.{int(t % 1 * 1000):03d}"


# The most a write may trail the REQUEST_CONTROL log line and still have
# been checked before shutdown_time was set (check_writers).
RPC_TO_SHUTDOWN_S = 0.05


def check_writers(c, watch, p1, p2, b, t_kill, t_take, t_rel, t_standby, t_kill2, t_take2):
    """Who wrote nvlblock's files, and when. The backup is in control from
    its takeover until the primary's REQUEST_CONTROL, and again from its
    second takeover; between them it gives control back (Slurm sets
    shutdown_time at the REQUEST_CONTROL, SIGTERM) and then stands by.
    24.11 answers the REQUEST_CONTROL before the backup is done (after
    CONTROL_TIMEOUT - 1 s, "Old state possible"), so the restarted primary
    may take control while the backup still shuts down: what must hold is
    that their writes never interleave."""
    if watch is None:
        log("writers not attributed (fanotify unavailable); the mtime checks above stand alone")
        return
    by = {}
    for t, pid, name in watch.nvlblock_writes():
        by.setdefault(c.ctlds.get(pid, f"pid {pid}"), []).append((t, name))
    for who, ws in sorted(by.items()):
        log(f"{who} wrote {len(ws)} nvlblock files ({hms(ws[0][0])} - {hms(ws[-1][0])}): "
            + ", ".join(sorted(set(n for _, n in ws))))

    def fmt(ws):
        return "; ".join(f"{name} at {hms(t)}" for t, name in ws[:12]) + (" ..." if len(ws) > 12 else "")
    handover = sorted((t, who, n) for who, ws in by.items() for t, n in ws if t_rel - 2 <= t <= t_standby + 3)
    log(f"handover (REQUEST_CONTROL {hms(t_rel)}, backup in standby {hms(t_standby)}): "
        + "; ".join(f"{who} {n} {hms(t)}" for t, who, n in handover))
    problems = []
    backup = by.get(c.ctlds[b], [])
    primary2 = by.get(c.ctlds[p2], [])
    first_term = [(t, n) for t, n in backup if t < t_take2]
    # Slurm logs "Performing RPC: REQUEST_CONTROL" before its handler sets
    # shutdown_time: a write checked just before that can land in the first
    # milliseconds after the line (1 ms in a run of stop 45, on the 26.11
    # snapshot, before the file writer re-checked control).
    giving_back = [(t, n) for t, n in first_term if t_rel + RPC_TO_SHUTDOWN_S <= t < t_standby]
    standby = [(t, n) for t, n in first_term if t < t_take or t >= t_standby]
    if giving_back:
        problems.append(f"the backup wrote while giving control back (shutdown_time set): {fmt(giving_back)}")
    if standby:
        problems.append(f"the backup wrote {len(standby)} nvlblock files while in standby: {fmt(standby)}")
    if primary2 and first_term and primary2[0][0] <= first_term[-1][0]:
        problems.append(f"the backup's writes and the restarted primary's interleave: the primary from "
                        f"{hms(primary2[0][0])}, the backup until {hms(first_term[-1][0])}")
    early = [(t, n) for t, n in primary2 if t < t_rel]
    if early:
        problems.append(f"the restarted primary wrote before it asked for control: {fmt(early)}")
    late = [(t, n) for t, n in by.get(c.ctlds[p1], []) if t >= t_kill]
    late += [(t, n) for t, n in primary2 if t >= t_kill2]
    if late:
        problems.append(f"a killed primary wrote after its death: {fmt(late)}")
    others = {who: ws for who, ws in by.items() if who.startswith("pid ")}
    if others:
        problems.append(f"nvlblock files written by other processes: {others}")
    if not first_term or len(backup) == len(first_term) or not by.get(c.ctlds[p1]) or not primary2:
        problems.append(f"expected writes by each controller in each of its terms, saw {sorted(by)}")
    expect(not problems, "\n".join(problems))
    log("no nvlblock file written by a controller out of control")


def body(s):
    d = s.d
    plugin_dir = netns_hosts.install_plugins(s.opts.build_dir, os.path.join(d, "install"))
    for name, _ in NODES:
        os.makedirs(os.path.join(d, "spool", name))
    for host in (PRIMARY, BACKUP):
        os.makedirs(os.path.join(d, "hosts", host[0]))
    with open(os.path.join(d, "etc", "slurm.conf"), "w") as f:
        f.write(slurm_conf(d, [os.path.join(s.prefix, "lib", "slurm"), plugin_dir]))
    with open(os.path.join(d, "etc", "nvlblock.yaml"), "w") as f:
        f.write(NVLBLOCK_YAML)
    for extra in ("topology.conf", "cgroup.conf"):
        shutil.copy(os.path.join(DOCKER_ETC, extra), os.path.join(d, "etc", extra))

    hosts = [PRIMARY, BACKUP, LOGIN] + [(n, n, a) for n, a in NODES]
    private = (os.path.join(d, LOCAL), {h[0]: os.path.join(d, "hosts", h[0]) for h in (PRIMARY, BACKUP)})
    s.net = Network(hosts, os.path.join(d, "etc", "hosts"), private)
    s.net.up()
    log(f"{len(hosts)} hosts on a bridge: " + ", ".join(f"{h}={a}" for _, h, a in hosts))
    c = s.cluster = FailoverCluster(s, s.net)
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", c.run("scontrol", "--version").stdout)
    version = tuple(int(x) for x in m.groups())
    log(f"Slurm {'.'.join(map(str, version))}")
    try:
        watch = WriteWatch(os.path.join(d, "state"))
        s.cleanups.append(watch.stop)
    except OSError as e:
        log(f"no write attribution: {e}")
        watch = None
    scenario(c, watch, version)


def main():
    return netns_hosts.main(__doc__.split("\n\n")[0], "nvlpkg-failover-",
                            ("etc", "state", "spool", "log", "run", LOCAL, "install"), body)


if __name__ == "__main__":
    sys.exit(main())
