"""Where the hosts come from: a Dask scheduler, or by default an in-process ``LocalCluster``.

``connect()`` gives the :class:`Cluster` a session measures on: the scheduler named by ``--cluster
tcp://HOST:8786`` (or ``$PERFLAB_CLUSTER``), or, with neither, one in-process ``LocalCluster``
(``processes=False``) whose single worker, ``local``, has both roles: one machine works as it always did,
with nothing extra to start, on the same code path as many hosts. Both are made once per Python process
and reused by every run.

A worker's **roles** are its Dask resources: ``dask worker tcp://... --name gen1 --resources
generator=1`` is a generator host, ``--resources server=1`` a server host (both: one machine).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass

from ..errors import PerflabError

#: the environment variable that names the scheduler (as --cluster does)
ENV = "PERFLAB_CLUSTER"
GENERATOR = "generator"
SERVER = "server"
ROLES = (SERVER, GENERATOR)
#: the in-process worker's name
LOCAL = "local"
#: seconds to reach a scheduler before giving up with a clear error
CONNECT_TIMEOUT = 10.0

_ADDRESS = re.compile(r"^(tcp|tls)://[^\s/:]+(:\d+)?$")
_lock = threading.Lock()
_clusters: dict[str, "Cluster"] = {}


class HostsError(PerflabError):
    """The hosts cannot do what was asked: unreachable scheduler, missing role, version mismatch, a host
    lost mid-run."""


@dataclass
class Cluster:
    """A connection to the hosts: ``client`` (a ``distributed.Client``), the scheduler's ``address``,
    ``local`` (the in-process LocalCluster: agents may write straight into the run directory)."""

    client: object
    address: str
    local: bool
    _cluster: object = None

    @property
    def dashboard_link(self) -> str | None:
        """The scheduler's dashboard (``None`` when it runs none: bokeh missing on the scheduler host, or
        the in-process cluster, which starts none)."""
        if self.local:
            return None
        try:
            info = self.client.scheduler_info()
            port = (info.get("services") or {}).get("dashboard")
        except Exception:  # noqa: BLE001 - a link is information only
            return None
        if not port:
            return None
        host = self.address.split("://", 1)[1].rsplit(":", 1)[0]
        return f"http://{host}:{port}/status"

    def workers(self) -> dict[str, dict]:
        """address -> the scheduler's record of each worker (``name``, ``resources``, ``nthreads``...), asked
        of the scheduler now: ``Client.scheduler_info()`` returns a cache that a periodic refresh may have
        just replaced with one holding no workers (which would read as every host lost)."""
        try:
            info = self.client.sync(self.client.scheduler.identity, n_workers=-1)
        except TypeError:   # a Dask whose identity() lists every worker anyway
            info = self.client.sync(self.client.scheduler.identity)
        return dict(info["workers"])

    def describe(self) -> str:
        return "the in-process cluster (this machine)" if self.local else f"the Dask scheduler at {self.address}"


def address_of(explicit: str | None = None) -> str | None:
    """The scheduler to use: ``explicit``, else ``$PERFLAB_CLUSTER``, else ``None`` (in-process)."""
    addr = explicit if explicit not in (None, "") else os.environ.get(ENV) or None
    if addr is None:
        return None
    addr = addr.strip()
    if addr in ("local", "in-process"):
        return None
    if not _ADDRESS.match(addr):
        raise ValueError(f"cluster: expected a scheduler address like tcp://HOST:8786, got {addr!r}")
    if addr.count(":") == 1:
        addr += ":8786"
    return addr


def connect(address: str | None = None, timeout: float = CONNECT_TIMEOUT) -> Cluster:
    """The cluster at ``address`` (see :func:`address_of`), connected once per process."""
    addr = address_of(address)
    key = addr or LOCAL
    with _lock:
        c = _clusters.get(key)
        if c is not None and c.client.status == "running":
            return c
        c = _local() if addr is None else _remote(addr, timeout)
        _clusters[key] = c
        return c


def disconnect(address: str | None = None) -> None:
    """Close this process's connection to ``address`` (before its scheduler goes away: a client left
    behind keeps polling a dead address)."""
    key = address_of(address) or LOCAL
    with _lock:
        c = _clusters.pop(key, None)
    if c is not None:
        try:
            c.client.close()
        except Exception:  # noqa: BLE001 - closing a connection to a scheduler that is gone
            pass


def _quiet():
    # the in-process cluster's start-up and shutdown chatter would land in every notebook's output
    for name in ("distributed", "distributed.scheduler", "distributed.worker", "distributed.core",
                 "distributed.nanny", "distributed.http.proxy"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _local() -> Cluster:
    from distributed import Client, Scheduler, SpecCluster, Worker

    _quiet()
    # one worker with both roles, in this process (inproc transport: nothing is serialised or sent over TCP);
    # threads for the agents' calls. No dashboard: it would need bokeh and a port for a cluster nobody watches.
    cluster = SpecCluster(
        scheduler={"cls": Scheduler, "options": {"protocol": "inproc://", "dashboard": False,
                                                 "dashboard_address": ":0"}},
        workers={LOCAL: {"cls": Worker, "options": {"nthreads": 4, "resources": {SERVER: 1, GENERATOR: 1},
                                                    "dashboard": False}}},
        name="perflab-local", silence_logs=logging.WARNING)
    client = Client(cluster, set_as_default=False)
    return Cluster(client, cluster.scheduler_address, True, cluster)


def _remote(addr: str, timeout: float) -> Cluster:
    from distributed import Client

    try:
        client = Client(addr, timeout=timeout, set_as_default=False, direct_to_workers=True)
    except (OSError, TimeoutError) as e:
        raise HostsError(f"cannot reach the Dask scheduler at {addr} within {timeout:g} s ({type(e).__name__}: "
                         f"{e}); start one there (`dask scheduler`), or leave out --cluster/{ENV} to measure on "
                         f"this machine alone") from None
    return Cluster(client, addr, False)


def roles_of(worker: dict) -> tuple[str, ...]:
    """The roles a worker declared (its Dask resources named ``server`` / ``generator``)."""
    res = worker.get("resources") or {}
    return tuple(r for r in ROLES if res.get(r))
