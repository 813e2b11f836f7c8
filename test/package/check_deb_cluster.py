#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The Debian package, installed and run: docs/admin.md followed on one host.

  check_deb_cluster.py --build-dir BUILD --work-dir WORK --package-name NAME
                       --package-prefix /usr --plugin-dir lib/slurm

1. cpack builds the package from BUILD, as admin.md 3.1 says.
2. dpkg installs it, with its dependencies checked against this host's own
   package database (a private copy of it), into WORK/root instead of /: the
   test must not change the machine it runs on, and nothing but the package's
   files is needed to run it.
3. A 2-rack cluster (real slurmctld and 36 slurmd) starts with PluginDir
   naming the package's plugin directory, configured as admin.md 4 and 5
   step 3 say: topology.conf kept, nvlblock.yaml beside slurm.conf with
   `topology_conf:`, slices of 16, 2 spares, a Prometheus file. slurmctld and
   a slurmd must have mapped the package's topology_nvlblock.so,
   prep_nvlblock.so and libnvlblock, and nothing from the build tree.
4. The package's nvlblock-check accepts that configuration and names the
   file and line of a broken one; it validates every example the package
   ships in share/doc/nvlblock/examples against its slurm.conf fragment.
5. A 16-node --segment=16 --requeue job loses a node; it must restart on its
   own rack on its 15 healthy nodes plus one spare (the package's PrEp
   plugin recorded where it ran). The package's nvlblock-status must show
   both blocks with their spares and the failure, the Prometheus file must
   agree with `scontrol show topology`, and the package's man pages render.

Python 3 standard library, plus the cluster harness of test/cluster.
Exit status 77 (CTest SKIP_RETURN_CODE) when cpack, dpkg or man is missing.
"""

import argparse
import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cluster"))
from nvltest import REQUEUE_DELAY, Cluster, ClusterTest, rack_name_of, read_prometheus  # noqa: E402

SKIP = 77
OPTS = None


def run(argv, check=True, env=None, cwd=None, timeout=300):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                       cwd=cwd, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def build_package(opts):
    """cpack -G DEB; return the .deb's path."""
    pkg_dir = os.path.join(opts.work_dir, "pkg")
    shutil.rmtree(pkg_dir, ignore_errors=True)
    run(["cpack", "--config", os.path.join(opts.build_dir, "CPackConfig.cmake"), "-G", "DEB",
         "-B", pkg_dir])
    debs = [d for d in glob.glob(os.path.join(pkg_dir, f"{opts.package_name}_*.deb"))
            if "-dbgsym" not in d]
    if len(debs) != 1:
        raise AssertionError(f"cpack wrote {os.listdir(pkg_dir)}, not one {opts.package_name} .deb")
    return debs[0]


def install_package(opts, deb):
    """dpkg -i into WORK/root with a private copy of this host's dpkg
    database: dpkg checks the package's Depends against the packages really
    installed here (the libraries its binaries load from /), unpacks every
    file as it would into /, and records them, without touching /."""
    root = os.path.join(opts.work_dir, "root")
    admin = os.path.join(opts.work_dir, "dpkg")
    for d in (root, admin):
        shutil.rmtree(d, ignore_errors=True)
    for sub in ("info", "updates", "triggers"):
        os.makedirs(os.path.join(admin, sub))
    shutil.copyfile("/var/lib/dpkg/status", os.path.join(admin, "status"))
    open(os.path.join(admin, "available"), "w").close()
    # The other packages' file lists, so dpkg also checks that no file of
    # ours belongs to another package, as it does on a real install.
    for lst in glob.glob("/var/lib/dpkg/info/*.list"):
        os.symlink(lst, os.path.join(admin, "info", os.path.basename(lst)))
    os.makedirs(root)
    # The maintainer scripts (CPack's ldconfig call, as our libraries sit
    # under /usr/lib) run on this host, not chrooted into a root that has no
    # shell: they only refresh the host's library cache, as any install does.
    dpkg = ["dpkg", f"--admindir={admin}", f"--instdir={root}"]
    # One install at a time on this host: CI runs this test for every Slurm
    # tree at once, and two ldconfig runs racing on /etc/ld.so.cache~ failed
    # the postinst of one (stop 45's local CI run, 25.11.7's tree).
    with open(os.path.join(tempfile.gettempdir(), "nvlblock-dpkg-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = run(dpkg + ["--force-script-chrootless", "-i", deb])
    print(p.stdout + p.stderr)
    status = run(dpkg + ["-s", opts.package_name]).stdout
    if "Status: install ok installed" not in status:
        raise AssertionError(f"dpkg -s {opts.package_name}:\n{status}")
    listed = run(dpkg + ["-L", opts.package_name]).stdout.split()
    return root, listed


class FromPackage(ClusterTest):
    """Everything below runs the package's files, never the build's."""

    @classmethod
    def setUpClass(cls):
        opts = OPTS
        cls.deb = build_package(opts)
        cls.root, cls.listed = install_package(opts, cls.deb)
        prefix = cls.root + opts.package_prefix
        plugin_dir = opts.plugin_dir if os.path.isabs(opts.plugin_dir) else \
            os.path.join(opts.package_prefix, opts.plugin_dir)
        cls.plugin_dir = cls.root + plugin_dir
        cls.bin = os.path.join(prefix, "bin")
        cls.man = os.path.join(prefix, "share", "man")
        cls.examples = os.path.join(prefix, "share", "doc", "nvlblock", "examples")
        cls.prom = os.path.join(opts.work_dir, "textfile_collector", "nvlblock.prom")
        os.makedirs(os.path.dirname(cls.prom), exist_ok=True)
        # admin.md 5, step 3: keep topology.conf, add nvlblock.yaml beside
        # slurm.conf; a Prometheus file for node_exporter (admin.md 4).
        cls.yaml = os.path.join(opts.work_dir, "nvlblock.yaml")
        with open(cls.yaml, "w") as f:
            f.write(textwrap.dedent(f"""\
                # admin.md section 5, step 3
                topology_conf: topology.conf
                defaults:
                  slice: 16
                  spares: 2
                  reserve: reclaim
                recovery:
                  wait: 5m
                status:
                  interval: 1
                  prometheus: {cls.prom}
                """))

    def tool(self, name):
        path = os.path.join(self.bin, name)
        self.assertIn(path[len(self.root):], self.listed, f"dpkg -L does not list {name}")
        return path

    def test_examples_validate(self):
        """Every example the package ships passes the package's nvlblock-check."""
        check = self.tool("nvlblock-check")
        examples = sorted(d for d in os.listdir(self.examples)
                          if os.path.isdir(os.path.join(self.examples, d)))
        self.assertGreaterEqual(len(examples), 5, examples)
        for name in examples:
            d = os.path.join(self.examples, name)
            for f in ("nvlblock.yaml", "topology.conf"):
                p = run([check, "--strict", "--slurm-conf", os.path.join(d, "slurm-nodes.conf"),
                         os.path.join(d, f)], check=False)
                self.assertEqual(p.returncode, 0, f"{name}/{f}:\n{p.stdout}{p.stderr}")

    def test_man_pages_render(self):
        """man renders each page the package installed."""
        if not shutil.which("man"):
            self.skipTest("man not installed")
        pages = sorted(glob.glob(os.path.join(self.man, "man*", "*.gz")))
        self.assertEqual(len(pages), 6, pages)
        for page in pages:
            p = run(["man", "-l", "-Tutf8", page], env=dict(os.environ, MANWIDTH="80"))
            text = re.sub(r".\x08", "", p.stdout)      # overstrike bold and underline
            name = re.sub(r"\.\d\.gz$", "", os.path.basename(page))
            self.assertRegex(text, rf"NAME\n +{re.escape(name)} - ", page)
            self.assertIn("SEE ALSO", text, page)

    def test_cluster_runs_from_package(self):
        flags = ["--plugin-dir", self.plugin_dir, "--config", self.yaml]
        with Cluster("from-deb", racks=2, flags=flags) as c:
            env = dict(c.env)
            self.check_loaded_from_package(c)
            self.check_configuration(c, env)

            # Both blocks as admin.md 5 step 3 promises: 16-node slices, 2 spares.
            for b in c.topology():
                self.assertEqual((b["BlockSize"], b["Slice"], b["Spares"], b["SparesFree"], b["Health"]),
                                 ("18", "16", "2", "2", "healthy"), b)

            job = c.sbatch("-N16", "--segment=16", "--requeue")
            nodes = c.wait_running(job)
            rack = rack_name_of(nodes[0])
            self.assertOnRack(nodes, rack)
            failed = nodes[5]
            c.set_down(failed)
            again = c.wait_restarted(job, REQUEUE_DELAY + 90)  # CI runs three releases at once
            self.assertOnRack(again, rack, f"job {job} left {rack}: {again}")
            self.assertNotIn(failed, again)
            spare = sorted(set(again) - set(nodes))
            self.assertEqual(len(spare), 1, f"expected one spare, got {spare}")
            self.assertEqual(len(set(again) & set(nodes)), 15)

            other = "rack02" if rack == "rack01" else "rack01"
            status = c.wait_status(
                lambda s: c.status_block(rack, s)["spares_used"] == 1
                and s["recoveries"]["in_place"] == 1, 45,
                "the status JSON to show the in-place recovery")
            self.check_status_tool(env, rack, other, failed)
            self.check_prometheus(c, rack)
            self.assertEqual(status["recoveries"]["in_place"], 1, status["recoveries"])

    # -- parts of the cluster test --------------------------------------------------

    def check_loaded_from_package(self, c):
        """slurmctld and a slurmd mapped the package's libraries, none of the build's."""
        def mapped(pid):
            with open(f"/proc/{pid}/maps") as f:
                paths = {line.split()[-1] for line in f if "/" in line}
            return {p for p in paths if "nvlblock" in os.path.basename(p)}
        ctld = mapped(c.ctld_pid())
        with open(c.path("run", "cluster.json")) as f:
            daemons = json.load(f)["daemons"]
        slurmd = mapped(daemons["gb0001"]["pid"])
        real = {n: os.path.realpath(os.path.join(self.plugin_dir, n))
                for n in ("topology_nvlblock.so", "prep_nvlblock.so", "libnvlblock.so.1")}
        for name, path in real.items():
            self.assertIn(path, ctld, f"slurmctld did not load the package's {name}: {sorted(ctld)}")
        # slurmd loads the topology plugin (and its library), not PrEp.
        for name in ("topology_nvlblock.so", "libnvlblock.so.1"):
            self.assertIn(real[name], slurmd, f"slurmd did not load the package's {name}: {sorted(slurmd)}")
        for path in ctld | slurmd:
            self.assertTrue(path.startswith(self.root + "/"), f"{path} is not the package's")
        conf = c.run("scontrol", "show", "config").stdout
        plugin_dir = re.search(r"^PluginDir\s*=\s*(\S+)", conf, re.M).group(1)
        self.assertIn(self.plugin_dir, plugin_dir.split(":"), plugin_dir)

    def check_configuration(self, c, env):
        """The package's nvlblock-check, found the admin's way (SLURM_CONF)."""
        check = self.tool("nvlblock-check")
        p = run([check], env=env, check=False)
        self.assertEqual(p.returncode, 0, f"nvlblock-check on the running cluster:\n{p.stdout}{p.stderr}")
        # Broken copies: the errors name the file and line, exit status 1.
        self.assert_check_error(check, env, lambda ln: ln.replace("spares: 2", "spare: 2"),
                                r"nvlblock\.yaml:(\d+): unknown key 'spare' in defaults "
                                r"\(did you mean 'spares'\?\)", "  spare: 2")
        # More spares than a rack has room for: the blocks come from
        # topology.conf, but every one takes the values at fault from
        # nvlblock.yaml's defaults, so the one error is there (issue 37).
        self.assert_check_error(check, env, lambda ln: ln.replace("spares: 2", "spares: 3"),
                                r"nvlblock\.yaml:(\d+): defaults: slice 16 plus 3 spares needs 19 nodes; a block "
                                r"of 18 nodes has fewer \(blocks taking it from here: rack\[01-02\]\)", "slice: 16")

    def assert_check_error(self, check, env, edit, pattern, line_text):
        bad_dir = os.path.join(OPTS.work_dir, "bad-etc")
        shutil.rmtree(bad_dir, ignore_errors=True)
        shutil.copytree(os.path.dirname(env["SLURM_CONF"]), bad_dir)
        bad = os.path.join(bad_dir, "nvlblock.yaml")
        with open(bad) as f:
            text = f.read()
        with open(bad, "w") as f:
            f.write("\n".join(edit(ln) for ln in text.splitlines()) + "\n")
        p = run([check, "--slurm-conf", os.path.join(bad_dir, "slurm.conf")], check=False)
        out = p.stdout + p.stderr
        self.assertEqual(p.returncode, 1, out)
        m = re.search(re.escape(bad_dir + "/") + pattern, out)
        self.assertIsNotNone(m, out)
        # ...and the line it names is the one at fault.
        name = re.search(r"(\S+):" + re.escape(m.group(1)) + ":", m.group(0)).group(1)
        with open(name) as f:
            self.assertEqual(f.read().splitlines()[int(m.group(1)) - 1].strip(), line_text.strip(), out)

    def check_status_tool(self, env, rack, other, failed):
        """nvlblock-status from the package: one row per block, spares F/U/L."""
        p = run([self.tool("nvlblock-status")], env=env)
        print(p.stdout)
        rows = {}
        header = None
        for line in p.stdout.splitlines():
            cells = line.split()
            if cells and cells[0] == "BLOCK":
                header = line
            elif header and cells and (cells[0].startswith("rack") or cells[0] == "TOTAL"):
                rows[cells[0]] = cells
        self.assertIsNotNone(header, p.stdout)
        self.assertIn("SPARES F/U/L", header)
        self.assertEqual(sorted(rows), ["TOTAL", "rack01", "rack02"], p.stdout)
        # BLOCK HEALTH NODES HEALTHY FAILED BUSY LENT FREE SPARES HELD STRANDED FAILED-NODES
        hit = rows[rack]
        self.assertEqual((hit[1], hit[2], hit[3], hit[4], hit[5], hit[8], hit[-1]),
                         ("healthy", "18", "17", "1", "16", "1/1/0", failed), p.stdout)
        idle = rows[other]
        self.assertEqual((idle[1], idle[2], idle[4], idle[5], idle[8]),
                         ("healthy", "18", "0", "0", "2/0/0"), p.stdout)
        self.assertRegex(p.stdout, r"recoveries: +1 job hit by node failures: 1 in place", p.stdout)
        self.assertRegex(p.stdout, rf"JobId=\d+ restarted in place on {rack} after .*: lost 1 node, 1 spare used",
                         p.stdout)

    def check_prometheus(self, c, rack):
        """The Prometheus file agrees with scontrol show topology."""
        c.wait_for(lambda: read_prometheus(self.prom).get('nvlblock_recoveries_total{outcome="in_place"}') == 1,
                   45, "the Prometheus file to count the in-place recovery")
        m = read_prometheus(self.prom)
        blocks = c.topology()
        self.assertEqual(sorted(b["BlockName"] for b in blocks), ["rack01", "rack02"])
        self.assertMetricsMatchTopology(m, blocks)
        self.assertEqual(m['nvlblock_block_failed_nodes{block="%s"}' % rack], 1.0)
        self.assertEqual(m['nvlblock_block_spares_used{block="%s"}' % rack], 1.0)


def main():
    global OPTS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--package-name", required=True)
    ap.add_argument("--package-prefix", default="/usr")
    ap.add_argument("--plugin-dir", default="lib/slurm",
                    help="the plugin directory, relative to --package-prefix (or absolute)")
    opts, rest = ap.parse_known_args()
    missing = [t for t in ("cpack", "dpkg", "dpkg-deb") if not shutil.which(t)]
    if missing:
        print(f"SKIP: {', '.join(missing)} not installed")
        sys.exit(SKIP)
    opts.work_dir = os.path.abspath(opts.work_dir)
    os.makedirs(opts.work_dir, exist_ok=True)
    OPTS = opts
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
