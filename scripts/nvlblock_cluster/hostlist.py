# SPDX-License-Identifier: GPL-2.0-or-later
"""Slurm hostlist expressions: gb[0001-0003,0007] <-> names."""

import re
from typing import Iterable, List

from .common import ClusterError

# What Slurm prints for "no nodes" (scontrol show job of a pending job, ...).
EMPTY = ("", "(null)", "None")


def expand_hostlist(expr: str) -> List[str]:
    """Slurm hostlist expression -> names, in Slurm's order: "a[1-2]-n[01-02]"
    is a1-n01, a1-n02, a2-n01, a2-n02 (the last bracket varies fastest).
    "", "(null)" and "None" are no nodes."""
    if expr in EMPTY:
        return []
    names: List[str] = []
    depth, start = 0, 0
    for i, c in enumerate(expr + ","):
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == "," and depth == 0:
            part, start = expr[start:i], i + 1
            partial = [""] if part else []
            for literal, body in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", part):
                partial = [p + literal for p in partial]
                if body:
                    items = []
                    for item in body.split(","):
                        lo, _, hi = item.partition("-")
                        if not lo.isdigit() or (hi and not hi.isdigit()):
                            raise ClusterError(f"bad hostlist {expr!r}")
                        items += [f"{v:0{len(lo)}d}" for v in range(int(lo), int(hi or lo) + 1)]
                    partial = [p + x for p in partial for x in items]
            names += partial
    return names


def compress_hostlist(names: Iterable[str]) -> str:
    """Names -> a Slurm hostlist expression, sorted, consecutive numbers as
    ranges: gb0001 gb0002 gb0003 gb0007 -> "gb[0001-0003,0007]"; a lone name
    stays bare ("gb0005"). Names of one prefix and digit width share a
    bracket; other names (no trailing digits) are listed as they are."""
    groups: dict = {}
    plain: List[str] = []
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if m:
            groups.setdefault((m.group(1), len(m.group(2))), set()).add(int(m.group(2)))
        else:
            plain.append(name)
    parts = []
    for (prefix, width), numbers in sorted(groups.items()):
        ranges, values = [], sorted(numbers)
        first = prev = values[0]
        for v in values[1:] + [None]:
            if v is not None and v == prev + 1:
                prev = v
                continue
            ranges.append(f"{first:0{width}d}" if first == prev
                          else f"{first:0{width}d}-{prev:0{width}d}")
            if v is not None:
                first = prev = v
        if len(ranges) == 1 and "-" not in ranges[0]:
            parts.append(prefix + ranges[0])
        else:
            parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts + sorted(set(plain)))
