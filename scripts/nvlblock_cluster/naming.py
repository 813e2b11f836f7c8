# SPDX-License-Identifier: GPL-2.0-or-later
"""Names of a cluster's nodes, racks and servers: gb0001.., rack01..,
cpu01.. (the --extra-nodes servers), and the front end nvlfe."""


FRONTEND_NAME = "nvlfe"
GPUS_PER_NODE = 4


def node_width(total_nodes):
    return 4 if total_nodes <= 9999 else 5


def rack_width(racks):
    return max(2, len(str(racks)))


def node_name(index, width):
    """Name of node number `index` (1-based): gb0001, gb0002, ..."""
    return f"gb{index:0{width}d}"


def rack_name(index, width):
    return f"rack{index:0{width}d}"


def node_range(first, last, width):
    """Slurm hostlist expression for nodes first..last (1-based, inclusive)."""
    if first == last:
        return node_name(first, width)
    return f"gb[{first:0{width}d}-{last:0{width}d}]"


def extra_width(extra):
    return max(2, len(str(extra)))


def extra_names(extra):
    """Names of the --extra-nodes servers: cpu01, cpu02, ..."""
    width = extra_width(extra)
    return [f"cpu{i:0{width}d}" for i in range(1, extra + 1)]


def extra_range(extra):
    """Slurm hostlist expression for all --extra-nodes servers."""
    width = extra_width(extra)
    return f"cpu{1:0{width}d}" if extra == 1 else f"cpu[{1:0{width}d}-{extra:0{width}d}]"


def racks_of(racks, per_rack):
    """[(rack name, first node index, last node index)] for the cluster."""
    width = rack_width(racks)
    return [(rack_name(r + 1, width), r * per_rack + 1, (r + 1) * per_rack)
            for r in range(racks)]
