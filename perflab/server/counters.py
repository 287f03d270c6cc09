"""The server's counters: sampling its ``GET /v0/stats`` during a run into a DataFrame.

Counters in ``/v0/stats`` are cumulative since the server started; the frame keeps them and adds a
``<name>_delta`` column per counter (change since the previous sample), which is what a latency
timeline needs: "a flush finished in this second", "GC took 40 ms in this second". Times are the
server's ``timestamp_ms`` as UTC and ``t_s`` seconds relative to a reference epoch (the hdr log's
StartTime), so stats and latency share one time axis.
"""

from __future__ import annotations

import json
import math
import time

import pandas as pd

from ..sampling import Periodic
from .http import http_get
from .metrics import is_counter as spec_counter


def fetch_stats(url: str, timeout: float = 2.0) -> dict:
    """One ``/v0/stats`` sample from the server at ``url`` (``http://host:port``)."""
    if not isinstance(url, str) or not url.startswith("http"):
        raise ValueError(f"url must be an http URL, got {url!r}")
    status, body = http_get(url.rstrip("/") + "/v0/stats", timeout=timeout)
    if status != 200:
        raise RuntimeError(f"GET /v0/stats answered {status}: {body[:200]!r}")
    return json.loads(body)


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def is_counter(column: str) -> bool:
    """Whether a flattened ``/v0/stats`` column is a cumulative counter (the server's metric list says)."""
    return spec_counter(column)


def stats_frame(samples: list[dict], t0: float | None = None) -> pd.DataFrame:
    """Samples (raw ``/v0/stats`` dicts) as a DataFrame, one row per sample.

    Columns: ``time`` (UTC), ``t_s`` (seconds since ``t0`` epoch seconds, or since the first sample),
    every stat flattened with dots (``storage.flushes``, ``requests.GET.200``), ``<counter>_delta``,
    and ``requests_total``/``requests_total_delta``.
    """
    if not isinstance(samples, list):
        raise ValueError(f"samples must be a list of dicts, got {type(samples).__name__}")
    rows = [_flatten(s) for s in samples]
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=["time", "t_s"])
    if "timestamp_ms" in df:
        df["time"] = pd.to_datetime(df["timestamp_ms"], unit="ms", utc=True)
        epoch = df["timestamp_ms"] / 1000.0
    else:
        df["time"] = pd.NaT
        epoch = pd.Series([math.nan] * len(df))
    base = t0 if t0 is not None else (epoch.iloc[0] if len(epoch) else 0.0)
    df["t_s"] = epoch - base
    req_cols = [c for c in df.columns if c.startswith("requests.")]
    for c in req_cols:
        df[c] = df[c].fillna(0)
    df["requests_total"] = df[req_cols].sum(axis=1) if req_cols else 0
    for c in [c for c in df.columns if is_counter(c) or c == "requests_total"]:
        df[c + "_delta"] = pd.to_numeric(df[c], errors="coerce").diff()
    front = ["time", "t_s"]
    return df[front + [c for c in df.columns if c not in front]]


class StatsSampler(Periodic):
    """Samples ``/v0/stats`` every ``interval_s`` seconds in a background thread.

    ``with StatsSampler(srv.url) as s: ...`` then ``s.frame(t0=...)``. Samples that fail (server busy
    or gone) are counted in ``errors`` and skipped: sampling must never break a run.
    """

    final = False

    def __init__(self, url: str, interval_s: float = 1.0):
        if not isinstance(url, str) or not url.startswith("http"):
            raise ValueError(f"url must be an http URL, got {url!r}")
        super().__init__(interval_s, "perflab-stats")
        self.url = url
        self.samples: list[dict] = []

    def sample(self) -> None:
        # a busy server may answer late; a late sample still carries the server's own timestamp
        s = fetch_stats(self.url, timeout=max(2.0, self.interval_s))
        s.setdefault("timestamp_ms", int(time.time() * 1000))
        self.samples.append(s)

    def frame(self, t0: float | None = None) -> pd.DataFrame:
        return stats_frame(list(self.samples), t0)
