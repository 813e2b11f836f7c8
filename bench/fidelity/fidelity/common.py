# SPDX-License-Identifier: GPL-2.0-or-later
"""What every module shares: where the benchmark and its results are, and
its progress lines ("[fidelity HH:MM:SS] ..." on stderr). Importing it puts
scripts/ on sys.path for nvlblock_cluster."""

import functools
import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(HERE, "results")
sys.path.insert(0, os.path.join(REPO, "scripts"))
from nvlblock_cluster import common  # noqa: E402

log = functools.partial(common.log, tag="fidelity", clock=True)
