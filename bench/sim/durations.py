# SPDX-License-Identifier: GPL-2.0-or-later
"""Durations as the bench tables print them, shared by the table scripts."""


def dur(s, days=False, zero="0"):
    """s seconds as 41s, 3.97m, 2.58h (or 4.25d from two days on with days);
    zero, when given, for anything not above 0."""
    if s <= 0 and zero is not None:
        return zero
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{s / 60:.3g}m"
    if not days or s < 2 * 86400:
        return f"{s / 3600:.3g}h"
    return f"{s / 86400:.3g}d"
