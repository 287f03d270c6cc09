"""Breakpoint search ("точка разладки"): the highest fixed rate at which the server keeps up.

A probe holds one rate for ``probe_duration`` seconds (after a warm-up) and passes when

* the generator achieved at least ``min_achieved`` (99%) of the target rate,
* p99 (corrected, i.e. measured from the scheduled send time) is within the SLA (10 ms),
* errors (socket errors + non-2xx/3xx) are at most ``max_error_ratio`` (0.1%) of requests,
* latency shows no upward trend within the probe: a queue that builds up means the rate is over
  the limit even while p99 still looks fine (judged on the hdr log's per-interval p50).

The search brackets by growing (or shrinking) the rate by ``growth`` until the verdict flips, then
bisects until ``hi - lo <= precision * lo``; the breakpoint is ``lo``, the highest passing rate, so
the true limit lies in ``[lo, hi]``. Rates are whole requests/s and the sequence of probes depends
only on the verdicts, so a search is reproducible for a given seed and server.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from .config import BreakpointCriteria, BreakpointParams, LoadParams, PrefillParams, ServerConfig
from .measure.load import LoadResult, run_load


@dataclass
class Verdict:
    """The outcome of one probe: ``passed`` and the reasons (every failed criterion, or "ok: ...")."""

    passed: bool
    reasons: list[str]
    metrics: dict = field(default_factory=dict)

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)


def latency_trend(intervals: pd.DataFrame, criteria: BreakpointCriteria | None = None) -> tuple[bool, str]:
    """Whether per-interval latency grows during a probe (a queue building up).

    ``intervals``: rows with ``p50_ms`` ordered by time (``LoadResult.intervals``). Trend when the
    median p50 of the last third exceeds ``trend_factor`` × the first third's + ``trend_floor`` and
    p50's rank correlation with time is at least ``trend_min_corr``. Needs 3+ intervals.
    """
    c = criteria or BreakpointCriteria()
    if intervals is None or len(intervals) < 3 or "p50_ms" not in intervals:
        return False, "too few intervals to judge a trend"
    df = intervals[intervals["count"] > 0] if "count" in intervals else intervals
    if len(df) < 3:
        return False, "too few non-empty intervals to judge a trend"
    y = df["p50_ms"].astype(float).reset_index(drop=True)
    k = max(1, len(y) // 3)
    first, last = float(y.iloc[:k].median()), float(y.iloc[-k:].median())
    x = pd.Series(range(len(y)), dtype=float)
    corr = x.rank().corr(y.rank())
    corr = 0.0 if corr is None or math.isnan(corr) else float(corr)
    rising = last > c.trend_factor * first + c.trend_floor * 1000 and corr >= c.trend_min_corr
    desc = f"p50 went from {first:.3f} ms to {last:.3f} ms over the probe (rank corr {corr:.2f})"
    return rising, desc


def evaluate(result: LoadResult, criteria: BreakpointCriteria | None = None) -> Verdict:
    """Judge one probe against ``criteria``."""
    c = criteria or BreakpointCriteria()
    if not isinstance(result, LoadResult):
        raise ValueError(f"result must be a LoadResult, got {type(result).__name__}")
    ratio, p99, err = result.achieved_ratio, result.p99_ms, result.error_ratio
    reasons = []
    if not (ratio >= c.min_achieved):
        reasons.append(f"achieved {result.achieved_rate:.1f}/s = {ratio:.1%} of target < {c.min_achieved:.0%}")
    if not (p99 <= c.sla_p99 * 1000):
        reasons.append(f"p99 {p99:.2f} ms > SLA {c.sla_p99 * 1000:g} ms")
    if not (err <= c.max_error_ratio):
        reasons.append(f"errors {result.errors_total}/{result.requests} = {err:.2%} > {c.max_error_ratio:.2%}")
    trend, desc = latency_trend(result.intervals, c) if c.trend else (False, "trend check off")
    if trend:
        reasons.append("latency trend: " + desc)
    metrics = {"achieved_rate": result.achieved_rate, "achieved_ratio": ratio, "p50_ms": result.p50_ms,
               "p99_ms": p99, "max_ms": result.max_ms, "errors": result.errors_total, "error_ratio": err,
               "requests": result.requests, "trend": trend, "trend_desc": desc}
    if reasons:
        return Verdict(False, reasons, metrics)
    return Verdict(True, [f"ok: achieved {ratio:.1%}, p99 {p99:.2f} ms, errors {result.errors_total}"], metrics)


@dataclass
class Probe:
    index: int
    rate: float
    verdict: Verdict
    phase: str
    result: LoadResult | None = None
    run_dir: Path | None = None

    def row(self) -> dict:
        return {"probe": self.index, "rate": self.rate, "phase": self.phase, "passed": self.verdict.passed,
                "reason": self.verdict.reason, **{k: v for k, v in self.verdict.metrics.items()}}


@dataclass
class BreakpointResult:
    """``rate``: the breakpoint (highest passing rate; ``None`` if even ``min_rate`` failed);
    ``lo``/``hi``: the final bracket; ``converged``: ``hi - lo <= precision * lo``; ``probes``: every
    probe with its verdict (also as a DataFrame via :attr:`table`)."""

    rate: float | None
    lo: float | None
    hi: float | None
    converged: bool
    probes: list[Probe]
    params: BreakpointParams
    criteria: BreakpointCriteria
    stop_reason: str
    run: object | None = None

    @property
    def table(self) -> pd.DataFrame:
        return pd.DataFrame([p.row() for p in self.probes])

    @property
    def run_id(self) -> str | None:
        return self.run.id if self.run is not None else None

    def __repr__(self):
        r = f"{self.rate:g}/s" if self.rate is not None else "none"
        return f"<BreakpointResult {r} bracket [{self.lo}, {self.hi}] converged={self.converged} probes={len(self.probes)}>"


def _round_rate(r: float) -> float:
    return float(max(1, round(r)))


def search(probe: Callable[[float, str], Verdict], params: BreakpointParams | None = None,
           on_probe: Callable[[float, Verdict], None] | None = None) -> tuple[float | None, float | None, bool, list, str]:
    """The search logic alone: ``probe(rate, phase) -> Verdict``. Returns ``(lo, hi, converged,
    [(rate, phase, verdict)], stop_reason)``. Used by :func:`find_breakpoint`; testable on its own."""
    p = params or BreakpointParams()
    history: list = []
    cache: dict = {}

    def run(rate: float, phase: str) -> bool:
        rate = _round_rate(rate)
        if rate in cache:
            return cache[rate]
        for attempt in range(p.retries + 1):
            v = probe(rate, phase if attempt == 0 else phase + "-retry")
            history.append((rate, phase, v))
            if on_probe:
                on_probe(rate, v)
            if v.passed or len(history) >= p.max_probes:
                break
        cache[rate] = v.passed
        return v.passed

    lo = hi = None
    r = _round_rate(p.start_rate)
    stop = ""
    while True:
        if len(history) >= p.max_probes:
            stop = "max_probes reached while bracketing"
            break
        if run(r, "bracket"):
            lo = r
            if hi is not None:
                break
            if r >= p.max_rate:
                stop = f"passed at max_rate {p.max_rate:g}: the breakpoint is above the search range"
                break
            r = _round_rate(min(r * p.growth, p.max_rate))
            if r <= lo:
                stop = "cannot grow the rate further"
                break
        else:
            hi = r
            if lo is not None:
                break
            if r <= p.min_rate:
                stop = f"failed at min_rate {p.min_rate:g}: no rate passes"
                break
            r = _round_rate(max(r / p.growth, p.min_rate))
            if r >= hi:
                stop = "cannot shrink the rate further"
                break
    while lo is not None and hi is not None and not stop:
        if hi - lo <= p.precision * lo:
            break
        if len(history) >= p.max_probes:
            stop = "max_probes reached while bisecting"
            break
        mid = _round_rate((lo + hi) / 2)
        if mid <= lo or mid >= hi:
            break  # integer rates: the bracket cannot get narrower
        if run(mid, "bisect"):
            lo = mid
        else:
            hi = mid
    converged = lo is not None and hi is not None and (hi - lo <= max(p.precision * lo, 1.0))
    if not stop:
        stop = "converged" if converged else "bracket incomplete"
    return lo, hi, converged, history, stop


def find_breakpoint(server: ServerConfig | str, load: LoadParams, criteria: BreakpointCriteria | None = None,
                    params: BreakpointParams | None = None, name: str | None = None, data_root=None,
                    prefill: PrefillParams | None = None, progress: bool = True, stats_interval: float = 1.0,
                    data_dir=None) -> BreakpointResult:
    """Find the breakpoint of the server started with ``server`` (or of the running server at the
    URL ``server``) under the workload ``load`` (its ``rate``, ``duration`` and ``warmup`` are
    replaced by the probes').

    Records one run (kind ``breakpoint``) with a ``probes/NN-<rate>/`` directory per probe (raw
    generator outputs), ``probes.csv``, and index rows in ``loads`` (one per probe, with verdict and
    reason) and ``breakpoints``. Shows a tqdm progress bar when ``progress``.
    """
    from .experiment import Session

    criteria = criteria or BreakpointCriteria()
    params = params or BreakpointParams()
    if not isinstance(server, (ServerConfig, str)):
        raise ValueError(f"server must be a ServerConfig or the URL of a running server, got {type(server).__name__}")
    for n, v, t in (("load", load, LoadParams),
                    ("criteria", criteria, BreakpointCriteria), ("params", params, BreakpointParams)):
        if not isinstance(v, t):
            raise ValueError(f"{n} must be a {t.__name__}, got {type(v).__name__}")
    if prefill is not None and not isinstance(prefill, PrefillParams):
        raise ValueError(f"prefill must be a PrefillParams, got {type(prefill).__name__}")
    script_args = tuple(load.script_args) + ((f"seed={params.seed}",) if params.seed_arg else ())
    base = load.replace(duration=params.probe_duration, warmup=params.warmup, script_args=script_args,
                        rate_steps=None, step_duration=None, ramp=None)
    script = Path(base.script).stem if base.script else base.path
    name = name or f"breakpoint-{script}-{server.mode if isinstance(server, ServerConfig) else 'external'}"
    bar = None
    if progress:
        from tqdm.auto import tqdm
        bar = tqdm(total=params.max_probes, desc=f"breakpoint {script}", unit="probe")

    probes: list[Probe] = []
    with Session("breakpoint", name, server, prefill=prefill, data_root=data_root, data_dir=data_dir,
                 stats_interval=stats_interval,
                 params={"load": base.to_dict(), "criteria": criteria.to_dict(), "breakpoint": params.to_dict()}) as sess:
        run = sess.run

        def warm_server():
            if params.server_warmup:
                out = run.path("server-warmup/x").parent
                run_load(sess.server.url, base.replace(rate=params.start_rate, duration=params.server_warmup, warmup=0),
                         out_dir=out)

        def probe(rate: float, phase: str) -> Verdict:
            idx = len(probes)
            if idx and params.cooldown:
                time.sleep(params.cooldown)
            if params.restart_server and idx:
                sess.restart_server()
                warm_server()
            out = run.path(f"probes/{idx:02d}-{int(rate)}/x").parent
            res = run_load(sess.server.url, base.replace(rate=rate), out_dir=out)
            v = evaluate(res, criteria)
            pr = Probe(idx, rate, v, phase, res, out)
            probes.append(pr)
            run.add_rows("loads", [{**res.record(), "probe": idx, "phase": phase, "passed": v.passed,
                                    "reason": v.reason, "dir": str(out.relative_to(run.dir))}])
            iv = res.intervals
            if not iv.empty:
                run.add_rows("intervals", [{"probe": idx, "rate": rate, **r} for r in iv.to_dict("records")])
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"{rate:g}/s {'pass' if v.passed else 'FAIL'}")
            return v

        try:
            warm_server()
            lo, hi, converged, _, stop = search(probe, params)
        finally:
            if bar is not None:
                bar.close()
        result = BreakpointResult(lo, lo, hi, converged, probes, params, criteria, stop, run)
        run.write_frame("probes.csv", result.table, artifact="probes")
        method = _method_of(script)
        row = {"workload": script, "method": method, "breakpoint_rate": lo, "lo": lo, "hi": hi,
               "converged": converged, "probes": len(probes), "stop_reason": stop,
               "threads": base.threads, "connections": base.connections, "sla_p99_ms": criteria.sla_p99 * 1000,
               "precision": params.precision}
        run.add_rows("breakpoints", [row])
        run.set_result(**row)
    return result


def _method_of(script: str) -> str | None:
    s = script.lower()
    for m in ("get", "put", "delete", "status", "range", "mixed", "ycsb"):
        if m in s:
            return m.upper() if m in ("get", "put", "delete") else m
    return None
