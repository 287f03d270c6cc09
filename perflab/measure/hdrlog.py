"""Reader of HdrHistogram interval logs (format v1.2/v1.3) as perflab-load writes them.

Each interval line holds a compressed histogram (decoded with ``hdrh``); perflab-load writes
microseconds, corrected intervals untagged and ``-U`` intervals tagged ``Tag=uncorrected``, and a
``#[Step <n>: rate=<r> start=<s> end=<s>]`` comment where a rate step begins
(docs/contracts/generator.md section 5). This gives latency over time: when the tail grows, and whether a
queue builds up during a probe.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

RE_START = re.compile(r"^#\[StartTime:\s*([\d.]+)")
RE_BASE = re.compile(r"^#\[BaseTime:\s*([\d.]+)")
RE_STEP = re.compile(r"^#\[Step\s+(\d+):\s*rate=([\d.]+)\s+start=([\d.]+)\s+end=([\d.]+)\]")
RE_LINE = re.compile(r"^(?:Tag=([^,]*),)?([\d.]+),([\d.]+),([\d.]+),(\S+)$")

#: percentiles reported per interval (column suffixes in ``HdrLog.intervals``)
INTERVAL_PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


def spectrum_from_histogram(hist: HdrHistogram, unit_ms: float = 1e-3, ticks_per_half: int = 5) -> pd.DataFrame:
    """A wrk2-style percentile spectrum: ``latency_ms, percentile (0..1), total_count, inverse``.

    Levels are spaced evenly on the ``1/(1-p)`` log axis (``ticks_per_half`` per halving of the
    remaining tail), up to the histogram's resolution, then 100%.
    """
    total = hist.get_total_count()
    cols = ["latency_ms", "percentile", "total_count", "inverse"]
    if total == 0:
        return pd.DataFrame(columns=cols)
    rows = []
    k = 0
    while True:
        inv = 2 ** (k / ticks_per_half)
        p = 1 - 1 / inv
        if inv > total * 2:
            break
        v = hist.get_value_at_percentile(p * 100)
        rows.append((v * unit_ms, p, min(total, int(math.ceil(p * total)) or 1), inv))
        k += 1
    rows.append((hist.get_max_value() * unit_ms, 1.0, total, math.inf))
    return pd.DataFrame(rows, columns=cols)


def mean_value(hist: HdrHistogram) -> float:
    """The histogram's mean, from its non-empty buckets only (hdrh's ``get_mean_value`` walks every
    bucket up to the maximum: ~70 ms per 100 ms interval, seconds per probe)."""
    total = hist.get_total_count()
    if not total:
        return math.nan
    counts = np.ctypeslib.as_array(hist.counts)[: hist.counts_len]
    idx = np.flatnonzero(counts)
    mids = np.fromiter((hist._hdr_median_equiv_value(hist.get_value_from_index(int(i))) for i in idx), float, len(idx))
    return float((counts[idx] * mids).sum() / total)


@dataclass
class HdrLog:
    """A parsed interval log.

    ``intervals``: one row per interval with ``tag`` (``corrected``/``uncorrected``), ``start_s``,
    ``end_s`` (relative to ``start_time``, the start of the measured window), ``count``, ``rate``
    (count per second), ``min_ms, mean_ms, p50_ms, p90_ms, p99_ms, p999_ms, max_ms`` and ``step``
    (rate step index, 0 without a schedule). ``steps``: DataFrame ``step, rate, start_s, end_s``.
    """

    path: Path | None
    start_time: float | None
    base_time: float | None
    intervals: pd.DataFrame
    steps: pd.DataFrame
    _hists: dict = field(default_factory=dict, repr=False)

    def histogram(
        self, tag: str = "corrected", start_s: float | None = None, end_s: float | None = None
    ) -> HdrHistogram | None:
        """All intervals of ``tag`` overlapping ``[start_s, end_s)`` added into one histogram."""
        if tag not in ("corrected", "uncorrected"):
            raise ValueError(f"tag must be 'corrected' or 'uncorrected', got {tag!r}")
        out = None
        for (t, s, e), h in self._hists.items():
            if t != tag or (start_s is not None and e <= start_s) or (end_s is not None and s >= end_s):
                continue
            if out is None:
                out = HdrHistogram(1, max(h.get_max_value() * 2, 3_600_000_000), 3)
            out.add(h)
        return out

    def spectrum(
        self, tag: str = "corrected", start_s: float | None = None, end_s: float | None = None
    ) -> pd.DataFrame:
        h = self.histogram(tag, start_s, end_s)
        return spectrum_from_histogram(h) if h is not None else spectrum_from_histogram(HdrHistogram(1, 10, 3))

    def absolute_time(self, column: str = "start_s") -> pd.Series:
        """Interval times as UTC timestamps (to align with server stats samples)."""
        if self.start_time is None:
            raise ValueError("this log has no StartTime header")
        return pd.to_datetime((self.start_time + self.intervals[column]) * 1000, unit="ms", utc=True)


def read_hdr_log(path: str | Path) -> HdrLog:
    """Read an HdrHistogram interval log. Raises ``ValueError`` on an unreadable line."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path: no hdr log at {p}")
    return parse_hdr_log(p.read_text(), p)


def parse_hdr_log(text: str, path: Path | None = None) -> HdrLog:
    start = base = None
    steps = []
    rows = []
    hists = {}
    current_step = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if m := RE_START.match(line):
                start = float(m.group(1))
            elif m := RE_BASE.match(line):
                base = float(m.group(1))
            elif m := RE_STEP.match(line):
                current_step = int(m.group(1))
                steps.append((current_step, float(m.group(2)), float(m.group(3)), float(m.group(4))))
            continue
        if line.startswith('"StartTimestamp"'):
            continue
        m = RE_LINE.match(line)
        if not m:
            raise ValueError(f"{path or 'hdr log'}:{n}: not an interval line: {line[:80]!r}")
        tag = m.group(1) or "corrected"
        s, length = float(m.group(2)), float(m.group(3))
        try:
            h = HdrHistogram.decode(m.group(5))
        except Exception as e:  # hdrh raises several types for a bad blob
            raise ValueError(f"{path or 'hdr log'}:{n}: cannot decode histogram: {e}") from None
        e = s + length
        hists[(tag, s, e)] = h
        cnt = h.get_total_count()
        row = {
            "tag": tag,
            "start_s": s,
            "end_s": e,
            "count": cnt,
            "rate": cnt / length if length > 0 else math.nan,
            "min_ms": h.get_min_value() / 1e3 if cnt else math.nan,
            "mean_ms": mean_value(h) / 1e3 if cnt else math.nan,
        }
        for name, q in INTERVAL_PERCENTILES.items():
            row[name + "_ms"] = h.get_value_at_percentile(q) / 1e3 if cnt else math.nan
        row["max_ms"] = h.get_max_value() / 1e3 if cnt else math.nan
        row["step"] = current_step
        rows.append(row)
    cols = (
        ["tag", "start_s", "end_s", "count", "rate", "min_ms", "mean_ms"]
        + [k + "_ms" for k in INTERVAL_PERCENTILES]
        + ["max_ms", "step"]
    )
    df = pd.DataFrame(rows, columns=cols)
    if steps:
        # Intervals are attributed to the step whose [start, end) holds their midpoint: the
        # step comment may precede the first interval line of a step or not.
        mids = (df["start_s"] + df["end_s"]) / 2
        st = np.zeros(len(df), dtype=int)
        for idx, _, s0, s1 in steps:
            st[(mids >= s0) & (mids < s1)] = idx
        df["step"] = st
    return HdrLog(path, start, base, df, pd.DataFrame(steps, columns=["step", "rate", "start_s", "end_s"]), hists)
