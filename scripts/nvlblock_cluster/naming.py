# SPDX-License-Identifier: GPL-2.0-or-later
"""Names of a cluster's nodes, racks and servers: gb0001.., rack01..,
cpu01.. (the --extra-nodes servers), and the front end nvlfe."""

import re
from typing import Dict, Iterable, List, Optional, Tuple


FRONTEND_NAME = "nvlfe"
GPUS_PER_NODE = 4


def node_width(total_nodes: int) -> int:
    return 4 if total_nodes <= 9999 else 5


def rack_width(racks: int) -> int:
    return max(2, len(str(racks)))


def node_name(index: int, width: int) -> str:
    """Name of node number `index` (1-based): gb0001, gb0002, ..."""
    return f"gb{index:0{width}d}"


def rack_name(index: int, width: int) -> str:
    return f"rack{index:0{width}d}"


def node_range(first: int, last: int, width: int) -> str:
    """Slurm hostlist expression for nodes first..last (1-based, inclusive)."""
    if first == last:
        return node_name(first, width)
    return f"gb[{first:0{width}d}-{last:0{width}d}]"


def extra_width(extra: int) -> int:
    return max(2, len(str(extra)))


def extra_names(extra: int) -> List[str]:
    """Names of the --extra-nodes servers: cpu01, cpu02, ..."""
    width = extra_width(extra)
    return [f"cpu{i:0{width}d}" for i in range(1, extra + 1)]


def extra_range(extra: int) -> str:
    """Slurm hostlist expression for all --extra-nodes servers."""
    width = extra_width(extra)
    return f"cpu{1:0{width}d}" if extra == 1 else f"cpu[{1:0{width}d}-{extra:0{width}d}]"


def racks_of(racks: int, per_rack: int) -> List[Tuple[str, int, int]]:
    """[(rack name, first node index, last node index)] for the cluster."""
    width = rack_width(racks)
    return [(rack_name(r + 1, width), r * per_rack + 1, (r + 1) * per_rack)
            for r in range(racks)]


# The other direction, for programs that read node names back from Slurm.


def node_index(node: str) -> Optional[int]:
    """gb0007 -> 7; None for nodes outside the racks (cpu01...)."""
    m = re.fullmatch(r"gb(\d+)", node)
    return int(m.group(1)) if m else None


def rack_index_of(offset: int, per_rack: int = 18) -> int:
    """The 0-based rack of the node at 0-based `offset` in topology order
    (gb0001 is offset 0, in rack 0 = rack01)."""
    return offset // per_rack


def rack_name_of(node: str, per_rack: int = 18) -> Optional[str]:
    """The rack (block) name of a node name: gb0001-gb0018 -> rack01; None
    for a node in no rack (an --extra-nodes server)."""
    i = node_index(node)
    if i is None:
        return None
    return f"rack{rack_index_of(i - 1, per_rack) + 1:02d}"


def block_containing(node: str, blocks: Dict[str, Iterable[str]]) -> Optional[str]:
    """The name of the block whose member list holds `node`, for layouts
    given as lists rather than by the naming rule above (the Docker and
    network-namespace clusters); None if no block does."""
    return next((name for name, members in blocks.items() if node in members), None)


def rack_nodes(rack: str, per_rack: int = 18) -> List[str]:
    """All node names of rack 'rackNN'."""
    r = int(rack[4:])
    return [f"gb{i:04d}" for i in range((r - 1) * per_rack + 1, r * per_rack + 1)]


def rack_counts(nodes: Iterable[str], per_rack: int = 18) -> Dict[Optional[str], int]:
    """{rack: count} of a node list (None for nodes in no rack)."""
    out: Dict[Optional[str], int] = {}
    for n in nodes:
        r = rack_name_of(n, per_rack)
        out[r] = out.get(r, 0) + 1
    return out
