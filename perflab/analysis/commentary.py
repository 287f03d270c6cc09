"""Sentences generated from measured facts, for the notebooks' commentary cells.

Every function takes numbers the lab recorded (spectra, interval tables, stats samples, profile
breakdowns, breakpoint probes) and returns plain-English Markdown. No number is ever typed into a
notebook: the notebook calls these and displays the result, so the text always matches the data.

A sentence claims a difference only when a stated test supports it (:mod:`perflab.measure.significance`:
a Mann-Whitney test with a bootstrap interval of the ratio for samples such as per-interval p99s,
disjoint intervals for breakpoints, Kendall's tau for trends), and always gives n; otherwise it says
"no difference detectable with n = ...".
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import fmt
from ..measure.significance import Direction, compare_intervals, compare_samples, trend
from ..server import metrics

#: the percentile levels a commentary talks about (wrk2's "Latency Distribution" block)
LEVELS = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)


# --- percentile spectra ----------------------------------------------------------------------------

def value_at(spectrum: pd.DataFrame, p: float) -> float:
    """Latency (ms) at percentile ``p`` (0..100) of a wrk2-style spectrum (``latency_ms``, ``percentile`` 0..1)."""
    if spectrum is None or len(spectrum) == 0:
        raise ValueError("the spectrum is empty: no request was recorded")
    spec = spectrum.sort_values("percentile")
    hit = spec[spec["percentile"] >= p / 100.0 - 1e-12]
    return float(hit["latency_ms"].iloc[0] if len(hit) else spec["latency_ms"].iloc[-1])


def levels(spectrum: pd.DataFrame, at: tuple[float, ...] = LEVELS) -> dict[float, float]:
    return {p: value_at(spectrum, p) for p in at}


def requests_in(spectrum: pd.DataFrame) -> int:
    return int(spectrum["total_count"].max()) if "total_count" in spectrum and len(spectrum) else 0


def largest_step(spectrum: pd.DataFrame, at: tuple[float, ...] = LEVELS[:-1]) -> tuple[float, float, float, float]:
    """The pair of adjacent levels with the largest latency ratio: (p_low, v_low, p_high, v_high)."""
    lv = levels(spectrum, at)
    ps = list(lv)
    best = None
    for a, b in zip(ps, ps[1:]):
        va, vb = lv[a], lv[b]
        ratio = vb / va if va > 0 else math.inf
        if best is None or ratio > best[0]:
            best = (ratio, a, va, b, vb)
    _, a, va, b, vb = best
    return a, va, b, vb


def describe_spectrum(label: str, spectrum: pd.DataFrame, sla_ms: float | None = None) -> str:
    """'**PUT, 1 connection**: p50 0.42 ms, p99 1.9 ms, p99.9 4.5 ms, max 6.4 ms (23,997 requests); the
    steepest step is from p90 (1.6 ms) to p99 (1.9 ms), 1.2x.'"""
    lv = levels(spectrum)
    n = requests_in(spectrum)
    text = (f"**{label}**: p50 {fmt.ms(lv[50])}, p99 {fmt.ms(lv[99])}, p99.9 {fmt.ms(lv[99.9])}, "
            f"max {fmt.ms(lv[100])} ({n:,} requests recorded)")
    # only levels the sample resolves: p99.99 needs ~10^4 samples to mean anything
    usable = tuple(p for p in LEVELS[:-1] if n >= 10 / max(1e-9, 1 - p / 100.0))
    if len(usable) >= 2:
        a, va, b, vb = largest_step(spectrum, usable)
        ratio = vb / va if va > 0 else math.inf
        text += f"; the steepest step is from {fmt.level(a)} ({fmt.ms(va)}) to {fmt.level(b)} ({fmt.ms(vb)}), {fmt.ratio(ratio)}"
    if sla_ms is not None:
        verdict = "within" if lv[99] <= sla_ms else "above"
        text += f"; p99 is {verdict} the {fmt.ms(sla_ms)} SLA"
    return text + "."


def compare_latency(runs: Mapping[str, object], column: str = "p99_ms") -> str:
    """Per-interval latency (e.g. p99 of each 100 ms interval) of two or more runs
    (label -> :class:`~perflab.measure.result.LoadResult` or an intervals DataFrame), each compared with
    the run of lowest median by :func:`~perflab.measure.significance.compare_samples`:
    'p99 per interval: async median 1.20 ms (n = 50); sync 3.40 ms, higher (n = 50 vs 50, Mann-Whitney
    p < 0.001, ratio 2.83x (95% CI 2.5x-3.1x)); virtual 1.25 ms, no difference detectable (...).'"""
    samples = {}
    for k, v in runs.items():
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
    return f"{level} per interval: " + "; ".join(parts) + "."


# --- latency over time vs server events ------------------------------------------------------------

def intervals_with_events(intervals: pd.DataFrame, stats: pd.DataFrame, counter: str,
                          active: str | None = None) -> pd.Series:
    """For each latency interval (``start_s``, ``end_s``), whether the server event ``counter`` (a
    cumulative stats column, e.g. ``storage.flushes``) may have happened during it: the counter grew
    between the last stats sample at or before the interval's start and the first sample at or after
    its end, or the gauge ``active`` (e.g. ``storage.flush_active``) was > 0 in a sample inside it.
    With stats sampled every d seconds an event is attributed to every interval it could overlap, so
    sample more often than the interval length for a sharp attribution. ``stats.t_s`` must share the
    intervals' time origin."""
    if stats is None or len(stats) == 0 or counter not in stats:
        return pd.Series(False, index=intervals.index)
    s = stats.sort_values("t_s")
    t = s["t_s"].to_numpy(dtype=float)
    c = pd.to_numeric(s[counter], errors="coerce").ffill().fillna(0).to_numpy()
    g = pd.to_numeric(s[active], errors="coerce").fillna(0).to_numpy() if active and active in s else None
    flags = []
    for start, end in zip(intervals["start_s"], intervals["end_s"]):
        before = c[t <= start + 1e-9]
        after = c[t >= end - 1e-9]
        base = before[-1] if len(before) else c[0]
        last = after[0] if len(after) else c[-1]
        hit = bool(last > base)
        if g is not None and not hit:
            inside = (t >= start) & (t <= end)
            hit = bool((g[inside] > 0).any())
        flags.append(hit)
    return pd.Series(flags, index=intervals.index)


def describe_event_effect(intervals: pd.DataFrame, stats: pd.DataFrame, event: str = "flush",
                          counter: str = metrics.FLUSHES, active: str | None = metrics.FLUSH_ACTIVE,
                          column: str = "p99_ms") -> str:
    """'p99 is higher in the 12 intervals during which a flush ran: median 14.2 ms vs 1.1 ms in the 38
    without (n = 12 vs 38, Mann-Whitney p < 0.001, ratio 12.9x (95% CI ...)).' -- or 'no difference
    detectable' -- or why no comparison is possible."""
    iv = intervals
    if "tag" in iv:
        iv = iv[iv["tag"] == "corrected"]
    if len(iv) == 0:
        return f"No latency intervals were recorded, so the effect of a {event} cannot be measured."
    flags = intervals_with_events(iv, stats, counter, active)
    return _effect_sentence(iv, flags.values, event, column, f"the server's `{counter}` counter did not move")


def describe_events_effect(intervals: pd.DataFrame, events: pd.DataFrame, kind: str = "flush",
                           column: str = "p99_ms") -> str:
    """Like :func:`describe_event_effect`, from the server's timed events (:mod:`perflab.server.events`):
    an interval is "with a <kind>" when an event of that kind overlaps the time its slow requests were
    in flight (``[start - p99, end]``, the rule of :mod:`perflab.measure.attribution`)."""
    iv = intervals
    if "tag" in iv:
        iv = iv[iv["tag"] == "corrected"]
    if "count" in iv:
        iv = iv[iv["count"] > 0]
    if len(iv) == 0:
        return f"No latency intervals were recorded, so the effect of a {kind} cannot be measured."
    ev = events[events["event"] == kind] if events is not None and len(events) else None
    if ev is None or len(ev) == 0:
        return (f"No {kind} ran during the {len(iv)} measured intervals (the server reported none), so this run "
                f"shows no {kind} effect.")
    s, e = ev["start_s"].to_numpy(), ev["end_s"].to_numpy()
    flags = np.array([bool(((s < r.end_s) & (e > r.start_s - r.p99_ms / 1000.0)).any()) for r in iv.itertuples()])
    return _effect_sentence(iv, flags, kind, column, "the server reported none")


def _effect_sentence(iv: pd.DataFrame, flags, event: str, column: str, why_none: str) -> str:
    with_ev, without = iv[flags], iv[~flags]
    level = column.replace("_ms", "").replace("p999", "p99.9")
    if len(with_ev) == 0:
        return f"No {event} ran during the {len(iv)} measured intervals ({why_none}), so this run shows no {event} effect."
    if len(without) == 0:
        return f"A {event} was running in every one of the {len(iv)} measured intervals; there is no quiet interval to compare with."
    d = compare_samples(without[column], with_ev[column])
    worst = float(with_ev[column].max())
    if d.significant:
        return (f"{level} is {d.direction} in the {d.n_b} intervals during which a {event} ran: median {fmt.ms(d.median_b)} "
                f"(worst {fmt.ms(worst)}) vs {fmt.ms(d.median_a)} in the {d.n_a} without ({d.evidence}).")
    return (f"No difference in {level} detectable between the {d.n_b} intervals with a {event} (median "
            f"{fmt.ms(d.median_b)}, worst {fmt.ms(worst)}) and the {d.n_a} without ({fmt.ms(d.median_a)}; "
            f"{d.evidence}).")


def describe_trend(intervals: pd.DataFrame, column: str = "p99_ms", alpha: float = 0.01,
                   min_change: float = 0.5) -> str:
    """Whether latency trends over the run (Kendall's tau against time at ``alpha`` and a Theil-Sen change
    above ``min_change`` of the median: a queue building up) or stays flat, with n."""
    iv = intervals[intervals["tag"] == "corrected"] if "tag" in intervals else intervals
    iv = iv.dropna(subset=[column])
    if len(iv) < 4:
        return ""
    tr = trend(iv[column])
    level = column.replace("_ms", "").replace("p999", "p99.9")
    if tr.significant(alpha, min_change):
        if tr.change > 0:
            return (f"{level} grows during the run ({fmt.ms(tr.first)} in the first third, {fmt.ms(tr.last)} in the last; "
                    f"{tr.evidence}): requests queue up, the rate is above what the server sustains.")
        return f"{level} falls during the run ({fmt.ms(tr.first)} to {fmt.ms(tr.last)}; {tr.evidence}): a warm-up effect."
    return f"{level} shows no trend over the run ({fmt.ms(tr.first)} in the first third, {fmt.ms(tr.last)} in the last; {tr.evidence})."


# --- profiles --------------------------------------------------------------------------------------

def describe_categories(shares: Mapping[str, float] | pd.Series, event: str = "cpu", top: int = 4,
                        focus: tuple[str, ...] = ()) -> str:
    """'Of the cpu samples, 41% are network I/O, 18% HTTP parsing, 9% storage, 6% GC.' from a
    category -> share (0..1) mapping; ``focus`` categories are always named."""
    s = pd.Series(dict(shares), dtype=float) if not isinstance(shares, pd.Series) else shares.astype(float)
    s = s[s > 0].sort_values(ascending=False)
    if s.empty:
        return f"The {event} profile has no samples."
    total = float(s.sum())
    if total > 1.5:  # percentages or sample counts: normalise
        s = s / total
    names = list(s.index[:top]) + [f for f in focus if f in s.index and f not in s.index[:top]]
    parts = [f"{fmt.pct(float(s[n]))} {n}" for n in names]
    what = {"cpu": "CPU samples", "alloc": "allocated bytes", "lock": "lock wait time",
            "wall": "wall-clock samples"}.get(event, f"{event} samples")
    return f"Of the {what}, " + ", ".join(parts) + "."


def describe_top_frames(frames: pd.DataFrame, n: int = 3, name_col: str = "frame", share_col: str = "self_share") -> str:
    """'The hottest frames (self time): A 12%, B 8%, C 5%.'"""
    if frames is None or len(frames) == 0 or name_col not in frames or share_col not in frames:
        return ""
    top = frames.sort_values(share_col, ascending=False).head(n)
    parts = [f"`{_short(r[name_col])}` {fmt.pct(float(r[share_col]))}" for _, r in top.iterrows()]
    return "The hottest frames by self time: " + ", ".join(parts) + "."


def _short(frame: str, width: int = 70) -> str:
    frame = str(frame)
    return frame if len(frame) <= width else "..." + frame[-(width - 3):]


def describe_diff(diff: pd.DataFrame, a: str, b: str, n: int = 3, name_col: str = "category",
                  delta_col: str = "delta") -> str:
    """What grew and what shrank between profile ``a`` and ``b`` (``delta`` = share in b - share in a)."""
    if diff is None or len(diff) == 0 or delta_col not in diff:
        return ""
    d = diff.sort_values(delta_col)
    grew = d[d[delta_col] > 0.005].tail(n).iloc[::-1]
    shrank = d[d[delta_col] < -0.005].head(n)
    parts = []
    if len(grew):
        parts.append("grew: " + ", ".join(f"{r[name_col]} (+{fmt.pct(float(r[delta_col]))[:-1]} points)" for _, r in grew.iterrows()))
    if len(shrank):
        parts.append("shrank: " + ", ".join(f"{r[name_col]} ({fmt.pct(float(r[delta_col]))[:-1]} points)" for _, r in shrank.iterrows()))
    if not parts:
        return f"From {a} to {b} no category moved by more than half a point."
    return f"From {a} to {b}, " + "; ".join(parts) + "."


# --- breakpoints -----------------------------------------------------------------------------------

def describe_breakpoint(label: str, result) -> str:
    """'**GET, 64 connections** keeps up to 50,000 req/s (interval 48,000-52,000, resolved; probes
    valid); the lowest rate that failed every probe, 52,000 req/s, failed because p99 12.1 ms > 10 ms
    (11 probes).' from a :class:`~perflab.breakpoint.BreakpointResult`."""
    if result.rate is None:
        text = f"**{label}**: no probed rate met the criteria ({result.outcome})"
    else:
        text = (f"**{label}** keeps up to {fmt.rate(result.rate)} (interval {fmt.interval(result.interval, 'req/s')}, "
                f"{result.outcome}; probes {result.validity or 'not assessed'})")
    failing = [p for p in result.probes if p.judgement.passed is False and (result.rate is None or p.rate > result.rate)]
    if failing:
        first = min(failing, key=lambda p: p.rate)
        text += f"; the lowest failing probe, {fmt.rate(first.rate)}, failed because {first.judgement.reason}"
    invalid = [p for p in result.probes if p.judgement.passed is None]
    if invalid:
        text += f"; {len(invalid)} probe(s) were invalid (the generator was the limit) and not counted"
    text += f" ({len(result.probes)} probes)."
    host = getattr(result, "host_spread", None)
    if host is not None and host > (result.host_limit or 0):
        note = result.host_note()
        text += f" {note[0].upper()}{note[1:]}, so a repeat moves with it."
    return text


def compare_breakpoints(results: Mapping[str, object], what: str = "breakpoint") -> str:
    """Breakpoints with intervals, each compared with the highest: a difference only when the intervals
    are disjoint. 'Breakpoint: async 50,000 req/s (48,000-52,000); sync 31,000 req/s (29,760-32,240),
    lower (intervals [..] and [..] do not overlap).'"""
    vals = {k: r for k, r in results.items() if r is not None and r.rate is not None
            and r.interval[0] is not None}
    if not vals:
        return f"No {what} was measured."
    order = sorted(vals, key=lambda k: vals[k].rate, reverse=True)
    best = vals[order[0]]

    parts = [f"{order[0]} {fmt.rate(best.rate)} ({fmt.interval(best.interval)})"]
    for k in order[1:]:
        r = vals[k]
        c = compare_intervals(best.interval, r.interval)
        parts.append(f"{k} {fmt.rate(r.rate)} ({fmt.interval(r.interval)}), {c.direction} ({c.evidence})")
    return f"{what[0].upper() + what[1:]}: " + "; ".join(parts) + "."


# --- one-sentence answers (the findings the index page leads with) ----------------------------------

def answer_fixed_rate(loads: Mapping[str, object], sla_ms: float) -> str:
    """'All 4 runs kept p99 within the 10.0 ms SLA at their fixed rates; the highest p99 is 1.20 ms (GET,
    32 connections at 3,000 req/s).' ``loads``: label -> LoadResult; p99 is read from each run's
    spectrum, like every other sentence here."""
    if not loads:
        return "No fixed-rate run was measured."
    p99 = {k: value_at(r.spectrum, 99) for k, r in loads.items()}
    worst = max(p99, key=p99.get)
    above = [k for k in loads if p99[k] > sla_ms]
    short = [k for k, r in loads.items() if r.achieved_ratio < 0.99]
    where = f"{worst} at {fmt.rate(loads[worst].target_rate)}"
    if not above:
        text = (f"All {len(loads)} runs kept p99 within the {fmt.ms(sla_ms)} SLA at their fixed rates; the highest "
                f"p99 is {fmt.ms(p99[worst])} ({where})")
    else:
        text = (f"{len(above)} of {len(loads)} runs had p99 above the {fmt.ms(sla_ms)} SLA; the highest is "
                f"{fmt.ms(p99[worst])} ({where})")
    if short:
        text += f"; {', '.join(short)} fell short of the offered rate (below 99%)"
    return text + "."


def answer_breakpoints(rows: list[dict]) -> str:
    """'PUT, 64 connections keeps up to 41,000 req/s (interval [41,000, 45,000]); GET, 64 connections
    to 52,000 req/s (interval [52,000, open)).' from breakpoint rows (``findings.breakpoint_row``)."""
    if not rows:
        return "No breakpoint was searched."
    parts = []
    for r in rows:
        who = f"{r['workload']}" + (f", {r['connections']} connection{'s' if r['connections'] != 1 else ''}"
                                    if r.get("connections") else "") + (f" ({r['mode']})" if r.get("mode") else "")
        if r.get("rate") is None:
            parts.append(f"{who}: no probed rate passed")
        else:
            iv = fmt.interval(r.get("interval"))
            parts.append(f"{who} keeps up to {fmt.rate(r['rate'])}" + (f" (interval {iv})" if iv else ""))
    return "; ".join(parts) + "."


def compare_breakpoint_rows(a: str, row_a: dict, b: str, row_b: dict) -> str:
    """Whether ``b``'s breakpoint differs from ``a``'s, by their intervals (different only when they
    do not overlap; an open upper end reaches to infinity): 'async's breakpoint is higher than
    sync's: intervals [...] and [...] do not overlap.'"""
    ia, ib = row_a.get("interval"), row_b.get("interval")
    if row_a.get("rate") is None or row_b.get("rate") is None or not ia or not ib:
        return f"{b} and {a} cannot be compared: one of the searches found no breakpoint."
    c = compare_intervals(ia, ib)
    if c.direction is Direction.HIGHER:
        return f"{b}'s breakpoint is higher than {a}'s: {c.evidence}."
    if c.direction is Direction.LOWER:
        return f"{b}'s breakpoint is lower than {a}'s: {c.evidence}."
    return f"No difference between the breakpoints of {a} and {b} is detectable: {c.evidence}."
