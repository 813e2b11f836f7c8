#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check the binary contract of the nvlblock plugins with Slurm.

- topology_nvlblock.so exports exactly plugin_name, plugin_type, plugin_id,
  plugin_version, init, fini and the topology_p_* symbols of the ops table
  (syms[] in the Slurm source's src/interfaces/topology.c; plugin_id is in
  that table too, as data); prep_nvlblock.so likewise with
  src/interfaces/prep.c (no plugin_id). A missing symbol is fatal in every
  process that loads the plugin; an extra one leaks internals into
  slurmctld's namespace.
- the identity symbols are data, the entry points functions.
- topology_nvlblock.so also exports the data symbols Slurm's common
  topology archive (libtopology_common.a, linked in) defines as fallbacks
  for processes other than slurmctld (idle_node_bitmap, part_list in
  24.11): only exported can slurmctld's own definitions interpose on them.
  Kept local, the plugin read NULL copies and slurmctld crashed (backfill
  with bf_busy_nodes; fan-out with TopologyParam=RoutePart). With
  --archive and --slurmctld, every such symbol of that archive that
  slurmctld exports is checked, so a Slurm release adding one is caught.
- libnvlblock exports only its C ABI (nvlb_*), no C++ symbol.
- the plugins are not linked with -z now (no BIND_NOW, no NOW flag): slurmd
  and the clients load them and rely on lazy binding for slurmctld-only
  functions; and they have RELRO (a GNU_RELRO segment).

Uses nm and readelf (binutils). Exit status 0 when all hold, 1 otherwise.
"""
import argparse
import os
import re
import subprocess
import sys

IDENTITY_DATA = {"plugin_name", "plugin_type", "plugin_version"}
# Defined by libtopology_common.a for non-slurmctld processes; slurmctld's
# definitions must interpose (see the version script).
INTERPOSED_DATA = {"idle_node_bitmap", "part_list"}
ENTRY_POINTS = {"init", "fini"}
DATA_TYPES = set("RDBGSVrdbgsv")  # read-only, data, bss (upper: global)
FUNC_TYPES = set("TtWiI")


def ops_table(source):
    """The names in `static const char *syms[] = { ... };` of a Slurm
    interface source file."""
    with open(source) as f:
        text = f.read()
    m = re.search(r"static\s+const\s+char\s*\*\s*syms\s*\[\s*\]\s*=\s*\{(.*?)\};", text, re.S)
    if not m:
        raise SystemExit(f"no syms[] table in {source}")
    return re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"', m.group(1))


def dynamic_symbols(path):
    """{name: nm type letter} of the defined dynamic symbols, less version
    definition nodes (absolute symbols named after a version, e.g. NVLBLOCK_1)."""
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True)
    syms = {}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            _, kind, name = parts
        elif len(parts) == 2:
            kind, name = parts
        else:
            continue
        name = name.split("@")[0]
        if kind == "A":
            continue  # a version node, not a symbol
        syms[name] = kind
    return syms


def archive_data_definitions(archive):
    """Global data objects an archive defines (nm types B, D, C, G, S)."""
    out = subprocess.run(["nm", "--defined-only", archive], capture_output=True, text=True, check=True)
    return {parts[2] for parts in (ln.split() for ln in out.stdout.splitlines())
            if len(parts) == 3 and parts[1] in "BDCGS"}


def readelf(args, path):
    return subprocess.run(["readelf"] + args + [path], capture_output=True, text=True, check=True).stdout


class Checker:
    def __init__(self):
        self.failures = []

    def check(self, ok, message):
        print(("ok    " if ok else "FAIL  ") + message)
        if not ok:
            self.failures.append(message)

    def exact_exports(self, path, expected, data):
        syms = dynamic_symbols(path)
        name = os.path.basename(path)
        missing = sorted(set(expected) - set(syms))
        extra = sorted(set(syms) - set(expected))
        self.check(not missing, f"{name}: exports every expected symbol"
                   + (f" (missing: {', '.join(missing)})" if missing else ""))
        self.check(not extra, f"{name}: exports nothing else"
                   + (f" (extra: {', '.join(extra)})" if extra else ""))
        for sym in sorted(set(expected) & set(syms)):
            want = DATA_TYPES if sym in data else FUNC_TYPES
            if syms[sym] not in want:
                self.check(False, f"{name}: {sym} is {'data' if sym in data else 'a function'} "
                                  f"(nm type {syms[sym]})")
        self.check(all(syms[s] in (DATA_TYPES if s in data else FUNC_TYPES) for s in set(expected) & set(syms)),
                   f"{name}: identity symbols are data, entry points functions")

    def lazy_binding_and_relro(self, path):
        name = os.path.basename(path)
        dynamic = readelf(["-d", "-W"], path)
        now = [ln.strip() for ln in dynamic.splitlines()
               if "(BIND_NOW)" in ln or (("(FLAGS)" in ln or "(FLAGS_1)" in ln) and re.search(r"\bNOW\b", ln))]
        self.check(not now, f"{name}: not linked with -z now" + (f" ({'; '.join(now)})" if now else ""))
        segments = readelf(["-l", "-W"], path)
        self.check("GNU_RELRO" in segments, f"{name}: has a GNU_RELRO segment (-z relro)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--slurm-src", required=True, help="Slurm source tree (scripts/build-slurm --print-src-dir)")
    ap.add_argument("--topology", required=True, help="topology_nvlblock.so")
    ap.add_argument("--prep", required=True, help="prep_nvlblock.so")
    ap.add_argument("--core", required=True, help="libnvlblock shared library")
    ap.add_argument("--archive", help="Slurm's libtopology_common.a the plugin links")
    ap.add_argument("--slurmctld", help="the slurmctld binary of the same Slurm build")
    opts = ap.parse_args()

    c = Checker()
    topo_ops = ops_table(os.path.join(opts.slurm_src, "src", "interfaces", "topology.c"))
    prep_ops = ops_table(os.path.join(opts.slurm_src, "src", "interfaces", "prep.c"))
    # 24.11: plugin_id and 13 functions; 25.05: plugin_id, plugin_type,
    # supports_exclusive_topo and 15 functions; 25.11: the same data and 20
    # functions; 26.05 and 26.11: 23 functions. The data entries are the names without the topology_p_ prefix.
    topo_funcs = [s for s in topo_ops if s.startswith("topology_p_")]
    topo_data = set(topo_ops) - set(topo_funcs)
    c.check((len(topo_ops), len(topo_funcs)) in ((14, 13), (18, 15), (23, 20), (26, 23)) and topo_ops[0] == "plugin_id",
            f"Slurm's topology ops table is 24.11's (14 entries), 25.05's (18), 25.11's (23) or 26.05's and "
            f"26.11's (26), "
            f"plugin_id first "
            f"({len(topo_ops)} read, {len(topo_funcs)} functions)")

    c.exact_exports(opts.topology, IDENTITY_DATA | ENTRY_POINTS | set(topo_ops) | INTERPOSED_DATA,
                    IDENTITY_DATA | topo_data | INTERPOSED_DATA)
    if opts.archive and opts.slurmctld and os.path.isfile(opts.slurmctld):
        fallbacks = archive_data_definitions(opts.archive) & set(dynamic_symbols(opts.slurmctld))
        exported = dynamic_symbols(opts.topology)
        hidden = sorted(fallbacks - set(exported))
        c.check(not hidden, f"{os.path.basename(opts.topology)}: exports every slurmctld global that "
                            f"{os.path.basename(opts.archive)} defines ({', '.join(sorted(fallbacks)) or 'none'})"
                + (f"; local: {', '.join(hidden)}" if hidden else ""))
    else:
        print("not checked: slurmctld globals defined by Slurm's archive (no --archive/--slurmctld)")
    c.exact_exports(opts.prep, IDENTITY_DATA | ENTRY_POINTS | set(prep_ops), IDENTITY_DATA)

    core = dynamic_symbols(opts.core)
    foreign = sorted(s for s in core if not s.startswith("nvlb_"))
    c.check(bool(core) and not foreign, f"{os.path.basename(opts.core)}: exports only nvlb_* ({len(core)} symbols)"
            + (f"; also: {', '.join(foreign[:10])}" if foreign else ""))
    c.check(all(core[s] in FUNC_TYPES for s in core), f"{os.path.basename(opts.core)}: nvlb_* are functions")

    for path in (opts.topology, opts.prep):
        c.lazy_binding_and_relro(path)

    if c.failures:
        print(f"{len(c.failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
