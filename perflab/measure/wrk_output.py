"""Parser of wrk2's console output. The lab reads console text only for a real wrk2: perflab-load
prints the same layout, but its results are read from its JSON summary (:func:`summary_from_wrk` turns
a wrk2 output into that shape).

Reads what people actually paste: real wrk2 runs (``../shared/fixtures/wrk2/``), outputs indented
inside Markdown, with blank lines between every line, ``Req/Sec nan`` from short runs, the ``-U``
uncorrected block, ``Socket errors``, ``Non-2xx or 3xx responses``, ``1.00m`` durations and
``KB``/``MB`` transfer units. Lines it does not know (e.g. a script's ``done()`` prints) are kept in
``extra_lines``.

Units: latencies in milliseconds (as wrk2's spectrum prints them), durations in seconds, bytes as
integers (wrk's ``KB``/``MB`` are binary: 1024-based), rates per second.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import pandas as pd

_TIME_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
_METRIC = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}
_BYTES = {"b": 1, "kb": 1024, "mb": 1024**2, "gb": 1024**3, "tb": 1024**4, "": 1}

_NUM = r"(?:nan|inf|-?\d+(?:\.\d+)?)"
RE_RUNNING = re.compile(r"^Running\s+(\S+)\s+test\s+@\s+(\S+)")
RE_THREADS = re.compile(r"^(\d+)\s+threads\s+and\s+(\d+)\s+connections")
RE_CALIB = re.compile(
    r"^Thread calibration: mean lat\.:\s*(" + _NUM + r")(us|ms|s|m|h)?,\s*rate sampling interval:\s*(\d+)ms"
)
RE_STATS_HEAD = re.compile(r"^Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev")
RE_STATS_ROW = re.compile(r"^(Latency|Req/Sec)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)%\s*$")
RE_DIST_HEAD = re.compile(r"^Latency Distribution \(HdrHistogram - (Recorded|Uncorrected) Latency")
RE_DIST_ROW = re.compile(r"^(\d+(?:\.\d+)?)%\s+(" + _NUM + r")(us|ms|s|m|h)\s*$")
RE_SPECTRUM_HEAD = re.compile(r"^Detailed Percentile spectrum:")
RE_SPECTRUM_COLS = re.compile(r"^Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)")
RE_SPECTRUM_ROW = re.compile(r"^(" + _NUM + r")\s+(" + _NUM + r")\s+(\d+)\s+(" + _NUM + r")\s*$")
RE_MEAN = re.compile(r"^#\[Mean\s*=\s*(" + _NUM + r"),\s*StdDeviation\s*=\s*(" + _NUM + r")\]")
RE_MAX = re.compile(r"^#\[Max\s*=\s*(" + _NUM + r"),\s*Total count\s*=\s*(\d+)\]")
RE_BUCKETS = re.compile(r"^#\[Buckets\s*=\s*(\d+),\s*SubBuckets\s*=\s*(\d+)\]")
RE_REQUESTS = re.compile(r"^(\d+)\s+requests in\s+(" + _NUM + r")(us|ms|s|m|h),\s*(" + _NUM + r")([KMGT]?B)\s+read")
RE_SOCKET = re.compile(r"^Socket errors:\s*connect\s+(\d+),\s*read\s+(\d+),\s*write\s+(\d+),\s*timeout\s+(\d+)")
RE_NON2XX = re.compile(r"^Non-2xx or 3xx responses:\s*(\d+)")
RE_RPS = re.compile(r"^Requests/sec:\s*(" + _NUM + r")")
RE_TPS = re.compile(r"^Transfer/sec:\s*(" + _NUM + r")\s*([KMGT]?B)")
RE_RULE = re.compile(r"^-{10,}$")


def parse_time_ms(text: str) -> float:
    """``606.04us`` -> 0.60604, ``1.00m`` -> 60000.0 (milliseconds)."""
    m = re.fullmatch(r"(" + _NUM + r")(us|ms|s|m|h)", text.strip())
    if not m:
        raise ValueError(f"not a wrk time value: {text!r}")
    return float(m.group(1)) * _TIME_UNITS[m.group(2)]


def parse_metric(text: str) -> float:
    """``5.27k`` -> 5270.0, ``490.60`` -> 490.6, ``nan`` -> nan."""
    m = re.fullmatch(r"(" + _NUM + r")([kMGT]?)", text.strip())
    if not m:
        raise ValueError(f"not a wrk metric value: {text!r}")
    return float(m.group(1)) * _METRIC[m.group(2).lower()]


def parse_bytes(number: str, unit: str) -> int:
    """``7.99``, ``MB`` -> bytes (wrk's units are 1024-based)."""
    return int(round(float(number) * _BYTES[unit.lower()]))


@dataclass
class WrkOutput:
    """One wrk2/perflab-load console output, parsed.

    ``distribution``/``distribution_uncorrected``: Series percentile (e.g. 99.9) -> latency ms from
    the "Latency Distribution" block. ``spectrum``/``spectrum_uncorrected``: DataFrames with columns
    ``latency_ms, percentile (0..1), total_count, inverse`` (``1/(1-p)``). Fields absent from the text
    are ``None`` (empty DataFrames/Series for the tables).
    """

    url: str | None = None
    duration_label: str | None = None
    threads: int | None = None
    connections: int | None = None
    calibration: list[dict] = field(default_factory=list)
    thread_stats: dict[str, dict[str, float]] = field(default_factory=dict)
    distribution: pd.Series = field(default_factory=lambda: pd.Series(dtype=float, name="latency_ms"))
    distribution_uncorrected: pd.Series = field(default_factory=lambda: pd.Series(dtype=float, name="latency_ms"))
    spectrum: pd.DataFrame = field(default_factory=lambda: _empty_spectrum())
    spectrum_uncorrected: pd.DataFrame = field(default_factory=lambda: _empty_spectrum())
    spectrum_summary: dict[str, float] = field(default_factory=dict)
    spectrum_uncorrected_summary: dict[str, float] = field(default_factory=dict)
    requests: int | None = None
    measured_s: float | None = None
    bytes_read: int | None = None
    socket_errors: dict[str, int] = field(default_factory=lambda: {"connect": 0, "read": 0, "write": 0, "timeout": 0})
    non_2xx: int = 0
    requests_per_sec: float | None = None
    transfer_per_sec: int | None = None
    extra_lines: list[str] = field(default_factory=list)

    @property
    def errors_total(self) -> int:
        """Socket errors of every kind plus non-2xx/3xx responses."""
        return sum(self.socket_errors.values()) + self.non_2xx

    @property
    def error_ratio(self) -> float:
        return self.errors_total / self.requests if self.requests else math.nan

    def percentile_ms(self, p: float, uncorrected: bool = False) -> float:
        """Latency at percentile ``p`` (0..100) in ms: the distribution block if it has ``p``,
        else read from the detailed spectrum (the smallest value whose percentile reaches ``p``)."""
        if not (0 <= p <= 100):
            raise ValueError(f"p must be in [0, 100], got {p!r}")
        dist = self.distribution_uncorrected if uncorrected else self.distribution
        for k, v in dist.items():
            if abs(k - p) < 1e-9:
                return float(v)
        spec = self.spectrum_uncorrected if uncorrected else self.spectrum
        if spec.empty:
            return math.nan
        hit = spec[spec["percentile"] >= p / 100 - 1e-12]
        return float(hit["latency_ms"].iloc[0]) if not hit.empty else float(spec["latency_ms"].iloc[-1])


def _empty_spectrum() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "latency_ms": pd.Series(dtype=float),
            "percentile": pd.Series(dtype=float),
            "total_count": pd.Series(dtype="int64"),
            "inverse": pd.Series(dtype=float),
        }
    )


def _spectrum_frame(rows) -> pd.DataFrame:
    if not rows:
        return _empty_spectrum()
    df = pd.DataFrame(rows, columns=["latency_ms", "percentile", "total_count", "inverse"])
    df["total_count"] = df["total_count"].astype("int64")
    return df


def _clean_lines(text: str) -> list[str]:
    # Pasted outputs come indented (Markdown) or with blank lines between lines; content is
    # identified by its first token, so stripping each line is safe.
    return [ln.strip() for ln in text.replace("\r", "").split("\n") if ln.strip()]


def parse_wrk_output(text: str) -> WrkOutput:
    """Parse one console output (the first one if ``text`` holds several: see :func:`parse_wrk_outputs`).

    Raises ``ValueError`` if ``text`` is not a string or nothing in it looks like wrk output.
    """
    outs = parse_wrk_outputs(text)
    if not outs:
        raise ValueError("text: no wrk/perflab-load output found (no 'Running', latency or 'requests in' lines)")
    return outs[0]


def parse_wrk_outputs(text: str) -> list[WrkOutput]:
    """Parse every console output in ``text`` (e.g. a lab report with several pasted runs).

    A new output starts at each ``Running ... test @`` line, or at a corrected "Latency Distribution"
    block that follows a finished output (pastes that dropped the header).
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    outputs: list[WrkOutput] = []
    cur: WrkOutput | None = None
    finished = False
    section = None  # 'dist', 'spectrum'
    corrected = True
    spec_rows: list = []
    meaningful = False

    def flush_spectrum():
        nonlocal spec_rows
        if cur is not None and spec_rows:
            if corrected:
                cur.spectrum = _spectrum_frame(spec_rows)
            else:
                cur.spectrum_uncorrected = _spectrum_frame(spec_rows)
        spec_rows = []

    def start_new():
        nonlocal cur, finished, section, corrected, meaningful
        flush_spectrum()
        if cur is not None and meaningful:
            outputs.append(cur)
        cur = WrkOutput()
        finished = False
        section = None
        corrected = True
        meaningful = False

    def dist_put(p, v):
        s = cur.distribution if corrected else cur.distribution_uncorrected
        s = (
            pd.concat([s, pd.Series([v], index=[p], name="latency_ms", dtype=float)])
            if len(s)
            else pd.Series([v], index=[p], name="latency_ms", dtype=float)
        )
        s.index.name = "percentile"
        if corrected:
            cur.distribution = s
        else:
            cur.distribution_uncorrected = s

    for line in _clean_lines(text):
        m = RE_RUNNING.match(line)
        if m:
            start_new()
            cur.duration_label, cur.url = m.group(1), m.group(2)
            meaningful = True
            continue
        m = RE_DIST_HEAD.match(line)
        if m and m.group(1) == "Recorded" and (cur is None or finished or len(cur.distribution)):
            start_new()
        if cur is None:
            start_new()
        if m:
            flush_spectrum()
            corrected = m.group(1) == "Recorded"
            section = "dist"
            meaningful = True
            continue
        if m := RE_THREADS.match(line):
            cur.threads, cur.connections = int(m.group(1)), int(m.group(2))
            continue
        if m := RE_CALIB.match(line):
            cur.calibration.append(
                {"mean_ms": float(m.group(1)) * _TIME_UNITS[m.group(2) or "ms"], "interval_ms": float(m.group(3))}
            )
            continue
        if RE_STATS_HEAD.match(line):
            continue
        if m := RE_STATS_ROW.match(line):
            name = "latency" if m.group(1) == "Latency" else "req_sec"
            conv = parse_time_ms if name == "latency" else parse_metric
            try:
                cur.thread_stats[name] = {
                    "avg": conv(m.group(2)),
                    "stdev": conv(m.group(3)),
                    "max": conv(m.group(4)),
                    "within_stdev_pct": float(m.group(5)),
                }
            except ValueError:
                cur.extra_lines.append(line)
            meaningful = True
            continue
        if section == "dist" and (m := RE_DIST_ROW.match(line)):
            dist_put(float(m.group(1)), float(m.group(2)) * _TIME_UNITS[m.group(3)])
            continue
        if RE_SPECTRUM_HEAD.match(line):
            section = "spectrum"
            spec_rows = []
            continue
        if RE_SPECTRUM_COLS.match(line):
            continue
        if section == "spectrum" and (m := RE_SPECTRUM_ROW.match(line)):
            spec_rows.append((float(m.group(1)), float(m.group(2)), int(m.group(3)), float(m.group(4))))
            continue
        if m := RE_MEAN.match(line):
            target = cur.spectrum_summary if corrected else cur.spectrum_uncorrected_summary
            target.update(mean_ms=float(m.group(1)), stdev_ms=float(m.group(2)))
            continue
        if m := RE_MAX.match(line):
            target = cur.spectrum_summary if corrected else cur.spectrum_uncorrected_summary
            target.update(max_ms=float(m.group(1)), total_count=int(m.group(2)))
            continue
        if m := RE_BUCKETS.match(line):
            target = cur.spectrum_summary if corrected else cur.spectrum_uncorrected_summary
            target.update(buckets=int(m.group(1)), sub_buckets=int(m.group(2)))
            continue
        if RE_RULE.match(line):
            flush_spectrum()
            section = None
            continue
        if m := RE_REQUESTS.match(line):
            flush_spectrum()
            section = None
            cur.requests = int(m.group(1))
            cur.measured_s = float(m.group(2)) * _TIME_UNITS[m.group(3)] / 1000.0
            cur.bytes_read = parse_bytes(m.group(4), m.group(5))
            meaningful = True
            continue
        if m := RE_SOCKET.match(line):
            cur.socket_errors = dict(zip(("connect", "read", "write", "timeout"), map(int, m.groups())))
            continue
        if m := RE_NON2XX.match(line):
            cur.non_2xx = int(m.group(1))
            continue
        if m := RE_RPS.match(line):
            cur.requests_per_sec = float(m.group(1))
            meaningful = True
            continue
        if m := RE_TPS.match(line):
            cur.transfer_per_sec = parse_bytes(m.group(1), m.group(2))
            finished = True
            continue
        # A line inside a block we do not recognise ends that block (e.g. prose after a paste).
        if section == "spectrum" and spec_rows:
            flush_spectrum()
            section = None
        cur.extra_lines.append(line)
    flush_spectrum()
    if cur is not None and meaningful:
        outputs.append(cur)
    return outputs


_SUMMARY_LEVELS = {
    "p50": 50.0,
    "p75": 75.0,
    "p90": 90.0,
    "p99": 99.0,
    "p99.9": 99.9,
    "p99.99": 99.99,
    "p99.999": 99.999,
    "p100": 100.0,
}


def _latency_us(out: WrkOutput, uncorrected: bool) -> dict | None:
    spec = out.spectrum_uncorrected if uncorrected else out.spectrum
    dist = out.distribution_uncorrected if uncorrected else out.distribution
    if spec.empty and dist.empty:
        return None
    lat = {k: out.percentile_ms(p, uncorrected) * 1000.0 for k, p in _SUMMARY_LEVELS.items()}
    lat = {k: v for k, v in lat.items() if not math.isnan(v)}
    if not spec.empty:
        lat["min"] = float(spec["latency_ms"].iloc[0]) * 1000.0
        lat["max"] = float(spec["latency_ms"].iloc[-1]) * 1000.0
    return lat


def summary_from_wrk(out: WrkOutput, params=None) -> dict:
    """A real wrk2's console output as a summary of perflab-load's JSON shape
    (docs/contracts/generator.md section 5), so the lab reads every tool's results one way. wrk2 does not report status codes (only
    the count of responses > 399), the window's epoch times, or anything about itself."""

    def rows(spec: pd.DataFrame):
        return (
            [[float(r.latency_ms) * 1000.0, float(r.percentile), int(r.total_count)] for r in spec.itertuples()]
            if not spec.empty
            else None
        )

    return {
        "tool": "wrk2",
        "version": None,
        "url": out.url,
        "threads": out.threads,
        "connections": out.connections,
        "duration_s": out.measured_s,
        "target_rate": float(params.rate) if params is not None else None,
        "achieved_rate": out.requests_per_sec,
        "requests": out.requests,
        "bytes_read": out.bytes_read,
        "errors": {**out.socket_errors, "status": out.non_2xx},
        "status_codes": {"non-2xx/3xx": out.non_2xx} if out.non_2xx else {},
        "latency_us": _latency_us(out, False),
        "latency_uncorrected_us": _latency_us(out, True),
        "spectrum": rows(out.spectrum),
        "spectrum_uncorrected": rows(out.spectrum_uncorrected),
        "start_ms": None,
        "end_ms": None,
    }
