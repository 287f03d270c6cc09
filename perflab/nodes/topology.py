"""Where a cluster's nodes listen: free ports picked up front, URLs in index order, the placeholders of a
command you bring.

A cluster node refuses ``--port 0`` (its port is part of the list every node gets), so the lab picks N free
ports first, holding all N sockets at once so no two nodes get the same port, then gives every node the same
list and each its own port and URL (docs/contracts/cluster.md section 7).
"""

from __future__ import annotations

import shlex
import socket
from dataclasses import dataclass


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """``n`` distinct ports free on ``host`` right now (bound together, then released)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass(frozen=True)
class Topology:
    """The nodes' URLs in index order (the ``--cluster`` list every node gets; index = position)."""

    host: str
    ports: tuple[int, ...]

    @classmethod
    def pick(cls, nodes: int, host: str = "127.0.0.1") -> Topology:
        return cls(host, tuple(free_ports(nodes, host)))

    @property
    def urls(self) -> list[str]:
        return [f"http://{self.host}:{p}" for p in self.ports]

    @property
    def cluster(self) -> str:
        """The ``--cluster`` value: every URL, comma-separated."""
        return ",".join(self.urls)

    def url(self, index: int) -> str:
        return self.urls[index]

    def __len__(self) -> int:
        return len(self.ports)

    def to_dict(self) -> dict:
        return {"host": self.host, "ports": list(self.ports), "urls": self.urls}


def node_command(template: str, topology: Topology, index: int, data_dir: str | None) -> list[str]:
    """A per-node command of your own with its placeholders filled (see :mod:`perflab.config.cluster`)."""
    text = (
        template.replace("{ports}", ",".join(map(str, topology.ports)))
        .replace("{port}", str(topology.ports[index]))
        .replace("{host}", topology.host)
        .replace("{index}", str(index))
        .replace("{cluster}", topology.cluster)
        .replace("{self}", topology.url(index))
        .replace("{dir}", data_dir or "")
    )
    try:
        return shlex.split(text)
    except ValueError as e:
        raise ValueError(f"command: cannot split {text!r} into arguments: {e}") from None
