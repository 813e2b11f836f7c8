#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check packaging/rpm/nvlblock.spec with the RPM tools Debian ships.

Always (rpmspec -P / -q, seconds):
  - the spec parses against this Slurm build tree; the package is named
    nvlblock-slurm-<Slurm release> and its Version is the CMake project's;
  - without slurm_build_dir it stops with a message saying what to define;
  - Requires: slurm = <release>, unless --without slurm_requires;
    Provides: nvlblock-plugin; BuildRequires name scdoc and libyaml;
  - %files covers every man page docs/man builds and the three plugin files;
  - the build drops -z now from the distribution's linker flags.
With --build, also rpmbuild -bb --nodeps from a tarball of the working tree
(what `git archive` would hold plus uncommitted files) and check the RPM:
its files, that libnvlblock is neither provided nor required, and the
Slurm requirement. (--nodeps: the build requirements are Debian packages
here, unknown to rpm's database.)

Exit status 77 when rpmspec (or, with --build, rpmbuild) is not installed:
`apt-get install rpm` provides both.
"""

import argparse
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile

SKIP = 77
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}")


def run(argv, check=True, timeout=120):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(argv)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def slurm_release(build_dir):
    with open(os.path.join(build_dir, "slurm", "slurm_version.h")) as f:
        n = int(re.search(r"SLURM_VERSION_NUMBER\s+0x([0-9a-fA-F]+)", f.read()).group(1), 16)
    return f"{n >> 16}.{(n >> 8) & 0xff:02d}.{n & 0xff}"


def files_section(preprocessed):
    m = re.search(r"^%files\s*\n(.*?)(?=^%changelog|\Z)", preprocessed, re.M | re.S)
    return [ln.split()[-1] for ln in m.group(1).splitlines() if ln.strip() and not ln.startswith("#")] if m else []


def source_tarball(source_dir, version, dest):
    """The working tree as `git archive` would pack it after a commit:
    tracked files plus untracked ones git does not ignore."""
    p = run(["git", "-C", source_dir, "ls-files", "-co", "--exclude-standard", "-z"], check=False)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: git ls-files in {source_dir}: {p.stderr}")
    names = sorted(n for n in p.stdout.split("\0") if n and os.path.isfile(os.path.join(source_dir, n)))
    with tarfile.open(dest, "w:gz") as tar:
        for n in names:
            tar.add(os.path.join(source_dir, n), arcname=f"nvlblock-{version}/{n}")
    return len(names)


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--slurm-src-dir", required=True)
    ap.add_argument("--slurm-build-dir", required=True)
    ap.add_argument("--version", required=True, help="the CMake project version")
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--build", action="store_true", help="also run rpmbuild -bb")
    return ap.parse_args()


def tools_installed(opts):
    """Whether the RPM tools the check needs are here; says SKIP if not."""
    for tool in ["rpmspec"] + (["rpmbuild", "rpm", "git"] if opts.build else []):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not installed (apt-get install rpm)")
            return False
    return True


def check_preprocessed(opts, release, defines):
    """rpmspec -P: no warnings, the package's Name and Version. Returns the
    preprocessed spec."""
    pre = run(["rpmspec", "-P", opts.spec] + defines)
    if "warning" in pre.stderr.lower():
        fail(f"rpmspec -P warns: {pre.stderr.strip()}")
    text = pre.stdout
    fields = dict(re.findall(r"^(Name|Version|Release|License|Summary):\s*(.*)$", text, re.M))
    print(f"rpmspec -P: Name={fields.get('Name')} Version={fields.get('Version')} "
          f"Release={fields.get('Release')} License={fields.get('License')}")
    if fields.get("Name") != f"nvlblock-slurm-{release}":
        fail(f"Name is {fields.get('Name')}, expected nvlblock-slurm-{release}")
    if fields.get("Version") != opts.version:
        fail(f"Version {fields.get('Version')} differs from the CMake project version {opts.version}")
    return text


def check_dependencies(opts, release, defines):
    """rpmspec -q: Requires (with and without slurm_requires), Provides and
    BuildRequires."""
    req = run(["rpmspec", "-q", "--requires", opts.spec] + defines).stdout.split("\n")
    if f"slurm = {release}" not in req:
        fail(f"Requires lacks 'slurm = {release}': {req}")
    req = run(["rpmspec", "-q", "--requires", "--without", "slurm_requires", opts.spec] + defines).stdout
    if "slurm" in req:
        fail(f"--without slurm_requires still requires slurm: {req}")
    prov = run(["rpmspec", "-q", "--provides", opts.spec] + defines).stdout
    if "nvlblock-plugin" not in prov:
        fail(f"Provides lacks nvlblock-plugin: {prov}")
    breq = run(["rpmspec", "-q", "--buildrequires", opts.spec] + defines).stdout
    for need in ("scdoc", "pkgconfig(yaml-0.1)", "cmake", "gcc-c++"):
        if need not in breq:
            fail(f"BuildRequires lacks {need}")


def check_build_guards(opts, text):
    """The spec stops without slurm_build_dir, and %build strips -z now."""
    bad = run(["rpmspec", "-P", opts.spec], check=False)
    if bad.returncode == 0 or "slurm_build_dir" not in bad.stderr:
        fail(f"without slurm_build_dir rpmspec should stop and say what to define: {bad.stderr.strip()}")
    if "-z,now" not in text or not re.search(r"sed .*-Wl,-z,now", text):
        fail("%build does not strip -z now from the distribution's LDFLAGS")


def check_files_section(opts, text):
    """%files against what the build installs. Returns the installed paths."""
    patterns = files_section(text)
    libdir = re.search(r"-DNVLBLOCK_SLURM_PLUGIN_INSTALL_DIR=(\S+)", text).group(1)
    mandir = re.search(r"-DCMAKE_INSTALL_MANDIR=(\S+)", text).group(1)
    installed = [f"{libdir}/{f}" for f in ("topology_nvlblock.so", "prep_nvlblock.so", "libnvlblock.so.1",
                                           f"libnvlblock.so.{opts.version}")]
    for scd in glob.glob(os.path.join(opts.source_dir, "docs", "man", "*.scd")):
        page = os.path.basename(scd)[:-4]
        installed.append(f"{mandir}/man{page.rsplit('.', 1)[1]}/{page}.gz")
    for path in installed:
        if not any(fnmatch.fnmatch(path, pat) for pat in patterns):
            fail(f"%files does not cover {path}")
    print(f"%files covers the {len(installed)} plugin files and man pages")
    return installed


def check_rpm_build(opts, release, defines, installed):
    """--build: rpmbuild -bb from a tarball of the working tree, then the
    binary RPM's files, Requires and Provides."""
    work = opts.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "SOURCES"))
    count = source_tarball(opts.source_dir, opts.version,
                           os.path.join(work, "SOURCES", f"nvlblock-{opts.version}.tar.gz"))
    print(f"source tarball: {count} files")
    p = run(["rpmbuild", "-bb", "--nodeps", "--define", f"_topdir {work}",
             "--define", f"_smp_mflags -j{os.cpu_count() or 2}", opts.spec] + defines,
            check=False, timeout=1100)
    with open(os.path.join(work, "rpmbuild.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        print((p.stdout + p.stderr)[-6000:])
        raise SystemExit(f"FAIL: rpmbuild exited {p.returncode} (log {work}/rpmbuild.log)")
    rpms = glob.glob(os.path.join(work, "RPMS", "*", f"nvlblock-slurm-{release}-{opts.version}-*.rpm"))
    if len(rpms) != 1:
        raise SystemExit(f"FAIL: expected one binary RPM, found {rpms}")
    listing = run(["rpm", "-qlp", rpms[0]]).stdout
    print(f"{os.path.basename(rpms[0])}:\n{listing}")
    for path in installed:
        if path not in listing.split("\n"):
            fail(f"the RPM lacks {path}")
    requires = run(["rpm", "-qp", "--requires", rpms[0]]).stdout
    provides = run(["rpm", "-qp", "--provides", rpms[0]]).stdout
    if "libnvlblock" in requires or "libnvlblock" in provides:
        fail("the RPM provides or requires the private libnvlblock")
    if f"slurm = {release}" not in requires:
        fail("the RPM does not require its Slurm release")
    if "libyaml-0.so.2" not in requires:
        fail("the RPM does not require libyaml")


def main():
    opts = parse_args()
    if not tools_installed(opts):
        return SKIP

    release = slurm_release(opts.slurm_build_dir)
    defines = ["--define", f"slurm_src_dir {opts.slurm_src_dir}",
               "--define", f"slurm_build_dir {opts.slurm_build_dir}"]
    text = check_preprocessed(opts, release, defines)
    check_dependencies(opts, release, defines)
    check_build_guards(opts, text)
    installed = check_files_section(opts, text)
    if opts.build:
        check_rpm_build(opts, release, defines, installed)
    if failures:
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
