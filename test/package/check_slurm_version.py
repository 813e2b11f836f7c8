#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The build refuses a Slurm tree whose version it cannot support.

Configures the project against fake Slurm trees that hold only what
plugin/CMakeLists.txt looks at (config.h, slurm/slurm_version.h, the two
headers it checks for) and asserts:
  - 24.05.8, 26.11.0 and 23.11.10 are refused at configure time with the
    message that names the version and the supported API generations;
  - a slurm_version.h without SLURM_VERSION_NUMBER is refused with its own message;
  - a development snapshot (config.h's SLURM_VERSION_STRING 26.11.0-0rc1, the
    same SLURM_VERSION_NUMBER as the release) is refused, naming itself,
    unless NVLBLOCK_SLURM_DEVELOPMENT is on; so is a snapshot of a supported
    generation (26.05.4-0rc1), with the reason: slurmctld 26.05.4 would load it;
  - 24.11.9, 25.05.8, 25.11.4 and 26.05.7, the controls, pass the version gate (and then stop
    at the missing libtopology_common.a), so the refusals above are about
    the version and nothing else in the fake tree.
Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

CASES = [
    # (name, SLURM_VERSION_NUMBER line, must configure fail, regexes the output must match[,
    #  SLURM_VERSION_STRING, extra cmake arguments])
    ("slurm-24.05.8", "#define SLURM_VERSION_NUMBER 0x180508", True,
     [r"Slurm 24\.05\.8 \(from .*\) is not supported by this release",
      r"supported Slurm API generations: 24\.11, 25\.05, 25\.11, 26\.05 \(26\.11 only with"]),
    ("slurm-26.11.0", "#define SLURM_VERSION_NUMBER 0x1a0b00", True,
     [r"Slurm 26\.11\.0 \(from .*\) is not supported by this release"]),
    ("slurm-23.11.10", "#define SLURM_VERSION_NUMBER 0x170b0a", True,
     [r"Slurm 23\.11\.10 \(from .*\) is not supported by this release",
      r"supported Slurm API generations: 24\.11, 25\.05, 25\.11, 26\.05 \(26\.11 only with"]),
    ("slurm-unreadable", "#define SLURM_VERSION_NUMBER (whatever)", True,
     [r"cannot read SLURM_VERSION_NUMBER"]),
    ("slurm-24.11.9", "#define SLURM_VERSION_NUMBER 0x180b09", True,
     [r"building the Slurm plugins for Slurm 24\.11\.9", r"libtopology_common\.a not found"]),
    ("slurm-25.05.8", "#define SLURM_VERSION_NUMBER 0x190508", True,
     [r"building the Slurm plugins for Slurm 25\.05\.8", r"libtopology_common\.a not found"]),
    ("slurm-25.11.4", "#define SLURM_VERSION_NUMBER 0x190b04", True,
     [r"building the Slurm plugins for Slurm 25\.11\.4", r"libtopology_common\.a not found"]),
    ("slurm-26.05.7", "#define SLURM_VERSION_NUMBER 0x1a0507", True,
     [r"building the Slurm plugins for Slurm 26\.05\.7", r"libtopology_common\.a not found"]),
    ("slurm-26.11.0-0rc1", "#define SLURM_VERSION_NUMBER 0x1a0b00", True,
     [r"Slurm 26\.11\.0-0rc1 \(from .*\) is not supported by this release",
      r"26\.11 only with -DNVLBLOCK_SLURM_DEVELOPMENT=ON"], "26.11.0-0rc1", []),
    ("slurm-26.11.0-0rc1-development", "#define SLURM_VERSION_NUMBER 0x1a0b00", True,
     [r"building the Slurm plugins for Slurm 26\.11\.0-0rc1 \(API 26_11\)", r"libtopology_common\.a not found"],
     "26.11.0-0rc1", ["-DNVLBLOCK_SLURM_DEVELOPMENT=ON"]),
    ("slurm-26.05.4-0rc1", "#define SLURM_VERSION_NUMBER 0x1a0504", True,
     [r"Slurm 26\.05\.4-0rc1 \(from .*\) is a development snapshot: slurmctld 26\.05\.4 would load plugins "
      r"built on it"], "26.05.4-0rc1", []),
]


def fake_tree(root, version_line, version_string=None):
    src, build = os.path.join(root, "src"), os.path.join(root, "build")
    config = f'/* fake */\n#define SLURM_VERSION_STRING "{version_string}"\n' if version_string else "/* fake */\n"
    files = {
        os.path.join(src, "src", "interfaces", "topology.h"): "/* fake */\n",
        os.path.join(src, "src", "plugins", "topology", "common", "common_topo.h"): "/* fake */\n",
        os.path.join(build, "config.h"): config,
        os.path.join(build, "slurm", "slurm_version.h"):
            f"#ifndef _SLURM_VERSION_H_\n#define _SLURM_VERSION_H_\n{version_line}\n#endif\n",
    }
    for path, text in files.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return src, build


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    opts = ap.parse_args()
    shutil.rmtree(opts.work_dir, ignore_errors=True)
    failures = 0
    for name, line, must_fail, patterns, *more in CASES:
        version_string, extra = more if more else (None, [])
        root = os.path.join(opts.work_dir, name)
        src, build = fake_tree(root, line, version_string)
        argv = ["cmake", "-S", opts.source_dir, "-B", os.path.join(root, "cmake-build"),
                f"-DSLURM_SRC_DIR={src}", f"-DSLURM_BUILD_DIR={build}",
                "-DNVLBLOCK_BUILD_TESTS=OFF", "-DNVLBLOCK_BUILD_BENCHMARKS=OFF", *extra]
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)
        out = p.stdout + p.stderr
        # CMake wraps long messages; match on the text with line breaks joined.
        flat = re.sub(r"\s+", " ", out)
        problems = []
        if must_fail and p.returncode == 0:
            problems.append("configure succeeded")
        for rx in patterns:
            if not re.search(rx, flat):
                problems.append(f"no match for /{rx}/")
        messages = [re.sub(r"\s+", " ", m) for m in re.findall(r"nvlblock: .*?(?:\.\n|\n\n|$)", out, re.S)]
        if problems:
            failures += 1
            print(f"FAIL {name}: {'; '.join(problems)}\n--- cmake output:\n{out}")
        else:
            print(f"ok   {name}: configure exit {p.returncode}: {messages[-1] if messages else ''}")
            if name == "slurm-25.05.0":
                err = re.search(r"CMake Error at .*?(?=\n\n|\Z)", p.stderr, re.S)
                print("     " + (err.group(0).replace("\n", "\n     ") if err else p.stderr))
    if failures:
        return 1
    shutil.rmtree(opts.work_dir, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
