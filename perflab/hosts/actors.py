"""What runs on a host: Dask actors that own the processes started there, with a heartbeat and a watchdog.

:class:`Agent` is the base of every actor perflab starts on a host (the generator segments of a load:
:class:`perflab.core.generators.GeneratorHost`; the target of a run: :class:`perflab.targets.base.TargetHost`).
An agent whose coordinator has not been heard from for :data:`WATCHDOG_S` stops what it runs
(:meth:`Agent._expire`): no orphan on any host, even when the coordinator is killed or cut off. Only the
coordinator writes ``data/``: an agent works in a temporary directory of its host and returns what it
recorded, except the in-process agent of one machine, which is handed the run directory itself.

:func:`host_facts` is what a host tells about itself (``perflab hosts``, the version check).
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import distributed

from .. import children, paths
from ..children import boot_id
from ..measure.generator import LoadTool
from ..records.environment import java_version
from ..version import __version__

#: an agent that hears nothing from its coordinator for this long stops what it runs
WATCHDOG_S = 60.0


def host_facts() -> dict:
    """What a host is: name, CPUs, versions of perflab, perflab-load and the JDK, its boot id and its clock."""
    return {**_static_facts(), "time": time.time()}


@functools.lru_cache(maxsize=1)
def _static_facts() -> dict:
    # asked at every session's start: the versions (two subprocesses) are read once per worker process
    try:
        loadgen = LoadTool("perflab-load", paths.loadgen_binary()).version()
        loadgen = loadgen.split(" (")[0] if loadgen else loadgen
    except Exception as e:  # noqa: BLE001 - a host without the generator is a fact to report
        loadgen, loadgen_error = None, str(e).splitlines()[0]
    else:
        loadgen_error = None
    return {
        "hostname": platform.node(),
        "cpus": os.cpu_count(),
        "pid": os.getpid(),
        "boot_id": boot_id(),
        "versions": {
            "perflab": __version__,
            "perflab-load": loadgen,
            "java": java_version(),
            "python": sys.version.split()[0],
            "distributed": distributed.__version__,
        },
        "perflab_load_error": loadgen_error,
        "repo": str(paths.repo_root()),
    }


class Agent:
    """Heartbeat and watchdog of every actor perflab starts on a host; ``touch`` is also one clock sample."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        self.name = name
        self.watchdog_s = watchdog_s
        self._heard = time.monotonic()
        self._abortable: tuple | None = None  # a long call in progress: (children.mark() then, its stop)
        self._closed = threading.Event()
        self._tmp: Path | None = None
        threading.Thread(target=self._watch, name=f"perflab-watchdog-{name}", daemon=True).start()

    @property
    def tmp(self) -> Path:
        """A temporary directory of this agent's own, made when first asked for (an agent whose start a Ctrl-C
        cut short makes none) and removed by :meth:`close`."""
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix=f"perflab-{type(self).__name__.lower()}-"))
        return self._tmp

    async def touch(self) -> float:
        """The coordinator is alive; returns this host's clock (epoch seconds)."""
        self._heard = time.monotonic()
        return time.time()

    def heard(self) -> None:
        """The coordinator just called: the watchdog waits again from now."""
        self._heard = time.monotonic()

    @contextlib.contextmanager
    def abortable(self):
        """Around a call that may take long (a server's readiness wait, a fill): yields an event
        :meth:`abort` sets, which the call's loops watch, and :meth:`abort` kills the processes launched
        since, so that the call fails at once."""
        stop = threading.Event()
        self._abortable = (children.mark(), stop)
        try:
            yield stop
        finally:
            self._abortable = None

    async def abort(self) -> bool:
        """Stop an :meth:`abortable` call in progress (``True`` if there was one). An actor's calls run one
        after the other in its thread, so a coordinator interrupted while its server starts or fills would
        wait that long for :meth:`close`; this one runs on the worker's event loop, beside the call."""
        call = self._abortable
        if call is None:
            return False
        point, stop = call
        stop.set()
        for proc in children.started_since(point):
            children.kill_now(proc)
        return True

    def _watch(self):
        while not self._closed.wait(1.0):
            if time.monotonic() - self._heard > self.watchdog_s:
                self._expire()
                return

    def _expire(self):  # the coordinator is gone: stop everything this agent started
        self.close()

    def close(self) -> None:
        self._closed.set()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)


def spawn(pool, cls, address: str, *args):
    """Start an actor of ``cls(*args)`` on the worker at ``address`` of ``pool``; returns its future, which
    must live as long as the actor (Dask deletes an actor whose future is released): :func:`bind` it."""
    future = pool.client.submit(cls, *args, actor=True, workers=[address], allow_other_workers=False, pure=False)
    return future


def answer(future, timeout: float, what: str):
    """What an agent's call (``future``) returned, waited for ``timeout`` seconds at most; past it a
    :class:`~perflab.hosts.pool.HostLost` naming the call (``what``: "the server host's start")."""
    from .pool import HostLost

    try:
        return future.result(timeout=timeout)
    except TimeoutError:
        raise HostLost(f"{what}: no answer within {timeout:g} s; the host stopped answering") from None


def bind(pool, future, timeout: float = 60.0):
    """The actor behind ``future`` (from :func:`spawn`), bound to ``pool``'s client: the proxy binds to Dask's
    default client, and ours is not the default (a notebook's own Dask work must not land on the lab's hosts)."""
    actor = answer(future, timeout, "an agent's start")
    if actor._client is None:
        actor._client, actor._future = pool.client, future
    return actor
