"""The server's ``/v0/stats`` metrics, from its own description (``--options-json``: name, counter or
gauge, unit), so no metric name or kind is written twice in Python.

``metric("storage.flushes")`` returns the name after checking that the server reports it (a typo or a
renamed metric fails at import of the code that names it, not as an empty plot); :func:`is_counter`
tells counters (cumulative since start: the lab takes differences) from gauges.
"""

from __future__ import annotations

import functools
import re

from ..config.server import server_options


@functools.lru_cache(maxsize=1)
def specs() -> dict[str, dict]:
    """name -> spec of every metric (pattern names like ``requests.<METHOD>.<STATUS>`` included)."""
    return {m["name"]: m for m in server_options().get("metrics") or []}


@functools.lru_cache(maxsize=1)
def _patterns() -> list[tuple[re.Pattern, dict]]:
    out = []
    for name, m in specs().items():
        if m.get("pattern"):
            rx = re.escape(name)
            rx = re.sub(r"<[A-Z_]+>", r"[^.]+", rx.replace(r"\<", "<").replace(r"\>", ">"))
            out.append((re.compile(rf"^{rx}$"), m))
    return out


def spec(name: str) -> dict | None:
    """The spec of metric ``name`` (exact, or matching a pattern), ``None`` if the server has no such metric."""
    if name in specs():
        return specs()[name]
    return next((m for rx, m in _patterns() if rx.match(name)), None)


def metric(name: str) -> str:
    """``name``, checked against the server's metric list."""
    if spec(name) is None:
        raise ValueError(f"metric: the server reports no metric {name!r} (see perflab.server.Main --options-json)")
    return name


def is_counter(name: str) -> bool:
    """Whether ``name`` (a flattened ``/v0/stats`` key) is a cumulative counter."""
    m = spec(name)
    return bool(m and m.get("kind") == "counter")


# The metrics the lab itself reads, each checked against the server's list once.
QUEUE_DEPTH = metric("executor.queue_depth")
REJECTED = metric("executor.rejected")
FLUSHES = metric("storage.flushes")
FLUSH_ACTIVE = metric("storage.flush_active")
COMPACTIONS = metric("storage.compactions")
GC_MS = metric("jvm.gc_ms")
MEMTABLE_BYTES = metric("storage.memtable_bytes")
SSTABLES = metric("storage.sstables")
