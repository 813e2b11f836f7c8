# SPDX-License-Identifier: GPL-2.0-or-later
"""A handle on a running cluster for the programs that drive one (the demo,
the benches, the cluster tests): the `export` lines of `nvlcluster up` as an
environment, Slurm client commands, submitting jobs, waiting for job states,
node lists, and failing and repairing nodes.

    c = Cluster.up(dir, ["--racks", "2"])       # or Cluster(dir, env) for one already up
    job = c.sbatch("-N4")
    nodes = c.wait_running(job)
    c.fail_node(nodes[0]); ...; c.repair_node(nodes[0])
    c.down()
"""

import json
import os
import re
import subprocess
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .common import REPO, poll

NVLCLUSTER = os.path.join(REPO, "scripts", "nvlcluster")


class CommandError(Exception):
    """A command against the cluster failed."""


class SubmitError(Exception):
    """sbatch refused a job; .stderr holds what it said."""

    def __init__(self, args: Sequence[str], stderr: str):
        super().__init__(f"sbatch {' '.join(args)} failed: {stderr.strip()}")
        self.stderr = stderr


def parse_kv(line: str) -> Dict[str, str]:
    """'Key=Value Key2=Value with spaces Key3=...' -> dict. A new key starts
    at a blank followed by an identifier and '='; values may hold blanks
    (Reason=..., Command=...). A key seen already on the line is text of the
    value before it: Slurm prints each field once, and free text may name
    one (nvlblock's comment on a reclaim victim: "... for the in-place
    restart of JobId=21 on rack04"), which must not replace the job's own
    JobId."""
    out = {}
    last = None
    for part in re.split(r"\s+(?=[A-Za-z][A-Za-z0-9_:/.]*=)", line.strip()):
        if "=" not in part:
            continue
        k, v = part.split("=", 1)
        if k in out and last is not None:
            out[last] += " " + part
            continue
        out[k] = v
        last = k
    return out


def parse_exports(stdout: str) -> Tuple[str, Optional[str]]:
    """(SLURM_CONF, the directories PATH gains or None) from the `export`
    lines `nvlcluster up` and `nvlcluster env` print."""
    conf = path = None
    for line in stdout.splitlines():
        m = re.match(r"export SLURM_CONF=(.*)$", line)
        if m:
            conf = m.group(1).strip("'")
        m = re.match(r"export PATH=(.*):\$PATH$", line)
        if m:
            path = m.group(1).replace("'", "")
    if conf is None:
        raise CommandError(f"nvlcluster up printed no SLURM_CONF: {stdout!r}")
    return conf, path


def env_from_exports(stdout: str, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The environment client commands of the cluster run in: `base` (default
    os.environ) without the caller's SLURM_* variables, plus the export lines.
    Plugins built with sanitizers: every client that loads them preloads the
    runtime too (NVLCLUSTER_PRELOAD, see daemons.preload)."""
    base = os.environ if base is None else base
    env = {k: v for k, v in base.items() if not k.startswith("SLURM_")}
    conf, path = parse_exports(stdout)
    env["SLURM_CONF"] = conf
    if path is not None:
        env["PATH"] = path + ":" + env.get("PATH", "/usr/bin:/bin")
    if os.environ.get("NVLCLUSTER_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["NVLCLUSTER_PRELOAD"]
    return env


def nvlcluster(*args: str, timeout: float = 300, show_progress: bool = False) -> subprocess.CompletedProcess:
    """Run scripts/nvlcluster; raise CommandError naming what it said on
    failure. `show_progress` lets its progress messages (stderr) through to
    ours instead of keeping them for the error."""
    p = subprocess.run([NVLCLUSTER] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=None if show_progress else subprocess.PIPE, text=True, timeout=timeout)
    if p.returncode != 0:
        raise CommandError(f"nvlcluster {' '.join(args)} failed (exit {p.returncode})"
                           + (":\n" + "\n".join(p.stderr.splitlines()[-40:]) if p.stderr else ""))
    return p


def down(directory: str, timeout: float = 15) -> subprocess.CompletedProcess:
    """`nvlcluster down`; never raises (a test's cleanup must go on)."""
    return subprocess.run([NVLCLUSTER, "down", "--dir", directory, "--timeout", f"{timeout:g}"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


class Cluster:
    """A running nvlcluster: its directory and the environment of its clients.
    Client commands run in `cwd` (default DIR/jobs), where job output lands."""

    def __init__(self, directory: str, env: Dict[str, str], cwd: Optional[str] = None):
        self.dir = directory
        self.env = env
        self.cwd = cwd or os.path.join(directory, "jobs")
        os.makedirs(self.cwd, exist_ok=True)

    @classmethod
    def up(cls, directory: str, args: Sequence[str], timeout: float = 900,
           show_progress: bool = False) -> "Cluster":
        """`nvlcluster up --dir DIR ARGS...`; the handle of the cluster it started."""
        p = nvlcluster("up", "--dir", directory, *args, timeout=timeout, show_progress=show_progress)
        return cls(directory, env_from_exports(p.stdout))

    def down(self, timeout: float = 15) -> subprocess.CompletedProcess:
        return down(self.dir, timeout)

    def nvlcluster(self, command: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """`nvlcluster COMMAND --dir DIR ARGS...` on this cluster."""
        return nvlcluster(command, "--dir", self.dir, *args, timeout=timeout)

    def path(self, *parts: str) -> str:
        return os.path.join(self.dir, *parts)

    def state_saved_since(self, t: float, files=("job_state", "node_state")) -> bool:
        """Whether slurmctld wrote each of its state `files` after `t`
        (time.time()). It saves them asynchronously, at most every 5 s
        (SAVE_MAX_WAIT in state_save.c): a crash loses what changed since the
        last save, a requeue or a node declared down included."""
        try:
            return all(os.stat(self.path("state", f)).st_mtime > t for f in files)
        except FileNotFoundError:
            return False

    def signal_slurmd(self, node: str, sig: int) -> None:
        """Send `sig` to a node's slurmd as `up` (or start-node) recorded it:
        SIGSTOP keeps it from answering (nor registering with a restarted
        slurmctld) until SIGCONT, its jobs untouched."""
        with open(self.path("run", "cluster.json")) as f:
            os.kill(json.load(f)["daemons"][node]["pid"], sig)

    def ctld_pid(self) -> int:
        """slurmctld's pid as `nvlcluster up` (or restart-ctld) recorded it."""
        with open(self.path("run", "cluster.json")) as f:
            return json.load(f)["daemons"]["slurmctld"]["pid"]

    # -- commands ----------------------------------------------------------

    def run(self, *argv: str, check: bool = True,
            timeout: Optional[float] = 60) -> subprocess.CompletedProcess:
        """Run a Slurm client (or any) command against the cluster."""
        p = subprocess.run(list(argv), env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise CommandError(f"{' '.join(argv)} failed (exit {p.returncode}): "
                               f"{p.stderr.strip()} {p.stdout.strip()}")
        return p

    def sbatch(self, *args: str, wrap: Optional[str] = "sleep 3600") -> int:
        """Submit a batch job; return its id. Raises SubmitError with
        sbatch's message when the job is refused."""
        argv = ["sbatch"] + list(args)
        if not any(a.startswith("--wrap") for a in args) and wrap is not None:
            argv += ["--wrap", wrap]
        p = self.run(*argv, check=False)
        m = re.search(r"Submitted batch job (\d+)", p.stdout)
        if p.returncode != 0 or not m:
            raise SubmitError(argv[1:], p.stderr + p.stdout)
        return int(m.group(1))

    def try_sbatch(self, *args: str, wrap: Optional[str] = "sleep 3600") -> Tuple[Optional[int], Optional[str]]:
        """(job id, None) or (None, sbatch's error message)."""
        try:
            return self.sbatch(*args, wrap=wrap), None
        except SubmitError as e:
            return None, e.stderr

    def job(self, jobid: int) -> Dict[str, str]:
        """`scontrol show job -o` as a dict ({} once the job is gone)."""
        p = self.run("scontrol", "show", "job", "-o", str(jobid), check=False)
        if p.returncode != 0 or not p.stdout.strip():
            return {}
        return parse_kv(p.stdout.splitlines()[0])

    def jobs(self, check: bool = False) -> Dict[int, Dict[str, str]]:
        """{job id: `scontrol show job -o` dict} of every job slurmctld knows.
        check=False: {} when scontrol fails; True: CommandError then (a
        caller that reads a missing job as gone must not take a failed
        listing for an empty cluster)."""
        out = {}
        for line in self.run("scontrol", "show", "job", "-o", check=check).stdout.splitlines():
            fields = parse_kv(line)
            if fields.get("JobId", "").isdigit():
                out[int(fields["JobId"])] = fields
        return out

    def state(self, jobid: int) -> Optional[str]:
        return self.job(jobid).get("JobState")

    def reason(self, jobid: int) -> str:
        """The pending reason as squeue shows it (nvlblock's sentence where set)."""
        return self.run("squeue", "-h", "-j", str(jobid), "-o", "%r", check=False).stdout.strip()

    def expand(self, hostlist_expr: Optional[str]) -> List[str]:
        """Node names of a hostlist expression, as `scontrol show hostnames` expands it."""
        if not hostlist_expr or hostlist_expr == "(null)":
            return []
        return self.run("scontrol", "show", "hostnames", hostlist_expr).stdout.split()

    def nodes(self, jobid: int) -> List[str]:
        """The job's node names (expanded), [] while it has none."""
        return self.expand(self.job(jobid).get("NodeList", ""))

    def squeue(self) -> List[dict]:
        """[{id, partition, state, nodes, reason}] of every job squeue lists."""
        p = self.run("squeue", "-h", "-o", "%i|%P|%T|%N|%r")
        out = []
        for line in p.stdout.splitlines():
            i, part, st, nodes, reason = line.split("|", 4)
            out.append({"id": int(i), "partition": part, "state": st, "nodes": nodes,
                        "reason": reason})
        return out

    def queue_text(self) -> str:
        return "\n".join(f"  {j['id']} {j['partition']} {j['state']} {j['nodes']} {j['reason']}"
                         for j in self.squeue())

    def node_states(self) -> Dict[str, str]:
        """{node: sinfo long state} (e.g. idle, allocated, blocked, down)."""
        p = self.run("sinfo", "-h", "-N", "-o", "%N %T")
        states = {}
        for line in p.stdout.splitlines():
            n, s = line.split()
            states[n] = s
        return states

    def cancel(self, *jobids: int) -> None:
        if jobids:
            self.run("scancel", *[str(j) for j in jobids], check=False)

    # -- failing and repairing nodes -----------------------------------------

    def set_down(self, *nodes: str, reason: str = "nvltest") -> None:
        """Fail nodes as an administrator or a health check does: state=down."""
        self.run("scontrol", "update", f"nodename={','.join(nodes)}", "state=down",
                 f"reason={reason}")

    def drain(self, *nodes: str, reason: str = "nvltest") -> None:
        self.run("scontrol", "update", f"nodename={','.join(nodes)}", "state=drain",
                 f"reason={reason}")

    def resume(self, *nodes: str) -> None:
        """Repair nodes set down or drained: state=resume."""
        self.run("scontrol", "update", f"nodename={','.join(nodes)}", "state=resume")

    def fail_node(self, node: str, kill: bool = True) -> None:
        """Fail a node as a crash does: its slurmd and its job processes stop
        (`nvlcluster stop-node`); slurmctld notices after SlurmdTimeout."""
        self.nvlcluster("stop-node", node, *(["--kill"] if kill else []))

    def repair_node(self, node: str, timeout: float = 120) -> None:
        """Start a failed node's slurmd again; `nvlcluster start-node` waits
        until it registers (up to its own --timeout, 30 s)."""
        self.nvlcluster("start-node", node, timeout=timeout)

    def restart_ctld(self, kill: bool = True) -> None:
        self.nvlcluster("restart-ctld", "--timeout", "60", *(["--kill"] if kill else []))

    # -- waiting -----------------------------------------------------------

    def failure_context(self) -> str:
        """What a timed-out wait shows beside its message (subclasses add more):
        the queue, and every job slurmctld still knows (finished ones too,
        which squeue leaves out) with how it ended."""
        return (f"queue now:\n{self._safe(self.queue_text)}"
                f"\njobs slurmctld knows:\n{self._safe(self.jobs_text)}")

    def jobs_text(self) -> str:
        keys = ("JobState", "Reason", "Restarts", "ExitCode", "NodeList", "BatchHost")
        return "\n".join(f"  {jobid} " + " ".join(f"{k}={j.get(k, '')}" for k in keys)
                         for jobid, j in sorted(self.jobs().items()))

    def wait_for(self, predicate: Callable[[], object], timeout: float, what: str,
                 interval: float = 0.5):
        """Poll predicate() until it returns something true; return that.
        On timeout raise AssertionError with `what` and failure_context()."""
        done, value = poll(predicate, timeout, interval)
        if not done:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n"
                                 + self.failure_context())
        return value

    @staticmethod
    def _safe(fn: Callable[[], str]) -> str:
        try:
            return fn()
        except Exception as e:  # a failure message must not fail itself
            return f"({e})"

    def wait_state(self, jobid: int, states: Union[str, Iterable[str]], timeout: float,
                   what: Optional[str] = None) -> Dict[str, str]:
        """Wait until the job is in one of `states` (e.g. "RUNNING"); return its dict."""
        states = (states,) if isinstance(states, str) else tuple(states)
        return self.wait_for(lambda: (lambda j: j if j.get("JobState") in states else None)(
            self.job(jobid)), timeout, what or f"job {jobid} to be {'/'.join(states)}")

    def wait_running(self, jobid: int, timeout: float = 30) -> List[str]:
        """Wait until the job runs; return its node list."""
        self.wait_state(jobid, "RUNNING", timeout)
        return self.nodes(jobid)
