#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The docker-compose cluster of docker/ on a real Docker engine.

  1. An engine: the one running, else (as root, where dockerd is installed)
     one this test starts with `dockerd --storage-driver=overlay2
     --iptables=false` and stops at the end. Neither: exit 77 (skipped),
     saying why.
  2. The base image: docker/make-base-image when debian:bookworm is missing
     (debootstrap; no registry is needed).
  3. The commands docs/admin.md section 9 prints, run as printed (under a
     pseudo-terminal, as a user types them; with `docker compose` where only
     Compose v2 is installed, or `docker-compose` where only v1 is), with
     checks in between: `up -d --build` builds the image and starts
     slurmctld and the 8 slurmd containers; all nodes become idle;
     `scontrol show topology` shows both racks; the printed --segment job
     runs 2 + 2 nodes in the two racks and writes its output.
  4. A slice job (-N3 --requeue) runs on one rack; `docker kill` of one of
     its node containers is a real node death: slurmctld marks the node DOWN,
     requeues the job, and nvlblock restarts it in place on the same rack
     with that rack's spare; `docker start` repairs the node and it returns
     to the rack's spare pool.
  5. `down -v` (printed last) removes the containers, the network and the
     volumes; the test checks that nothing of the project is left, and stops
     the engine if it started it (and removes the docker0 bridge it made).
     Images stay: they are the cache that makes the next build take minutes.

Docker tests are serialised machine-wide by a lock file (the compose
network's subnet is fixed). The engine's log and the cluster's logs are
printed when a step fails.
"""

import argparse
import fcntl
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(SRC, "scripts"))
from nvlblock_cluster import common  # noqa: E402
from nvlblock_cluster.common import poll  # noqa: E402
from nvlblock_cluster.hostlist import expand_hostlist as expand  # noqa: E402
from nvlblock_cluster.naming import block_containing  # noqa: E402

SKIP = 77
PROJECT = "nvlblocktest"
COMPOSE_FILE = "docker/docker-compose.yml"
MARKER = "<!-- test/docker runs these lines as printed -->"
NODES = [f"gb{i:04d}" for i in range(1, 9)]
RACKS = {"rack01": NODES[:4], "rack02": NODES[4:]}
LOCK = os.path.join(tempfile.gettempdir(), "nvlblock-docker-test.lock")


# To stdout: the test's output is its log, interleaved with the docker
# commands it prints.
log = functools.partial(common.log, tag="docker-test", clock=True, stdout=True)


class Failure(Exception):
    pass


def run(argv, timeout=120, check=True, env=None, input_text=None):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                       stdin=subprocess.DEVNULL if input_text is None else None, input=input_text)
    if check and p.returncode != 0:
        raise Failure(f"{' '.join(argv)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


class Engine:
    """The Docker engine: found running, or started (and later stopped) here."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.proc = None
        self.log_path = os.path.join(workdir, "dockerd.log")
        self.made_bridge = False

    def responds(self):
        return run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30, check=False).returncode == 0

    def ensure(self):
        """Return None when an engine is usable, else why not (a skip)."""
        if self.responds():
            log("using the Docker engine that is running")
            return None
        if os.geteuid() != 0:
            return "no Docker engine is running and starting one needs root"
        dockerd = shutil.which("dockerd")
        if not dockerd:
            return "no Docker engine is running and dockerd is not installed (scripts/install-deps installs docker.io)"
        self.made_bridge = not os.path.exists("/sys/class/net/docker0")
        argv = [dockerd, "--storage-driver=overlay2", "--iptables=false",
                f"--pidfile={os.path.join(self.workdir, 'dockerd.pid')}"]
        log(f"starting {' '.join(argv)}")
        with open(self.log_path, "w") as out:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                tail = open(self.log_path).read()[-2000:]
                self.proc = None
                return f"dockerd exited at start ({tail.strip().splitlines()[-1] if tail.strip() else 'no output'})"
            if self.responds():
                log(f"dockerd {run(['docker', 'info', '--format', '{{.ServerVersion}}']).stdout.strip()} is up")
                return None
            time.sleep(1)
        self.stop()
        return "dockerd did not answer within 60 s"

    def stop(self):
        if not self.proc:
            return
        log("stopping the dockerd this test started")
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        self.proc = None
        if self.made_bridge and os.path.exists("/sys/class/net/docker0"):
            run(["ip", "link", "delete", "docker0"], check=False)
        if os.path.exists("/sys/class/net/docker0") and self.made_bridge:
            raise Failure("the docker0 bridge is still there after the engine stopped")

    def log_tail(self, n=40):
        if not self.proc or not os.path.exists(self.log_path):
            return ""
        return "\n".join(open(self.log_path).read().splitlines()[-n:])


class Compose:
    def __init__(self, src):
        self.src = src
        if run(["docker", "compose", "version"], check=False).returncode == 0:
            self.argv, self.name = ["docker", "compose"], "docker compose"
        elif shutil.which("docker-compose"):
            self.argv, self.name = ["docker-compose"], "docker-compose"
        else:
            self.argv, self.name = None, None
        # docker-compose gives the engine 60 s per API call by default; on a
        # loaded 2-core CI host creating eight containers at once took longer
        # (stop 45's CI: "Read timed out. (read timeout=60)"). The engine's
        # speed is not what this test measures.
        self.env = dict(os.environ, COMPOSE_PROJECT_NAME=PROJECT, COMPOSE_HTTP_TIMEOUT="600")

    def __call__(self, *args, timeout=120, check=True):
        return run(self.argv + ["-f", COMPOSE_FILE] + list(args), timeout=timeout, check=check, env=self.env)

    def ctld(self, *argv, timeout=60, check=True):
        return self("exec", "-T", "nvlctld", *argv, timeout=timeout, check=check)

    def printed(self, line, timeout=120):
        """Run a command line of the docs as printed, under a pseudo-terminal
        (docker-compose exec wants one), with this machine's compose."""
        for spelling in ("docker compose", "docker-compose"):
            if line.startswith(spelling + " "):
                line = self.name + line[len(spelling):]
        log(f"$ {line}")
        p = run(["script", "-qefc", line, "/dev/null"], timeout=timeout, check=False, env=self.env)
        out = p.stdout.replace("\r\n", "\n")
        if p.returncode != 0:
            raise Failure(f"`{line}` exited {p.returncode}:\n{out}{p.stderr}")
        return out


def printed_lines(src):
    """The shell lines docs/admin.md prints after MARKER, continuations joined."""
    text = open(os.path.join(src, "docs", "admin.md")).read()
    if MARKER not in text:
        raise Failure(f"docs/admin.md has no '{MARKER}' before its docker commands")
    block = re.search(r"```sh\n(.*?)```", text[text.index(MARKER):], re.S).group(1)
    block = block.replace("\\\n", " ")
    lines = []
    for raw in block.splitlines():
        line = raw.split("#", 1)[0].strip() if not raw.strip().startswith("#") else ""
        line = re.sub(r"\s+", " ", line)
        if line:
            lines.append(line)
    return lines


class DockerClusterTest:
    def __init__(self, src, workdir, build_dir=None):
        self.src = src
        self.workdir = workdir
        self.build_dir = build_dir
        self.engine = Engine(workdir)
        self.compose = Compose(src)
        self.lines = []
        self.done = set()

    # -- the documented lines, in order ------------------------------------

    def next_printed(self, pattern, timeout=120):
        """Run the next documented line; it must match `pattern` (the test's
        checks assume the docs' order)."""
        i = len(self.done)
        if i >= len(self.lines):
            raise Failure(f"docs/admin.md prints {len(self.lines)} docker lines; the test expected one more "
                          f"matching {pattern!r}")
        line = self.lines[i]
        if not re.search(pattern, line):
            raise Failure(f"docs/admin.md line {i + 1} of its docker block is `{line}`; expected {pattern!r}")
        out = self.compose.printed(line, timeout=timeout) if re.match(r"docker[ -]compose ", line) \
            else self.shell(line, timeout)
        self.done.add(i)
        return out

    def shell(self, line, timeout):
        log(f"$ {line}")
        p = run(["bash", "-c", line], timeout=timeout, check=False, env=self.compose.env)
        if p.returncode != 0:
            raise Failure(f"`{line}` exited {p.returncode}:\n{p.stdout}{p.stderr}")
        return p.stdout

    # -- helpers -----------------------------------------------------------

    def wait(self, what, predicate, timeout, interval=2):
        done, last = poll(predicate, timeout, interval)
        if not done:
            raise Failure(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
        return last

    def node_states(self):
        out = self.compose.ctld("sinfo", "-h", "-N", "-o", "%N %T", check=False).stdout
        return dict(ln.split()[:2] for ln in out.splitlines() if len(ln.split()) >= 2)

    def job(self, job_id):
        out = self.compose.ctld("squeue", "-h", "-j", str(job_id), "-o", "%T|%N|%r", check=False).stdout.strip()
        if not out:
            out = self.compose.ctld("scontrol", "show", "job", str(job_id), check=False).stdout
            m = re.search(r"JobState=(\S+)", out)
            return (m.group(1) if m else "UNKNOWN"), [], ""
        state, nodes, reason = out.split("|", 2)
        return state, (expand(nodes) if nodes else []), reason

    def topology(self):
        out = self.compose.ctld("scontrol", "show", "topology").stdout
        blocks = {}
        for line in out.splitlines():
            m = re.match(r"BlockName=(\S+)", line)
            if m:
                blocks[m.group(1)] = dict(re.findall(r"(\w+)=(\S+)", line))
        return blocks

    def ctld_log(self, pattern):
        out = self.compose.ctld("cat", "/var/log/slurm/slurmctld.log", check=False).stdout
        return [ln for ln in out.splitlines() if re.search(pattern, ln)]

    def container(self, node):
        cid = self.compose("ps", "-q", node).stdout.strip()
        if not cid:
            raise Failure(f"no container for {node}")
        return cid

    def leftovers(self):
        label = f"label=com.docker.compose.project={PROJECT}"
        found = []
        for kind, argv in (("container", ["docker", "ps", "-aq", "--filter", label]),
                           ("network", ["docker", "network", "ls", "-q", "--filter", label]),
                           ("volume", ["docker", "volume", "ls", "-q", "--filter", label])):
            ids = run(argv, check=False).stdout.split()
            found += [f"{kind} {i}" for i in ids]
        return found

    def dump_logs(self):
        try:
            print(self.compose("ps", check=False).stdout)
            print(self.compose.ctld("tail", "-n", "60", "/var/log/slurm/slurmctld.log", check=False).stdout)
            print(self.compose("logs", "--tail", "20", check=False, timeout=60).stdout[-6000:])
        except Exception as e:  # noqa: BLE001 - best effort on the way out
            print(f"(could not collect the cluster's logs: {e})")
        tail = self.engine.log_tail()
        if tail:
            print("dockerd log:\n" + tail)

    # -- the test ----------------------------------------------------------

    def run(self):
        if not shutil.which("docker"):
            print("SKIP: no docker command (scripts/install-deps installs docker.io)")
            return SKIP
        if not self.compose.argv:
            print("SKIP: neither `docker compose` nor docker-compose is installed (scripts/install-deps installs it)")
            return SKIP
        if not shutil.which("script"):
            print("SKIP: no `script` command (util-linux) to run the documented lines under a terminal")
            return SKIP
        self.lines = printed_lines(self.src)
        why = self.engine.ensure()
        if why:
            print(f"SKIP: {why}")
            return SKIP
        self.stage_prebuilt()
        ok = False
        try:
            # A project left over by an interrupted run would hold the subnet.
            if self.leftovers():
                log("removing what an earlier run left")
                self.compose("down", "-v", "--remove-orphans", timeout=300, check=False)
            self.scenario()
            ok = True
        except (Failure, subprocess.TimeoutExpired) as e:
            print(f"FAIL: {e}")
            self.dump_logs()
        finally:
            try:
                if len(self.done) < len(self.lines) and self.lines and re.search(r" down", self.lines[-1]):
                    # The documented teardown, also after a failure.
                    self.compose.printed(self.lines[-1], timeout=300)
                    self.done.add(len(self.lines) - 1)
                left = self.leftovers()
                if left:
                    self.compose("down", "-v", "--remove-orphans", timeout=300, check=False)
                    print(f"FAIL: `down -v` left {left}")
                    ok = False
                else:
                    log("nothing of the project is left: containers, network and volumes removed")
            finally:
                self.engine.stop()
                if self.build_dir:
                    run([os.path.join(self.src, "docker", "stage-prebuilt"), "--remove"], check=False)
        if ok:
            print(f"PASS: the {len(self.lines)} documented lines ran as printed ({self.compose.name}), "
                  "--segment job, in-place restart after docker kill, repair")
        return 0 if ok else 1

    def stage_prebuilt(self):
        """The image from this machine's own build of Slurm and nvlblock
        (docker/stage-prebuilt), so one CI run compiles neither twice; where
        it cannot be staged, or with --from-source, the image compiles both."""
        if not self.build_dir:
            log("image from source: Slurm and nvlblock compiled inside it")
            return
        p = run([os.path.join(self.src, "docker", "stage-prebuilt"), self.build_dir], timeout=600, check=False)
        if p.returncode != 0:
            log(f"image from source (docker/stage-prebuilt refused: {(p.stderr or p.stdout).strip()})")
            self.build_dir = None
            return
        log(p.stdout.strip())

    def scenario(self):
        # docker/make-base-image, when the docs print it first.
        if self.lines and self.lines[0].startswith("docker/make-base-image"):
            t0 = time.monotonic()
            self.next_printed(r"^docker/make-base-image", timeout=900)
            log(f"base image ready in {time.monotonic() - t0:.0f} s")

        t0 = time.monotonic()
        self.next_printed(r" up -d --build", timeout=3600)
        log(f"image built and cluster started in {time.monotonic() - t0:.0f} s")
        self.report_image()

        states = self.wait("8 idle nodes", lambda: (lambda s: s if len(s) == 8 and
                                                    all(v == "idle" for v in s.values()) else None)(
            self.node_states()), 180)
        log(f"nodes: {states}")
        out = self.next_printed(r" exec nvlctld sinfo$")
        if "idle" not in out:
            raise Failure(f"sinfo as printed shows no idle nodes:\n{out}")

        out = self.next_printed(r" exec nvlctld scontrol show topology$")
        for rack, nodes in RACKS.items():
            if not re.search(rf"BlockName={rack} .*Nodes=gb\[{nodes[0][2:]}-{nodes[-1][2:]}\]", out):
                raise Failure(f"scontrol show topology does not show {rack} with {nodes[0]}-{nodes[-1]}:\n{out}")
        blocks = self.topology()
        for rack in RACKS:
            if (blocks[rack].get("Slice"), blocks[rack].get("Spares")) != ("3", "1"):
                raise Failure(f"{rack}: expected Slice=3 Spares=1 (docker/etc/nvlblock.yaml): {blocks[rack]}")

        # The printed --segment job: 4 nodes in segments of 2. Each rack
        # keeps one spare, so it runs 2 + 2 in the two racks.
        out = self.next_printed(r" sbatch -N4 --segment=2 ")
        m = re.search(r"Submitted batch job (\d+)", out)
        if not m:
            raise Failure(f"sbatch printed no job id: {out}")
        seg_job = int(m.group(1))
        state = self.wait(f"job {seg_job} to complete", lambda: (lambda j: j if j[0] in
                                                                 ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT")
                                                                 else None)(self.job(seg_job)), 120)
        if state[0] != "COMPLETED":
            raise Failure(f"the --segment job ended {state}")
        nodes = expand(re.search(r" NodeList=(\S+)", self.compose.ctld("scontrol", "show", "job", str(seg_job))
                                 .stdout).group(1))
        per_rack = sorted(sum(1 for n in nodes if block_containing(n, RACKS) == r) for r in RACKS)
        if per_rack != [2, 2]:
            raise Failure(f"--segment=2 job on {nodes}: expected 2 nodes in each rack")
        out = self.next_printed(rf" exec nvlctld cat /shared/{seg_job}\.out$")
        # docker-compose exec's stream may carry a stray NUL byte before a
        # line (seen twice in CI), which the pseudo-terminal the line runs
        # under may echo as "^@": neither is part of the job's output.
        ran_on = sorted(re.findall(r"^\d+: (gb\d{4})\s*$", out.replace("\x00", "").replace("^@", ""), re.M))
        if ran_on != sorted(nodes):
            raise Failure(f"/shared/{seg_job}.out shows tasks on {ran_on}, the job had {nodes}:\n{out}")
        log(f"--segment job {seg_job}: {nodes}, output as expected")

        self.node_failure()

        if len(self.done) != len(self.lines) - 1 or not re.search(r" down -v$", self.lines[-1]):
            raise Failure(f"docs/admin.md's docker block: ran {sorted(self.done)} of {self.lines}; "
                          "the last line must be `... down -v`")
        try:
            self.next_printed(r" down -v$", timeout=300)
        except Failure as e:
            self.down_again(e)

    def down_again(self, failure, tries=5):
        """docker-compose 1.29 removes the network while the engine is still
        tearing containers down ("has active endpoints"), more often on a
        loaded machine; running the same line again finishes the job, as it
        would for a site. Once was not always enough (stop 52's third local
        CI run: the second `down -v` 3 s later hit it too)."""
        for attempt in range(tries):
            if "has active endpoints" not in str(failure):
                raise failure
            log(f"`down -v` raced the engine removing containers; running it again ({attempt + 1})")
            time.sleep(3 * (attempt + 1))
            try:
                self.compose.printed(self.lines[-1], timeout=300)
                return
            except Failure as e:
                failure = e
        raise failure

    def report_image(self):
        p = run(["docker", "image", "inspect", "-f", "{{.Size}}", "nvlblock-slurm:24.11.5"], check=False)
        if p.returncode == 0:
            log(f"image nvlblock-slurm:24.11.5: {int(p.stdout.strip()) / 1e6:.0f} MB")
        # The runtime image holds no compiler and no build tree: beside
        # Slurm's installation (/opt/slurm links to it) nothing of its build.
        p = self.compose.ctld("sh", "-c", 'command -v gcc cc cmake make || true; '
                              'ls "$(dirname "$(readlink /opt/slurm)")" /src 2>&1', check=False)
        if re.search(r"/(gcc|cc|cmake|make)$", p.stdout, re.M) or re.search(r"^build$|^src$", p.stdout, re.M):
            raise Failure(f"the runtime image holds build tools or trees:\n{p.stdout}")

    def node_failure(self):
        out = self.compose.ctld("sbatch", "-N3", "--requeue", "-o", "/dev/null", "--wrap", "sleep 900").stdout
        job = int(re.search(r"Submitted batch job (\d+)", out).group(1))
        state = self.wait(f"slice job {job} to run", lambda: (lambda j: j if j[0] == "RUNNING" else None)(
            self.job(job)), 90)
        nodes = state[1]
        racks = {block_containing(n, RACKS) for n in nodes}
        if len(racks) != 1:
            raise Failure(f"slice job {job} (-N3, slice 3) spans racks: {nodes}")
        rack = racks.pop()
        victim = nodes[1]
        spare = [n for n in RACKS[rack] if n not in nodes]
        log(f"slice job {job} runs on {nodes} ({rack}); docker kill {victim}")
        t_kill = time.monotonic()
        run(["docker", "kill", self.container(victim)])

        # slurmctld notices after SlurmdTimeout (30 s), requeues the job and
        # nvlblock restarts it on its rack: 2 prior nodes + the spare.
        state = self.wait(f"job {job} to run again without {victim}",
                          lambda: (lambda j: j if j[0] == "RUNNING" and victim not in j[1] else None)(self.job(job)),
                          240, interval=3)
        took = time.monotonic() - t_kill
        again = state[1]
        if {block_containing(n, RACKS) for n in again} != {rack} or set(again) != set(nodes) - {victim} | set(spare):
            raise Failure(f"job {job} restarted on {again}; expected {sorted(set(nodes) - {victim} | set(spare))} "
                          f"(its rack {rack}: its 2 healthy nodes and the spare)")
        # nvlblock logs the restart when its status pass sees the job run
        # (every 2 s), which can be after squeue already shows it running.
        lines = self.wait(f"slurmctld's log to show job {job} restarted in place on {rack}",
                          lambda: self.ctld_log(rf"nvlblock: recovery JobId={job} restarted in place on {rack}"), 30)
        log(f"job {job} restarted in place on {again}, {took:.0f} s after docker kill: {lines[-1].split('] ', 1)[-1]}")
        if self.node_states().get(victim) not in ("down", "down*"):
            raise Failure(f"{victim} is not DOWN after docker kill: {self.node_states()}")
        if self.topology()[rack].get("Failed") != "1":
            raise Failure(f"scontrol show topology does not count {victim} as failed: {self.topology()[rack]}")

        # Repair: the container starts again, slurmd registers, and with
        # ReturnToService=1 the node returns to service and to the spare pool.
        run(["docker", "start", self.container(victim)])
        self.wait(f"{victim} to return to service", lambda: self.node_states().get(victim) in ("idle", "mixed"),
                  120)
        self.compose.ctld("scancel", str(job))
        self.wait(f"{rack} to show no failed node and its spare free",
                  lambda: (lambda b: b if b.get("Failed") == "0" and b.get("SparesFree") == "1" else None)(
                      self.topology()[rack]), 60)
        log(f"{victim} repaired: {rack} healthy again, its spare free")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--build-dir", help="this machine's build of nvlblock against build-slurm's 24.11.5: "
                    "the image copies it and Slurm's installation (docker/stage-prebuilt)")
    ap.add_argument("--from-source", action="store_true",
                    help="compile Slurm and nvlblock inside the image, as a machine without a build does")
    opts = ap.parse_args()
    src = os.path.realpath(opts.source_dir)
    os.chdir(src)
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        workdir = tempfile.mkdtemp(prefix="nvlblock-docker-")
        try:
            build = None if opts.from_source or not opts.build_dir else os.path.realpath(opts.build_dir)
            return DockerClusterTest(src, workdir, build).run()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
