"""One load split over several generator hosts, merged exactly into one load's files.

perflab-load's hosts of one split run (``--segment I/N`` with one ``--start-at``,
docs/contracts/generator.md section 5) each write a JSON summary and an hdr log of their own share. :func:`merge` turns them into the
summary and the interval log one generator would have written for the whole run:

* **Latency is merged by adding counts**, never by averaging percentiles: every host's interval
  histograms hold exact bucket counts (the wrk2 layout: 1 us .. 24 h, 3 significant digits), so the sum of
  the counts *is* the histogram of every latency of the run, and its p50 ... p99.99 and max are exactly
  those of one histogram holding every value. The statistics are computed the way perflab-load computes
  them (``loadgen/src/histogram.rs``: rank rounding, highest-equivalent percentiles, wrk2's max and mean),
  so a one-host "merge" reproduces that host's own summary to the digit (a test checks it).
* **Intervals lie on one grid**: each host's interval boundaries are measured from its window start, so
  intervals with equal ``StartTimestamp`` (and tag) are added; nothing is shifted by a host's StartTime.
* **Times** (``start_ms``, ``end_ms``, the log's StartTime) are put on one reference clock (the server
  host's: where stats, events, CPU and profiles are taken) with each host's measured clock offset.
* Counts (requests, bytes, errors, status codes, offered, unsent, unanswered, per-interval offered/completed/errors/unanswered/unsent,
  status codes and error kinds) add up. Parts sent to different URLs (the entry nodes of a cluster) give
  the merged ``url`` as every URL, comma-separated. The schedule lag has no histogram in the summary, so the merged one is the worst host's (and
  each host is judged on its own lag: :mod:`perflab.measure.validity`).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass

import numpy as np
from hdrh.histogram import HdrHistogram

from .hdrlog import RE_LINE, RE_STEP, parse_hdr_log

#: perflab-load's histogram layout (loadgen/src/histogram.rs): 1 us .. one day, 3 significant digits
HIGHEST_US = 24 * 60 * 60 * 1_000_000
SIGNIFICANT = 3
_HALF_MAGNITUDE = 10  # sub-bucket half count 1024, sub-bucket count 2048
_BUCKETS = 27
COUNTS_LEN = (_BUCKETS + 1) << _HALF_MAGNITUDE

_idx = np.arange(COUNTS_LEN)
_bucket = (_idx >> _HALF_MAGNITUDE) - 1
_sub = (_idx & ((1 << _HALF_MAGNITUDE) - 1)) + (1 << _HALF_MAGNITUDE)
_sub = np.where(_bucket < 0, _sub - (1 << _HALF_MAGNITUDE), _sub)
_bucket = np.maximum(_bucket, 0)
#: lowest equivalent value and width of every bucket index, as ``lowest_of_index`` in histogram.rs
LOWEST = (_sub.astype(np.int64) << _bucket).astype(np.int64)
WIDTH = (np.int64(1) << _bucket).astype(np.int64)
HIGHEST = LOWEST + WIDTH - 1
MIDPOINT = LOWEST + ((HIGHEST - LOWEST + 1) >> 1)

_TAG_RE = re.compile(r"^Tag=([^,]*),")


def counts_of(h: HdrHistogram) -> np.ndarray:
    """A decoded hdr-log histogram's bucket counts in perflab-load's layout (length :data:`COUNTS_LEN`)."""
    if h.unit_magnitude != 0 or h.sub_bucket_half_count_magnitude != _HALF_MAGNITUDE:
        raise ValueError(
            f"histogram layout differs from perflab-load's (unit magnitude {h.unit_magnitude}, "
            f"sub-bucket half count magnitude {h.sub_bucket_half_count_magnitude})"
        )
    raw = np.ctypeslib.as_array(h.counts)[: h.counts_len].astype(np.int64)
    out = np.zeros(COUNTS_LEN, dtype=np.int64)
    n = min(len(raw), COUNTS_LEN)
    out[:n] = raw[:n]
    if raw[n:].any():
        raise ValueError("histogram holds values beyond one day")
    return out


def histogram_of(counts: np.ndarray) -> HdrHistogram:
    """The counts as an hdrh histogram (to encode into an interval log)."""
    h = HdrHistogram(1, HIGHEST_US, SIGNIFICANT)
    for i in np.flatnonzero(counts):
        h.record_value(int(LOWEST[i]), int(counts[i]))
    return h


@dataclass(frozen=True)
class Stats:
    """The statistics perflab-load derives from a histogram, computed the same way (histogram.rs)."""

    counts: np.ndarray

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def _nonzero(self) -> np.ndarray:
        return np.flatnonzero(self.counts)

    def min(self) -> int:
        nz = self._nonzero()
        return int(LOWEST[nz[0]]) if len(nz) else 0

    def max(self) -> int:
        """wrk2's Max: the *lowest* equivalent value of the highest non-empty bucket."""
        nz = self._nonzero()
        return int(LOWEST[nz[-1]]) if len(nz) else 0

    def value_at_percentile(self, p: float) -> int:
        """Highest equivalent value of the bucket holding rank ``round(p/100 * total)`` (at least 1)."""
        total = self.total
        if not total:
            return 0
        rank = max(int((min(p, 100.0) / 100.0) * total + 0.5), 1)
        i = int(np.searchsorted(np.cumsum(self.counts), rank))
        return int(HIGHEST[i])

    def mean(self) -> float:
        total = self.total
        if not total:
            return 0.0
        nz = self._nonzero()
        return float(sum(int(self.counts[i]) * int(MIDPOINT[i]) for i in nz)) / total

    def stdev(self) -> float:
        total = self.total
        if not total:
            return 0.0
        mean = self.mean()
        nz = self._nonzero()
        dev = sum((float(MIDPOINT[i]) - mean) ** 2 * float(self.counts[i]) for i in nz)
        return math.sqrt(dev / total)

    def latency_object(self) -> dict:
        """The summary's ``latency_us`` object (json_summary.rs ``latency_object``)."""
        out = {"min": self.min(), "max": self.max(), "mean": _round3(self.mean()), "stdev": _round3(self.stdev())}
        for k, p in (
            ("p50", 50.0),
            ("p75", 75.0),
            ("p90", 90.0),
            ("p99", 99.0),
            ("p99.9", 99.9),
            ("p99.99", 99.99),
            ("p99.999", 99.999),
            ("p100", 100.0),
        ):
            out[k] = self.value_at_percentile(p)
        return out

    def spectrum(self, ticks_per_half_distance: int = 5) -> list[list]:
        """The summary's ``spectrum``: HdrHistogram's percentile iteration (histogram.rs
        ``percentile_spectrum``), ``[value_us, percentile (0..1), total_count]`` rows."""
        total = self.total
        if not total:
            return [[0, 1.0, 0]]
        last = int(np.flatnonzero(self.counts)[-1]) + 1
        counts = self.counts[:last]
        cum = np.cumsum(counts)
        end = int(np.searchsorted(cum, total)) + 1  # buckets() stops once the total is reached
        rows, pos, iterate_to = [], None, 0.0
        while True:
            at = int(cum[pos]) if pos is not None else 0
            if at >= total:
                rows.append((int(HIGHEST[pos]) if pos is not None else 0, 100.0, at))
                break
            i = pos if pos is not None else 0
            while True:
                current = 100.0 * float(cum[i]) / total
                if counts[i] != 0 and iterate_to <= current:
                    rows.append((int(HIGHEST[i]), iterate_to, int(cum[i])))
                    halvings = int(math.log(100.0 / (100.0 - iterate_to)) / math.log(2.0)) + 1
                    iterate_to += 100.0 / (ticks_per_half_distance * int(2.0**halvings))
                    break
                if cum[i] >= total or i + 1 >= end:
                    break
                i += 1
            pos = i
        return [[v, _round_to(p / 100.0, 1e12), c] for v, p, c in rows]


def _round_to(x: float, scale: float) -> float:
    """``x`` rounded to ``1/scale`` as perflab-load rounds (Rust's ``f64::round``: halves away from zero;
    Python's ``round`` takes halves to even, and an exact half is common: a mean is a sum of integers over
    a count)."""
    return math.copysign(math.floor(abs(x) * scale + 0.5), x) / scale


def _round3(x: float) -> float:
    return _round_to(x, 1000.0)


# --- interval logs ----------------------------------------------------------------------------------


@dataclass
class _Log:
    """One host's interval log: ``(tag, start text) -> (length, counts)`` in file order, and its steps."""

    intervals: dict
    steps: dict  # step index -> (rate, start_s, end_s)


def _read_log(text: str) -> _Log:
    intervals, steps = {}, {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith('"StartTimestamp"'):
            continue
        if line.startswith("#"):
            if m := RE_STEP.match(line):
                steps[int(m.group(1))] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
            continue
        m = RE_LINE.match(line)
        if not m:
            raise ValueError(f"not an interval line: {line[:80]!r}")
        key = (m.group(1) or "", m.group(2))
        counts = counts_of(HdrHistogram.decode(m.group(5)))
        length = float(m.group(3))
        if key in intervals:  # never written twice by one host; add rather than lose counts
            old_len, old = intervals[key]
            intervals[key] = (max(old_len, length), old + counts)
        else:
            intervals[key] = (length, counts)
    return _Log(intervals, steps)


def merge_logs(texts: list[str], start_time: float, header: str) -> tuple[str, dict]:
    """The hosts' interval logs as one: intervals of equal ``StartTimestamp`` and tag added, each the
    longest of its hosts' lengths (the last one holds each host's drain), steps with their rates added.
    Returns the log's text (``start_time``: its StartTime, on the reference clock) and the merged counts
    per ``(tag, start text)``."""
    logs = [_read_log(t) for t in texts]
    merged: dict = {}
    for log in logs:
        for key, (length, counts) in log.intervals.items():
            if key in merged:
                old_len, old = merged[key]
                merged[key] = (max(old_len, length), old + counts)
            else:
                merged[key] = (length, counts.copy())
    steps: dict = {}
    for log in logs:
        for idx, (rate, s, e) in log.steps.items():
            r0, s0, e0 = steps.get(idx, (0.0, s, e))
            steps[idx] = (r0 + rate, min(s0, s), max(e0, e))
    when = dt.datetime.fromtimestamp(start_time, dt.UTC).strftime("%a %b %d %H:%M:%S UTC %Y")
    lines = [
        "#[Histogram log format version 1.3]",
        f"#[Written by {header}; values in microseconds]",
        f"#[StartTime: {start_time:.3f} (seconds since epoch), {when}]",
        f"#[BaseTime: {start_time:.3f} (seconds since epoch)]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    pending = sorted(steps.items(), key=lambda kv: kv[1][1])
    for (tag, start), (length, counts) in sorted(merged.items(), key=lambda kv: (float(kv[0][1]), kv[0][0] != "")):
        while pending and pending[0][1][1] <= float(start) + 1e-9:
            idx, (rate, s, e) = pending.pop(0)
            lines.append(f"#[Step {idx}: rate={_num(rate)} start={s:.3f} end={e:.3f}]")
        st = Stats(counts)
        blob = (
            histogram_of(counts).encode().decode()
            if st.total
            else HdrHistogram(1, HIGHEST_US, SIGNIFICANT).encode().decode()
        )
        prefix = f"Tag={tag}," if tag else ""
        lines.append(f"{prefix}{start},{length:.3f},{st.max() / 1000:.3f},{blob}")
    for idx, (rate, s, e) in pending:
        lines.append(f"#[Step {idx}: rate={_num(rate)} start={s:.3f} end={e:.3f}]")
    return "\n".join(lines) + "\n", merged


def _num(x: float) -> str:
    return f"{x:.3f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


# --- summaries --------------------------------------------------------------------------------------


@dataclass
class Part:
    """One host's share of a split run: its ``name``, JSON ``summary`` and hdr log ``log`` text, and
    ``shift_s``: what to add to its clock's times to put them on the reference clock."""

    name: str
    summary: dict
    log: str
    shift_s: float = 0.0


def merge(parts: list[Part], reference: str = "the server host's clock") -> tuple[dict, str]:
    """The summary and interval log one generator would have written for the whole run (module
    docstring). One part with ``shift_s == 0`` comes back unchanged."""
    if not parts:
        raise ValueError("parts: nothing to merge")
    if len(parts) == 1 and parts[0].shift_s == 0:
        return parts[0].summary, parts[0].log
    tools = {(p.summary.get("tool"), p.summary.get("version")) for p in parts}
    if len(tools) > 1:
        raise ValueError(f"parts come from different generators: {sorted(map(str, tools))}")
    s0 = parts[0].summary
    seg = s0.get("segment") or {}

    def shifted_ms(p: Part, key: str) -> int | None:
        v = p.summary.get(key)
        return int(round(v + p.shift_s * 1000)) if v else None

    start_ms = min(v for p in parts if (v := shifted_ms(p, "start_ms")) is not None)
    end_ms = max(v for p in parts if (v := shifted_ms(p, "end_ms")) is not None)
    warm = [v for p in parts if (v := shifted_ms(p, "warmup_start_ms")) is not None]
    names = ", ".join(
        f"{p.name} segment {(p.summary.get('segment') or {}).get('index', 0)}/"
        f"{(p.summary.get('segment') or {}).get('count', 1)}"
        for p in parts
    )
    log_text, intervals = merge_logs(
        [p.log for p in parts], start_ms / 1000.0, f"perflab (merged from {len(parts)} perflab-load logs: {names})"
    )
    corrected = [c for (tag, _), (_, c) in intervals.items() if tag == ""]
    uncorrected = [c for (tag, _), (_, c) in intervals.items() if tag == "uncorrected"]
    whole = Stats(np.sum(corrected, axis=0) if corrected else np.zeros(COUNTS_LEN, dtype=np.int64))
    requests = sum(int(p.summary.get("requests") or 0) for p in parts)
    duration = max(float(p.summary.get("duration_s") or 0.0) for p in parts)
    if whole.total != requests:
        raise ValueError(
            f"the hosts' interval logs hold {whole.total} latencies but their summaries count {requests} requests"
        )

    out = dict(s0)
    out.update(
        {
            # parts sent to several entry nodes of a cluster: every node's URL, in the parts' order, once each
            "url": ",".join(dict.fromkeys(str(p.summary["url"]) for p in parts if p.summary.get("url")))
            or s0.get("url"),
            "threads": seg.get("threads", s0.get("threads")),
            "connections": seg.get("connections", s0.get("connections")),
            "duration_s": duration,
            "target_rate": seg.get("target_rate", sum(float(p.summary.get("target_rate") or 0) for p in parts)),
            "achieved_rate": (
                s0.get("achieved_rate") if len(parts) == 1 else _round3(requests / duration) if duration > 0 else 0.0
            ),
            "start_ms": start_ms,
            "end_ms": end_ms,
            "warmup_start_ms": min(warm) if warm else s0.get("warmup_start_ms"),
            "requests": requests,
            "bytes_read": _sum(parts, "bytes_read"),
            "bytes_written": _sum(parts, "bytes_written"),
            "errors": _sum_dicts(p.summary.get("errors") for p in parts),
            "status_codes": _sum_dicts(p.summary.get("status_codes") for p in parts),
            "latency_us": whole.latency_object(),
            "latency_uncorrected_us": (
                Stats(np.sum(uncorrected, axis=0)).latency_object()
                if uncorrected and s0.get("latency_uncorrected_us") is not None
                else None
            ),
            "steps": _steps(parts, intervals, log_text),
            "interrupted": any(bool(p.summary.get("interrupted")) for p in parts),
            "offered": _sum(parts, "offered"),
            "unsent": _sum(parts, "unsent"),
            "unanswered": _sum(parts, "unanswered"),
            "schedule_lag_us": _worst_lag(parts),
            "cpu": {
                "user_s": sum(float((p.summary.get("cpu") or {}).get("user_s") or 0) for p in parts),
                "sys_s": sum(float((p.summary.get("cpu") or {}).get("sys_s") or 0) for p in parts),
                "cpus_allowed": None,
                "threads": [
                    {**th, "host": p.name} for p in parts for th in (p.summary.get("cpu") or {}).get("threads") or []
                ],
            },
            "spectrum": whole.spectrum(),
            "spectrum_uncorrected": (
                Stats(np.sum(uncorrected, axis=0)).spectrum()
                if uncorrected and s0.get("spectrum_uncorrected") is not None
                else None
            ),
            "intervals": _json_intervals(parts),
            "stopped_early": None,
        }
    )
    out.pop("segment", None)
    out.pop("start_at", None)
    out["merged"] = {
        "hosts": [p.name for p in parts],
        "clock": reference,
        "shift_s": {p.name: p.shift_s for p in parts},
        "schedule_lag": "the worst host's (no histogram of the lag is in the summaries)",
    }
    return out, log_text


def _sum(parts, key) -> int:
    return sum(int(p.summary.get(key) or 0) for p in parts)


def _sum_dicts(dicts) -> dict:
    out: dict = {}
    for d in dicts:
        for k, v in (d or {}).items():
            out[k] = out.get(k, 0) + int(v)
    return out


def _worst_lag(parts) -> dict | None:
    lags = [(p.summary.get("schedule_lag_us"), int(p.summary.get("requests") or 0)) for p in parts]
    lags = [(lag, n) for lag, n in lags if lag]
    if not lags:
        return None
    n = sum(k for _, k in lags)
    out = {"mean": _round3(sum(float(lag.get("mean") or 0) * k for lag, k in lags) / n) if n else 0.0}
    for key in ("p50", "p99", "p999", "max"):
        out[key] = max(int(lag.get(key) or 0) for lag, _ in lags)
    out["late_1ms"] = sum(int(lag.get("late_1ms") or 0) for lag, _ in lags)
    return out


def _json_intervals(parts) -> list[dict]:
    by_start: dict = {}
    for p in parts:
        for iv in p.summary.get("intervals") or []:
            k = round(float(iv["start_s"]), 6)
            cur = by_start.setdefault(
                k,
                {
                    "start_s": iv["start_s"],
                    "end_s": iv["end_s"],
                    "offered": 0,
                    "completed": 0,
                    "errors": 0,
                    "error_kinds": {},
                    "status_codes": {},
                    "unanswered": 0,
                    "unsent": 0,
                },
            )
            cur["end_s"] = max(cur["end_s"], iv["end_s"])
            for key in ("offered", "completed", "errors", "unanswered", "unsent"):
                cur[key] += int(iv.get(key) or 0)
            for key in ("error_kinds", "status_codes"):
                cur[key] = _sum_dicts([cur[key], iv.get(key)])
    return [by_start[k] for k in sorted(by_start)]


def _steps(parts, intervals: dict, log_text: str) -> list[dict]:

    n = max(len(p.summary.get("steps") or []) for p in parts)
    if n == 0:
        return []
    table = parse_hdr_log(log_text).intervals
    corrected = table[table["tag"] == "corrected"]
    out = []
    for k in range(n):
        mine = [st for p in parts for st in (p.summary.get("steps") or [])[k : k + 1]]
        start, end = min(st["start_s"] for st in mine), max(st["end_s"] for st in mine)
        req = sum(int(st.get("requests") or 0) for st in mine)
        starts = corrected.loc[corrected["step"] == k, "start_s"] if n > 1 else corrected["start_s"]
        keys = {f"{s:.3f}" for s in starts}
        counts = [c for (tag, s), (_, c) in intervals.items() if tag == "" and s in keys]
        st = Stats(np.sum(counts, axis=0) if counts else np.zeros(COUNTS_LEN, dtype=np.int64))
        # one host: its own rate (from its unrounded times); several: from the summaries' times (ms precision)
        achieved = (
            mine[0].get("achieved_rate") if len(mine) == 1 else (_round3(req / (end - start)) if end > start else 0.0)
        )
        out.append(
            {
                "index": k,
                "target_rate": _round3(sum(float(x.get("target_rate") or 0) for x in mine)),
                "start_s": start,
                "end_s": end,
                "requests": req,
                "achieved_rate": achieved,
                "errors": sum(int(x.get("errors") or 0) for x in mine),
                "latency_us": {
                    "p50": st.value_at_percentile(50.0),
                    "p99": st.value_at_percentile(99.0),
                    "max": st.max(),
                },
            }
        )
    return out
