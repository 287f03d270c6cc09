"""The hosts of one session: which, checked, leased, with their agents (the coordinator's side).

``HostSet.open(request, what)`` connects (:mod:`.pool`), lists the workers (:mod:`.inventory`), picks the
server host and the generator hosts the request names or counts, fails with a clear error for a missing
host or role or a version mismatch (before anything is started) and leases them (:mod:`.leases`).
:meth:`HostSet.start_agents` then starts the caller's actors (:mod:`.actors`): one on the server host, one on
each generator host, and measures each host's clock against the coordinator's. A host on the coordinator's
own machine (same boot id) shares its clock: its offset is 0 by definition.
"""

from __future__ import annotations

import platform
import threading
import time

from ..cancel import CancelToken
from ..children import boot_id
from ..config.hosts import HostOptions
from .actors import answer, bind, spawn
from .daskconfig import profiler_off
from .inventory import HostInfo, check_versions, clock_offset, coordinator_versions, survey
from .leases import Lease, acquire
from .pool import GENERATOR, SERVER, HostPool, HostsError, connect

#: seconds between two heartbeats to every agent (their watchdog waits agents.WATCHDOG_S)
HEARTBEAT_S = 10.0
#: seconds an agent may take to abort a call in progress when the session closes
ABORT_S = 10.0


def choose(hosts: list[HostInfo], request: HostOptions, busy: set[str], where: str):
    """``(names, (server, generators))`` for ``request`` among ``hosts`` not in ``busy``; ``None`` while
    busy hosts stand in the way; :class:`HostsError` for a request no free-up can meet."""
    by_name = {h.name: h for h in hosts}

    def named(name: str, role: str) -> HostInfo:
        if name not in by_name:
            raise HostsError(f"no host named {name!r} in {where} (hosts: {', '.join(sorted(by_name)) or 'none'})")
        h = by_name[name]
        if role not in h.roles:
            raise HostsError(
                f"host {name} has no {role} role (its roles: {', '.join(h.roles) or 'none'}); start "
                f"its worker with --roles {role} (`perflab worker`)"
            )
        return h

    servers = [h for h in hosts if SERVER in h.roles]
    generators = [h for h in hosts if GENERATOR in h.roles]
    if request.server_host is None and not servers:
        raise HostsError(
            f"no host in {where} has the server role (start one: `perflab worker ADDRESS --name srv1 --roles server`)"
        )
    if not generators:
        raise HostsError(
            f"no host in {where} has the generator role (start some: `perflab worker ADDRESS --name gen1 "
            f"--roles generator`)"
        )
    wanted = request.generators if request.generators is not None else 1
    if isinstance(wanted, tuple):
        gens = [named(n, GENERATOR) for n in wanted]
    if request.server_host is not None:
        server = named(request.server_host, SERVER)
    else:
        taken = set(wanted) if isinstance(wanted, tuple) else set()
        # a host with only the server role first: a host with both is a generator another run could use
        free = sorted(
            (h for h in servers if h.name not in busy and h.name not in taken),
            key=lambda h: (GENERATOR in h.roles, h.name),
        )
        if not free:
            if all(h.name in taken for h in servers) and len(servers) == 1 and taken == {servers[0].name}:
                free = servers  # one machine with both roles, named as the generator
            else:
                return None
        server = free[0]
    if server.name in busy:
        return None
    if isinstance(wanted, int):
        if wanted < 1:
            raise ValueError(f"generators: at least 1 generator host, got {wanted}")
        others = [h for h in generators if h.name != server.name]
        pool = others if others else [h for h in generators if h.name == server.name]
        if len(pool) < wanted:
            raise HostsError(
                f"{wanted} generator hosts asked for, {where} has {len(pool)} besides the server host "
                f"{server.name}: {', '.join(h.name for h in pool) or 'none'}"
            )
        free = [h for h in pool if h.name not in busy]
        if len(free) < wanted:
            return None
        gens = free[:wanted]
    elif any(h.name in busy and h.name != server.name for h in gens):
        return None
    names = sorted({server.name, *(h.name for h in gens)})
    return names, (server, gens)


class HostSet:
    """The hosts of one session with their agents (see the module docstring)."""

    def __init__(self, pool: HostPool, server: HostInfo, generators: list[HostInfo], lease: Lease):
        self.pool = pool
        self.server = server
        self.generators = generators
        self.lease = lease
        self._futures: dict = {}
        self._agents: dict = {}
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    @classmethod
    def open(
        cls, request: HostOptions, what: str, lease_timeout: float | None = None, cancel: CancelToken | None = None
    ) -> HostSet:
        """The hosts ``request`` asks for, checked and leased (no agents yet: :meth:`start_agents`)."""
        pool = connect(request.scheduler, request.tls)
        hosts = survey(pool, clocks=False)
        choose(hosts, request, set(), pool.describe())  # an impossible request fails now, not after a wait
        lease, (server, gens) = acquire(
            pool, lambda busy: choose(hosts, request, busy, pool.describe()), what, lease_timeout, cancel
        )
        self = cls(pool, server, gens, lease)
        try:
            if not pool.local:
                check_versions(self.hosts, coordinator_versions())
                # a worker started with plain `dask worker` samples its threads: off before any agent starts
                pool.run(profiler_off, [h.address for h in self.hosts])
        except BaseException:
            self.close()
            raise
        return self

    # --- what a session asks ----------------------------------------------------------------------
    @property
    def hosts(self) -> list[HostInfo]:
        """The server host and the generator hosts, each once."""
        seen, out = set(), []
        for h in [self.server, *self.generators]:
            if h.name not in seen:
                seen.add(h.name)
                out.append(h)
        return out

    @property
    def shares_files(self) -> bool:
        """The agents run in this process: they may write into the run directory themselves."""
        return self.pool.local

    @property
    def split(self) -> bool:
        return len(self.generators) > 1

    @property
    def apart(self) -> bool:
        """Some generator runs on another machine than the server (boot ids differ)."""
        return any(
            g.boot_id != self.server.boot_id or g.boot_id is None for g in self.generators if g.name != self.server.name
        )

    @property
    def on_server_machine(self) -> list[int]:
        """The worker processes on the server's machine (the generators there are the run's own load, not
        another program's: :mod:`perflab.server.machine`)."""
        return [h.pid for h in self.generators if h.pid and h.boot_id is not None and h.boot_id == self.server.boot_id]

    def host(self, name: str) -> HostInfo:
        return next(h for h in self.hosts if h.name == name)

    def generator(self, name: str):
        """The agent on generator host ``name``."""
        return self._agents[("generator", name)]

    @property
    def server_agent(self):
        """The agent on the server host (``None`` before :meth:`start_agents`)."""
        return self._agents.get(("server", self.server.name))

    def shift_s(self, h: HostInfo) -> float:
        """Seconds to add to a time read on ``h``'s clock to put it on the server host's clock."""
        return self.server.clock_offset_s - h.clock_offset_s

    def server_address(self) -> str | None:
        """The address the server must listen on so that the generator hosts reach it: the server host's
        own address when a generator runs on another host, else ``None`` (the server's default)."""
        if all(g.name == self.server.name for g in self.generators):
            return None
        return self.server.address.split("://", 1)[1].rsplit(":", 1)[0].strip("[]")

    def live_workers(self) -> set[str]:
        return set(self.pool.workers())

    def record(self) -> dict:
        """``meta.json["hosts"]``: the scheduler, the coordinator, and every host with its role(s), address,
        versions and clock offset (with its uncertainty)."""

        def one(h: HostInfo, role: str) -> dict:
            return {**h.to_dict(), "role": role}

        return {
            "scheduler": "in-process" if self.pool.local else self.pool.address,
            "dashboard": self.pool.dashboard_link,
            "coordinator": {"hostname": platform.node(), "boot_id": boot_id()},
            "server": one(self.server, SERVER),
            "generators": [one(g, GENERATOR) for g in self.generators],
            "lease_waited_s": round(self.lease.waited_s, 3) if self.lease is not None else None,
        }

    # --- agents -------------------------------------------------------------------------------------
    def start_agents(self, server: type, generator: type) -> None:
        """Start the actors: ``server`` (a class taking the host's name) on the server host, ``generator`` (one
        too) on every generator host; then the clocks."""
        try:
            wanted = [("server", self.server, server)] + [("generator", g, generator) for g in self.generators]
            for kind, h, c in wanted:
                self._futures[(kind, h.name)] = spawn(self.pool, c, h.address, h.name)
            for key, f in self._futures.items():
                try:
                    self._agents[key] = bind(self.pool, f)
                except Exception as e:  # noqa: BLE001
                    raise HostsError(
                        f"could not start perflab's {key[0]} agent on host {key[1]}: {type(e).__name__}: {e}"
                    ) from None
            self._beat = threading.Thread(target=self._heartbeat, name="perflab-hosts-heartbeat", daemon=True)
            self._beat.start()
            self._measure_clocks()
        except BaseException:
            self.close()
            raise

    def _measure_clocks(self) -> None:
        """Each host's clock offset and uncertainty; 0 on the coordinator's own machine (one clock)."""
        mine = boot_id()
        for h in self.hosts:
            if self.pool.local or (mine is not None and h.boot_id == mine):
                h.clock_offset_s, h.clock_uncertainty_s, h.clock_shared = 0.0, 0.0, True
                continue
            agent = self.server_agent if h.name == self.server.name else self.generator(h.name)
            h.clock_offset_s, h.clock_uncertainty_s = clock_offset(
                lambda: answer(agent.touch(), 10, f"host {h.name}: its clock")
            )

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            for a in list(self._agents.values()):
                try:
                    a.touch()
                except Exception:  # noqa: BLE001 - a lost host is noticed by whoever waits on it
                    continue

    def abort(self) -> None:
        """Stop every agent's call in progress (:meth:`~perflab.hosts.actors.Agent.abort`: a server's readiness
        wait, a fill): it holds the agent's thread, and every call behind it (a stop, a close), for as long as
        it may take. Nothing to do once it has returned."""
        aborts = []
        for a in self._agents.values():
            try:
                aborts.append(a.abort())
            except Exception:  # noqa: BLE001 - a lost host has nothing to abort
                continue
        for f in aborts:
            try:
                f.result(timeout=ABORT_S)
            except Exception:  # noqa: BLE001
                continue

    def close(self, keep_data: bool = False, release: bool = True) -> None:
        """Stop every agent (and what it runs) and, with ``release``, give the hosts back (a session does that
        itself once its run is marked finished, so the next holder's run starts after this one ended)."""
        self._stop.set()
        self.abort()
        calls = []
        for (kind, _name), a in self._agents.items():
            try:
                calls.append(a.close(keep_data) if kind == "server" else a.close())
            except Exception:  # noqa: BLE001 - a lost host has nothing left to close
                continue
        deadline = time.monotonic() + 60
        for c in calls:
            try:
                c.result(timeout=max(1.0, deadline - time.monotonic()))
            except Exception:  # noqa: BLE001
                continue
        self._agents.clear()
        for f in self._futures.values():
            try:
                f.release()
            except Exception:  # noqa: BLE001
                continue
        self._futures.clear()
        if release and self.lease is not None:
            self.lease.release()
