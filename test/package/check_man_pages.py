#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Render every man page built from docs/man and check it.

For each page (the roff scdoc wrote into the build tree):
  - groff -t -man -Tutf8 -ww (every warning) says nothing;
  - man -l renders it, and lexgrog (what mandb/apropos use) reads its NAME line;
  - the sections a page of its kind needs are there (NAME, SYNOPSIS,
    DESCRIPTION, SEE ALSO; OPTIONS, EXIT STATUS, EXAMPLES for commands;
    FILES and EXAMPLES for the file format);
  - no @VARIABLE@ was left unsubstituted;
  - every nvlblock page it refers to in SEE ALSO exists.
For each tool the build has, its --help and its page agree: every option
--help lists is documented, and every option the page's OPTIONS section
documents is one the tool knows.

Exit status 77 (CTest SKIP_RETURN_CODE) without groff/man, or when no page
was built (no scdoc). Python 3 standard library only.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
NEEDED = {
    "1": ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"],
    "5": ["NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "EXAMPLES", "SEE ALSO"],
    "7": ["NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "SEE ALSO"],
}
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}")


def run(argv, width=80, **kw):
    env = dict(os.environ, MANWIDTH=str(width), MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env,
                          timeout=30, **kw)


def sections(text):
    """{heading: body} of a rendered page (headings start in column 0)."""
    out, current = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace() and line.upper() == line and not line.startswith(("nvlblock", "NVLBLOCK")):
            current = line.strip()
            out[current] = []
        elif current:
            out[current].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def options_in(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default="", help="comma-separated page paths")
    ap.add_argument("--tools", default="", help="comma-separated name=path of built tools")
    opts = ap.parse_args()
    pages = [p for p in opts.pages.split(",") if p]
    if not pages:
        print("SKIP: no man pages were built (scdoc not found at configure time)")
        return SKIP
    for tool in ("groff", "man"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not installed")
            return SKIP
    names = {os.path.basename(p) for p in pages}   # nvlblock-capacity.1, ...
    rendered = {}
    for page in pages:
        base = os.path.basename(page)
        name, section = base.rsplit(".", 1)
        g = run(["groff", "-t", "-man", "-Tutf8", "-ww", "-z", page])
        if g.returncode != 0 or g.stderr.strip():
            fail(f"{base}: groff warnings:\n{g.stderr}")
        m = run(["man", "-l", page])
        if m.returncode != 0 or m.stderr.strip():
            fail(f"{base}: man -l: exit {m.returncode}: {m.stderr}")
        text = m.stdout
        # For comparing options: wide enough that no option is broken at its hyphens.
        rendered[name] = run(["man", "-l", page], width=400).stdout
        if shutil.which("lexgrog"):
            lx = run(["lexgrog", page])
            if lx.returncode != 0 or f'"{name} - ' not in lx.stdout:
                fail(f"{base}: lexgrog cannot read the NAME line: {lx.stdout.strip()} {lx.stderr.strip()}")
        found = sections(text)
        missing = [s for s in NEEDED.get(section, NEEDED["7"]) if s not in found]
        if missing:
            fail(f"{base}: missing sections {missing} (has {list(found)})")
        leftovers = re.findall(r"@[A-Z_]+@", text)
        if leftovers:
            fail(f"{base}: unsubstituted {sorted(set(leftovers))}")
        for ref, sec in re.findall(r"\b(nvlblock[\w.-]*)\((\d)\)", found.get("SEE ALSO", "")):
            if f"{ref}.{sec}" not in names:
                fail(f"{base}: SEE ALSO names {ref}({sec}), which is not built")
        print(f"{base}: {len(text.splitlines())} lines, sections {', '.join(found)}")

    for item in [t for t in opts.tools.split(",") if t]:
        tool, path = item.split("=", 1)
        if tool not in rendered:
            fail(f"{tool} is built but has no man page {tool}.1")
            continue
        h = run([path, "--help"])
        if h.returncode != 0:
            fail(f"{tool} --help exited {h.returncode}: {h.stderr.strip()}")
            continue
        helped = options_in(h.stdout + h.stderr)
        page = rendered[tool]
        documented = options_in(sections(page).get("OPTIONS", ""))
        undocumented = sorted(o for o in helped - options_in(page))
        # --help and --version: every tool's, answered by tools/common/run_main.cpp.
        unknown = sorted(documented - helped - {"--help", "--version"})
        if undocumented:
            fail(f"{tool}: --help lists {undocumented}, which {tool}(1) does not document")
        if unknown:
            fail(f"{tool}(1) documents {unknown} under OPTIONS, which {tool} --help does not list")
        if not undocumented and not unknown:
            print(f"{tool}: the {len(helped)} options of --help match {tool}(1)")

    if failures:
        print(f"{len(failures)} problem(s)")
        return 1
    print(f"PASS: {len(pages)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
