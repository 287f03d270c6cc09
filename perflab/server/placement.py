"""Where the server and the load generator run: on all CPUs together, or on disjoint CPU sets.

On a small machine the generator and the server compete for the same cores, so a ceiling may measure
the generator as much as the server. ``split`` gives the generator ``n // 2`` CPUs (at least one) and the
server the rest, by ``taskset`` before exec (so every thread the JVM starts inherits the set). The run
records which placement it used, and the validity record says whether the two shared cores.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

PLACEMENTS = ("shared", "split")


def online_cpus() -> tuple[int, ...]:
    return tuple(sorted(os.sched_getaffinity(0)))


@dataclass(frozen=True)
class Placement:
    """``server_cpus``/``load_cpus``: the CPU sets (``None``: no restriction)."""

    mode: str = "shared"
    server_cpus: tuple[int, ...] | None = None
    load_cpus: tuple[int, ...] | None = None

    @classmethod
    def of(cls, spec: str | Placement | None) -> Placement:
        """``"shared"``, ``"split"``, or ``"server=0,1;load=2,3"`` (explicit CPU lists)."""
        if isinstance(spec, Placement):
            return spec
        if spec is None or spec == "shared":
            return cls("shared")
        if spec == "split":
            cpus = online_cpus()
            if len(cpus) < 2:
                raise ValueError(f"placement: 'split' needs 2 or more CPUs, this process may use {len(cpus)}")
            k = max(1, len(cpus) // 2)
            return cls("split", cpus[: len(cpus) - k], cpus[len(cpus) - k :])
        if isinstance(spec, str) and "server=" in spec and "load=" in spec:
            parts = dict(p.split("=", 1) for p in spec.replace(" ", "").split(";") if "=" in p)
            try:
                server = tuple(int(x) for x in parts["server"].split(","))
                load = tuple(int(x) for x in parts["load"].split(","))
            except (KeyError, ValueError):
                raise ValueError(f"placement: expected 'server=CPUS;load=CPUS', got {spec!r}") from None
            bad = sorted(set(server + load) - set(online_cpus()))
            if bad:
                raise ValueError(f"placement: CPUs {bad} are not available (online: {list(online_cpus())})")
            return cls("custom", server, load)
        raise ValueError(f"placement: expected one of {', '.join(PLACEMENTS)} or 'server=CPUS;load=CPUS', got {spec!r}")

    @property
    def shares_cpus(self) -> bool:
        if self.server_cpus is None or self.load_cpus is None:
            return True
        return bool(set(self.server_cpus) & set(self.load_cpus))

    def prefix(self, which: str) -> list[str]:
        """The command prefix that pins ``which`` (``server`` or ``load``) to its CPUs (``[]``: none)."""
        cpus = self.server_cpus if which == "server" else self.load_cpus
        if cpus is None:
            return []
        taskset = shutil.which("taskset")
        if taskset is None:
            raise ValueError("placement: pinning needs taskset (util-linux), which is not on PATH")
        return [taskset, "-c", ",".join(map(str, cpus))]

    def to_dict(self) -> dict:
        return {
            "mode": self.mode,
            "server_cpus": list(self.server_cpus) if self.server_cpus else None,
            "load_cpus": list(self.load_cpus) if self.load_cpus else None,
            "shares_cpus": self.shares_cpus,
        }
