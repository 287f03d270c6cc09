"""Where the hosts come from: a Dask scheduler, or by default an in-process ``LocalCluster``.

``connect()`` gives the :class:`HostPool` a session measures on: the scheduler named by ``--scheduler
tls://HOST:8786`` (with ``--tls DIR``: :mod:`.tls`; or ``$PERFLAB_SCHEDULER``), or, with neither, one
in-process ``LocalCluster`` (``processes=False``) whose single worker, ``local``, has both roles: one machine
works as it always did, with nothing extra to start, on the same code path as many hosts. Both are made once
per Python process and reused by every run.

A worker's **roles** are its Dask resources: ``perflab worker tls://... --name gen1 --roles generator``
(:mod:`.daemons`) is a generator host, ``--roles server`` a server host (both: one machine).
What every Dask process perflab starts or uses is set up with: :mod:`.daskconfig`.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import tempfile
import threading
import warnings
from dataclasses import dataclass

import dask
from distributed import Client, Scheduler, SpecCluster, Worker

from ..config.hosts import SCHEDULER_ENV, TLS_ENV, scheduler_address, tls_for
from ..errors import PerflabError
from .daskconfig import CONFIG, LOOPBACK_HTTP, close_http
from .tls import open_warning, security

GENERATOR = "generator"
SERVER = "server"
ROLES = (SERVER, GENERATOR)
#: the in-process worker's name
LOCAL = "local"
#: seconds to reach a scheduler before giving up with a clear error
CONNECT_TIMEOUT = 10.0
#: seconds the scheduler or a worker may take to answer one of the coordinator's questions (who is there,
#: what are you): far beyond a round trip, even on a loaded machine; past it the host counts as cut off
ASK_S = 60.0

_lock = threading.Lock()
_pools: dict[str, HostPool] = {}


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
            info = self._ask(self.client.scheduler.identity, "the scheduler", n_workers=-1)
        except TypeError:  # a Dask whose identity() lists every worker anyway
            info = self._ask(self.client.scheduler.identity, "the scheduler")
        return dict(info["workers"])

    def run(self, function, workers: list[str], timeout: float = ASK_S) -> dict:
        """``function`` run on each of ``workers`` (on its event loop; ``Client.run``), within ``timeout``
        seconds: worker address -> what it returned."""
        return self._ask(
            self.client._run, f"the hosts at {', '.join(workers)}", function, workers=list(workers), timeout=timeout
        )

    def _ask(self, call, whom: str, *args, timeout: float = ASK_S, **kwargs):
        try:
            return self.client.sync(call, *args, callback_timeout=timeout, **kwargs)
        except TimeoutError:
            raise HostsError(f"{whom} did not answer within {timeout:g} s ({self.describe()})") from None

    def describe(self) -> str:
        return "the in-process hosts (this machine)" if self.local else f"the Dask scheduler at {self.address}"


class OpenSchedulerWarning(UserWarning):
    """A scheduler that takes plain TCP where other machines reach it (:func:`perflab.hosts.tls.open_warning`)."""


def connect(address: str | None = None, tls: str | None = None, timeout: float = CONNECT_TIMEOUT) -> HostPool:
    """The hosts of the scheduler at ``address`` (see :func:`perflab.config.hosts.scheduler_address`), with the
    certificates in ``tls`` (default ``$PERFLAB_TLS``) for a ``tls://`` one (:func:`perflab.config.hosts.tls_for`),
    connected once per process. A plain-TCP scheduler on an address other machines reach is warned about
    (:class:`OpenSchedulerWarning`): anyone who reaches it runs code on the hosts."""
    addr = scheduler_address(address)
    tls = tls_for(addr, tls if tls is not None else os.environ.get(TLS_ENV) or None)
    key = addr or LOCAL
    with _lock:
        c = _pools.get(key)
        if c is not None and c.client.status == "running":
            return c
        if addr is None:
            c = _local()
        else:
            risk = open_warning(addr)
            if risk is not None:
                warnings.warn(risk, OpenSchedulerWarning, stacklevel=2)
            c = _remote(addr, tls, timeout)
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
    for name in (
        "distributed",
        "distributed.scheduler",
        "distributed.worker",
        "distributed.core",
        "distributed.nanny",
        "distributed.http.proxy",
    ):
        logging.getLogger(name).setLevel(logging.WARNING)


def _local() -> HostPool:

    _quiet()
    # one worker with both roles, in this process (inproc transport: nothing is serialised or sent over TCP);
    # threads for the agents' calls. No dashboard: it would need bokeh and a port for hosts nobody watches;
    # the HTTP servers Dask starts anyway listen on loopback and are closed at once (.daskconfig). Their work
    # directories lie in one of ours, removed when this process ends (Dask's default leaves
    # $TMPDIR/dask-scratch-space behind)
    work = tempfile.mkdtemp(prefix="perflab-hosts-")
    # removed at exit however the start below ends (a Ctrl-C between its steps left it in $TMPDIR); registered
    # first, so it runs after the hosts are closed
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    quiet = {"dashboard": False, "dashboard_address": LOOPBACK_HTTP, "local_directory": work}
    before = set(SpecCluster._instances)
    try:
        with dask.config.set(CONFIG):
            local = SpecCluster(
                scheduler={"cls": Scheduler, "options": {"protocol": "inproc://", **quiet}},
                workers={
                    LOCAL: {"cls": Worker, "options": {"nthreads": 4, "resources": {SERVER: 1, GENERATOR: 1}, **quiet}}
                },
                name="perflab-local",
                silence_logs=logging.WARNING,
            )
    except BaseException:
        # a start cut short (Ctrl-C) goes on in Dask's loop thread, its worker making files in `work`: closed first
        for half in set(SpecCluster._instances) - before:
            with contextlib.suppress(Exception):
                half.close(timeout=CONNECT_TIMEOUT)
        shutil.rmtree(work, ignore_errors=True)
        raise
    client = Client(local, set_as_default=False)
    close_http(client)
    pool = HostPool(client, local.scheduler_address, True, local)
    atexit.register(_close_local, pool)
    return pool


def _close_local(pool: HostPool) -> None:
    # at exit, before Dask's own clean-up (atexit runs the last registered first): the hosts (then their files)
    try:
        pool.client.close(timeout=CONNECT_TIMEOUT)
        pool._local_cluster.close(timeout=CONNECT_TIMEOUT)
    except Exception:  # noqa: BLE001 - a process on its way out: what is left goes with it
        pass


def _remote(addr: str, tls: str | None, timeout: float) -> HostPool:

    sec = security(tls) if tls is not None else None
    try:
        client = Client(addr, timeout=timeout, set_as_default=False, direct_to_workers=True, security=sec)
    except (OSError, TimeoutError) as e:
        hint = (
            " (a scheduler started with TLS takes only tls:// and the lab's certificates)"
            if addr.startswith("tcp://")
            else " (are the certificates the scheduler's own?)"
            if tls
            else ""
        )
        raise HostsError(
            f"cannot reach the Dask scheduler at {addr} within {timeout:g} s ({type(e).__name__}: "
            f"{e}){hint}; start one there (`perflab scheduler`), or leave out "
            f"--scheduler/${SCHEDULER_ENV} to measure on this machine alone"
        ) from None
    return HostPool(client, addr, False)


def roles_of(worker: dict) -> tuple[str, ...]:
    """The roles a worker declared (its Dask resources named ``server`` / ``generator``)."""
    res = worker.get("resources") or {}
    return tuple(r for r in ROLES if res.get(r))
