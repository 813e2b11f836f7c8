#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check what nvlblock installs, from `cmake --install` or in the Debian package.

  check_package.py install ...   cmake --install BUILD --prefix WORK/prefix
  check_package.py deb ...       cpack -G DEB into WORK; dpkg-deb -c / -f / -x

Both check the same layout:
  <plugin dir>   topology_nvlblock.so, prep_nvlblock.so, libnvlblock.so.1
  bin/           every tool this build has
  share/man/     every man page built from docs/man, gzipped
  share/doc/nvlblock/            the docs and examples/ (topology.conf.examples)
and the same properties of the binaries: the plugins keep RUNPATH $ORIGIN
(and nothing else), are not linked with -z now (slurmd and the clients rely
on lazy binding) but have RELRO and a non-executable stack, export Slurm's
plugin symbols; no binary carries a RUNPATH into the build or source tree;
every shared library a binary needs is found (ldd); every tool runs --help.
The package also: its name carries the Slurm release, its control fields,
no file it should not have, copyright and changelog, a -dbgsym package, and
lintian has no errors (where lintian is installed).

Exit status 77 (CTest SKIP_RETURN_CODE) when a tool the check needs is missing.
Python 3 standard library only.
"""

import argparse
import glob
import gzip
import os
import re
import shutil
import subprocess
import sys

SKIP = 77

# Each Slurm API generation's topology ops table (design.md 5) and the plugin
# identity; plugin.exports checks them exactly against the Slurm source.
_TOPOLOGY_COMMON = ["plugin_id", "plugin_name", "plugin_type", "plugin_version", "init", "fini",
                    "topology_p_build_config", "topology_p_eval_nodes", "topology_p_whole_topo",
                    "topology_p_get_bitmap", "topology_p_generate_node_ranking",
                    "topology_p_get_node_addr", "topology_p_split_hostlist", "topology_p_get",
                    "topology_p_get_fragmentation"]
_TOPOINFO_24_11 = ["topology_p_topology_free", "topology_p_topology_pack", "topology_p_topology_print",
                   "topology_p_topology_unpack"]
# 25.05 and later: contexts.
_TOPOLOGY_CONTEXTS = _TOPOLOGY_COMMON + ["supports_exclusive_topo", "topology_p_add_rm_node",
                                         "topology_p_destroy_config"]
# 25.11 and later: topoinfo_* (renamed), jobinfo_*, get_topology_str.
_TOPOLOGY_JOBINFO = _TOPOLOGY_CONTEXTS + [
    "topology_p_topoinfo_free", "topology_p_topoinfo_pack", "topology_p_topoinfo_print",
    "topology_p_topoinfo_unpack", "topology_p_jobinfo_free", "topology_p_jobinfo_pack",
    "topology_p_jobinfo_unpack", "topology_p_jobinfo_get", "topology_p_get_topology_str"]
TOPOLOGY_SYMBOLS = {
    "24_11": _TOPOLOGY_COMMON + _TOPOINFO_24_11,
    "25_05": _TOPOLOGY_CONTEXTS + _TOPOINFO_24_11,
    "25_11": _TOPOLOGY_JOBINFO,
    "26_05": _TOPOLOGY_JOBINFO + ["topology_p_allow_one_node", "topology_p_eval_node",
                                  "topology_p_get_rank"],
}
TOPOLOGY_SYMBOLS["26_11"] = TOPOLOGY_SYMBOLS["26_05"]  # the same ops table (plugin/topology/ops_26_11.c)
PREP_SYMBOLS = ["plugin_name", "plugin_type", "plugin_version", "init", "fini",
                "prep_p_register_callbacks", "prep_p_prolog", "prep_p_epilog",
                "prep_p_prolog_slurmctld", "prep_p_epilog_slurmctld", "prep_p_required"]
TOP_DOCS = ["README.md", "CHANGELOG.md", "COPYING"]

failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}")


def run(argv, check=True, **kw):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(argv)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def need(*tools):
    missing = [t for t in tools if not shutil.which(t)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed")
        sys.exit(SKIP)


def split_list(text):
    return [x for x in (text or "").split(",") if x]


# --------------------------------------------------------------------------
# What should be there


def expected_files(opts):
    """Paths relative to the install prefix that must be regular files (or
    links), with a short reason each."""
    exp = {}
    if opts.plugin_dir:
        for so in ("topology_nvlblock.so", "prep_nvlblock.so", "libnvlblock.so.1"):
            exp[f"{opts.plugin_dir}/{so}"] = "plugin"
    for tool in split_list(opts.tools):
        exp[f"bin/{tool}"] = "tool"
    for page in split_list(opts.man_pages):
        name = os.path.basename(page)
        section = name.rsplit(".", 1)[1]
        exp[f"share/man/man{section}/{name}.gz"] = "man page"
    for doc in sorted(glob.glob(os.path.join(opts.source_dir, "docs", "*.md"))):
        exp[f"share/doc/nvlblock/{os.path.basename(doc)}"] = "doc"
    for doc in TOP_DOCS:
        if os.path.exists(os.path.join(opts.source_dir, doc)):
            exp[f"share/doc/nvlblock/{doc}"] = "doc"
    examples = os.path.join(opts.source_dir, "topology.conf.examples")
    for path in sorted(glob.glob(os.path.join(examples, "**", "*"), recursive=True)):
        if os.path.isfile(path):
            exp[f"share/doc/nvlblock/examples/{os.path.relpath(path, examples)}"] = "example"
    return exp


# --------------------------------------------------------------------------
# Binary checks


def readelf(args, path):
    return run(["readelf", "-W"] + args + [path]).stdout


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def dynamic_symbols(path):
    out = run(["nm", "-D", "--defined-only", path]).stdout
    # (Type A: the version node of the linker script, NVLBLOCK_1, not a symbol.)
    return {line.split()[-1] for line in out.splitlines()
            if len(line.split()) >= 3 and line.split()[1] != "A"}


def check_binaries(root, opts, label):
    plugin_dir = os.path.join(root, opts.plugin_dir) if opts.plugin_dir else None
    bad_paths = [os.path.realpath(opts.build_dir), os.path.realpath(opts.source_dir)]
    elves = [p for p in glob.glob(os.path.join(root, "**", "*"), recursive=True)
             if os.path.isfile(p) and not os.path.islink(p) and is_elf(p)]
    if not elves:
        fail(f"{label}: no ELF files installed")
    for path in elves:
        rel = os.path.relpath(path, root)
        dyn = readelf(["-d"], path)
        runpaths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dyn)
        for rp in runpaths:
            for entry in rp.split(":"):
                if any(entry.startswith(b) for b in bad_paths):
                    fail(f"{label}: {rel} has a RUNPATH into the build or source tree: {rp}")
        ldd = run(["ldd", path], check=False)
        if "not found" in ldd.stdout:
            fail(f"{label}: {rel}: a needed library is not found:\n{ldd.stdout}")
    if not plugin_dir:
        return
    for so, symbols in (("topology_nvlblock.so", TOPOLOGY_SYMBOLS[opts.slurm_api]),
                        ("prep_nvlblock.so", PREP_SYMBOLS)):
        path = os.path.join(plugin_dir, so)
        if not os.path.isfile(path):
            continue  # reported as missing already
        dyn = readelf(["-d"], path)
        runpaths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dyn)
        if runpaths != ["$ORIGIN"]:
            fail(f"{label}: {so}: RUNPATH must be exactly $ORIGIN (libnvlblock beside it), got {runpaths}")
        if "libnvlblock.so.1" not in dyn:
            fail(f"{label}: {so} does not need libnvlblock.so.1")
        if re.search(r"\(BIND_NOW\)|\(FLAGS(?:_1)?\)\s+Flags:.*\bNOW\b", dyn):
            fail(f"{label}: {so} is linked with -z now; slurmd and the clients need lazy binding")
        segments = readelf(["-l"], path)
        if "GNU_RELRO" not in segments:
            fail(f"{label}: {so} has no RELRO segment (-z relro)")
        stack = re.search(r"GNU_STACK.*\s(R?W?E?)\s+0x", segments)
        if not stack or "E" in stack.group(1):
            fail(f"{label}: {so}: the stack is executable or unmarked")
        have = dynamic_symbols(path)
        missing = [s for s in symbols if s not in have]
        if missing:
            fail(f"{label}: {so} does not export {', '.join(missing)}")
        else:
            print(f"{label}: {so}: RUNPATH $ORIGIN, lazy binding, RELRO, {len(symbols)} Slurm symbols exported")
    lib = os.path.join(plugin_dir, "libnvlblock.so.1")
    if os.path.exists(lib):
        stray = sorted(s for s in dynamic_symbols(lib) if not s.startswith("nvlb_") and not s.startswith("_"))
        if stray:
            fail(f"{label}: libnvlblock exports more than the C ABI (nvlb_*): {stray[:10]}")


def check_tools(root, opts, label):
    for tool in split_list(opts.tools):
        path = os.path.join(root, "bin", tool)
        if not os.path.isfile(path):
            continue
        p = run([path, "--help"], check=False, timeout=30)
        if p.returncode != 0 or "usage" not in (p.stdout + p.stderr).lower():
            fail(f"{label}: {tool} --help exited {p.returncode}: {p.stderr.strip()}")


def check_layout(root, exp, label, allowed_extra=()):
    """Every expected file is there, and every file that is there is
    expected or matches one of the allowed_extra regexes."""
    present = set()
    for path in glob.glob(os.path.join(root, "**", "*"), recursive=True):
        if os.path.isfile(path) or os.path.islink(path):
            present.add(os.path.relpath(path, root))
    for rel, what in sorted(exp.items()):
        if rel not in present:
            fail(f"{label}: {what} {rel} is missing")
    for rel in sorted(present - set(exp)):
        if not any(re.fullmatch(rx, rel) for rx in allowed_extra):
            fail(f"{label}: unexpected file {rel}")
    for rel in sorted(present):
        if rel.endswith(".gz") and "/man/" in rel:
            with gzip.open(os.path.join(root, rel), "rt", errors="replace") as f:
                if not f.read(200).startswith(".\\\""):
                    fail(f"{label}: {rel} is not a man page")
    print(f"{label}: {len(exp)} expected files present, {len(present)} in all")


# --------------------------------------------------------------------------
# Modes


def mode_install(opts):
    need("cmake", "readelf", "nm", "ldd")
    work = opts.work_dir
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "prefix")
    p = run(["cmake", "--install", opts.build_dir, "--prefix", prefix])
    print(f"cmake --install {opts.build_dir} --prefix {prefix}: {p.stdout.count('Installing:')} files")
    exp = expected_files(opts)
    check_layout(prefix, exp, "install", allowed_extra=[
        rf"{re.escape(opts.plugin_dir)}/libnvlblock\.so(\.\d+\.\d+\.\d+)?"] if opts.plugin_dir else [])
    check_binaries(prefix, opts, "install")
    check_tools(prefix, opts, "install")
    # The installed man pages are found through MANPATH like any other.
    for page in split_list(opts.man_pages) if shutil.which("man") else []:
        name, section = os.path.basename(page).rsplit(".", 1)
        r = run(["man", "-M", os.path.join(prefix, "share", "man"), section, name], check=False,
                env=dict(os.environ, MANPAGER="cat", PAGER="cat", MANWIDTH="80"))
        if r.returncode != 0 or "NAME" not in r.stdout:
            fail(f"install: man -M PREFIX/share/man {section} {name}: {r.stderr.strip()}")


def next_micro(release):
    """24.11.5 -> 24.11.6."""
    head, micro = release.rsplit(".", 1)
    return f"{head}.{int(micro) + 1}"


def fake_slurm_package(work, name, version):
    """A stand-in for a Slurm package of that name and version (no files)."""
    d = os.path.join(work, f"fake-{name}-{version}")
    os.makedirs(os.path.join(d, "DEBIAN"))
    with open(os.path.join(d, "DEBIAN", "control"), "w") as f:
        f.write(f"Package: {name}\nVersion: {version}\nArchitecture: all\n"
                f"Maintainer: nvlblock tests <tests@nvlblock.invalid>\n"
                f"Description: stand-in for Slurm's {name} package (nvlblock's package test)\n")
    run(["dpkg-deb", "--build", d, d + ".deb"])
    return d + ".deb"


def dry_run_beside(work, deb, slurm_deb, label):
    """`dpkg --dry-run -i deb` in a private copy of this host's dpkg
    database where slurm_deb is installed; returns dpkg's result."""
    admin, root = os.path.join(work, f"dpkg-{label}"), os.path.join(work, f"root-{label}")
    for sub in ("info", "updates", "triggers"):
        os.makedirs(os.path.join(admin, sub))
    os.makedirs(root)
    shutil.copyfile("/var/lib/dpkg/status", os.path.join(admin, "status"))
    open(os.path.join(admin, "available"), "w").close()
    dpkg = ["dpkg", f"--admindir={admin}", f"--instdir={root}"]
    run(dpkg + ["--force-script-chrootless", "-i", slurm_deb])
    return run(dpkg + ["--dry-run", "-i", deb], check=False)


def check_slurm_release_pinned(work, deb, package_name, breaks):
    """Slurm loads a plugin only into its exact release: every Slurm package
    of another release breaks ours, so dpkg refuses a mismatch instead of
    slurmctld failing at its next start (docs/admin.md "Upgrading Slurm")."""
    release = package_name.rsplit("-", 1)[1]
    after = next_micro(release)
    for pkg in ("slurmctld", "slurmd", "slurm-client", "slurm-smd-slurmctld"):
        for clause in (f"{pkg} (<< {release}~)", f"{pkg} (>= {after}~)"):
            if clause not in breaks:
                fail(f"Breaks lacks '{clause}': {breaks!r}")
    newer = dry_run_beside(work, deb, fake_slurm_package(work, "slurmctld", f"{after}-1"), "newer")
    if newer.returncode == 0 or "breaks" not in (newer.stdout + newer.stderr):
        fail(f"dpkg accepted {package_name} beside slurmctld {after}-1: {newer.stdout}{newer.stderr}")
    else:
        said = [ln.strip() for ln in (newer.stdout + newer.stderr).splitlines() if "breaks" in ln]
        print(f"dpkg refuses {package_name} beside slurmctld {after}-1: {said[0]}")
    same = dry_run_beside(work, deb, fake_slurm_package(work, "slurmctld", f"{release}-4+deb13u1"), "same")
    if same.returncode != 0:
        fail(f"dpkg refused {package_name} beside slurmctld {release}-4+deb13u1: {same.stdout}{same.stderr}")


def build_deb(opts):
    """cpack -G DEB into a fresh WORK. Returns (work, arch, the .deb)."""
    work = opts.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run(["cpack", "--config", os.path.join(opts.build_dir, "CPackConfig.cmake"), "-G", "DEB", "-B", work])
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(work, f"{opts.package_name}_{opts.version}_{arch}.deb")
    if not os.path.isfile(deb):
        raise SystemExit(f"FAIL: cpack did not write {deb}: {os.listdir(work)}")
    print(f"package: {os.path.basename(deb)} ({os.path.getsize(deb)} bytes)")
    return work, arch, deb


def check_deb_control(opts, deb):
    """The package's control fields. Returns them."""
    fields = {}
    for key in ("Package", "Version", "Architecture", "Depends", "Breaks", "Provides", "Conflicts", "Replaces",
                "Section", "Maintainer", "Description"):
        fields[key] = run(["dpkg-deb", "-f", deb, key]).stdout.strip()
    print(run(["dpkg-deb", "-I", deb]).stdout)
    if not re.fullmatch(r"nvlblock-slurm-\d+\.\d\d\.\d+", fields["Package"]):
        fail(f"Package {fields['Package']!r} does not carry the Slurm release (nvlblock-slurm-X.YY.Z)")
    if fields["Package"] != opts.package_name or fields["Version"] != opts.version:
        fail(f"Package/Version are {fields['Package']} {fields['Version']}, expected "
             f"{opts.package_name} {opts.version}")
    depends = {d.split()[0] for d in fields["Depends"].split(", ") if d}
    for dep in ("libc6", "libstdc++6", "libyaml-0-2"):
        if dep not in depends:
            fail(f"Depends lacks {dep}: {fields['Depends']}")
    for key in ("Provides", "Conflicts", "Replaces"):
        if "nvlblock-plugin" not in fields[key]:
            fail(f"{key} should name the virtual package nvlblock-plugin: {fields[key]!r}")
    if opts.package_name.split("-")[-1] not in fields["Description"]:
        fail("the description does not name the Slurm release")
    return fields


def check_deb_contents(opts, work, deb):
    """The package's files: where they are and their modes (dpkg-deb -c),
    then, unpacked, the same layout, binaries and tools as an install."""
    listing = run(["dpkg-deb", "-c", deb]).stdout
    print("dpkg-deb -c:\n" + listing)
    prefix = opts.package_prefix.strip("/")
    exp = {f"{prefix}/{rel}": what for rel, what in expected_files(opts).items()}
    doc = f"{prefix}/share/doc/{opts.package_name}"
    exp[f"{doc}/copyright"] = "copyright"
    exp[f"{doc}/changelog.Debian.gz"] = "changelog"
    for line in listing.splitlines():
        mode, path = line.split()[0], line.split()[-1]
        if " -> " in line:
            path = line.split()[-3]
        if mode.startswith("-") and path.startswith("./") and not path.lstrip("./").startswith(prefix + "/"):
            fail(f"deb: {path} is outside {opts.package_prefix}")
        if mode.startswith("-") and ("/bin/" in path) != mode.startswith("-rwx"):
            fail(f"deb: {path} has mode {mode}")
        if not mode.startswith(("-", "d", "l")):
            fail(f"deb: {path} is neither a file, a directory nor a link")
    root = os.path.join(work, "root")
    run(["dpkg-deb", "-x", deb, root])
    check_layout(root, exp, "deb", allowed_extra=[
        rf"{re.escape(prefix)}/{re.escape(opts.plugin_dir)}/libnvlblock\.so(\.\d+\.\d+\.\d+)?",
        rf"{re.escape(prefix)}/share/lintian/overrides/{re.escape(opts.package_name)}"])
    check_binaries(root, opts, "deb")
    check_tools(root, opts, "deb")


def check_deb_dbgsym(opts, work, arch):
    """The -dbgsym .ddeb beside the package, with build-id debug files."""
    ddebs = glob.glob(os.path.join(work, f"{opts.package_name}-dbgsym_{opts.version}_{arch}.ddeb"))
    if not ddebs:
        fail(f"no {opts.package_name}-dbgsym .ddeb next to the package")
    elif not re.search(r"/usr/lib/debug/\.build-id/../.*\.debug", run(["dpkg-deb", "-c", ddebs[0]]).stdout):
        fail(f"{os.path.basename(ddebs[0])} has no build-id debug files")


def check_deb_installable(deb):
    """Installable here: dependencies resolve (nothing is changed)."""
    p = run(["dpkg", "--dry-run", "-i", deb], check=False)
    if p.returncode != 0:
        fail(f"dpkg --dry-run -i: {p.stdout}{p.stderr}")
    else:
        print("dpkg --dry-run -i: dependencies satisfied")


def check_deb_lintian(deb):
    """lintian, where installed: no errors."""
    if shutil.which("lintian"):
        p = run(["lintian", "--allow-root", "--display-info", deb], check=False)
        print("lintian:\n" + (p.stdout or "(no tags)\n"))
        errors = [ln for ln in p.stdout.splitlines() if ln.startswith("E: ")]
        if errors:
            fail("lintian errors:\n" + "\n".join(errors))
    else:
        print("lintian not installed; not run")


def mode_deb(opts):
    need("cpack", "dpkg-deb", "dpkg", "readelf", "nm", "ldd", "file", "dpkg-shlibdeps")
    work, arch, deb = build_deb(opts)
    fields = check_deb_control(opts, deb)
    check_deb_contents(opts, work, deb)
    check_deb_dbgsym(opts, work, arch)
    check_deb_installable(deb)
    check_slurm_release_pinned(work, deb, opts.package_name, fields["Breaks"])
    check_deb_lintian(deb)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("install", "deb"))
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--tools", default="", help="comma-separated tool names")
    ap.add_argument("--man-pages", default="", help="comma-separated built man pages (build-tree paths)")
    ap.add_argument("--plugin-dir", default="", help="plugin directory relative to the prefix")
    ap.add_argument("--slurm-api", default="24_11", choices=sorted(TOPOLOGY_SYMBOLS),
                    help="the Slurm API generation the plugins were built for")
    ap.add_argument("--package-name")
    ap.add_argument("--version", help="Debian version (upstream-revision)")
    ap.add_argument("--package-prefix", default="/usr")
    opts = ap.parse_args()
    opts.plugin_dir = opts.plugin_dir.strip("/")
    (mode_install if opts.mode == "install" else mode_deb)(opts)
    if failures:
        print(f"{len(failures)} problem(s)")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
