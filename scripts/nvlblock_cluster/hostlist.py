# SPDX-License-Identifier: GPL-2.0-or-later
"""Slurm hostlist expressions: gb[0001-0003,0007] <-> names."""

import re

from .common import ClusterError


def expand_hostlist(expr):
    """Slurm hostlist expression -> names, in Slurm's order: "a[1-2]-n[01-02]"
    is a1-n01, a1-n02, a2-n01, a2-n02 (the last bracket varies fastest)."""
    names, depth, start = [], 0, 0
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
