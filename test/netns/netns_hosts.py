# SPDX-License-Identifier: GPL-2.0-or-later
"""Hosts under Linux network namespaces, for the tests of test/netns.

What netns_cluster.py and failover_cluster.py share: one network namespace
per host, joined by veth pairs to a bridge that lives in a namespace of its
own (nothing touches the root namespace's network); every daemon in its own
UTS namespace (its host name) and a private mount namespace in which the
cluster's hosts file is /etc/hosts (and, where asked, a per-host directory
is bound over a common path, as each real host has its own /run and
/var/log); the removal of namespaces left by runs whose driver died; the
probe that makes a test skip (exit status 77, CTest's SKIP_RETURN_CODE)
where namespaces cannot be made; and a Cluster whose Slurm client commands
run in a host's namespace (with nvlblock_cluster's job and node helpers).

Namespaces are named nvlpkg-<pid>-<host>. Python 3 standard library only.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

SKIP = 77
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster import client, common  # noqa: E402
from nvlblock_cluster.common import poll  # noqa: E402

NS_PREFIX = "nvlpkg-"
SUBNET_BITS = 24
LOG_TAG = ["netns"]


def log(msg):
    # The tag is read per call: failover_cluster.py sets it after importing
    # this module. To stdout: these programs' output is their log.
    common.log(msg, tag=LOG_TAG[0], clock=True, stdout=True)


class Failure(Exception):
    pass


def run(argv, check=True, timeout=60, **kw):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise Failure(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    return p


# --------------------------------------------------------------------------
# Namespaces


def ns_list():
    p = run(["ip", "netns", "list"], check=False)
    return [line.split()[0] for line in p.stdout.splitlines() if line.strip()]


def ns_pids(ns):
    p = run(["ip", "netns", "pids", ns], check=False)
    return [int(x) for x in p.stdout.split() if x.isdigit() and int(x) != os.getpid()]


def kill_ns_processes(ns, timeout=10):
    """SIGKILL every process in the namespace (daemons, slurmstepd, job
    tasks); repeat while any remain (a step may fork meanwhile). True once
    none is left."""
    deadline = time.monotonic() + timeout
    while True:
        pids = ns_pids(ns)
        if not pids:
            return True
        if time.monotonic() >= deadline:
            return False
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.1)


def delete_ns(ns):
    kill_ns_processes(ns)
    run(["ip", "netns", "del", ns], check=False)


def remove_stale():
    """Namespaces of earlier runs whose driver is gone (killed by a CTest
    timeout, say). Runs still alive are left alone."""
    for ns in ns_list():
        m = re.match(rf"{re.escape(NS_PREFIX)}(\d+)-", ns)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            log(f"removing stale namespace {ns}")
            delete_ns(ns)


def probe():
    """Why this process may not create network and UTS namespaces (None: it may)."""
    if os.geteuid() != 0:
        return "not root"
    for tool in ("ip", "unshare", "nsenter"):
        if not shutil.which(tool):
            return f"{tool} not found"
    ns = f"{NS_PREFIX}{os.getpid()}-probe"
    p = run(["ip", "netns", "add", ns], check=False)
    if p.returncode != 0:
        return f"ip netns add: {p.stderr.strip()}"
    try:
        p = run(["nsenter", f"--net=/run/netns/{ns}", "--", "unshare", "--uts", "--mount",
                 "hostname", "probe"], check=False)
        if p.returncode != 0:
            return f"nsenter/unshare: {p.stderr.strip()}"
    finally:
        delete_ns(ns)
    return None


class Network:
    """A bridge in namespace <prefix>sw and one namespace per host.
    hosts: [(namespace suffix, host name, address)]. private: optional
    (mount point, {suffix: directory}): that host's directory is bound over
    the mount point in its daemons' mount namespace."""

    def __init__(self, hosts, hosts_file, private=None):
        self.tag = f"{NS_PREFIX}{os.getpid()}-"
        self.hosts = hosts
        self.hosts_file = hosts_file
        self.private = private
        self.created = []

    def ns(self, host):
        return self.tag + host

    def up(self):
        sw = self.tag + "sw"
        self._add(sw)
        run(["ip", "-n", sw, "link", "add", "br0", "type", "bridge"])
        run(["ip", "-n", sw, "link", "set", "br0", "up"])
        with open(self.hosts_file, "w") as f:
            f.write("127.0.0.1 localhost\n" + "".join(f"{addr} {host}\n" for _, host, addr in self.hosts))
        for i, (suffix, host, addr) in enumerate(self.hosts):
            ns = self.ns(suffix)
            self._add(ns)
            port = f"p{i}"
            run(["ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port,
                 "netns", sw])
            run(["ip", "-n", sw, "link", "set", port, "master", "br0", "up"])
            run(["ip", "-n", ns, "addr", "add", f"{addr}/{SUBNET_BITS}", "dev", "eth0"])
            run(["ip", "-n", ns, "link", "set", "eth0", "up"])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])

    def _add(self, ns):
        run(["ip", "netns", "add", ns])
        self.created.append(ns)

    def exec_argv(self, suffix, host, argv):
        """argv run as a process of the host: its network namespace, its own
        UTS namespace (host name) and a mount namespace in which the
        cluster's hosts file is /etc/hosts (and the host's private directory
        is mounted). Not `ip netns exec`: it mounts a fresh /sys without
        /sys/fs/cgroup, which slurmd needs. Every step before the final exec
        is a child of sh, so the process started is argv[0] itself."""
        mounts = 'mount --bind "$1" /etc/hosts'
        args = [host, self.hosts_file]
        if self.private and suffix in self.private[1]:
            mounts += ' && mount --bind "$2" "$3"'
            args += [self.private[1][suffix], self.private[0]]
        script = f'{mounts} && hostname "$0" && shift {len(args) - 1} && exec "$@"'
        return ["nsenter", f"--net=/run/netns/{self.ns(suffix)}", "--",
                "unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c",
                script] + args + argv

    def client_argv(self, suffix, argv):
        """A client command in the host's network namespace."""
        return ["nsenter", f"--net=/run/netns/{self.ns(suffix)}", "--"] + argv

    def down(self):
        # Hosts first (their processes), the switch last.
        for ns in reversed(self.created):
            delete_ns(ns)
        self.created = []
        for ns in ns_list():
            if ns.startswith(self.tag):
                delete_ns(ns)


# --------------------------------------------------------------------------
# Slurm and the plugins


def slurm_prefix(slurm_build_dir):
    """The installation prefix of a configured Slurm build tree, or None
    when it has no installed slurmctld."""
    try:
        with open(os.path.join(slurm_build_dir, "Makefile")) as f:
            m = re.search(r"^prefix = (.*)$", f.read(), re.M)
    except OSError:
        return None
    prefix = m.group(1).strip() if m else None
    if not prefix or not os.path.isfile(os.path.join(prefix, "sbin", "slurmctld")):
        return None
    return prefix


def install_plugins(build_dir, dest):
    """`cmake --install BUILD --prefix DEST`, the installed layout a site
    gets (RUNPATH $ORIGIN finds libnvlblock); the directory of the plugins."""
    run(["cmake", "--install", build_dir, "--prefix", dest], timeout=120)
    sos = glob.glob(os.path.join(dest, "**", "topology_nvlblock.so"), recursive=True)
    if len(sos) != 1:
        raise Failure(f"cmake --install put {len(sos)} topology_nvlblock.so under {dest}")
    return os.path.dirname(sos[0])


def interrupted(signum, frame):
    # CTest's timeout, or a person: clean up as for Ctrl-C.
    raise KeyboardInterrupt


# --------------------------------------------------------------------------
# The cluster


class Cluster(client.Cluster):
    """The daemons of the namespaced hosts; client commands (and with them
    nvlblock_cluster's job and node helpers) run in a host's namespace
    (default: client_host)."""

    def __init__(self, d, prefix, net, client_host, log_globs=("log/*",)):
        self.d, self.prefix, self.net, self.client_host = d, prefix, net, client_host
        self.log_globs = log_globs
        self.conf = os.path.join(d, "etc", "slurm.conf")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        env["SLURM_CONF"] = self.conf
        env["PATH"] = f"{prefix}/bin:{prefix}/sbin:" + env.get("PATH", "/usr/bin:/bin")
        super().__init__(d, env, cwd=os.path.join(d, "run"))
        self.procs = []

    def start(self, suffix, host, argv, name):
        """Start a daemon on a host; it is expected to live until forget(name)."""
        err = open(os.path.join(self.d, "log", f"{name}.stderr"), "ab")
        p = subprocess.Popen(self.net.exec_argv(suffix, host, argv), env=self.env,
                             cwd=os.path.join(self.d, "run"), stdin=subprocess.DEVNULL,
                             stdout=err, stderr=err, start_new_session=True)
        err.close()
        self.procs.append((name, p))
        return p

    def forget(self, name):
        """A daemon no longer expected to live (about to be killed)."""
        self.procs = [(n, p) for n, p in self.procs if n != name]

    def run(self, *argv, check=True, timeout=30, host=None):
        """A Slurm client command on a host (default: client_host)."""
        suffix = host or self.client_host
        full = self.net.client_argv(suffix, [os.path.join(self.prefix, "bin", argv[0])] + list(argv[1:]))
        p = subprocess.run(full, env=self.env, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise Failure(f"{' '.join(argv)} on {suffix} failed ({p.returncode}): {p.stderr.strip()}")
        return p

    def check_alive(self):
        for name, p in self.procs:
            if p.poll() is not None:
                raise Failure(f"{name} exited with status {p.returncode}")

    def wait(self, what, predicate, timeout, interval=0.5):
        """Poll predicate() -> (done, what it saw) while every daemon lives."""
        seen = [None]

        def step():
            self.check_alive()
            done, seen[0] = predicate()
            return done
        if poll(step, timeout, interval)[0]:
            return seen[0]
        raise Failure(f"timed out after {timeout} s waiting for {what} (last seen: {seen[0]})")

    def node_states(self):
        """{node: state}, or None while slurmctld does not answer."""
        p = self.run("sinfo", "-h", "-N", "-o", "%N %T", check=False)
        if p.returncode != 0:
            return None
        return dict(line.split() for line in p.stdout.splitlines() if len(line.split()) == 2)

    def job_field(self, job, field):
        out = self.run("scontrol", "show", "job", str(job)).stdout
        m = re.search(rf"\b{field}=(\S*)", out)
        return m.group(1) if m else None

    def report(self, lines=25):
        paths = sorted(set(p for g in self.log_globs for p in glob.glob(os.path.join(self.d, g))))
        for path in paths:
            try:
                with open(path, errors="replace") as f:
                    tail = f.read().splitlines()[-lines:]
            except OSError:
                continue
            if tail:
                print(f"--- last lines of {path}:\n" + "\n".join(tail))


# --------------------------------------------------------------------------
# A test's driver


class Session:
    """What a test's body sets up, for main() to take down: the network,
    the cluster (for its logs on failure), other clean-ups."""

    def __init__(self, opts, prefix, d):
        self.opts, self.prefix, self.d = opts, prefix, d
        self.net = None
        self.cluster = None
        self.cleanups = []


def main(description, dir_prefix, subdirs, body):
    """Arguments, the skips (no namespaces, no installed Slurm), a fresh
    directory /tmp/<dir_prefix>XXXX with subdirs, body(session), and the
    clean-up whatever happens: every namespace of this run and its
    processes go; the directory stays when the test failed (or --keep).
    Returns the exit status (0, 1, or SKIP)."""
    import argparse
    import tempfile
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--build-dir", required=True, help="nvlblock CMake build tree with the plugins")
    ap.add_argument("--slurm-build-dir", required=True, help="the Slurm build tree they were built against")
    ap.add_argument("--keep", action="store_true", help="keep the cluster directory")
    opts = ap.parse_args()

    why = probe()
    if why:
        print(f"SKIP: network namespaces unavailable ({why})")
        return SKIP
    remove_stale()
    prefix = slurm_prefix(opts.slurm_build_dir)
    if not prefix:
        print(f"SKIP: no installed Slurm for {opts.slurm_build_dir} (run scripts/build-slurm)")
        return SKIP

    d = tempfile.mkdtemp(prefix=dir_prefix, dir="/tmp")
    for sub in subdirs:
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    s = Session(opts, prefix, d)
    signal.signal(signal.SIGTERM, interrupted)
    ok = False
    started = time.monotonic()
    try:
        body(s)
        ok = True
        log(f"PASS in {time.monotonic() - started:.1f} s")
    except (Failure, AssertionError, subprocess.TimeoutExpired, OSError) as e:
        print(f"FAIL: {e}")
        if s.cluster:
            s.cluster.report()
    except KeyboardInterrupt:
        print("FAIL: interrupted")
    finally:
        for fn in reversed(s.cleanups):
            try:
                fn()
            except Exception as e:  # a clean-up must not hide the others
                print(f"clean-up failed: {e}")
        if s.net:
            s.net.down()
        if ok and not opts.keep:
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"cluster directory kept: {d}")
    return 0 if ok else 1
