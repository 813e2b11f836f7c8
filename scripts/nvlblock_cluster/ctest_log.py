# SPDX-License-Identifier: GPL-2.0-or-later
"""Why tests failed, from ctest's own logs (Testing/Temporary/LastTest.log
and LastTestsFailed.log in a build tree), in a few lines per test.

A failed cluster or Docker test prints hundreds of lines; CI keeps only
part of a long output, and the line that says what went wrong can fall in
the part left out (stop 19's Docker failure did). scripts/test prints this
digest after ctest, so the reason is also near the end of the output.
"""

import os
import re
from typing import Dict, List

# Lines that say what went wrong, in the forms our tests print (FAIL:, an
# invariant's VIOLATION), Python's unittest (FAIL:/ERROR: and the assertion),
# GoogleTest ([  FAILED  ], "Failure") and a timed-out wait. Not Slurm's own
# "error:" log lines, which a failing test dumps by the dozen and which are
# mostly routine (no state file on a first start).
REASON = re.compile(r"^(FAIL|ERROR):|FAIL: |VIOLATION|^\w*(Error|Exception)\b|Traceback|timed out|"
                    r"\[  FAILED  \]|: Failure$")
MAX_REASONS = 8
MAX_WIDTH = 300
TAIL = 3


def failed_tests(build_dir: str) -> List[str]:
    """Names of the tests the last ctest run in build_dir failed, in its order."""
    path = os.path.join(build_dir, "Testing", "Temporary", "LastTestsFailed.log")
    try:
        with open(path, errors="replace") as f:
            return [line.split(":", 1)[1].strip() for line in f if ":" in line]
    except FileNotFoundError:
        return []


def outputs(log_text: str) -> Dict[str, List[str]]:
    """{test name: its output lines} from the text of a LastTest.log."""
    out: Dict[str, List[str]] = {}
    name = None
    lines: List[str] = []
    in_output = False
    for line in log_text.splitlines():
        m = re.match(r"^\d+/\d+ Test: (\S+)$", line)
        if m:
            name, lines, in_output = m.group(1), [], False
            continue
        if name is None:
            continue
        if line == "Output:":
            in_output = True
            continue
        if in_output and line == "<end of output>":
            out[name] = [ln for ln in lines if not re.fullmatch(r"-{20,}", ln)]
            name, in_output = None, False
            continue
        if in_output:
            lines.append(line)
    return out


def reasons(lines: List[str]) -> List[str]:
    """The lines of one test's output that say why it failed (repeats
    dropped, each cut to MAX_WIDTH), then its last TAIL lines."""
    picked: List[str] = []
    seen = set()
    for line in lines:
        if REASON.search(line):
            # A repeated violation differs only in its time stamp.
            key = re.sub(r"\d{2}:\d{2}:\d{2}", "", line)
            if key not in seen:
                seen.add(key)
                picked.append(line)
    if len(picked) > MAX_REASONS:
        picked = picked[:MAX_REASONS - 1] + [f"... {len(picked) - MAX_REASONS + 1} more such lines"]
    tail = [ln for ln in lines if ln.strip()][-TAIL:]
    return [ln[:MAX_WIDTH] for ln in picked + ["(last lines)"] + tail]


def digest(build_dir: str) -> List[str]:
    """For every test the last run in build_dir failed: its name, then why."""
    names = failed_tests(build_dir)
    if not names:
        return []
    try:
        with open(os.path.join(build_dir, "Testing", "Temporary", "LastTest.log"), errors="replace") as f:
            by_test = outputs(f.read())
    except FileNotFoundError:
        by_test = {}
    result = []
    for name in names:
        result.append(f"{name}:")
        result += ["    " + ln for ln in reasons(by_test.get(name, ["(no output in LastTest.log)"]))]
    return result
