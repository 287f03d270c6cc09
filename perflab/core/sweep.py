"""Sweeps: the points of a plan in parallel on disjoint host sets.

``sweep(fn, points, scheduler=..., generators=1)`` calls ``fn(point, session)`` (a
:class:`~perflab.core.session.SessionOptions` of those hosts and the sweep's cancel token, which ``fn`` hands to
``run_experiment`` or ``find_breakpoint`` as ``session=``) for every point,
as many at once as the pool has disjoint host sets (a server host and ``generators`` generator hosts each);
each point's session leases its hosts (:mod:`perflab.hosts.leases`), so a point waits while every set is
busy and two measurements never share a host. A point that fails is listed as failed with its error; the
others go on. Stopping the sweep (Ctrl-C, SIGTERM) cancels the token, and the points running in other
threads stop at their next look.
"""

from __future__ import annotations

import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..cancel import CancelToken
from ..hosts.inventory import survey
from ..hosts.pool import GENERATOR, SERVER, connect
from .session import SessionOptions


@dataclass
class PointResult:
    """One point of a sweep: ``ok`` and ``result`` (what ``fn`` returned), or ``error``; ``seconds``."""

    point: object
    ok: bool
    result: object = None
    error: str | None = None
    seconds: float = 0.0


def disjoint_sets(hosts, generators: int) -> int:
    """How many runs can measure at once: server hosts each with ``generators`` generator hosts of their own
    (a host with both roles serves one of them, never both, unless it is the only host)."""
    servers = sorted((h for h in hosts if SERVER in h.roles), key=lambda h: (GENERATOR in h.roles, h.name))
    free_gens = {h.name for h in hosts if GENERATOR in h.roles}
    n = 0
    for s in servers:
        pool = free_gens - {s.name}
        if len(pool) < generators:
            break
        free_gens -= {s.name}
        free_gens -= set(sorted(pool)[:generators])
        n += 1
    return max(n, 1)


def sweep(
    fn, points, scheduler: str | None = None, generators: int = 1, parallel: int | None = None, tls: str | None = None
) -> list[PointResult]:
    """Run ``fn(point, session)`` for every point (module docstring: ``session`` measures on ``scheduler``'s hosts
    with ``generators`` generator hosts, ``tls`` the certificates of a ``tls://`` scheduler, and stops with the
    sweep); the results in the points' order. ``parallel``: at most this many at once (default: the disjoint
    host sets)."""
    points = list(points)
    pool = connect(scheduler, tls)
    width = parallel or (1 if pool.local else disjoint_sets(survey(pool, clocks=False), generators))
    token = CancelToken("the sweep this run belongs to was stopped")
    session = SessionOptions(scheduler=scheduler, generators=generators, tls=tls, cancel=token)

    def one(point) -> PointResult:
        t = time.monotonic()
        try:
            return PointResult(point, True, fn(point, session), seconds=time.monotonic() - t)
        except Exception as e:  # noqa: BLE001 - one failed point is listed; the sweep goes on
            tb = traceback.format_exception_only(type(e), e)
            return PointResult(point, False, None, "".join(tb).strip(), time.monotonic() - t)

    executor = ThreadPoolExecutor(max_workers=width, thread_name_prefix="perflab-sweep")
    try:
        futures = [executor.submit(one, p) for p in points]
        return [f.result() for f in futures]
    except BaseException:
        token.cancel()  # the points running in other threads stop at their next look
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
