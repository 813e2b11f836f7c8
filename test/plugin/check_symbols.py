#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every function the plugins call exists in the Slurm release they are built for.

The plugins are linked lazily (no -z now: slurmd and the clients load them
too), so a call to a function the release's slurmctld does not define
compiles (with a warning, an error since -Werror=implicit-function-declaration),
loads, and ends slurmctld at the first call ("symbol lookup error"). Slurm
25.11 removed job_requeue(), for one. This check lists every undefined,
non-weak dynamic symbol of each plugin and looks it up in what the process
will have: the release's slurmctld (which exports its functions to its
plugins), its libslurmfull, libnvlblock beside the plugins, and the system
libraries any of them links. Anything not found fails the test, named with
the release. Weak undefined symbols ('w'/'v': slurmctld's globals, weak so
that slurmd and the clients still load the plugins) must be defined too:
one a release dropped would otherwise turn a capability off in silence
(control_time missing, say, and the status thread would never act).

Uses nm and ldd (binutils, libc). Exit status 0 when every symbol is
defined, 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys


def nm(path, *flags):
    """(type, name) of each dynamic symbol nm lists, version suffix dropped."""
    out = subprocess.run(["nm", "-D", *flags, path], capture_output=True, text=True, check=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        kind, name = parts[-2], parts[-1]
        symbols.append((kind, name.split("@")[0]))
    return symbols


def linked_libraries(path):
    """The shared libraries ldd resolves for `path`."""
    out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(r"=>\s+(/\S+)", out)]


def defined_names(paths):
    names = set()
    for p in paths:
        names.update(name for _, name in nm(p, "--defined-only"))
    return names


# Weak references every shared object gets from the toolchain (crtstuff:
# profiling and transactional memory hooks), never meant to be defined.
TOOLCHAIN_WEAK = {"__gmon_start__", "_ITM_registerTMCloneTable", "_ITM_deregisterTMCloneTable"}


def undefined_calls(plugin):
    """Undefined symbols the plugin needs, weak ones ('w'/'v') included."""
    return sorted({name for kind, name in nm(plugin, "--undefined-only")
                   if kind == "U" or (kind in ("w", "v") and name not in TOOLCHAIN_WEAK)})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--release", required=True, help="the Slurm release, for the messages")
    ap.add_argument("--slurmctld", required=True)
    ap.add_argument("--libslurm", required=True, help="the release's libslurmfull.so")
    ap.add_argument("--core", required=True, help="libnvlblock.so")
    ap.add_argument("plugins", nargs="+")
    args = ap.parse_args()
    for p in [args.slurmctld, args.libslurm, args.core] + args.plugins:
        if not os.path.exists(p):
            print(f"FAIL: {p} not found")
            return 1
    providers = [args.slurmctld, args.libslurm, args.core]
    for p in [args.slurmctld, args.libslurm] + args.plugins:
        providers += linked_libraries(p)
    defined = defined_names(sorted(set(providers)))
    failed = False
    for plugin in args.plugins:
        needed = undefined_calls(plugin)
        missing = [s for s in needed if s not in defined]
        for s in missing:
            print(f"FAIL: {os.path.basename(plugin)} calls {s}, which Slurm {args.release}'s slurmctld, "
                  f"libslurmfull and libraries do not define: slurmctld would exit at the first call")
        failed = failed or bool(missing)
        print(f"{os.path.basename(plugin)}: {len(needed)} undefined symbols, {len(missing)} not defined by "
              f"Slurm {args.release}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
