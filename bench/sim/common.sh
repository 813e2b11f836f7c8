# SPDX-License-Identifier: GPL-2.0-or-later
#
# Shared by the figure scripts of bench/sim and bench/capacity: find the tools of a build tree.
# BUILD=<dir> selects the build tree (default: build/ at the top of the clone).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CAPACITY=$BUILD/tools/nvlblock-capacity
SIM=$BUILD/tools/sim/nvlblock-sim
need() {
    if [ ! -x "$1" ]; then
        echo "$(basename "$0"): $1 not found; build first:" >&2
        echo "  cmake -S $ROOT -B $BUILD && cmake --build $BUILD -j" >&2
        exit 1
    fi
}
need "$CAPACITY"
need "$SIM"
command -v python3 >/dev/null || { echo "$(basename "$0"): python3 is needed to tabulate results" >&2; exit 1; }
cd "$ROOT"
