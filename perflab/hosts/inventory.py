"""The hosts of a pool: roles, CPUs, versions and clock offsets (``perflab hosts``), and the checks that run
before any load: the roles a run needs exist, and every host runs the same perflab and perflab-load as the
coordinator.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

from ..children import boot_id
from .actors import host_facts
from .pool import GENERATOR, SERVER, HostPool, HostsError, roles_of

#: clock samples per host; the one with the shortest round trip gives the offset
CLOCK_SAMPLES = 5


@dataclass
class HostInfo:
    """One worker of the pool as perflab sees it.

    ``clock_offset_s``: this host's clock minus the coordinator's (NTP-style, from the round trip with the
    shortest time); ``clock_uncertainty_s``: half that round trip (the offset is within ± this);
    ``clock_shared``: the host reads the coordinator's own clock (same machine: nothing to measure)."""

    name: str
    address: str
    roles: tuple[str, ...]
    cpus: int | None = None
    hostname: str | None = None
    boot_id: str | None = None
    #: the worker's process (a host on the server's machine: its generators are the run's own load)
    pid: int | None = None
    versions: dict = field(default_factory=dict)
    perflab_load_error: str | None = None
    clock_offset_s: float = 0.0
    clock_uncertainty_s: float = 0.0
    clock_shared: bool = False
    repo: str | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["roles"] = list(self.roles)
        d["clock_offset_us"] = round(self.clock_offset_s * 1e6, 1)
        d["clock_uncertainty_us"] = round(self.clock_uncertainty_s * 1e6, 1)
        del d["clock_offset_s"], d["clock_uncertainty_s"]
        return d


def clock_offset(sample) -> tuple[float, float]:
    """``(offset, uncertainty)`` seconds of a host's clock against ours: ``sample()`` returns the host's
    ``time.time()``; of :data:`CLOCK_SAMPLES` round trips the shortest one counts (its midpoint is when
    the host read its clock, give or take half the round trip)."""
    best = None
    for _ in range(CLOCK_SAMPLES):
        t0 = time.time()
        remote = sample()
        t1 = time.time()
        if best is None or t1 - t0 < best[1] - best[0]:
            best = (t0, t1, remote)
    t0, t1, remote = best
    return remote - (t0 + t1) / 2, (t1 - t0) / 2


def survey(pool: HostPool, clocks: bool = True) -> list[HostInfo]:
    """Every worker of ``pool``, sorted by name, with its facts (:func:`perflab.hosts.actors.host_facts`)
    and, with ``clocks``, its clock offset."""
    workers = pool.workers()
    if not workers:
        raise HostsError(
            f"{pool.describe()} has no workers: start some with `perflab worker {pool.address} "
            f"--name gen1 --roles generator`"
        )
    facts = pool.run(host_facts, list(workers))
    mine = boot_id()
    out = []
    for addr, w in workers.items():
        f = facts.get(addr) or {}
        h = HostInfo(
            name=str(w.get("name", addr)),
            address=addr,
            roles=roles_of(w),
            cpus=f.get("cpus"),
            hostname=f.get("hostname"),
            boot_id=f.get("boot_id"),
            pid=f.get("pid"),
            versions=f.get("versions") or {},
            perflab_load_error=f.get("perflab_load_error"),
            repo=f.get("repo"),
        )
        # a worker on this machine (the in-process one, a namespace) reads this machine's one clock
        h.clock_shared = pool.local or (mine is not None and h.boot_id == mine)
        if clocks and not h.clock_shared:
            h.clock_offset_s, h.clock_uncertainty_s = clock_offset(lambda a=addr: pool.run(time.time, [a])[a])
        out.append(h)
    return sorted(out, key=lambda h: h.name)


def coordinator_versions() -> dict:
    return host_facts()["versions"]


def check_versions(hosts: list[HostInfo], mine: dict | None = None) -> None:
    """Every host must run this coordinator's perflab (and the generators its perflab-load): a clear error
    naming each mismatch, before any load."""
    mine = mine or coordinator_versions()
    problems = []
    for h in hosts:
        if h.versions.get("perflab") != mine.get("perflab"):
            problems.append(
                f"{h.name} runs perflab {h.versions.get('perflab')}, this coordinator {mine.get('perflab')}"
            )
        if GENERATOR in h.roles:
            theirs = h.versions.get("perflab-load")
            if theirs is None:
                problems.append(f"{h.name} has no perflab-load ({h.perflab_load_error or 'not built'})")
            elif mine.get("perflab-load") is not None and theirs != mine.get("perflab-load"):
                problems.append(f"{h.name} runs {theirs}, this coordinator {mine.get('perflab-load')}")
        if h.versions.get("distributed") != mine.get("distributed"):
            problems.append(
                f"{h.name} runs distributed {h.versions.get('distributed')}, this coordinator {mine.get('distributed')}"
            )
    if problems:
        raise HostsError(
            "version mismatch between the hosts and this coordinator: "
            + "; ".join(problems)
            + " (install the same perflab checkout and build on every host: `make setup`)"
        )


def table(hosts: list[HostInfo]) -> str:
    """``perflab hosts``: one line per host."""
    rows = [("name", "roles", "cpus", "address", "perflab", "perflab-load", "java", "clock offset")]
    for h in hosts:
        off = (
            "this machine's (not measured)"
            if h.clock_shared
            else f"{h.clock_offset_s * 1e3:+.3f} ms ±{h.clock_uncertainty_s * 1e3:.3f}"
        )
        rows.append(
            (
                h.name,
                ",".join(h.roles) or "-",
                str(h.cpus or "?"),
                h.address,
                str(h.versions.get("perflab")),
                str(h.versions.get("perflab-load") or h.perflab_load_error or "-"),
                str(h.versions.get("java") or "-"),
                off,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


__all__ = ["HostInfo", "survey", "check_versions", "clock_offset", "table", "SERVER", "GENERATOR"]
