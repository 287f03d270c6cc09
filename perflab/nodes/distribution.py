"""How evenly a cluster spreads keys: per node from the nodes' own counts, and for the built-in server from
its routing function too.

A node's own count is the number of live ``<prefix>...`` records it serves from its own storage: ``GET
/v0/entities?start=&end=``, the course's range API (stage 6), which on a cluster node streams only its own
records; the built-in server answers it the same way. That count is the cluster's own fact, whatever its
routing: it is what a cluster you bring is measured by (a node that does not answer the range API leaves
its count out, and the distribution says so). For the built-in server the routing function is known too
(``perflab.tools.Owners``: rendezvous hashing, docs/contracts/cluster.md section 7, run as a subprocess on the
same ``--cluster`` list, so the lab never computes a key's owner itself): owners (``from`` = 1) and
replicas (the run's ``from``). Your cluster's routing is yours, and the lab never applies its own to it.
Evenness is the coefficient of variation (population standard deviation / mean) of the counts. With
``from`` = the cluster size every node holds every key, so the replica counts are equal by construction and
say nothing: the owners' counts (``from`` = 1) still do.
"""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.parse
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import jdk, paths


def owners(urls: list[str], keys: int, frm: int = 1, prefix: str = "key") -> list[int]:
    """How many of ``<prefix>0 .. <prefix><keys-1>`` each node (in index order) holds as one of the first
    ``frm`` of the key's rendezvous order (``frm`` = 1: as its owner)."""
    cmd = [
        str(jdk.home(None) / "bin" / "java"),
        "-cp",
        str(paths.server_install_dir() / "lib" / "*"),
        "perflab.tools.Owners",
        "--cluster",
        ",".join(urls),
        "--from",
        str(frm),
        "--keys",
        str(keys),
        "--key-prefix",
        prefix,
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"perflab.tools.Owners failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    counts = json.loads(out.stdout)["nodes"]
    return [int(counts.get(u, 0)) for u in urls]


def replica_sets(urls: list[str], keys: list[str], frm: int) -> dict[str, list[int]]:
    """Each key's first ``frm`` nodes (indexes, owner first) by the server's routing."""
    cmd = [
        str(jdk.home(None) / "bin" / "java"),
        "-cp",
        str(paths.server_install_dir() / "lib" / "*"),
        "perflab.tools.Owners",
        "--cluster",
        ",".join(urls),
        "--from",
        str(frm),
    ]
    out = subprocess.run(cmd, input="\n".join(keys) + "\n", capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"perflab.tools.Owners failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    index = {u: i for i, u in enumerate(urls)}
    res = {}
    for line in out.stdout.splitlines():
        k, _, nodes = line.partition("\t")
        res[k] = [index[u] for u in nodes.split(",") if u in index]
    return res


def count_live(url: str, prefix: str = "key", timeout: float = 30.0) -> int:
    """Live records with keys starting with ``prefix`` that the node at ``url`` serves from its own storage
    (``GET /v0/entities?start=<prefix>&end=<prefix+1>``, chunked, one chunk per record)."""
    end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    u = urllib.parse.urlsplit(url)
    q = urllib.parse.urlencode({"start": prefix, "end": end})
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
        s.sendall(f"GET /v0/entities?{q} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            data += b
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split()[1]) if head else 0
    if status != 200:
        raise RuntimeError(f"GET /v0/entities on {url} answered {status}")
    n, i = 0, 0
    while i < len(body):
        j = body.index(b"\r\n", i)
        size = int(body[i:j].split(b";")[0], 16)
        if size == 0:
            break
        n += 1
        i = j + 2 + size + 2
    return n


def cv(counts) -> float:
    """Coefficient of variation: population standard deviation / mean (0: perfectly even)."""
    a = np.asarray(counts, dtype=float)
    return float(a.std() / a.mean()) if len(a) and a.mean() > 0 else float("nan")


#: where the counts come from, as the distribution says it
FROM_NODES = "each node's own count of its records (GET /v0/entities, the range API)"
FROM_ROUTING = "the built-in server's routing function (perflab.tools.Owners, rendezvous hashing)"


@dataclass
class KeyDistribution:
    """``stored`` per node from the nodes themselves (``None`` where a node could not say), and for the
    built-in server ``owners`` (from = 1) and ``replicas`` (the run's from) per node from its routing function
    (``None`` for a cluster you bring: its routing is its own), for ``keys`` keys ``<prefix>0..``; ``note``:
    why a count is missing or says nothing; :attr:`sources` says where each count comes from."""

    urls: list[str]
    keys: int
    prefix: str
    frm: int
    owners: list[int] | None
    replicas: list[int] | None
    stored: list[int | None] | None = None
    note: str = ""

    @property
    def sources(self) -> dict[str, str]:
        """Each measured count (``owners``, ``replicas``, ``stored``) and where it comes from."""
        out = {}
        if self.owners is not None:
            out.update(owners=FROM_ROUTING, replicas=FROM_ROUTING)
        if self.stored is not None:
            out["stored"] = FROM_NODES
        return out

    @property
    def nodes(self) -> int:
        return len(self.urls)

    @property
    def everywhere(self) -> bool:
        """Every node holds every key (from = the cluster size): replica counts are equal by construction."""
        return self.frm >= self.nodes

    def cvs(self) -> dict[str, float | None]:
        stored = [s for s in (self.stored or []) if s is not None]
        return {
            "owners": cv(self.owners) if self.owners is not None else None,
            "replicas": cv(self.replicas) if self.replicas is not None else None,
            "stored": cv(stored) if self.stored and len(stored) == self.nodes else None,
        }

    def warning(self) -> str | None:
        if self.everywhere and self.nodes > 1:
            return (
                f"from = {self.frm} = the cluster size: every node holds every key, so equal replica and "
                f"stored counts show nothing about the hash; the owners' counts (from = 1) still do"
            )
        return None

    def frame(self):
        none = [None] * self.nodes
        return pd.DataFrame(
            {
                "node": range(self.nodes),
                "url": self.urls,
                "owners": self.owners or none,
                "replicas": self.replicas or none,
                "stored": self.stored or none,
            }
        )

    def to_dict(self) -> dict:
        return {
            "keys": self.keys,
            "prefix": self.prefix,
            "from": self.frm,
            "urls": self.urls,
            "owners": self.owners,
            "replicas": self.replicas,
            "stored": self.stored,
            "cv": self.cvs(),
            "sources": self.sources,
            "warning": self.warning(),
            "note": self.note,
        }


def key_distribution(cluster, keys: int, prefix: str = "key", frm: int | None = None) -> KeyDistribution:
    """The key distribution of ``cluster`` (a running :class:`~perflab.nodes.processes.Cluster`) over
    ``<prefix>0 .. <prefix><keys-1>``: each running node's own count, and the built-in server's routing counts
    (see the module docstring)."""
    frm = frm or cluster.config.replicas_from
    urls = cluster.urls
    own = reps = None
    if not cluster.config.foreign:
        own = owners(urls, keys, 1, prefix)
        reps = own if frm == 1 else owners(urls, keys, frm, prefix)
    stored, why = [], []
    for n in cluster.nodes:
        try:
            stored.append(count_live(n.url, prefix) if n.state == "running" else None)
        except (OSError, RuntimeError, ValueError) as e:
            stored.append(None)
            why.append(
                f"node {n.index} did not count its records ({e}; GET /v0/entities is the course's range API, stage 6)"
            )
    down = [n.index for n in cluster.nodes if n.state != "running"]
    if down:
        why.append(f"node{'s' if len(down) > 1 else ''} {', '.join(map(str, down))} down at the end: not counted")
    if cluster.config.foreign and all(s is None for s in stored):
        stored = None
        why.append(
            "keys per node not measured: your nodes' routing is their own, and no node answered the range "
            "API to count its records"
        )
    return KeyDistribution(list(urls), keys, prefix, frm, own, reps, stored, "; ".join(why))
