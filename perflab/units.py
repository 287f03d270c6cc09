"""Sizes, durations and rates as the tools write them: parsed from what a user may type (``parse_*``) and
written as the tools' command lines take them (``arg_*``).

The server takes ``4m``/``512k`` sizes and ``5ms``/``2s`` durations; wrk2 and perflab-load take
``10s``/``1m``/``2h`` durations and ``10k``/``1M`` rates. Python-side values are plain numbers
(bytes, seconds, requests per second) so arithmetic in notebooks stays simple. Text for people is
:mod:`perflab.fmt`.
"""

from __future__ import annotations

import math
import re

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*$", re.I)
_DUR = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|)\s*$", re.I)
_SIZE_MUL = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_DUR_MUL = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "": 1.0, "m": 60.0, "h": 3600.0}


def parse_size(value, name: str = "size") -> int:
    """``4m`` -> 4194304; ints pass through. Raises ``ValueError`` naming ``name``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a size like 4m or a number of bytes, got {value!r}")
    if isinstance(value, (int, float)):
        if value < 0 or not math.isfinite(value):
            raise ValueError(f"{name} must be >= 0, got {value!r}")
        return int(value)
    m = _SIZE.match(str(value))
    if not m:
        raise ValueError(f"{name} must be a size like 4m, 512k, 1g or bytes, got {value!r}")
    return int(float(m.group(1)) * _SIZE_MUL[m.group(2).lower()])


def parse_duration(value, name: str = "duration") -> float:
    """``5ms`` -> 0.005, ``1m`` -> 60.0, numbers are seconds. Raises ``ValueError`` naming ``name``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a duration like 10s or seconds, got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be >= 0 seconds, got {value!r}")
        return float(value)
    m = _DUR.match(str(value))
    if not m:
        raise ValueError(f"{name} must be a duration like 500ms, 10s, 1m, got {value!r}")
    return float(m.group(1)) * _DUR_MUL[m.group(2).lower()]


def parse_rate(value, name: str = "rate") -> float:
    """``10k`` -> 10000.0, ``1M`` -> 1e6; numbers pass through."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number of requests/s, got {value!r}")
    if isinstance(value, str):
        m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$", value)
        if not m:
            raise ValueError(f"{name} must be a number like 5000 or 10k, got {value!r}")
        value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number of requests/s, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def arg_duration(seconds: float) -> str:
    """Seconds as the tools accept them: whole ms when below 1 s or fractional, else whole s."""
    if seconds >= 1 and abs(seconds - round(seconds)) < 1e-9:
        return f"{int(round(seconds))}s"
    ms = seconds * 1000
    if abs(ms - round(ms)) < 1e-6:
        return f"{int(round(ms))}ms"
    return f"{int(round(seconds * 1e6))}us"


def arg_size(nbytes: int) -> str:
    """Bytes as the server accepts them, exact (``4m`` only when divisible)."""
    for suffix, mul in (("g", 1024**3), ("m", 1024**2), ("k", 1024)):
        if nbytes >= mul and nbytes % mul == 0:
            return f"{nbytes // mul}{suffix}"
    return str(nbytes)


def arg_rate(rate: float) -> str:
    """A rate for ``-R`` (integer when whole)."""
    return str(int(rate)) if float(rate).is_integer() else f"{rate:.3f}".rstrip("0").rstrip(".")
