"""``ProfileParams`` (what async-profiler records) and ``PrefillParams`` (the deterministic bulk load)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .fields import Params, option

PROFILE_EVENTS = ("cpu", "alloc", "lock", "wall", "itimer", "ctimer")


#: events that sample what threads execute; one of them at most per recording (alloc and lock add to it)
EXECUTION_EVENTS = ("cpu", "wall", "itimer", "ctimer")


@dataclass(frozen=True)
class ProfileParams(Params):
    """What async-profiler records over the measured window, all in one JFR recording.

    ``event``: one event or several, comma-separated (``"cpu,alloc,lock"``): at most one of
    ``cpu, wall, itimer, ctimer`` plus ``alloc`` and/or ``lock``; each gets its own flame graph from the
    one recording. ``cpu`` uses perf_events and falls back to ``itimer`` (with a warning) when they are
    not usable and ``fallback`` is true. ``gc``: record the JVM's GC pauses in the same recording.
    ``category``: categories of the user's own, ``NAME=REGEX`` (a regex on one frame, ``ru/vk/itmo/test/alice/db/``),
    tested in the order given before every other category (:mod:`perflab.profiling.flame`).
    """

    event: str = option(
        "cpu",
        "text",
        "what to sample: cpu, alloc, lock, wall, itimer or ctimer, or several "
        "comma-separated (cpu,alloc,lock), all in one recording",
    )
    interval: float = option(0.005, "duration", "time between samples for cpu/wall/itimer/ctimer", min=0, min_open=True)
    alloc_bytes: int = option(512 * 1024, "size", "allocation sampling interval", min=1)
    lock_threshold: float = option(10e-6, "duration", "shortest contended lock wait recorded", min=0)
    threads: bool = option(True, "bool", "split stacks by thread (thread name as the root frame)")
    fallback: bool = option(True, "bool", "use itimer when perf_events are not usable")
    gc: bool = option(True, "bool", "record the JVM's GC pauses in the same recording (JFR)", flag="--gc-pauses")
    jstackdepth: int = option(2048, "int", "deepest Java stack recorded", min=1)
    include: tuple = option((), "texts", "only stacks with a frame matching this pattern")
    exclude: tuple = option((), "texts", "drop stacks with a frame matching this pattern")
    category: tuple = option(
        (),
        "texts",
        "a category of your own, NAME=REGEX on frames (storage=ru/vk/itmo/test/"
        "alice/db/), tested before the others in the order given",
    )

    def _check(self):
        evs = tuple(e.strip().lower() for e in self.event.split(",") if e.strip())
        bad = [e for e in evs if e not in PROFILE_EVENTS]
        if bad or not evs:
            raise ValueError(
                f"event: expected one or more of {', '.join(PROFILE_EVENTS)} (comma-separated), got {self.event!r}"
            )
        if sum(e in EXECUTION_EVENTS for e in evs) > 1:
            raise ValueError(f"event: at most one of {', '.join(EXECUTION_EVENTS)} per recording, got {self.event!r}")
        if len(set(evs)) != len(evs):
            raise ValueError(f"event: {self.event!r} names an event twice")
        self._set("event", ",".join(evs))
        for p in self.include + self.exclude:
            if "," in p:
                raise ValueError(f"include/exclude: patterns must not contain ',', got {p!r}")
        for c in self.category:
            parse_category(c)

    @property
    def categories(self) -> tuple[tuple[str, str], ...]:
        """``category`` as ``(NAME, REGEX)`` pairs."""
        return tuple(parse_category(c) for c in self.category)

    @property
    def events(self) -> tuple[str, ...]:
        return tuple(self.event.split(","))

    def agent_start_options(self, events: tuple[str, ...] | None = None) -> str:
        """The ``start,...`` command for the async-profiler agent."""
        evs = events or self.events
        opts = ["start"]
        execution = next((e for e in evs if e in EXECUTION_EVENTS), None)
        if execution is not None:
            opts += [f"event={execution}", f"interval={int(self.interval * 1e9)}"]
        if "alloc" in evs:
            opts.append(f"alloc={self.alloc_bytes}")
        if "lock" in evs:
            opts.append(f"lock={int(self.lock_threshold * 1e9)}")
        if self.threads:
            opts.append("threads")
        opts.append(f"jstackdepth={self.jstackdepth}")
        opts += [f"include={p}" for p in self.include] + [f"exclude={p}" for p in self.exclude]
        return ",".join(opts)


def parse_category(text: str) -> tuple[str, str]:
    """``NAME=REGEX`` -> ``(NAME, REGEX)``; ``ValueError`` naming it when either is missing or the regex is
    not one (frames are matched one per line, so ``^``/``$`` anchor at a frame)."""
    name, sep, pattern = text.partition("=")
    if not sep or not name.strip() or not pattern:
        raise ValueError(f"category: expected NAME=REGEX, got {text!r}")
    try:
        re.compile(pattern, re.M)
    except re.error as e:
        raise ValueError(f"category: {text!r}: {pattern!r} is not a valid regular expression ({e})") from None
    return name.strip(), pattern


@dataclass(frozen=True)
class PrefillParams(Params):
    """A deterministic bulk load of the data directory (``perflab.tools.Prefill``): key ``i`` is
    ``key_prefix + str(i)`` for ``i`` in ``[0, keys)`` (the keys the workload scripts send); the value
    bytes derive from ``(seed, i)``."""

    keys: int = option(100_000, "int", "keys to write", min=1, flag="--prefill")
    value_size: int = option(100, "size", "bytes per value", min=0)
    seed: int = option(0, "int", "seed of the values (and of the workload scripts' keys)")
    key_prefix: str = option("key", "text", "key prefix")


@dataclass(frozen=True)
class FillParams(Params):
    """Data written through the server's API before the load (:mod:`perflab.core.fill`): ``key0 ..
    key<keys-1>``, each once, every answer checked, with the load's own API and values (its script's
    ``path=``, ``param=``, ``prefix=``, ``value=``, ``seed=``). Any server: yours, a course server, a cluster."""

    keys: int | None = option(
        None,
        "int",
        "write key0..key<N-1> through the server's API before the load (any "
        "server; the built-in one can be prefilled in-process instead)",
        optional=True,
        min=1,
        flag="--fill",
    )
