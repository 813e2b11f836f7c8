# SPDX-License-Identifier: GPL-2.0-or-later
"""Node names and racks as the comparison counts them: a node is its 0-based
offset in topology order (node 0 = gb0001), on both sides."""

from nvlblock_cluster.hostlist import compress_hostlist
from nvlblock_cluster.naming import node_index, rack_index_of

from .shape import PER_RACK, RACKS


def node_offset(name):
    """gb0007 (real) or gb00007 (simulator) -> 6 (0-based, topology order)."""
    index = node_index(name)
    if index is None:
        raise ValueError(f"unexpected node name {name!r}")
    return index - 1


def real_name(index):
    return f"gb{index + 1:04d}"


def compress(indices):
    """Sorted 0-based indices -> 'gb[0001-0016]' style (for tables)."""
    return compress_hostlist(real_name(i) for i in indices)


def racks(indices):
    """The set of 0-based racks of node offsets."""
    return {rack_index_of(i, PER_RACK) for i in indices}


def racks_label(indices):
    return ",".join(f"rack{r + 1:02d}" for r in sorted(racks(indices)))


def mirror(index):
    """The same tray in the mirror-image rack (rack01 <-> rack04, rack02 <-> rack03)."""
    return (RACKS - 1 - rack_index_of(index, PER_RACK)) * PER_RACK + index % PER_RACK
