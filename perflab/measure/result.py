"""What one load run produced, read from the generator's files: :class:`LoadResult`.

perflab-load's JSON summary is the one source of a run's numbers; its HdrHistogram interval log gives
latency over time. For a real wrk2 a summary of the same shape is read from its console output
(:func:`perflab.measure.wrk_output.summary_from_wrk`, the only place console text is parsed).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import LoadParams
from ..errors import LoadError
from .hdrlog import HdrLog, read_hdr_log
from .wrk_output import parse_wrk_output, summary_from_wrk

CONSOLE = "load-console.txt"
STDERR = "load-stderr.txt"
SUMMARY = "load-summary.json"
HDR_LOG = "load-hdr.log"


@dataclass
class LoadResult:
    """Everything one load run produced.

    ``summary`` is the one source of the run's numbers: perflab-load's JSON summary, or for a real wrk2
    the same shape built from its console output (:func:`perflab.measure.wrk_output.summary_from_wrk`,
    the only place console text is parsed). ``hdr``: perflab-load's interval log (latency over time;
    ``None`` for wrk2). ``console``: the tool's console output, kept as a raw artifact.
    """

    params: LoadParams
    url: str
    command: list[str]
    returncode: int
    console: str
    summary: dict
    hdr: HdrLog | None = None
    out_dir: Path | None = None
    started_at: float = 0.0
    ended_at: float = 0.0
    stderr_tail: str = ""
    tool_version: str | None = None
    #: with several generator hosts (or one on another machine): each host's own result, by host name
    parts: dict = field(default_factory=dict, repr=False)
    #: the load's hosts (segments, start skew, clocks, validity: :mod:`perflab.core.load`), ``None`` before
    hosts: dict | None = field(default=None, repr=False)
    #: the server's CPU seconds (user + system, every thread) over the measured window, from the server host's
    #: samples (:meth:`perflab.core.session.Session.validity` sets it); ``None`` when not measured
    server_cpu_s: float | None = None

    # --- rates and counts ---
    @property
    def target_rate(self) -> float:
        return float(self.summary.get("target_rate") or self.params.rate)

    @property
    def achieved_rate(self) -> float:
        v = self.summary.get("achieved_rate")
        return float(v) if v is not None else math.nan

    @property
    def achieved_ratio(self) -> float:
        """achieved / target (1.0 means the generator held the rate)."""
        return self.achieved_rate / self.target_rate if self.target_rate else math.nan

    @property
    def requests(self) -> int:
        return int(self.summary.get("requests") or 0)

    @property
    def offered(self) -> int:
        """Requests the schedule put in the measured window, every one of them answered, failed or never sent
        (perflab-load; for wrk2, which does not count them, the answers)."""
        return int(self.summary.get("offered") or self.requests)

    @property
    def duration_s(self) -> float:
        """The measured time (window plus drain), seconds."""
        return float(self.summary.get("duration_s") or self.params.duration)

    @property
    def errors(self) -> dict[str, int]:
        """Errors by kind: ``connect, read, write, timeout, status`` (status = responses > 399)."""
        return {k: int(v) for k, v in (self.summary.get("errors") or {}).items()}

    @property
    def errors_total(self) -> int:
        return sum(self.errors.values())

    @property
    def error_ratio(self) -> float:
        return self.errors_total / self.requests if self.requests else (0.0 if self.errors_total == 0 else math.inf)

    @property
    def status_counts(self) -> dict[str, int]:
        """Responses by HTTP status (wrk2 only tells the count of responses > 399)."""
        return {str(k): int(v) for k, v in (self.summary.get("status_codes") or {}).items()}

    @property
    def server_errors(self) -> int:
        """Socket errors plus 5xx responses: what a server that keeps up never produces (a 404 of a
        missing key is an answer, not an error)."""
        e = self.errors
        socket = sum(v for k, v in e.items() if k != "status")
        codes = self.status_counts
        if codes and not set(codes) <= {"non-2xx/3xx"}:
            return socket + sum(v for k, v in codes.items() if k.isdigit() and int(k) >= 500)
        return socket + e.get("status", 0)  # wrk2: no status breakdown, count every error

    @property
    def unserved(self) -> int:
        """Requests that were not served: socket errors and every answer that is not a success (4xx but a
        GET's 404, which is a miss: :attr:`hit_ratio`; 5xx). A server that answers 400 to a workload's
        requests serves none of them, however fast it answers."""
        e = self.errors
        socket = sum(v for k, v in e.items() if k != "status")
        codes = self.status_counts
        if codes and not set(codes) <= {"non-2xx/3xx"}:
            return socket + sum(v for k, v in codes.items() if k.isdigit() and int(k) >= 400 and k != "404")
        return socket + e.get("status", 0)  # wrk2: no status breakdown, count every error

    @property
    def hits(self) -> int:
        """Answers 200: a GET that found its key (and a range that answered)."""
        return self.status_counts.get("200", 0)

    @property
    def misses(self) -> int:
        """Answers 404: a GET of a key the store does not hold."""
        return self.status_counts.get("404", 0)

    @property
    def hit_ratio(self) -> float | None:
        """hits / (hits + misses): the share of reads that found data; ``None`` for a load without reads (or
        wrk2, which counts no statuses)."""
        n = self.hits + self.misses
        return self.hits / n if n else None

    # --- latency ---
    def percentile_ms(self, p: float, uncorrected: bool = False) -> float:
        """Latency at percentile ``p`` (0..100), ms, from the summary's percentiles or, for other
        levels, its whole-run spectrum."""
        if not (0 <= p <= 100):
            raise ValueError(f"p must be in [0, 100], got {p!r}")
        lat = self.summary.get("latency_uncorrected_us" if uncorrected else "latency_us") or {}
        name = "p100" if p == 100 else f"p{p:g}"
        if name in lat:
            return lat[name] / 1000.0
        spec = self.spectrum_uncorrected if uncorrected else self.spectrum
        if spec.empty:
            return math.nan
        hit = spec[spec["percentile"] >= p / 100 - 1e-12]
        return float(hit["latency_ms"].iloc[0]) if not hit.empty else float(spec["latency_ms"].iloc[-1])

    @property
    def p50_ms(self) -> float:
        return self.percentile_ms(50)

    @property
    def p99_ms(self) -> float:
        return self.percentile_ms(99)

    @property
    def p999_ms(self) -> float:
        return self.percentile_ms(99.9)

    @property
    def max_ms(self) -> float:
        return self.percentile_ms(100)

    @property
    def spectrum(self) -> pd.DataFrame:
        """Whole-run corrected percentile spectrum (``latency_ms, percentile, total_count, inverse``)."""
        return spectrum_frame(self.summary.get("spectrum"))

    @property
    def spectrum_uncorrected(self) -> pd.DataFrame:
        return spectrum_frame(self.summary.get("spectrum_uncorrected"))

    @property
    def intervals(self) -> pd.DataFrame:
        """Per-interval latency (corrected) from the hdr log; empty without one."""
        if self.hdr is None:
            return pd.DataFrame(columns=["start_s", "end_s", "count", "p50_ms", "p99_ms", "max_ms"])
        df = self.hdr.intervals
        return df[df["tag"] == "corrected"].reset_index(drop=True)

    @property
    def measure_start(self) -> float | None:
        """Epoch seconds when the measured window began (after warm-up)."""
        if self.summary.get("start_ms"):
            return self.summary["start_ms"] / 1000.0
        return None

    @property
    def measure_end(self) -> float | None:
        if self.summary.get("end_ms"):
            return self.summary["end_ms"] / 1000.0
        return None

    # --- the server's CPU ---
    @property
    def cpu_us_per_request(self) -> float:
        """The server's CPU time per answered request over the measured window, microseconds (NaN when its
        CPU was not measured or nothing was answered)."""
        if self.server_cpu_s is None or not self.requests:
            return math.nan
        return self.server_cpu_s / self.requests * 1e6

    # --- the generator itself ---
    @property
    def schedule_lag(self) -> dict | None:
        """How late perflab-load sent requests for its own reasons (us: mean, p50, p99, p999, max)."""
        return self.summary.get("schedule_lag_us")

    @property
    def generator_cpu(self) -> dict | None:
        """perflab-load's CPU over the window: ``user_s, sys_s, threads[...]`` (``None`` for wrk2)."""
        return self.summary.get("cpu")

    def record(self) -> dict:
        """Flat numbers for the runs index."""
        lag = self.schedule_lag or {}
        return {
            "target_rate": self.target_rate,
            "achieved_rate": self.achieved_rate,
            "achieved_ratio": self.achieved_ratio,
            "requests": self.requests,
            "errors": self.errors_total,
            "error_ratio": self.error_ratio,
            "unserved": self.unserved,
            "hit_ratio": self.hit_ratio,
            "p50_ms": self.p50_ms,
            "p90_ms": self.percentile_ms(90),
            "p99_ms": self.p99_ms,
            "p999_ms": self.p999_ms,
            "max_ms": self.max_ms,
            "schedule_lag_p99_ms": lag["p99"] / 1000.0 if "p99" in lag else None,
            "server_cpu_s": self.server_cpu_s,
            "cpu_us_per_request": self.cpu_us_per_request,
            "threads": self.params.threads,
            "connections": self.params.connections,
            "duration_s": self.params.duration,
            "warmup_s": self.params.warmup,
            "script": Path(self.params.script).name if self.params.script else None,
            "tool": self.params.tool,
            **self._hosts_record(),
        }

    def _hosts_record(self) -> dict:
        """With several generator hosts (or one on another machine): how many, their start skew and the
        bottleneck (``{}`` for one generator on the server's machine, whose record stays as it always was)."""
        h = self.hosts or {}
        if "bottleneck" not in h:
            return {}
        return {
            "generator_hosts": len(h.get("generators") or {}),
            "start_skew_us": h.get("start_skew_us"),
            "bottleneck": (h.get("bottleneck") or {}).get("host"),
        }

    def __repr__(self):
        return (
            f"<LoadResult {self.target_rate:g}/s -> {self.achieved_rate:.1f}/s, p99 {self.p99_ms:.3f} ms, "
            f"errors {self.errors_total}/{self.requests}>"
        )


def spectrum_frame(rows) -> pd.DataFrame:
    """``[[value_us, percentile (0..1), total_count], ...]`` (the summary's spectrum) as the lab's
    spectrum DataFrame: ``latency_ms, percentile, total_count, inverse``."""
    cols = ["latency_ms", "percentile", "total_count", "inverse"]
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=float if c != "total_count" else "int64") for c in cols})
    df = pd.DataFrame([r[:3] for r in rows], columns=["value_us", "percentile", "total_count"])
    df["latency_ms"] = df["value_us"].astype(float) / 1000.0
    df["total_count"] = df["total_count"].astype("int64")
    p = df["percentile"].astype(float)
    df["inverse"] = np.where(p < 1, 1.0 / (1.0 - p.clip(upper=1 - 1e-15)), np.inf)
    return df[cols]


def read_outputs(
    out_dir: Path, params: LoadParams, console: str, tool: str = "perflab-load", err_tail: str = ""
) -> tuple[dict, HdrLog | None]:
    """The run's summary and interval log from ``out_dir``: perflab-load's JSON summary and hdr log;
    for a real wrk2, a summary read from its console output (the only place console text is parsed)."""
    if params.tool == "wrk2":
        try:
            return summary_from_wrk(parse_wrk_output(console), params), None
        except ValueError:
            raise LoadError(f"{tool} printed no wrk2 result", console[-4000:] + "\n" + err_tail) from None
    path = out_dir / SUMMARY
    if not path.is_file():
        raise LoadError(f"{tool} wrote no JSON summary ({path})", err_tail + "\n" + console[-2000:])
    try:
        summary = json.loads(path.read_text())
    except ValueError as e:
        raise LoadError(f"unreadable JSON summary {path}: {e}", err_tail) from None
    hdr = read_hdr_log(out_dir / HDR_LOG) if (out_dir / HDR_LOG).is_file() else None
    return summary, hdr


def load_result_from_dir(out_dir: str | os.PathLike, params: LoadParams | None = None, url: str = "") -> LoadResult:
    """Re-read a recorded load (the files :func:`run_load` wrote) from ``out_dir``."""
    d = Path(out_dir)
    if not (d / CONSOLE).is_file():
        raise ValueError(f"out_dir: no {CONSOLE} in {d}")
    console = (d / CONSOLE).read_text(errors="replace")
    if params is None:
        if not (d / SUMMARY).is_file():
            raise ValueError(f"out_dir: no {SUMMARY} in {d}: pass the LoadParams of a wrk2 run")
        s = json.loads((d / SUMMARY).read_text())
        params = LoadParams(
            rate=s.get("target_rate") or 1,
            duration=s.get("duration_s") or 1,
            threads=s.get("threads") or 1,
            connections=s.get("connections") or max(1, s.get("threads") or 1),
        )
    summary, hdr = read_outputs(d, params, console)
    return LoadResult(
        params=params,
        url=url or summary.get("url", ""),
        command=[],
        returncode=0,
        console=console,
        summary=summary,
        hdr=hdr,
        out_dir=d,
        tool_version=summary.get("version"),
    )
