"""Where the hosts come from: a Dask scheduler, or by default an in-process ``LocalCluster``.

``connect()`` gives the :class:`HostPool` a session measures on: the scheduler named by ``--scheduler
tcp://HOST:8786`` (or ``$PERFLAB_SCHEDULER``), or, with neither, one in-process ``LocalCluster``
(``processes=False``) whose single worker, ``local``, has both roles: one machine works as it always did,
with nothing extra to start, on the same code path as many hosts. Both are made once per Python process
and reused by every run.

A worker's **roles** are its Dask resources: ``dask worker tcp://... --name gen1 --resources
generator=1`` is a generator host, ``--resources server=1`` a server host (both: one machine).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from distributed import Client, Scheduler, SpecCluster, Worker

from ..config.hosts import SCHEDULER_ENV, scheduler_address
from ..errors import PerflabError

GENERATOR = "generator"
SERVER = "server"
ROLES = (SERVER, GENERATOR)
#: the in-process worker's name
LOCAL = "local"
#: seconds to reach a scheduler before giving up with a clear error
CONNECT_TIMEOUT = 10.0

_lock = threading.Lock()
_pools: dict[str, "HostPool"] = {}


class HostsError(PerflabError):
    """The hosts cannot do what was asked: unreachable scheduler, missing role, version mismatch, a host
    lost mid-run."""


class HostLost(HostsError):
    """A host's worker died or stopped answering during a load."""


@dataclass
class HostPool:
    """A connection to the hosts: ``client`` (a ``distributed.Client``), the scheduler's ``address``,
    ``local`` (the in-process LocalCluster: agents may write straight into the run directory)."""

    client: object
    address: str
    local: bool
    _local_cluster: object = None

    @property
    def dashboard_link(self) -> str | None:
        """The scheduler's dashboard (``None`` when it runs none: bokeh missing on the scheduler host, or
        the in-process hosts, which start none)."""
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
        return "the in-process hosts (this machine)" if self.local else f"the Dask scheduler at {self.address}"


def connect(address: str | None = None, timeout: float = CONNECT_TIMEOUT) -> HostPool:
    """The hosts of the scheduler at ``address`` (see :func:`perflab.config.hosts.scheduler_address`),
    connected once per process."""
    addr = scheduler_address(address)
    key = addr or LOCAL
    with _lock:
        c = _pools.get(key)
        if c is not None and c.client.status == "running":
            return c
        c = _local() if addr is None else _remote(addr, timeout)
        _pools[key] = c
        return c


def disconnect(address: str | None = None) -> None:
    """Close this process's connection to ``address`` (before its scheduler goes away: a client left
    behind keeps polling a dead address)."""
    key = scheduler_address(address) or LOCAL
    with _lock:
        c = _pools.pop(key, None)
    if c is not None:
        try:
            c.client.close()
        except Exception:  # noqa: BLE001 - closing a connection to a scheduler that is gone
            pass


def _quiet():
    # the in-process scheduler's start-up and shutdown chatter would land in every notebook's output
    for name in ("distributed", "distributed.scheduler", "distributed.worker", "distributed.core",
                 "distributed.nanny", "distributed.http.proxy"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _local() -> HostPool:

    _quiet()
    # one worker with both roles, in this process (inproc transport: nothing is serialised or sent over TCP);
    # threads for the agents' calls. No dashboard: it would need bokeh and a port for hosts nobody watches.
    local = SpecCluster(
        scheduler={"cls": Scheduler, "options": {"protocol": "inproc://", "dashboard": False,
                                                 "dashboard_address": ":0"}},
        workers={LOCAL: {"cls": Worker, "options": {"nthreads": 4, "resources": {SERVER: 1, GENERATOR: 1},
                                                    "dashboard": False}}},
        name="perflab-local", silence_logs=logging.WARNING)
    client = Client(local, set_as_default=False)
    return HostPool(client, local.scheduler_address, True, local)


def _remote(addr: str, timeout: float) -> HostPool:

    try:
        client = Client(addr, timeout=timeout, set_as_default=False, direct_to_workers=True)
    except (OSError, TimeoutError) as e:
        raise HostsError(f"cannot reach the Dask scheduler at {addr} within {timeout:g} s ({type(e).__name__}: "
                         f"{e}); start one there (`dask scheduler`), or leave out --scheduler/${SCHEDULER_ENV} to measure on "
                         f"this machine alone") from None
    return HostPool(client, addr, False)


def roles_of(worker: dict) -> tuple[str, ...]:
    """The roles a worker declared (its Dask resources named ``server`` / ``generator``)."""
    res = worker.get("resources") or {}
    return tuple(r for r in ROLES if res.get(r))
