"""Numbers as people read them: latencies, rates, shares, ratios, p-values and intervals.

The one place the lab turns a measured number into text for a notebook, a report page, a plot's hover
or a command's output, so the same number reads the same everywhere. (What the tools themselves take on
their command lines, ``4m`` or ``500ms``, is :mod:`perflab.units`.) ``None`` and NaN read "n/a".
"""

from __future__ import annotations

import math
import numbers


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def number(v: float | None, unit: str = "") -> str:
    """``50,000``; three significant digits below 100 (``0.917``, ``12.4``); a ``unit`` after a space."""
    if _missing(v):
        return "n/a"
    if unit == "ms":
        return ms(v)
    text = f"{v:,.0f}" if abs(v) >= 100 or float(v).is_integer() else f"{v:,.3g}"
    return f"{text} {unit}".strip()


def count(n: int, noun: str) -> str:
    """``1 connection``, ``64 connections``, ``2 flush threads``: a count with its noun, plural when not 1."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not noun:
        raise ValueError(f"count needs an integer and a noun, got {n!r} and {noun!r}")
    return f"{int(n):,} {noun}" + ("" if n == 1 else "s")


def ms(v: float | None) -> str:
    """A latency given in milliseconds, in a readable unit: ``38 us``, ``0.92 ms``, ``12.4 ms``, ``2.45 s``."""
    if _missing(v):
        return "n/a"
    if v < 0.1:
        return f"{v * 1000:.0f} us"
    if v < 10:
        return f"{v:.2f} ms"
    if v < 1000:
        return f"{v:.1f} ms"
    return f"{v / 1000:.2f} s"


def mib(nbytes: float | None) -> str:
    """Bytes in MiB, as ``-Xmx64m`` counts them: ``80.0 MiB``, ``0.25 MiB``, ``1,250 MiB``."""
    return "n/a" if _missing(nbytes) else number(nbytes / (1 << 20), "MiB")


def rate(v: float | None) -> str:
    """``50,000 req/s``."""
    return "n/a" if _missing(v) else f"{v:,.0f} req/s"


def pct(share: float | None) -> str:
    """A share in [0, 1] as a percentage: ``0.342`` -> ``34%``, ``0.004`` -> ``0.4%``."""
    if _missing(share):
        return "n/a"
    p = 100.0 * share
    return f"{p:.1f}%" if p != 0 and abs(p) < 1 else f"{p:.0f}%"


def ratio(r: float | None) -> str:
    """``0.72x``, ``2.10x``, ``13x``."""
    if _missing(r):
        return "n/a"
    if not math.isfinite(r):
        return "inf"
    return f"{r:.2f}x" if r < 10 else f"{r:.0f}x"


def p_value(p: float) -> str:
    """``p < 0.001`` or ``p = 0.034``."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def p_sci(p: float | None) -> str:
    """A p-value or test level that may be tiny: ``0.034``, ``0.0012``, ``1.2e-07``."""
    if _missing(p):
        return "n/a"
    return f"{p:.2g}" if p >= 0.001 else f"{p:.3g}".replace("e-0", "e-")


def level(p: float) -> str:
    """A percentile level: 50 -> ``p50``, 99.9 -> ``p99.9``, 100 -> ``max``."""
    return "max" if p >= 100 else f"p{p:g}"


def interval(iv, unit: str = "") -> str:
    """``(lo, hi)`` with ``None`` (or NaN, or inf above) for an open end: ``[48,000, 52,000] req/s``;
    ``[48,000, open) req/s`` when nothing failed above; ``< 1,250 req/s`` when nothing passed below;
    ``""`` for no interval."""
    if not iv:
        return ""
    lo, hi = iv
    lo = None if _missing(lo) else lo
    hi = None if _missing(hi) or (hi is not None and math.isinf(hi)) else hi
    if lo is None and hi is None:
        return ""
    if lo is None:
        return f"< {number(hi)} {unit}".strip()
    if hi is None:
        return f"[{number(lo)}, open) {unit}".strip()
    return f"[{number(lo)}, {number(hi)}] {unit}".strip()


def estimate(value: float | None, iv, unit: str = "") -> str:
    """A point with its interval: ``50,000 req/s (interval [48,000, 52,000])``; ``none passed (below 1,250
    req/s)`` without a point."""
    if value is None:
        below = iv[1] if iv and not _missing(iv[1]) else None
        return f"none passed (below {number(below, unit)})" if below is not None else "none passed"
    text = number(value, unit)
    span = interval(iv)
    return text + (f" (interval {span})" if span else "")
