# SPDX-License-Identifier: GPL-2.0-or-later
"""Slurm builds (scripts/build-slurm) and the nvlblock plugins built
against them, copied into each cluster."""

import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from typing import List, Optional

from .common import BUILD_SLURM, REPO, ClusterError, log


def build_slurm(front_end: bool, what: str, accounting: bool = False) -> str:
    """Ask scripts/build-slurm for a path (`what` is prefix, src-dir or
    build-dir); it builds Slurm first if that variant is not installed yet
    (`accounting`: the variant with slurmdbd and MariaDB, --accounting).

    build-slurm itself is not safe to run twice at once, so concurrent
    nvlcluster commands take turns through a lock file."""
    argv = ([BUILD_SLURM] + (["--front-end"] if front_end else []) + (["--accounting"] if accounting else [])
            + [f"--print-{what}"])
    lock_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "nvlcluster-build-slurm.lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=sys.stderr, text=True)
    if p.returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed (exit {p.returncode})")
    return p.stdout.strip()


def cmake_cache_value(build_dir: str, key: str) -> Optional[str]:
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(rf"{re.escape(key)}:[A-Z_]+=(.*)$", line.rstrip("\n"))
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def build_plugin(front_end: bool) -> str:
    """Configure (when needed) and build the nvlblock plugins against the
    Slurm tree in use; return the directory holding the .so files.

    The plugin must be compiled against the very Slurm build it is loaded
    into (config.h and every configure macro must match, see design.md 5), so
    each Slurm variant gets its own CMake build directory."""
    src_dir = build_slurm(front_end, "src-dir")
    slurm_build = build_slurm(front_end, "build-dir")
    # One CMake build directory per Slurm (build-slurm names it: build/ for
    # the default release, build-<version>/ for another one selected with
    # NVLBLOCK_SLURM_VERSION), build-fe/ for the front-end variant.
    # NVLCLUSTER_BUILD_DIR overrides the former (ctest sets it to its own
    # build tree, so a cluster test loads the plugins of the tree it tests).
    if front_end:
        build_dir = os.path.join(REPO, "build-fe")
    else:
        build_dir = os.environ.get("NVLCLUSTER_BUILD_DIR") or os.path.join(
            REPO, build_slurm(False, "nvlblock-build-dir"))
    # Cluster tests run side by side (test/CMakeLists.txt): two builds of
    # one tree at once would write the same files, so they take turns.
    os.makedirs(build_dir, exist_ok=True)
    with open(os.path.join(build_dir, ".nvlcluster-build.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        configured = False
        if (cmake_cache_value(build_dir, "SLURM_BUILD_DIR") != slurm_build
                or cmake_cache_value(build_dir, "SLURM_SRC_DIR") != src_dir):
            log(f"configuring {build_dir} for {slurm_build}")
            run_build(["cmake", "-S", REPO, "-B", build_dir, f"-DSLURM_SRC_DIR={src_dir}",
                       f"-DSLURM_BUILD_DIR={slurm_build}"])
            configured = True
        # Under ctest (test/CMakeLists.txt sets NVLCLUSTER_PREBUILT) the tree
        # under test was built before any test ran (scripts/test, CI): make's
        # no-op pass over it cost about 1 CPU-s a cluster, ~300 CPU-s of a CI
        # run. build-fe is not that tree: it is built here, as before.
        prebuilt = os.environ.get("NVLCLUSTER_PREBUILT") and not front_end and not configured
        if not prebuilt:
            log("building topology_nvlblock and prep_nvlblock")
            run_build(["cmake", "--build", build_dir, "--target", "topology_nvlblock",
                       "prep_nvlblock", "-j2"])
    plugin_dir = os.path.join(build_dir, "plugin")
    for so in ("topology_nvlblock.so", "prep_nvlblock.so"):
        if not os.path.isfile(os.path.join(plugin_dir, so)):
            raise ClusterError(f"the build did not produce {plugin_dir}/{so}")
    return plugin_dir


# What a cluster copies from the build: the plugins and the core library they
# load from beside themselves (RUNPATH $ORIGIN), under its SONAME.
PLUGIN_FILES = ("topology_nvlblock.so", "prep_nvlblock.so", "libnvlblock.so.1")


def copy_plugins(build_plugin_dir: str, target: str) -> str:
    """Copy the plugins into the cluster's own DIR/plugin and return it.

    A running cluster must never load a .so that a later build rewrites in
    place (a daemon or slurmstepd that loads it mid-write fails with "file
    too short", design.md 5), so every cluster runs a private copy. A file
    that changes while it is copied, or was written a moment ago, may be a
    half-linked one from a concurrent build: wait and copy again."""
    os.makedirs(target, exist_ok=True)
    deadline = time.monotonic() + 120
    while True:
        unstable = []
        for name in PLUGIN_FILES:
            src = os.path.realpath(os.path.join(build_plugin_dir, name))
            before = os.stat(src)
            tmp = os.path.join(target, f".{name}.tmp")
            shutil.copyfile(src, tmp)
            after = os.stat(src)
            if ((before.st_mtime_ns, before.st_size) != (after.st_mtime_ns, after.st_size)
                    or time.time() - after.st_mtime < 2
                    or os.path.getsize(tmp) != after.st_size):
                unstable.append(name)
            os.chmod(tmp, 0o755)
            os.replace(tmp, os.path.join(target, name))
        if not unstable:
            return target
        if time.monotonic() >= deadline:
            raise ClusterError(f"{', '.join(unstable)} in {build_plugin_dir} keep changing "
                               "(a build running?)")
        time.sleep(2)


def run_build(argv: List[str]) -> None:
    # Build output goes to stderr: stdout carries only the export lines.
    if subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=sys.stderr).returncode != 0:
        raise ClusterError(f"{' '.join(argv)} failed")
