"""Sentences generated from measured facts, for the notebooks' commentary cells.

Every function takes numbers the lab recorded (spectra, interval tables, stats samples, profile
breakdowns, breakpoint probes) and returns plain-English Markdown. No number is ever typed into a
notebook: the notebook calls these and displays the result, so the text always matches the data.

A sentence claims a difference only when a stated test supports it (:mod:`perflab.measure.significance`:
a Mann-Whitney test with a bootstrap interval of the ratio for samples such as per-interval p99s,
disjoint intervals for breakpoints, Kendall's tau for trends), and always gives n; otherwise it says
"no difference detectable with n = ...". A sentence that compares two runs or searches names its method
(:mod:`perflab.measure.methods`): here always a sequential one, the runs measured one after the other;
the interleaved verdicts of an A/B comparison are :mod:`perflab.analysis.ab`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .. import fmt
from ..measure.methods import Method
from ..measure.significance import Direction, compare_intervals, compare_samples, trend
from ..profiling import flame
from ..server import metrics
from .findings import highest, workload_label

#: the percentile levels a commentary talks about (wrk2's "Latency Distribution" block)
LEVELS = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0)


# --- labels and lists ----------------------------------------------------------------------------

def load_label(op: str, connections: int, placement: str | None = None) -> str:
    """What a run or a search is called everywhere in a notebook: 'PUT, 1 connection', 'GET, 64
    connections [split]' (the placement when a notebook measures several)."""
    return f"{op}, {fmt.count(connections, 'connection')}" + (f" [{placement}]" if placement else "")


def memtable_label(memtable_size: str, flush_threads: int) -> str:
    """A storage configuration: 'memtable 4m, 2 flush threads'."""
    return f"memtable {memtable_size}, {fmt.count(flush_threads, 'flush thread')}"


def executor_label(workers: int, queue: int) -> str:
    """An executor configuration: '2 workers, queue 128'."""
    return f"{fmt.count(workers, 'worker')}, queue {queue}"


def bullets(lines) -> str:
    """A Markdown list of the non-empty ``lines``."""
    return "\n".join(f"- {line}" for line in lines if line)


def _load(obj):
    """The load of an experiment's result, or ``obj`` itself (a LoadResult or an intervals table)."""
    from ..measure.result import LoadResult

    load = getattr(obj, "load", None) if not isinstance(obj, pd.DataFrame) else None
    return load if isinstance(load, LoadResult) else obj


# --- percentile spectra ----------------------------------------------------------------------------

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
    text = (f"**{label}**: p50 {fmt.ms(lv[50])}, p99 {fmt.ms(lv[99])}, p99.9 {fmt.ms(lv[99.9])}, "
            f"max {fmt.ms(lv[100])} ({n:,} requests recorded)")
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
    the run of lowest median by :func:`~perflab.measure.significance.compare_samples`, the method named:
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


def describe_spectra(runs: Mapping[str, object], sla_ms: float | None = None,
                     compare: tuple[str, ...] = ("p99_ms",)) -> str:
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
        lines.append(f"{describe_spectrum(label, r, sla_ms=sla_ms)} Achieved "
                     f"{fmt.rate(r.load.achieved_rate)} of {fmt.rate(r.load.target_rate)}, {r.load.server_errors} "
                     f"errors; validity: {validity}.")
    return lines


def describe_prefill(runs: Mapping[str, object]) -> str:
    """What the prefill wrote before the first of ``runs`` that had one started its server ('' when none
    had one)."""
    first = next((r for r in runs.values() if getattr(r, "prefill", None)), None)
    if first is None:
        return ""
    parts = [f"{k.replace('_', ' ')} {fmt.number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v}"
             for k, v in first.prefill.items() if k not in ("json", "dir")]   # the scratch directory is gone
    return "The database at the start (prefill): " + ", ".join(parts) + "."


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
    """Like :func:`describe_event_effect`, from the server's timed events (:mod:`perflab.measure.events`):
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


def describe_timeline(result, kinds: tuple[str, ...] = (), trend: bool = True, label: str | None = None) -> str:
    """What a run's latency timeline shows: the effect of each event kind in ``kinds`` (``flush``,
    ``compaction``: :func:`describe_events_effect`), which events the spikes overlap (the run's
    attribution), and whether latency trends (:func:`describe_trend`, when ``trend``); with ``label``, in
    front in bold."""
    iv = result.load.intervals
    parts = [describe_events_effect(iv, result.events, k) for k in kinds]
    parts.append(result.attribution.summary() if result.attribution is not None else "")
    parts.append(describe_trend(iv) if trend else "")
    text = " ".join(p for p in parts if p)
    return f"**{label}**: {text}" if label else text


def describe_spikes(runs: Mapping[str, object]) -> list[str]:
    """'label: <which events its latency spikes overlap>' for each run with an attribution
    (:mod:`perflab.measure.attribution`)."""
    return [f"{k}: {r.attribution.summary()}" for k, r in runs.items() if r.attribution is not None]


def describe_event_effects(runs: Mapping[str, object], kind: str) -> list[str]:
    """'label: <the effect of the kind of event on its latency>' for each run (label -> ExperimentResult)."""
    return [f"{k}: {describe_events_effect(r.load.intervals, r.events, kind)}" for k, r in runs.items()]


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


def describe_profile(label: str, profile, top: int = 4, focus: tuple[str, ...] = ()) -> str:
    """'**label** (cpu, 12,345 samples): Of the CPU samples, ... The hottest frames by self time: ...' for a
    :class:`~perflab.profiling.profiler.Profile` (categories by :func:`describe_categories`)."""
    cats = profile.categories()
    shares = dict(zip(cats["category"], cats["share"])) if len(cats) else {}
    text = (f"**{label}** ({profile.event}, {profile.samples:,} samples): "
            + describe_categories(shares, profile.event, top=top, focus=focus))
    frames = describe_top_frames(profile.frames(), 3)
    return text + (" " + frames if frames else "")


#: the profile categories (:data:`perflab.profiling.flame.CATEGORY_ORDER`) grouped as the lab reports ask
CPU_GROUPS = {"network I/O": ("network read", "network write"), "HTTP parsing": ("HTTP parsing",),
              "storage": tuple(c for c in flame.CATEGORY_ORDER if c.startswith("storage")),
              "executor queue": ("executor queue",), "locks": ("locks",)}
#: the groups every CPU split names, even at 0% (the others only when present)
ALWAYS_NAMED = ("network I/O", "HTTP parsing", "storage")


def describe_cpu_split(runs: Mapping[str, object]) -> list[str]:
    """For each run with a CPU profile: 'label: of the CPU samples, 41% network I/O, 18% HTTP parsing, 9%
    storage, 3% executor queue.' (:data:`CPU_GROUPS`; :data:`ALWAYS_NAMED` always, the others when present)."""
    lines = []
    for label, r in runs.items():
        cpu = r.profiles.get("cpu") or r.profiles.get("itimer")
        if cpu is None or not cpu.samples:
            continue
        cats = cpu.categories()
        shares = {group: sum(float(cats.loc[cats["category"] == c, "share"].sum()) for c in members)
                  for group, members in CPU_GROUPS.items()}
        parts = [f"{fmt.pct(share)} {group}" for group, share in shares.items() if group in ALWAYS_NAMED or share > 0]
        lines.append(f"{label}: of the CPU samples, " + ", ".join(parts) + ".")
    return lines


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
    are disjoint, the method named (the searches ran one after the other). 'Breakpoint (sequential
    intervals): async 50,000 req/s (48,000-52,000); sync 31,000 req/s (29,760-32,240), lower (intervals [..]
    and [..] do not overlap).'"""
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
    return f"{what[0].upper() + what[1:]} ({Method.SEQUENTIAL_INTERVALS}): " + "; ".join(parts) + "."


def describe_breakpoints(results: Mapping[str, object]) -> list[str]:
    """:func:`describe_breakpoint` of every search (label -> BreakpointResult)."""
    return [describe_breakpoint(k, r) for k, r in results.items()]


def describe_unresolved(results: Mapping[str, object]) -> str:
    """Which searches did not resolve to a tight interval (''  when all did)."""
    from ..breakpoint.run import TIGHT

    loose = [k for k, r in results.items() if not r.converged]
    if not loose:
        return ""
    return f"Not resolved to within ±{TIGHT:.0%}: {', '.join(loose)} (see each one's outcome and interval)."


def describe_search_validity(searches: Mapping[str, object], runs: Mapping[str, object]) -> list[str]:
    """For each label with both a search and a fixed-rate run: 'async: validity of the breakpoint's edge
    probes: valid; of the profile run: suspect: <reason>.'"""
    return [f"{k}: validity of the breakpoint's edge probes: {r.validity or 'not assessed'}; of the profile run: "
            f"{runs[k].validity.badge if runs[k].validity is not None else 'not assessed'}."
            for k, r in searches.items() if k in runs]


class _Estimate:
    """A breakpoint row seen as a search (``rate``, ``interval``), for :func:`compare_breakpoints`."""

    def __init__(self, row: dict):
        self.rate = row.get("rate")
        self.interval = tuple(row.get("interval") or (None, None))


def _several_placements(rows: list[dict]) -> bool:
    return len({r.get("placement") for r in rows}) > 1


def describe_ceiling_shares(rows: list[dict], ceiling: str = "status") -> list[str]:
    """How close each breakpoint comes to the request-handling ceiling (the row whose workload is
    ``ceiling``, searched at the same placement): 'GET, 64 connections reaches 62% of the request-handling
    ceiling (73,500 req/s) (from the intervals: 55%-70%).' ``rows``: breakpoint rows with ``workload``,
    ``connections``, ``rate``, ``interval`` and ``placement``."""
    several = _several_placements(rows)
    lines = []
    for top in (r for r in rows if r["workload"] == ceiling and r.get("rate")):
        c_lo, c_hi = top.get("interval") or (None, None)
        for r in rows:
            if r["workload"] == ceiling or r.get("placement") != top.get("placement") or not r.get("rate"):
                continue
            lo, hi = r.get("interval") or (None, None)
            span = (f" (from the intervals: {fmt.pct(lo / c_hi)}-{fmt.pct(hi / c_lo)})"
                    if None not in (lo, hi, c_lo, c_hi) else "")
            label = load_label(r["workload"], r["connections"], r.get("placement") if several else None)
            lines.append(f"{label} reaches {fmt.pct(r['rate'] / top['rate'])} of the request-handling ceiling "
                         f"({fmt.rate(top['rate'])}){span}.")
    return lines


def compare_by_connections(rows: list[dict], ceiling: str = "status") -> list[str]:
    """Each workload's breakpoints at its connection counts compared (:func:`compare_breakpoints`: a
    difference only when the intervals do not overlap), per placement; the ``ceiling`` is left out."""
    several = _several_placements(rows)
    groups: dict[tuple, dict] = {}
    for r in rows:
        if r["workload"] != ceiling:
            groups.setdefault((r["workload"], r.get("placement")), {})[
                fmt.count(r["connections"], "connection")] = _Estimate(r)
    return [compare_breakpoints(same, what=f"{op} breakpoint" + (f" [{p}]" if several else ""))
            for (op, p), same in groups.items() if len(same) > 1]


def placement_table(rows: list[dict]) -> str:
    """The same searches at each CPU placement side by side, as a Markdown table with the comparison of
    their breakpoints (a difference only when the intervals do not overlap); ``""`` with one placement."""
    places = list(dict.fromkeys(r.get("placement") for r in rows))
    if len(places) < 2:
        return ""
    searches = list(dict.fromkeys((r["workload"], r["connections"]) for r in rows))
    lines = ["**CPU placement.** The same searches with server and generator sharing the CPUs and on "
             "disjoint CPU sets (a difference only when the intervals do not overlap):", "",
             "| search | " + " | ".join(places) + " | comparison |", "|---|" + "---|" * (len(places) + 1)]
    for op, conns in searches:
        by = {p: next(r for r in rows if (r["workload"], r["connections"], r.get("placement")) == (op, conns, p))
              for p in places}
        cells = [fmt.estimate(r.get("rate"), r.get("interval"), "req/s") + f", {r.get('verdict')}" for r in by.values()]
        verdict = compare_breakpoints({p: _Estimate(r) for p, r in by.items()})
        lines.append(f"| {load_label(op, conns)} | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(lines)


def _ranked(grid: Mapping) -> list:
    """The keys of the searches that found a breakpoint, highest first."""
    return sorted((k for k, r in grid.items() if r.rate), key=lambda k: grid[k].rate, reverse=True)


def describe_executor_grid(grid: Mapping[tuple[int, int], object]) -> str:
    """The executor grid's breakpoints (``(workers, queue)`` -> BreakpointResult): the best and the worst
    configuration, the worker counts compared at each queue capacity, the configurations that passed no
    probe."""
    ranked = _ranked(grid)
    if not ranked:
        return "No configuration passed even the lowest probe: lower start_rate or raise sla_ms."
    best, worst = ranked[0], ranked[-1]
    parts = [f"The best configuration is **{executor_label(*best)}**: {grid[best].describe()}; the worst is "
             f"{executor_label(*worst)}: {grid[worst].describe()}."]
    workers = list(dict.fromkeys(w for w, _ in grid))
    for q in dict.fromkeys(q for _, q in grid):
        parts.append(compare_breakpoints({fmt.count(w, "worker"): grid[(w, q)] for w in workers if (w, q) in grid},
                                         what=f"breakpoint with queue {q}"))
    failed = [executor_label(*k) for k, r in grid.items() if not r.rate]
    if failed:
        parts.append(f"No rate passed for: {', '.join(failed)}.")
    return " ".join(parts)


def describe_overload(table: pd.DataFrame, rate: float) -> str:
    """'Under overload (3,000 req/s), the share rejected with 503 ranges from 0% (1 worker, queue 1024) to
    41% (4 workers, queue 16); p99 from 2.10 ms to 180 ms.' ``table``:
    :func:`perflab.analysis.tables.overload_table` indexed by ``workers, queue``."""
    if table.empty:
        return "No overload run was measured."
    o = table.sort_values("rejected share", kind="stable")
    return (f"Under overload ({fmt.rate(rate)}), the share rejected with 503 ranges from "
            f"{fmt.pct(o['rejected share'].iloc[0])} ({executor_label(*o.index[0])}) to "
            f"{fmt.pct(o['rejected share'].iloc[-1])} ({executor_label(*o.index[-1])}); p99 from "
            f"{fmt.ms(table['p99, ms'].min())} to {fmt.ms(table['p99, ms'].max())}.")


# --- one-sentence answers (the findings the index page leads with) ----------------------------------

def answer_fixed_rate(loads: Mapping[str, object], sla_ms: float) -> str:
    """'All 4 runs kept p99 within the 10.0 ms SLA at their fixed rates; the highest p99 is 1.20 ms (GET,
    32 connections at 3,000 req/s).' ``loads``: label -> ExperimentResult or LoadResult; p99 is each load's
    own, like every other sentence here."""
    if not loads:
        return "No fixed-rate run was measured."
    loads = {k: _load(r) for k, r in loads.items()}
    p99 = {k: r.p99_ms for k, r in loads.items()}
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
        who = (load_label(r["workload"], r["connections"]) if r.get("connections") else f"{r['workload']}") \
            + (f" ({r['mode']})" if r.get("mode") else "")
        if r.get("rate") is None:
            parts.append(f"{who}: no probed rate passed")
        else:
            iv = fmt.interval(r.get("interval"))
            parts.append(f"{who} keeps up to {fmt.rate(r['rate'])}" + (f" (interval {iv})" if iv else ""))
    return "; ".join(parts) + "."


def compare_breakpoint_rows(a: str, row_a: dict, b: str, row_b: dict) -> str:
    """Whether ``b``'s breakpoint differs from ``a``'s, by their intervals (different only when they
    do not overlap; an open upper end reaches to infinity), the method named (two searches one after the
    other): 'async's breakpoint is higher than sync's (sequential intervals): intervals [...] and [...] do
    not overlap.'"""
    ia, ib = row_a.get("interval"), row_b.get("interval")
    if row_a.get("rate") is None or row_b.get("rate") is None or not ia or not ib:
        return f"{b} and {a} cannot be compared: one of the searches found no breakpoint."
    c = compare_intervals(ia, ib)
    how = f"({Method.SEQUENTIAL_INTERVALS})"
    if c.direction is Direction.HIGHER:
        return f"{b}'s breakpoint is higher than {a}'s {how}: {c.evidence}."
    if c.direction is Direction.LOWER:
        return f"{b}'s breakpoint is lower than {a}'s {how}: {c.evidence}."
    return f"No difference between the breakpoints of {a} and {b} is detectable {how}: {c.evidence}."


# --- the records of every run (the summary notebook) --------------------------------------------------

def describe_recorded_runs(runs: pd.DataFrame) -> str:
    """'12 runs are counted here, made at 2 git commits; by validity: valid 9, suspect 3; the newest is
    `<id>`.' from the ``runs`` index table (:func:`perflab.records.recorded`)."""
    if runs is None or runs.empty:
        return "No run is recorded yet: run notebooks 1-5 (or `make report`) first."
    commits = runs["git_commit"].dropna().nunique() if "git_commit" in runs else 0
    newest = runs.sort_values("created_at").iloc[-1]
    return (f"{len(runs)} runs are counted here, made at {fmt.count(commits, 'git commit')}; by validity: "
            + ", ".join(f"{v} {n}" for v, n in _validity_counts(runs).items())
            + f"; the newest is `{newest['run_id']}`.")


def _validity_counts(df: pd.DataFrame) -> pd.Series:
    v = df["validity"] if "validity" in df else pd.Series(index=df.index, dtype=object)
    return v.fillna("not assessed").value_counts()


def compare_configurations(rows: list[dict]) -> str:
    """For each workload (and connection count) with breakpoints of several configurations (``mode``),
    each compared with the highest, by their intervals, as a Markdown list. ``rows``: the latest
    breakpoint of each workload and configuration (:func:`perflab.analysis.history.latest`)."""
    if not rows:
        return "No breakpoint search is recorded yet (notebooks 2-4 record them)."
    lines = []
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("rate") is not None and (r.get("interval") or [None])[0] is not None:
            by.setdefault(workload_label(r), []).append(r)
    for workload, group in by.items():
        best = max(group, key=lambda r: r["rate"])
        lines += [f"{workload}: " + compare_breakpoint_rows(r["mode"], r, best["mode"], best) for r in group
                  if r is not best]
    return bullets(lines) or "Each workload has one configuration recorded: nothing to compare."


def describe_fixed_rate_runs(loads: pd.DataFrame) -> str:
    """'14 fixed-rate runs; the highest p99 is 12.1 ms (put.lua at 3,000 req/s, sync / lsm, validity valid,
    run `<id>`); the median p99 is 1.20 ms.' from :func:`perflab.analysis.history.fixed_rate_runs`."""
    if loads is None or loads.empty:
        return "No fixed-rate run is recorded yet (notebooks 1, 3, 4, 5 record them)."
    worst = loads.sort_values("p99_ms", ascending=False).iloc[0]
    return (f"{fmt.count(len(loads), 'fixed-rate run')}; the highest p99 is {fmt.ms(worst['p99_ms'])} "
            f"({worst['script']} at {fmt.rate(worst['target_rate'])}, {worst['configuration']}, validity "
            f"{worst['validity']}, run `{worst['run_id']}`); the median p99 is {fmt.ms(loads['p99_ms'].median())}.")


def describe_mean_categories(means: Mapping[str, pd.DataFrame], event: str = "cpu") -> str:
    """Per configuration, where its profiles' samples go on average: '**sync / lsm** (3 profiles): Of the
    CPU samples, ...'. ``means``: :func:`perflab.analysis.history.mean_categories`."""
    if not means:
        return f"No {event} profile is recorded yet (notebooks 1 and 3 record them)."
    return "\n\n".join(f"**{cfg}** ({fmt.count(int(m['profiles'].iloc[0]), 'profile')}): "
                        + describe_categories(dict(zip(m["category"], m["share"])), event, top=4)
                        for cfg, m in means.items())


def answer_recorded(runs: pd.DataFrame, rows: list[dict]) -> str:
    """The summary notebook's answer: how many runs at how many commits, by validity, and the highest
    breakpoint recorded."""
    if runs is None or runs.empty:
        return describe_recorded_runs(runs)
    commits = runs["git_commit"].dropna().nunique() if "git_commit" in runs else 0
    text = (f"{len(runs)} runs are counted ({', '.join(f'{n} {v}' for v, n in _validity_counts(runs).items())}) at "
            f"{fmt.count(commits, 'git commit')}")
    top = highest(rows)
    if top is not None:
        text += f"; the highest breakpoint is {fmt.rate(top['rate'])} ({workload_label(top)}, {top.get('mode')})"
    return text + "."
