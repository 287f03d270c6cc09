"""Latency of fixed-rate runs by percentile: the spectrum figure, what it says, and the runs compared.

Every function takes numbers the lab recorded (a run's load and its percentiles, per-interval latencies)
and returns a figure or plain-English Markdown, so the text always matches the data. Two runs are said to
differ only when a stated test supports it (:func:`perflab.stats.significance.compare_samples`: a
Mann-Whitney test on per-interval latencies with a bootstrap interval of the ratio), always with n, and the
sentence names its method (:mod:`perflab.stats.methods`): here always *sequential runs*, one after the
other; the interleaved verdicts of an A/B comparison are :mod:`perflab.analysis.ab`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ... import fmt
from ...config.validity import ValidityThresholds
from ...measure.result import LoadResult
from ...measure.wrk_output import WrkOutput
from ...stats.methods import Method
from ...stats.significance import compare_samples
from ..frames import keyed, validity_text
from ..marks import sla_line


def load_table(runs: Mapping, index="run") -> pd.DataFrame:
    """One row per fixed-rate run (key -> ExperimentResult): offered and achieved rate, p50/p99/p99.9/max,
    errors (socket errors and 5xx) and the validity level with its first reason."""
    rows = [
        {
            "offered, req/s": r.load.target_rate,
            "achieved, req/s": r.load.achieved_rate,
            "p50, ms": r.load.p50_ms,
            "p99, ms": r.load.p99_ms,
            "p99.9, ms": r.load.p999_ms,
            "max, ms": r.load.max_ms,
            "errors": r.load.server_errors,
            "validity": validity_text(r),
        }
        for r in runs.values()
    ]
    return keyed(rows, list(runs), index)


#: the percentile levels a commentary talks about (wrk2's "Latency Distribution" block)
LEVELS = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)


def _load(obj):
    """The load of an experiment's result, or ``obj`` itself (a LoadResult or an intervals table)."""
    load = getattr(obj, "load", None) if not isinstance(obj, pd.DataFrame) else None
    return load if isinstance(load, LoadResult) else obj


def value_at(spectrum: pd.DataFrame, p: float) -> float:
    """Latency (ms) at percentile ``p`` (0..100) of a wrk2-style spectrum (``latency_ms``, ``percentile`` 0..1)."""
    if spectrum is None or len(spectrum) == 0:
        raise ValueError("the spectrum is empty: no request was recorded")
    spec = spectrum.sort_values("percentile")
    hit = spec[spec["percentile"] >= p / 100.0 - 1e-12]
    return float(hit["latency_ms"].iloc[0] if len(hit) else spec["latency_ms"].iloc[-1])


def levels(latency, at: tuple[float, ...] = LEVELS) -> dict[float, float]:
    """Latency (ms) at each of ``at``: from a load's own percentiles (:meth:`LoadResult.percentile_ms`, the
    numbers every table shows) when given a load or an experiment's result, else from a spectrum table."""
    load = _load(latency)
    if hasattr(load, "percentile_ms"):
        return {p: load.percentile_ms(p) for p in at}
    return {p: value_at(latency, p) for p in at}


def requests_in(latency) -> int:
    load = _load(latency)
    if hasattr(load, "requests"):
        return int(load.requests)
    return int(latency["total_count"].max()) if "total_count" in latency and len(latency) else 0


def largest_step(latency, at: tuple[float, ...] = LEVELS[:-1]) -> tuple[float, float, float, float]:
    """The pair of adjacent levels with the largest latency ratio: (p_low, v_low, p_high, v_high)."""
    lv = levels(latency, at)
    ps = list(lv)
    best = None
    for a, b in zip(ps, ps[1:]):
        va, vb = lv[a], lv[b]
        ratio = vb / va if va > 0 else math.inf
        if best is None or ratio > best[0]:
            best = (ratio, a, va, b, vb)
    _, a, va, b, vb = best
    return a, va, b, vb


def describe_spectrum(label: str, latency, sla_ms: float | None = None) -> str:
    """'**PUT, 1 connection**: p50 0.42 ms, p99 1.9 ms, p99.9 4.5 ms, max 6.4 ms (23,997 requests); the
    steepest step is from p90 (1.6 ms) to p99 (1.9 ms), 1.2x.' ``latency``: a load (or an experiment's
    result), or a spectrum table."""
    lv = levels(latency)
    n = requests_in(latency)
    text = (
        f"**{label}**: p50 {fmt.ms(lv[50])}, p99 {fmt.ms(lv[99])}, p99.9 {fmt.ms(lv[99.9])}, "
        f"max {fmt.ms(lv[100])} ({n:,} requests recorded)"
    )
    # only levels the sample resolves: p99.99 needs ~10^4 samples to mean anything
    usable = tuple(p for p in LEVELS[:-1] if n >= 10 / max(1e-9, 1 - p / 100.0))
    if len(usable) >= 2:
        a, va, b, vb = largest_step(latency, usable)
        ratio = vb / va if va > 0 else math.inf
        text += f"; the steepest step is from {fmt.level(a)} ({fmt.ms(va)}) to {fmt.level(b)} ({fmt.ms(vb)}), {fmt.ratio(ratio)}"
    if sla_ms is not None:
        verdict = "within" if lv[99] <= sla_ms else "above"
        text += f"; p99 is {verdict} the {fmt.ms(sla_ms)} SLA"
    return text + "."


def compare_latency(runs: Mapping[str, object], column: str = "p99_ms") -> str:
    """Per-interval latency (e.g. p99 of each 100 ms interval) of two or more runs (label ->
    ExperimentResult, :class:`~perflab.measure.result.LoadResult` or an intervals DataFrame), each compared with
    the run of lowest median by :func:`~perflab.stats.significance.compare_samples`, the method named:
    'p99 per interval (sequential runs): async median 1.20 ms (n = 50); sync 3.40 ms, higher (n = 50 vs 50,
    Mann-Whitney p < 0.001, ratio 2.83x (95% CI 2.5x-3.1x)); virtual 1.25 ms, no difference detectable (...).'"""
    samples = {}
    for k, v in runs.items():
        v = _load(v)
        iv = v.intervals if hasattr(v, "intervals") else v
        if iv is None or len(iv) == 0 or column not in iv:
            continue
        iv = iv[iv["tag"] == "corrected"] if "tag" in iv else iv
        iv = iv[iv["count"] > 0] if "count" in iv else iv
        samples[k] = iv[column].astype(float).dropna().to_numpy()
    if len(samples) < 2:
        return ""
    level = column.replace("_ms", "").replace("p999", "p99.9")
    order = sorted(samples, key=lambda k: float(pd.Series(samples[k]).median()))
    base = order[0]
    parts = [f"{base} median {fmt.ms(float(pd.Series(samples[base]).median()))} (n = {len(samples[base])})"]
    for k in order[1:]:
        d = compare_samples(samples[base], samples[k])
        parts.append(f"{k} {fmt.ms(d.median_b)}, {d.direction} ({d.evidence})")
    return f"{level} per interval ({Method.SEQUENTIAL_RUNS}): " + "; ".join(parts) + "."


def compare_latencies(runs: Mapping[str, object], columns: tuple[str, ...] = ("p99_ms",)) -> str:
    """:func:`compare_latency` for each of ``columns`` (``p99_ms``, ``p999_ms``...), one paragraph each;
    ``""`` with fewer than two runs."""
    return "\n\n".join(t for t in (compare_latency(runs, c) for c in columns) if t)


def describe_spectra(
    runs: Mapping[str, object], sla_ms: float | None = None, compare: tuple[str, ...] = ("p99_ms",)
) -> str:
    """Every run's spectrum (:func:`describe_spectrum`), then their per-interval latencies compared
    (:func:`compare_latencies` on ``compare``), as Markdown paragraphs. ``runs``: label ->
    ExperimentResult or LoadResult."""
    parts = [describe_spectrum(k, r, sla_ms=sla_ms) for k, r in runs.items()]
    return "\n\n".join(parts + [t for t in [compare_latencies(runs, compare)] if t])


def describe_runs(runs: Mapping[str, object], sla_ms: float | None = None) -> list[str]:
    """Each fixed-rate run in full (label -> ExperimentResult): its spectrum, the rate it achieved of the
    offered one, its errors and its validity. '**PUT, 1 connection**: p50 ... Achieved 500 req/s of 500
    req/s, 0 errors; validity: valid.'"""
    lines = []
    for label, r in runs.items():
        validity = r.validity.badge if r.validity is not None else "not assessed"
        lines.append(
            f"{describe_spectrum(label, r, sla_ms=sla_ms)} Achieved "
            f"{fmt.rate(r.load.achieved_rate)} of {fmt.rate(r.load.target_rate)}, {r.load.server_errors} "
            f"errors; validity: {validity}."
        )
    return lines


def describe_prefill(runs: Mapping[str, object]) -> str:
    """What the prefill wrote before the first of ``runs`` that had one started its server ('' when none
    had one)."""
    first = next((r for r in runs.values() if getattr(r, "prefill", None)), None)
    if first is None:
        return ""
    parts = [
        f"{k.replace('_', ' ')} {fmt.number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v}"
        for k, v in first.prefill.items()
        if k not in ("json", "dir")
    ]  # the scratch directory is gone
    return "The database at the start (prefill): " + ", ".join(parts) + "."


#: achieved/offered rate below which a run fell short of its rate: the validity record's own (it warns below it)
MIN_ACHIEVED = ValidityThresholds().min_achieved


def answer_fixed_rate(loads: Mapping[str, object], sla_ms: float, min_achieved: float = MIN_ACHIEVED) -> str:
    """'All 4 runs kept p99 within the 10.0 ms SLA at their fixed rates; the highest p99 is 1.20 ms (GET,
    32 connections at 3,000 req/s).' ``loads``: label -> ExperimentResult or LoadResult; p99 is each load's
    own, like every other sentence here; a run that achieved less than ``min_achieved`` of its offered rate
    fell short of it."""
    if not loads:
        return "No fixed-rate run was measured."
    loads = {k: _load(r) for k, r in loads.items()}
    p99 = {k: r.p99_ms for k, r in loads.items()}
    worst = max(p99, key=p99.get)
    above = [k for k in loads if p99[k] > sla_ms]
    short = [k for k, r in loads.items() if r.achieved_ratio < min_achieved]
    where = f"{worst} at {fmt.rate(loads[worst].target_rate)}"
    if not above:
        text = (
            f"All {len(loads)} runs kept p99 within the {fmt.ms(sla_ms)} SLA at their fixed rates; the highest "
            f"p99 is {fmt.ms(p99[worst])} ({where})"
        )
    else:
        text = (
            f"{len(above)} of {len(loads)} runs had p99 above the {fmt.ms(sla_ms)} SLA; the highest is "
            f"{fmt.ms(p99[worst])} ({where})"
        )
    if short:
        text += f"; {', '.join(short)} fell short of the offered rate (below {100 * min_achieved:g}%)"
    return text + "."


# --- the figure ------------------------------------------------------------------------------------

_PCT_TICKS = [
    (1, "0%"),
    (2, "50%"),
    (10, "90%"),
    (100, "99%"),
    (1e3, "99.9%"),
    (1e4, "99.99%"),
    (1e5, "99.999%"),
    (1e6, "99.9999%"),
]


def _spectrum_of(obj, uncorrected: bool = False) -> pd.DataFrame:
    if not isinstance(obj, pd.DataFrame) and isinstance(getattr(obj, "load", None), LoadResult):
        obj = obj.load  # an experiment's result: its load
    if isinstance(obj, LoadResult):
        return obj.spectrum_uncorrected if uncorrected else obj.spectrum
    if isinstance(obj, WrkOutput):
        return obj.spectrum_uncorrected if uncorrected else obj.spectrum
    if isinstance(obj, pd.DataFrame) and {"latency_ms", "percentile"} <= set(obj.columns):
        return obj
    raise ValueError(f"runs values must be LoadResult, WrkOutput or spectrum DataFrames, got {type(obj).__name__}")


def percentile_spectrum(
    runs: dict, uncorrected: bool = False, title: str | None = None, log_y: bool = False, sla_ms: float | None = None
) -> go.Figure:
    """Latency by percentile for each run in ``runs`` (label -> ExperimentResult / LoadResult / WrkOutput /
    spectrum).

    x is ``1/(1-p)`` on a log axis (wrk2/HdrHistogram convention) labelled with percentiles; the
    100% point is drawn at the end of each curve. ``sla_ms`` draws a horizontal SLA line.
    """
    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict of label -> result")
    fig = go.Figure()
    xmax = 10.0
    for label, obj in runs.items():
        sp = _spectrum_of(obj, uncorrected)
        if sp.empty:
            continue
        sp = sp.copy()
        finite = np.isfinite(sp["inverse"]) if "inverse" in sp else np.isfinite(1 / (1 - sp["percentile"]))
        inv = 1 / (1 - sp["percentile"].clip(upper=1 - 1e-12))
        last_inv = float(inv[finite].max()) if finite.any() else 1.0
        inv = inv.where(finite, last_inv * 1.5)  # 100% drawn just right of the last finite point
        xmax = max(xmax, float(inv.max()))
        pct = sp["percentile"] * 100
        hover = [
            f"{label}<br>p{p:.5g} = {v:.3f} ms" + (f"<br>count {c:,}" if c is not None else "")
            for p, v, c in zip(pct, sp["latency_ms"], sp.get("total_count", [None] * len(sp)))
        ]
        fig.add_trace(
            go.Scatter(
                x=inv,
                y=sp["latency_ms"],
                mode="lines+markers",
                name=str(label),
                marker=dict(size=4),
                hovertext=hover,
                hoverinfo="text",
            )
        )
    ticks = [t for t in _PCT_TICKS if t[0] <= xmax * 1.01]
    fig.update_xaxes(
        type="log",
        tickvals=[t[0] for t in ticks],
        ticktext=[t[1] for t in ticks],
        title="percentile (axis: 1/(1-p), log scale)",
    )
    fig.update_yaxes(title="latency, ms", type="log" if log_y else "linear", rangemode="tozero")
    if sla_ms:
        sla_line(fig, sla_ms, f"SLA {sla_ms:g} ms", log_y, "dash")
    kind = "uncorrected (from actual send time)" if uncorrected else "corrected for coordinated omission"
    fig.update_layout(
        title=title or f"Latency by percentile — {kind}",
        hovermode="closest",
        legend_title_text="run",
        template="plotly_white",
    )
    return fig
