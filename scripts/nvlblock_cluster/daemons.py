# SPDX-License-Identifier: GPL-2.0-or-later
"""Running Slurm daemons and client commands against a cluster: spawning,
stopping, waiting for registration and idle nodes."""

import contextlib
import errno
import os
import shlex
import signal
import socket
import subprocess
import time
from typing import Dict, Iterable, List, Optional, Tuple

from .common import ACCOUNTING_DAEMONS, ENV_DIR, ClusterError, log, tail, wait_until
from .layout import Layout, Record
from .naming import FRONTEND_NAME
from .procs import (all_processes, cluster_processes, descendants, own_ancestry, proc_exe_name,
                    proc_paths, proc_stat, signal_pid, stop_pids)


def tail_report(layout: Layout, name: str, lines: int = 20) -> str:
    """The last lines of a daemon's log, for an error message. Its stderr
    file repeats the log (a foreground daemon logs to both), so it is shown
    only when it says something the log does not: a fatal error from before
    the log file was opened."""
    log_path, err_path = layout.daemon_log(name), layout.daemon_stderr(name)
    log_text, err_text = tail(log_path, lines), tail(err_path, lines)
    out = []
    if log_text:
        out.append(f"--- last lines of {log_path}:\n{log_text}")
    last_err = err_text.splitlines()[-1].split(": ", 1)[-1] if err_text else ""
    if err_text and last_err not in log_text:
        out.append(f"--- last lines of {err_path}:\n{err_text}")
    return "\n".join(out) if out else f"(nothing in {log_path} or {err_path})"


def accounting_log(layout: Layout, name: str) -> str:
    """The log of an accounting daemon (up --accounting): slurmdbd or mariadb."""
    return os.path.join(layout.log, f"{name}.log")


def accounting_stderr(layout: Layout, name: str) -> str:
    return os.path.join(layout.log, f"{name}.stderr")


def clean_environ() -> Dict[str, str]:
    """Our environment without Slurm variables from the caller: a stale
    SLURM_CONF, or SLURM_JOB_ID when run inside a job, must not leak into the
    daemons or into the client commands we run."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("SLURM_") and not k.startswith("NVLCLUSTER_")}


def preload(env: Dict[str, str]) -> Dict[str, str]:
    """NVLCLUSTER_PRELOAD: a library every Slurm process of the cluster
    preloads (the sanitizer runtime of plugins built with NVLBLOCK_SANITIZE:
    it must come first in a process that loads them)."""
    lib = os.environ.get("NVLCLUSTER_PRELOAD")
    if lib:
        env["LD_PRELOAD"] = lib
    return env


def client_env(layout: Layout, prefix: str) -> Dict[str, str]:
    env = preload(clean_environ())
    env["SLURM_CONF"] = layout.slurm_conf
    env["PATH"] = f"{prefix}/bin:{prefix}/sbin:{env.get('PATH', '/usr/bin:/bin')}"
    return env


def slurm_cmd(layout: Layout, prefix: str, argv: List[str], timeout: float = 30) -> Tuple[int, str]:
    """Run a Slurm client command against the cluster; (rc, stdout)."""
    try:
        p = subprocess.run([os.path.join(prefix, "bin", argv[0])] + argv[1:],
                           env=client_env(layout, prefix), stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, ""
    return p.returncode, p.stdout


def spawn_daemon(record: Record, name: str, cold: bool = False) -> subprocess.Popen:
    """Start slurmctld (name "slurmctld") or the slurmd for `name` in the
    foreground and record its pid. `cold` starts slurmctld without trying to
    recover saved state (none exists yet; trying logs a page of errors)."""
    layout, prefix = record.layout, record.prefix
    daemonized = name == "slurmctld" and record.data.get("ctld_daemonized")
    if name == "slurmctld":
        argv = [os.path.join(prefix, "sbin", "slurmctld"), "-D", "-f", layout.slurm_conf]
        if daemonized:
            # As sites run it: it forks, the parent exits, the daemon
            # writes SlurmctldPidFile (run/slurmctld.pid).
            argv.remove("-D")
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(layout.run, "slurmctld.pid"))
        if cold:
            argv.insert(1, "-c")
    else:
        argv = [os.path.join(prefix, "sbin", "slurmd"), "-D", "-N", name,
                "-f", layout.slurm_conf]
    env = preload(clean_environ())
    env["SLURM_CONF"] = layout.slurm_conf
    env[ENV_DIR] = layout.dir
    with open(layout.daemon_stderr(name), "ab") as err:
        # A new session keeps the daemon out of the caller's process group
        # (Ctrl-C in the shell must not kill the cluster), and stdout must not
        # be inherited or `$(nvlcluster up)` would wait for the daemons to exit.
        proc = subprocess.Popen(argv, env=env, cwd=layout.run, stdin=subprocess.DEVNULL,
                                stdout=err, stderr=err, start_new_session=True)
    pid = daemon_pid_of(layout, proc) if daemonized else proc.pid
    st = proc_stat(pid)
    record.daemons[name] = {"pid": pid, "start": st[2] if st else 0, "argv": argv}
    return proc


def daemon_pid_of(layout: Layout, parent: subprocess.Popen, timeout: float = 30) -> int:
    """The pid a daemonized slurmctld wrote to its pid file, once the parent
    that forked it has exited."""
    path = os.path.join(layout.run, "slurmctld.pid")
    parent.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                pid = int(f.read().split()[0])
            if proc_stat(pid):
                return pid
        except (OSError, ValueError, IndexError):
            pass
        time.sleep(0.1)
    raise ClusterError(f"daemonized slurmctld wrote no pid to {path} in {timeout:.0f} s; see "
                       f"{layout.daemon_log('slurmctld')}")


def daemon_pids(record: Record, names: Iterable[str]) -> List[Tuple[int, int]]:
    return [(record.daemons[n]["pid"], record.daemons[n]["start"])
            for n in names if n in record.daemons]


def ctld_responds(record: Record) -> bool:
    rc, out = slurm_cmd(record.layout, record.prefix, ["scontrol", "ping"], timeout=10)
    return rc == 0 and "UP" in out


def check_ports(port_base: int, count: int) -> None:
    """Fail before starting anything if a port we need is taken. SO_REUSEADDR
    mirrors what Slurm does, so sockets of a cluster that just went down
    (TIME_WAIT) do not count as taken; listening sockets do."""
    last = port_base + count
    if port_base < 1024 or last > 65535:
        raise ClusterError(f"ports {port_base}-{last} are outside 1024-65535; choose --port-base")
    for port in range(port_base, last + 1):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(("", port))
            except OSError as e:
                if e.errno != errno.EADDRINUSE:
                    raise
                raise ClusterError(
                    f"port {port} is in use (this cluster needs {port_base}-{last}); "
                    "is another cluster running there? choose another --port-base") from None
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = map(int, f.read().split())
        if port_base <= hi and last >= lo:
            log(f"warning: ports {port_base}-{last} overlap the ephemeral range {lo}-{hi}; "
                "an outgoing connection may take one of them")
    except (OSError, ValueError):
        pass


def node_states(record: Record) -> Optional[Dict[str, str]]:
    """{node: state} from sinfo, or None while slurmctld does not answer.
    -N lists a node once per partition it is in; the dict folds those."""
    rc, out = slurm_cmd(record.layout, record.prefix, ["sinfo", "-h", "-N", "-o", "%N %T"])
    if rc != 0:
        return None
    states = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            states[parts[0]] = parts[1]
    return states


def wait_for_idle(record: Record, total: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last, states = None, None
    while True:
        check_daemons_named(record, record.daemons)
        states = node_states(record) or states
        if states is not None:
            idle = sum(1 for s in states.values() if s == "idle")
            if idle == total and len(states) == total:
                return
            summary = summarize(states.values())
            if summary != last:
                log(f"waiting for {total} idle nodes: {summary}")
                last = summary
        if time.monotonic() >= deadline:
            busy = [f"{n} {s}" for n, s in sorted((states or {}).items()) if s != "idle"]
            detail = (f"not idle: {', '.join(busy[:10])}{' ...' if len(busy) > 10 else ''}"
                      if busy else "slurmctld not answering")
            raise ClusterError(
                f"nodes not idle after {timeout:.0f} s ({detail}); "
                f"see {record.layout.daemon_log('slurmctld')}\n"
                + tail_report(record.layout, "slurmctld"))
        time.sleep(0.5)


def summarize(states: Iterable[str]) -> str:
    counts = {}
    for s in states:
        counts[s] = counts.get(s, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no nodes"


def export_lines(layout: Layout, prefix: str) -> str:
    q = shlex.quote
    return (f"export SLURM_CONF={q(layout.slurm_conf)}\n"
            f"export PATH={q(prefix + '/bin')}:{q(prefix + '/sbin')}:$PATH\n")


def stop_cluster(layout: Layout, record: Optional[Record], timeout: float = 15, quiet: bool = False) -> None:
    """Stop the recorded daemons (SIGTERM, then SIGKILL after `timeout`),
    then everything else that belongs to the cluster. Idempotent."""
    if record:
        # slurmctld first, so it does not react to the slurmd going away.
        if stop_pids(daemon_pids(record, ["slurmctld"]), signal.SIGTERM, timeout):
            log(f"slurmctld ignored SIGTERM for {timeout} s; killed")
        names = [n for n in record.daemons if n != "slurmctld" and n not in ACCOUNTING_DAEMONS]
        killed = stop_pids(daemon_pids(record, names), signal.SIGTERM, timeout)
        if killed:
            log(f"{killed} slurmd ignored SIGTERM for {timeout} s; killed")
        # up --accounting: slurmdbd once slurmctld has sent it what it
        # had, then its database.
        for name in ACCOUNTING_DAEMONS:
            if stop_pids(daemon_pids(record, [name]), signal.SIGTERM, timeout):
                log(f"{name} ignored SIGTERM for {timeout} s; killed")
    # slurmstepd and job processes survive their slurmd; they are orphans by
    # now, so SIGKILL. Repeat: a step may fork while we look.
    leftovers = 0
    for _ in range(20):
        pids = cluster_processes(layout)
        if not pids:
            break
        leftovers += len(pids)
        for pid in pids:
            signal_pid(pid, signal.SIGKILL)
        time.sleep(0.2)
    else:
        raise ClusterError(f"processes of {layout.dir} keep running: {sorted(pids)}")
    if leftovers and not quiet:
        log(f"killed {leftovers} leftover slurmstepd/job processes")
    if record:
        for d in record.daemons.values():
            d["pid"] = None
        record.save()


def wait_for_registration(record: Record, slurmds: List[str], timeout: float) -> None:
    """Wait until slurmctld has heard from every node of the given slurmd:
    none is UNKNOWN (as after a slurmctld restart) or marked not responding
    with '*' (as after a slurmd restart). A node that was set DOWN for not
    responding returns to service here (ReturnToService=1)."""
    watched = {n for d in slurmds for n in record.served_nodes(d)}
    pending = watched

    def registered():
        nonlocal pending
        check_daemons_named(record, ["slurmctld"] + list(slurmds))
        states = node_states(record)
        if states is None:
            return False
        pending = {n for n in watched
                   if states.get(n, "unknown").endswith("*") or states.get(n) == "unknown"}
        return not pending

    if not wait_until(registered, timeout, 0.5):
        first = sorted(pending)[:10]
        raise ClusterError(f"no registration from {', '.join(first)}"
                           f"{' ...' if len(pending) > 10 else ''} within {timeout:.0f} s; see "
                           f"{record.layout.daemon_log('slurmctld')}\n"
                           + tail_report(record.layout, "slurmctld"))


def check_daemons_named(record: Record, names: Iterable[str]) -> None:
    """Raise, naming the log file, if one of these daemons has died."""
    for name in names:
        if not record.alive(name) and name in ACCOUNTING_DAEMONS:
            path = accounting_log(record.layout, name)
            raise ClusterError(f"{name} died; see {path}\n--- last lines of {path}:\n{tail(path)}"
                               + (f"\n--- {accounting_stderr(record.layout, name)}:\n"
                                  f"{tail(accounting_stderr(record.layout, name))}"))
        if not record.alive(name):
            what = "slurmctld" if name == "slurmctld" else f"slurmd for {name}"
            raise ClusterError(f"{what} died; see {record.layout.daemon_log(name)}\n"
                               + tail_report(record.layout, name))


def node_processes(layout: Layout, node: str) -> List[int]:
    """The slurmstepd processes of one node and their descendants: the node's
    share of running jobs. A slurmstepd keeps the log file of the slurmd that
    forked it open, which tells the nodes apart."""
    node_log = layout.daemon_log(node)
    procs = all_processes()
    steps = {pid for pid in procs if proc_exe_name(pid) == "slurmstepd"
             and node_log in proc_paths(pid)}
    return sorted(descendants(procs, steps) - own_ancestry())


def check_node(record: Record, node: str) -> None:
    if node not in record.slurmd_names():
        hint = (f"with --front-end the only slurmd is {FRONTEND_NAME}; take nodes down with "
                "`scontrol update nodename=... state=down reason=...`" if record.front_end
                else "node names are gb0001 and up, and cpu01 and up with --extra-nodes")
        raise ClusterError(f"no slurmd named {node} in this cluster ({hint})")
