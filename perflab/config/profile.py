"""``ProfileParams`` (what async-profiler records) and ``PrefillParams`` (the deterministic bulk load)."""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Params, option

PROFILE_EVENTS = ("cpu", "alloc", "lock", "wall", "itimer", "ctimer")


@dataclass(frozen=True)
class ProfileParams(Params):
    """What async-profiler records over the measured window.

    ``cpu`` uses perf_events and falls back to ``itimer`` (with a warning) when they are not usable and
    ``fallback`` is true.
    """

    event: str = option("cpu", "enum", "what to sample", choices=PROFILE_EVENTS)
    interval: float = option(0.005, "duration", "time between samples for cpu/wall/itimer/ctimer", min=0,
                             min_open=True)
    alloc_bytes: int = option(512 * 1024, "size", "allocation sampling interval", min=1)
    lock_threshold: float = option(10e-6, "duration", "shortest contended lock wait recorded", min=0)
    threads: bool = option(True, "bool", "split stacks by thread (thread name as the root frame)")
    fallback: bool = option(True, "bool", "use itimer when perf_events are not usable")
    jstackdepth: int = option(2048, "int", "deepest Java stack recorded", min=1)
    include: tuple = option((), "texts", "only stacks with a frame matching this pattern")
    exclude: tuple = option((), "texts", "drop stacks with a frame matching this pattern")

    def _check(self):
        for p in self.include + self.exclude:
            if "," in p:
                raise ValueError(f"include/exclude: patterns must not contain ',', got {p!r}")

    def agent_start_options(self, event: str | None = None) -> str:
        """The ``start,...`` command for the async-profiler agent."""
        ev = event or self.event
        opts = ["start"]
        if ev == "alloc":
            opts += ["event=alloc", f"alloc={self.alloc_bytes}"]
        elif ev == "lock":
            opts += ["event=lock", f"lock={int(self.lock_threshold * 1e9)}"]
        else:
            opts += [f"event={ev}", f"interval={int(self.interval * 1e9)}"]
        if self.threads:
            opts.append("threads")
        opts.append(f"jstackdepth={self.jstackdepth}")
        opts += [f"include={p}" for p in self.include] + [f"exclude={p}" for p in self.exclude]
        return ",".join(opts)


@dataclass(frozen=True)
class PrefillParams(Params):
    """A deterministic bulk load of the data directory (``perflab.tools.Prefill``): key ``i`` is
    ``key_prefix + str(i)`` for ``i`` in ``[0, keys)`` (the keys the workload scripts send); the value
    bytes derive from ``(seed, i)``."""

    keys: int = option(100_000, "int", "keys to write", min=1, flag="--prefill")
    value_size: int = option(100, "size", "bytes per value", min=0)
    seed: int = option(0, "int", "seed of the values (and of the workload scripts' keys)")
    key_prefix: str = option("key", "text", "key prefix")
