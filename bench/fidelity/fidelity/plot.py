# SPDX-License-Identifier: GPL-2.0-or-later
"""fidelity-busy.png: busy nodes over time, real and simulated (gnuplot)."""

import os
import shutil
import subprocess

from .common import log
from .shape import POLICIES


PLOT_BUCKET = 10            # seconds per point of the busy-nodes plot


def plot(series, window, path_prefix):
    """fidelity-busy.png: busy nodes over time, real and simulated, one panel per policy (gnuplot)."""
    dat, gp = path_prefix + ".dat", path_prefix + ".gp"
    names = list(series)
    length = max(len(v) for v in series.values())
    with open(dat, "w") as f:
        f.write("# t_s " + " ".join(n.replace(" ", "_") for n in names) + "\n")
        for k in range(length):
            f.write(f"{k * PLOT_BUCKET} " + " ".join(f"{series[n][k]:.2f}" if k < len(series[n]) else "NaN"
                                                     for n in names) + "\n")
    base = os.path.basename(path_prefix)
    panels = sorted({n.split(" ")[0] for n in names}, key=POLICIES.index)
    lines = ["# bench/fidelity/run plot script; redraw with: gnuplot " + base + ".gp",
             "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {",
             "  set terminal pngcairo size 1100,700 font 'sans,10'", "} else {",
             "  set terminal png size 1100,700", "}", f"set output '{base}.png'",
             f"set multiplot layout {len(panels)},1 title 'Busy nodes (of 72), real Slurm vs nvlblock-sim, "
             f"{PLOT_BUCKET}-s means'",
             "set ylabel 'busy nodes'", "set yrange [0:74]", "set grid", "set key bottom right",
             f"set arrow from {window},0 to {window},74 nohead dt 2 lc rgb 'gray'"]
    for i, pol in enumerate(panels):
        cr = names.index(f"{pol} real") + 2
        cs = names.index(f"{pol} sim") + 2
        if i == len(panels) - 1:
            lines.append("set xlabel 'seconds since the start of the replay'")
        lines += [f"set title 'topology/{pol}'",
                  f"plot '{base}.dat' using 1:{cr} with lines lw 2 title 'real Slurm', "
                  f"'' using 1:{cs} with lines lw 2 title 'nvlblock-sim'"]
    lines.append("unset multiplot")
    with open(gp, "w") as f:
        f.write("\n".join(lines) + "\n")
    if shutil.which("gnuplot"):
        subprocess.run(["gnuplot", base + ".gp"], cwd=os.path.dirname(path_prefix), check=False)
    else:
        log("gnuplot not found (Debian: gnuplot-nox): no PNG, data in " + dat)
