# SPDX-License-Identifier: GPL-2.0-or-later
"""/proc scanning and signals: which processes belong to a cluster, and
stopping them for good."""

import os
import signal
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Set, Tuple

from .common import DAEMON_NAMES, ENV_DIR, wait_until

if TYPE_CHECKING:
    from .layout import Layout


def proc_stat(pid: int) -> Optional[Tuple[str, int, int]]:
    """(state, ppid, start time in clock ticks) of a pid, or None if gone.

    The start time identifies a process for good: a pid number can be reused
    after the process dies, (pid, start time) cannot."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses; the
    # fields after its last ')' are unambiguous.
    fields = data[data.rfind(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[19])


def proc_environ(pid: int) -> List[bytes]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def proc_exe_name(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


def proc_paths(pid: int) -> List[str]:
    """The paths a process refers to: its command line, working directory
    and open files."""
    paths = []
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            paths += f.read().decode("utf-8", "replace").split("\0")
        paths.append(os.readlink(f"/proc/{pid}/cwd"))
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                paths.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
            except OSError:
                pass
    except OSError:
        pass
    return paths


def is_alive(pid: Optional[int], start: Optional[int]) -> bool:
    """True if the process we started as (pid, start) still runs.

    A zombie counts as dead: our daemons are reparented to init, and in a
    container init may reap them late (seen here) or never."""
    if not pid:
        return False
    st = proc_stat(pid)
    return st is not None and st[2] == start and st[0] not in ("Z", "X")


def all_processes() -> Dict[int, Tuple[str, int]]:
    """{pid: (state, ppid)} of every live process on the host."""
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            st = proc_stat(int(entry))
            if st is not None and st[0] not in ("Z", "X"):
                procs[int(entry)] = (st[0], st[1])
    return procs


def own_ancestry() -> Set[int]:
    """This process and its ancestors: never to be killed, even when they
    carry the cluster's SLURM_CONF (a test driver that ran `eval up` does)."""
    pids = set()
    pid = os.getpid()
    while pid > 1 and pid not in pids:
        pids.add(pid)
        st = proc_stat(pid)
        if st is None:
            break
        pid = st[1]
    return pids


def cluster_processes(layout: "Layout") -> Set[int]:
    """Every live process that belongs to the cluster in `layout`.

    Roots are the processes carrying our marker (every daemon we start) and
    Slurm daemons that refer to the cluster directory. The second rule is what
    finds slurmstepd: it writes its process title over its environment, so
    /proc/PID/environ is blank and the marker it inherited cannot be read, but
    it keeps the working directory (DIR/run) and the node's log file
    (DIR/log/slurmd-NODE.log) of the slurmd that forked it. It is reparented
    to init, so it has to be a root. Job scripts and tasks are its
    descendants."""
    marker = f"{ENV_DIR}={layout.dir}".encode()
    inside = layout.dir + os.sep
    procs = all_processes()
    roots = set()
    for pid in procs:
        if marker in proc_environ(pid):
            roots.add(pid)
        elif proc_exe_name(pid) in DAEMON_NAMES and any(
                p == layout.dir or p.startswith(inside) for p in proc_paths(pid)):
            roots.add(pid)
    return descendants(procs, roots) - own_ancestry()


def descendants(procs: Dict[int, Tuple[str, int]], roots: Iterable[int]) -> Set[int]:
    """`roots` and all their descendants among `procs` ({pid: (state, ppid)})."""
    children = {}
    for pid, (_, ppid) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, ()))
    return found


def signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def stop_pids(pids: List[Tuple[int, int]], sig: int, timeout: float) -> int:
    """Send `sig` to each live (pid, start) pair, wait up to `timeout` until
    they are gone, then SIGKILL what is left. Returns the number of processes
    that needed SIGKILL.

    A process is waited for even after SIGKILL: until it has exited it holds
    its ports and its pid file's lock, and a daemon started in its place
    fails to bind them (slurmctld 26.11 under CI load: "Address already in
    use")."""
    targets = [(p, s) for p, s in pids if is_alive(p, s)]
    for pid, _ in targets:
        signal_pid(pid, sig)
    if wait_until(lambda: not any(is_alive(p, s) for p, s in targets), timeout) or sig == signal.SIGKILL:
        return 0
    stubborn = [(p, s) for p, s in targets if is_alive(p, s)]
    for pid, _ in stubborn:
        signal_pid(pid, signal.SIGKILL)
    wait_until(lambda: not any(is_alive(p, s) for p, s in stubborn), 5)
    return len(stubborn)
