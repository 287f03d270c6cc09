"""Host leases: never two measurements on one host at once.

A session leases its hosts for as long as it runs; another session (another notebook, another point of
a sweep, another coordinator) asking for a busy host waits in line until they are free. The table lives
on the Dask scheduler (a ``distributed.Variable`` guarded by a ``distributed.Lock``), so every coordinator
connected to that scheduler sees it; a lease whose client has gone (a coordinator that crashed) is dropped.
On the in-process hosts of one machine nothing is leased: there is one machine and one coordinator, and two
sessions side by side on it (an A/B comparison) share it as they always did.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from dataclasses import dataclass

from distributed import Lock, Variable

from ..cancel import CancelToken
from .pool import ASK_S, HostPool, HostsError

TABLE = "perflab-host-leases"
#: seconds between two looks at the table while waiting
POLL_S = 0.25


@dataclass
class Lease:
    """Hosts held by one session until :meth:`release`."""

    pool: HostPool | None
    hosts: tuple[str, ...]
    holder: str
    waited_s: float = 0.0

    def release(self) -> None:
        if self.pool is None or not self.hosts:
            return
        try:
            _update(self.pool, lambda table: {h: v for h, v in table.items() if v["holder"] != self.holder})
        except Exception:  # noqa: BLE001 - a scheduler gone away has no table left to clean
            pass
        self.hosts = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()
        return False


def _update(pool: HostPool, change):
    """Apply ``change(table) -> table or None`` under the table's lock; returns what ``change`` returned."""
    client = pool.client
    lock = Lock(TABLE, scheduler_rpc=client.scheduler, loop=client.loop)
    if not lock.acquire(timeout=ASK_S):
        raise HostsError(f"the host lease table's lock on {pool.describe()} was not free within {ASK_S:g} s")
    try:
        var = Variable(TABLE, client=client)
        try:
            table = json.loads(var.get(timeout=0.5))
        except Exception:  # noqa: BLE001 - no table yet (TimeoutError), or an unreadable one
            table = {}
        alive = set(
            pool._ask(client._run_on_scheduler, "the scheduler", lambda dask_scheduler: list(dask_scheduler.clients))
        )
        table = {h: v for h, v in table.items() if v.get("client") in alive}
        new = change(table)
        if new is not None:
            var.set(json.dumps(new), timeout=ASK_S)
        return new
    finally:
        lock.release()


def acquire(
    pool: HostPool, choose, what: str, timeout: float | None = None, cancel: CancelToken | None = None
) -> tuple[Lease, object]:
    """Wait until ``choose(busy: set of host names) -> (host names, choice) | None`` finds free hosts, lease
    them and return ``(lease, choice)``. ``None`` from ``choose`` means "not now"; it raises for a request
    that can never be met. ``timeout``: give up after that many seconds (default: wait); ``cancel``: stop
    waiting once it is cancelled (:class:`~perflab.errors.RunInterrupted`)."""
    if pool.local:
        names, choice = choose(set())
        return Lease(None, tuple(names), "local"), choice
    holder = f"{pool.client.id}/{secrets.token_hex(4)}"
    t0 = time.monotonic()
    said = False
    while True:
        got = {}

        def change(table):
            picked = choose(set(table))
            if picked is None:
                got["busy"] = {h: v["what"] for h, v in table.items()}
                return None
            names, choice = picked
            got["names"], got["choice"] = names, choice
            return {
                **table,
                **{h: {"holder": holder, "client": pool.client.id, "what": what, "since": time.time()} for h in names},
            }

        _update(pool, change)
        if "names" in got:
            return Lease(pool, tuple(got["names"]), holder, time.monotonic() - t0), got["choice"]
        if timeout is not None and time.monotonic() - t0 > timeout:
            raise HostsError(
                f"{what}: no free hosts within {timeout:g} s (busy: "
                f"{', '.join(f'{h} ({w})' for h, w in sorted(got['busy'].items()))})"
            )
        if cancel is not None:
            cancel.check()
        if not said:
            busy = ", ".join(f"{h} ({w})" for h, w in sorted(got["busy"].items()))
            print(f"{what}: waiting for hosts; busy: {busy}", file=sys.stderr, flush=True)
            said = True
        time.sleep(POLL_S)


def held(pool: HostPool) -> dict:
    """The lease table as it is now: host -> {holder, what, since}."""
    if pool.local:
        return {}
    return _update(pool, lambda table: table) or {}
