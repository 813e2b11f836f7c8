#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What can be checked of docker/ without a Docker engine.

  1. `docker-compose config` accepts docker/docker-compose.yml.
  2. The compose file and docker/etc/slurm.conf describe the same cluster:
     one service per host, with the host name slurm.conf gives it and the
     address it gives (SlurmctldHost=NAME(ADDR), NodeAddr=, NodeHostname=),
     all on one network whose subnet holds those addresses; every container
     mounts docker/etc as /etc/slurm; the slurmd wait for slurmctld.
  3. The Dockerfile builds with the scripts CI and developers use
     (scripts/install-deps, scripts/build-slurm, then cmake configure, build
     and docker/assemble-runtime's install against build-slurm's trees), in
     that order, each step skipped where docker/stage-prebuilt staged this
     machine's build (whose tree is then the runtime's), and does not
     install packages or fetch Slurm any other way. Every build script CI
     runs (.ci/, .github/workflows, .gitlab-ci.yml, followed through the
     scripts they call: .ci/run -> scripts/test -> scripts/install-deps,
     scripts/build-slurm -> scripts/debian-archive-uri) is run or copied
     by the Dockerfile too, and cmake takes the Slurm trees from build-slurm
     as scripts/test does. (The unit tests run in CI, not in the image.)
  4. Two stages: `build` compiles (install-deps --build); the last stage
     starts from the same Debian image, installs only the runtime libraries
     (install-deps --runtime) and copies Slurm's installation from `build`;
     no other image is named, so nothing is pulled beyond the base image
     (docker/make-base-image makes it where no registry is reachable); the
     compose file builds with host networking.
  5. The entry point is valid sh, and every file the Dockerfile copies exists;
     .dockerignore keeps build trees out of the context.

Exit status 77 when docker-compose is not installed. Needs PyYAML (which
docker-compose itself depends on) for 2.
"""

import argparse
import glob
import ipaddress
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
BUILD_SCRIPTS = ["scripts/install-deps", "scripts/build-slurm"]
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}")


def slurm_layout(path):
    text = open(path).read()
    m = re.search(r"^SlurmctldHost=([^(\s]+)\(([\d.]+)\)", text, re.M)
    hosts = {m.group(1): m.group(2)} if m else {}
    if not m:
        fail(f"{path}: no SlurmctldHost=NAME(ADDR)")
    nodes = re.findall(r"^NodeName=(\S+)\s+NodeAddr=(\S+)\s+NodeHostname=(\S+)", text, re.M)
    for name, addr, hostname in nodes:
        if name != hostname:
            fail(f"{path}: node {name} has NodeHostname={hostname}; the container host name must be the node name")
        hosts[hostname] = addr
    return (m.group(1) if m else None), hosts, len(nodes)


def check_compose(src, compose):
    p = subprocess.run(["docker-compose", "-f", compose, "config"], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=60)
    if p.returncode != 0:
        fail(f"docker-compose config: {p.stderr.strip()}")
        return
    print(f"docker-compose config: valid ({len(p.stdout.splitlines())} lines normalised)")
    try:
        import yaml
    except ImportError:
        print("PyYAML not installed: layout comparison skipped")
        return
    cfg = yaml.safe_load(p.stdout)
    ctld, hosts, n_nodes = slurm_layout(os.path.join(src, "docker", "etc", "slurm.conf"))
    services = cfg.get("services", {})
    if sorted(services) != sorted(hosts):
        fail(f"compose services {sorted(services)} != slurm.conf hosts {sorted(hosts)}")
    etc = os.path.realpath(os.path.join(src, "docker", "etc"))
    networks = cfg.get("networks", {})
    for name, svc in services.items():
        if svc.get("hostname") != name:
            fail(f"service {name}: hostname {svc.get('hostname')!r}, expected {name!r}")
        nets = svc.get("networks") or {}
        if len(nets) != 1:
            fail(f"service {name}: expected one network, got {list(nets)}")
            continue
        net, conf = next(iter(nets.items()))
        addr = (conf or {}).get("ipv4_address")
        if addr != hosts.get(name):
            fail(f"service {name}: ipv4_address {addr}, slurm.conf says {hosts.get(name)}")
        subnets = [c.get("subnet") for c in (networks.get(net, {}).get("ipam", {}) or {}).get("config", [])]
        if not any(addr and ipaddress.ip_address(addr) in ipaddress.ip_network(s) for s in subnets if s):
            fail(f"service {name}: {addr} is not in network {net}'s subnets {subnets}")
        mounts = [v if isinstance(v, str) else f"{v.get('source')}:{v.get('target')}" for v in svc.get("volumes", [])]
        if not any(re.match(rf"{re.escape(etc)}:/etc/slurm(:ro)?$", m) for m in mounts):
            fail(f"service {name}: docker/etc is not mounted as /etc/slurm: {mounts}")
        cmd = svc.get("command")
        want = ["slurmctld"] if name == ctld else ["slurmd"]
        if cmd != want:
            fail(f"service {name}: command {cmd}, expected {want}")
        if name != ctld and ctld not in (svc.get("depends_on") or {}):
            fail(f"service {name} does not depend on {ctld}")
    if ctld and "build" not in services.get(ctld, {}):
        fail(f"service {ctld} does not build the image")
    else:
        b = services[ctld]["build"]
        if os.path.realpath(b.get("context", "")) != os.path.realpath(src) or \
                b.get("dockerfile") not in ("docker/Dockerfile", os.path.join(src, "docker", "Dockerfile")):
            fail(f"the image must build from the repository root with docker/Dockerfile: {b}")
        if b.get("network") != "host":
            fail(f"the image build downloads (apt, Slurm's source): it needs `network: host`: {b}")
    print(f"compose layout = slurm.conf layout: {ctld} + {n_nodes} nodes, host names and addresses match")


def dockerfile_steps(path):
    """The Dockerfile's instructions, continuation lines joined."""
    text = re.sub(r"\\\n", " ", open(path).read())
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]


# Entry points CI runs that are drivers, checks or reports, not build steps: the image need not run them.
DRIVERS = {"scripts/test", "scripts/demo", "scripts/nvlcluster", "scripts/check-format", "scripts/ctest-failures",
           "scripts/ctest-times", "scripts/ci-fresh"}


def ci_scripts(src):
    """The CI configuration files, and every scripts/* they run, followed
    through the scripts themselves (.ci/run -> scripts/test -> ...)."""
    files = glob.glob(os.path.join(src, ".github", "workflows", "*.y*ml")) + \
        glob.glob(os.path.join(src, ".gitlab-ci.yml")) + \
        [f for f in glob.glob(os.path.join(src, ".ci", "**", "*"), recursive=True) if os.path.isfile(f)]
    found, todo = set(), list(files)
    while todo:
        text = open(todo.pop(), errors="replace").read()
        for script in set(re.findall(r"scripts/[\w.-]+", text)) - found:
            found.add(script)
            if os.path.isfile(os.path.join(src, script)):
                todo.append(os.path.join(src, script))
    return files, found


def check_dockerfile(src):
    path = os.path.join(src, "docker", "Dockerfile")
    steps = dockerfile_steps(path)
    runs = " && ".join(s[4:] for s in steps if s.upper().startswith("RUN "))
    if not any(re.match(r"FROM\s+debian:", s, re.I) for s in steps):
        fail("the image must start FROM debian (scripts/install-deps uses apt)")
    order = []
    for needle in ("scripts/install-deps", "scripts/build-slurm", "cmake -S", "cmake --build",
                   "docker/assemble-runtime"):
        i = runs.find(needle)
        if i < 0:
            fail(f"the Dockerfile never runs {needle}")
        order.append(i)
    if order == sorted(order) and -1 not in order:
        print("Dockerfile runs scripts/install-deps, scripts/build-slurm, cmake -S/--build, docker/assemble-runtime, "
              "in order")
    elif -1 not in order:
        fail("the Dockerfile's build steps are out of order")
    for flag in ("--print-src-dir", "--print-build-dir"):
        if not re.search(rf"-DSLURM_(SRC|BUILD)_DIR=\S*build-slurm {flag}", runs):
            fail(f"cmake must take the Slurm trees from scripts/build-slurm {flag}")
    assemble = open(os.path.join(src, "docker", "assemble-runtime")).read()
    if not re.search(r"docker/assemble-runtime \"\$\(readlink /opt/slurm\)\"", runs) or \
            not re.search(r"ln -s \"\$\(\S*build-slurm --print-prefix\)\" /opt/slurm", runs) or \
            not re.search(r'cmake --install "\$build" --prefix "\$prefix"', assemble):
        fail("docker/assemble-runtime must install the plugins into build-slurm's prefix (linked as /opt/slurm)")
    check_prebuilt(steps)
    # Nothing may sidestep the scripts: no apt-get install, no own Slurm download.
    if re.search(r"apt-get\s+(-\S+\s+)*install", runs) or re.search(r"\b(wget|curl)\b", runs):
        fail("the Dockerfile installs packages or downloads on its own; use scripts/install-deps / build-slurm")
    copies = " ".join(s for s in steps if s.upper().startswith("COPY "))
    files, ci = ci_scripts(src)
    if files:
        steps_ci = sorted(ci - DRIVERS)
        for script in steps_ci:
            if script not in runs and script not in copies:
                fail(f"CI ({', '.join(os.path.relpath(f, src) for f in files)}) runs {script}; the Dockerfile does not")
        print(f"CI ({', '.join(os.path.relpath(f, src) for f in files)}) builds with {', '.join(steps_ci)}: "
              "so does the Dockerfile")
        for script in sorted(ci & DRIVERS):
            text = open(os.path.join(src, script), errors="replace").read()
            for flag in ("--print-src-dir", "--print-build-dir"):
                if f"build-slurm {flag}" in text and f"build-slurm {flag}" not in runs:
                    fail(f"{script} configures with build-slurm {flag}; the Dockerfile does not")
    else:
        print("no CI configuration in the tree; the canonical build scripts are " + ", ".join(BUILD_SCRIPTS))
    for script in BUILD_SCRIPTS:
        full = os.path.join(src, script)
        if not os.access(full, os.X_OK):
            fail(f"{script} is missing or not executable")
    for s in steps:
        m = re.match(r"COPY\s+(?!--from)(\S+)\s+\S+$", s, re.I)
        if m and m.group(1) != "." and not os.path.exists(os.path.join(src, m.group(1))):
            fail(f"the Dockerfile copies {m.group(1)}, which does not exist")
    entry = os.path.join(src, "docker", "entrypoint.sh")
    p = subprocess.run(["sh", "-n", entry], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"docker/entrypoint.sh: {p.stderr.strip()}")
    ignore = os.path.join(src, ".dockerignore")
    if not os.path.exists(ignore) or not re.search(r"^build-\*$", open(ignore).read(), re.M):
        fail(".dockerignore must keep build trees out of the build context")
    check_stages(steps)


def check_prebuilt(steps):
    """With docker/stage-prebuilt's tree no build-stage step compiles or
    installs, and that tree is what the runtime stage gets."""
    guard = "[ -d /prebuilt/runtime ]"
    runs = [s[4:] for s in steps if s.upper().startswith("RUN ")]
    for r in runs:
        if re.search(r"install-deps --build|build-slurm|cmake ", r) and guard not in r:
            fail(f"a build step does not skip itself where docker/stage-prebuilt staged a build: RUN {r[:80]}")
    if not any(re.search(r"cp -a /prebuilt/runtime /runtime", r) for r in runs) or \
            not any(re.match(r"COPY\s+docker/prebuilt/\s+/prebuilt/$", s) for s in steps):
        fail("the build stage must copy docker/prebuilt/ and use its runtime/ as /runtime when staged")


def check_stages(steps):
    """A build stage and a runtime stage; nothing but the base image pulled."""
    stages, current = {}, None
    for s in steps:
        m = re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?$", s, re.I)
        if m:
            base, name = m.group(1), m.group(2) or f"stage{len(stages)}"
            if base not in stages and not re.fullmatch(r"debian:\S+", base):
                fail(f"FROM {base}: only the Debian base image (or an earlier stage) may be named")
            current = name
            stages[current] = {"from": base, "steps": []}
        elif current:
            stages[current]["steps"].append(s)
    if len(stages) < 2:
        fail("the Dockerfile must have a build stage and a runtime stage")
        return
    names = list(stages)
    build, runtime = stages[names[0]], stages[names[-1]]
    build_runs = " ".join(build["steps"])
    runtime_steps = " ".join(runtime["steps"])
    if "install-deps --build" not in build_runs:
        fail(f"the first stage ({names[0]}) must install with scripts/install-deps --build")
    runtime_runs = " ".join(s for s in runtime["steps"] if s.upper().startswith("RUN "))
    # Each command (split at && and ;) that runs install-deps, past VAR=value prefixes.
    installs = []
    for cmd in re.split(r"&&|;", re.sub(r"^RUN\s+", "", runtime_runs)):
        words = [w for w in cmd.split() if not re.match(r"^[A-Z_]+=", w)]
        if words and words[0].endswith("install-deps"):
            installs.append(" ".join(words[1:]))
    if not installs or any(args != "--runtime" for args in installs):
        fail(f"the last stage ({names[-1]}) must install only the runtime libraries (install-deps --runtime)")
    if re.search(r"\b(cmake|make|gcc|build-slurm)\b", runtime_runs):
        fail(f"the last stage ({names[-1]}) compiles: it must only copy what {names[0]} built")
    if not re.search(rf"COPY\s+--from={re.escape(names[0])}\s", runtime_steps, re.I):
        fail(f"the last stage ({names[-1]}) must copy Slurm's installation from {names[0]}")
    if runtime["from"] != build["from"]:
        fail(f"both stages must start from the same base image ({build['from']} vs {runtime['from']})")
    print(f"stages: {names[0]} (compiles) -> {names[-1]} (runtime libraries + Slurm's installation), "
          f"base {build['from']} only")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    opts = ap.parse_args()
    src = os.path.realpath(opts.source_dir)
    if not shutil.which("docker-compose"):
        print("SKIP: docker-compose not installed")
        return SKIP
    check_compose(src, os.path.join(src, "docker", "docker-compose.yml"))
    check_dockerfile(src)
    if failures:
        print(f"{len(failures)} problem(s)")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
