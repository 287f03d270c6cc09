"""Latency over a run's window next to what the server was doing: the timeline figure (interval p50/p99/max
on the generator's clock, the server's events as shaded spans by kind, the spikes marked, zoomable) and
what it shows in words (the effect of a kind of event, which events the spikes overlap, a trend).

An effect is claimed only with a test behind it (a Mann-Whitney test on the per-interval latencies with and
without the event, with n; Kendall's tau for a trend; the spikes' attribution is a binomial test,
:mod:`perflab.timeline.attribution`): the intervals compared are of one run, so no method between runs is
involved.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ... import fmt
from ...measure.result import LoadResult
from ...server import metrics
from ...stats.significance import compare_samples, trend

#: a stable colour per event kind, so every timeline of the lab reads the same way
KIND_COLOURS = {
    "flush": "#1f77b4",
    "compaction": "#ff7f0e",
    "gc": "#2ca02c",
    "write_stall": "#d62728",
    "wal_sync": "#9467bd",
    "queue_full": "#8c564b",
    "debug_pause": "#7f7f7f",
}
_OTHER = ["#e377c2", "#bcbd22", "#17becf"]


def _colour(kind: str, i: int) -> str:
    return KIND_COLOURS.get(kind, _OTHER[i % len(_OTHER)])


def interval_width(result_or_intervals) -> str:
    """'100 ms': how long each latency interval of a run is (its interval log's, ``LoadParams.hdr_interval``),
    read from its intervals, as a timeline's title says it; 'interval' when it has none."""
    iv = result_or_intervals.load.intervals if hasattr(result_or_intervals, "load") else result_or_intervals
    if iv is None or len(iv) == 0 or not {"start_s", "end_s"} <= set(iv.columns):
        return "interval"
    width = float((iv["end_s"] - iv["start_s"]).median())
    return f"{width * 1000:.3g} ms" if width < 1 else f"{width:.3g} s"


def timeline_figure(
    result_or_intervals,
    events: pd.DataFrame | None = None,
    spikes: pd.DataFrame | None = None,
    title: str | None = None,
) -> go.Figure:
    """Interval latency (ms, log axis) against seconds into the measured window, events as spans:
    ``timeline_figure(result)`` of an :class:`~perflab.experiment.ExperimentResult` (its latency intervals,
    events and attribution), or ``timeline_figure(intervals, events)`` of the two tables."""
    if hasattr(result_or_intervals, "load"):
        res = result_or_intervals
        iv = res.load.intervals
        events = res.events if events is None else events
        if spikes is None and res.attribution is not None:
            spikes = res.attribution.spikes
    else:
        iv = result_or_intervals
    if iv is None or len(iv) == 0:
        raise ValueError("intervals: no latency intervals to draw (was the run recorded with an hdr log?)")
    iv = iv[iv["tag"] == "corrected"] if "tag" in iv else iv
    iv = iv[iv["count"] > 0] if "count" in iv else iv
    mid = (iv["start_s"] + iv["end_s"]) / 2
    fig = go.Figure()
    for col, name, dash in (("max_ms", "max", "dot"), ("p99_ms", "p99", "solid"), ("p50_ms", "p50", "dash")):
        if col in iv:
            fig.add_trace(
                go.Scatter(
                    x=mid,
                    y=iv[col],
                    mode="lines",
                    name=name,
                    line={"dash": dash, "width": 1.5},
                    hovertemplate=f"{name} %{{y:.3f}} ms at %{{x:.2f}} s<extra></extra>",
                )
            )
    if spikes is not None and len(spikes):
        fig.add_trace(
            go.Scatter(
                x=(spikes["start_s"] + spikes["end_s"]) / 2,
                y=spikes["p99_ms"],
                mode="markers",
                name="spike",
                marker={"symbol": "x", "size": 9, "color": "black"},
                text=[", ".join(c) or "no event" for c in spikes.get("causes", [[]] * len(spikes))],
                hovertemplate="spike: p99 %{y:.2f} ms; overlaps %{text}<extra></extra>",
            )
        )
    if events is not None and len(events):
        for i, (kind, ev) in enumerate(events.groupby("event", sort=True)):
            xs, ys, text = [], [], []
            for s, e, d in zip(ev["start_s"], ev["end_s"], ev["dur_ms"]):
                e = max(e, s + 0.0005)  # a sub-millisecond pause still gets a visible sliver
                xs += [s, s, e, e, s, None]
                ys += [0, 1, 1, 0, 0, None]
                text += [f"{kind} {d:.2f} ms"] * 5 + [None]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    yaxis="y2",
                    fill="toself",
                    mode="lines",
                    name=f"{kind} ({len(ev)})",
                    line={"width": 0},
                    fillcolor=_colour(kind, i),
                    opacity=0.25,
                    text=text,
                    hoveron="fills+points",
                    hovertemplate="%{text}<extra></extra>",
                )
            )
    fig.update_layout(
        title=title or "Latency per interval and the server's events",
        xaxis={"title": "seconds into the measured window", "rangeslider": {"visible": True}},
        yaxis={"title": "latency, ms (log)", "type": "log"},
        yaxis2={"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
        legend={"title": {"text": "series / events"}},
        hovermode="closest",
        margin={"t": 50},
    )
    return fig


def latency_timelines(runs: dict, title: str | None = None) -> go.Figure:
    """p50 (dotted) and p99 (solid) per interval of several runs on one time axis (seconds since each
    run's measured window began). ``runs``: label -> LoadResult or intervals DataFrame."""
    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict of label -> LoadResult or intervals")
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"]
    fig = go.Figure()
    for k, (label, obj) in enumerate(runs.items()):
        iv = obj.intervals if isinstance(obj, LoadResult) else obj
        if not isinstance(iv, pd.DataFrame) or iv.empty:
            continue
        t = (iv["start_s"] + iv["end_s"]) / 2
        colour = palette[k % len(palette)]
        for col, name, dash in (("p99_ms", "p99", "solid"), ("p50_ms", "p50", "dot")):
            if col in iv:
                fig.add_trace(
                    go.Scatter(
                        x=t,
                        y=iv[col],
                        mode="lines+markers",
                        name=f"{label}: {name}",
                        line=dict(color=colour, dash=dash),
                        marker=dict(size=4),
                        hovertemplate=f"{label}<br>t=%{{x:.1f}} s<br>{name} %{{y:.3f}} ms<extra></extra>",
                    )
                )
    fig.update_xaxes(title="time since the start of the measured window, s")
    fig.update_yaxes(title="latency per interval, ms", rangemode="tozero")
    fig.update_layout(
        title=title or "Latency over time (p99 solid, p50 dotted)", template="plotly_white", hovermode="x unified"
    )
    return fig


# --- in words --------------------------------------------------------------------------------------


def intervals_with_events(
    intervals: pd.DataFrame, stats: pd.DataFrame, counter: str, active: str | None = None
) -> pd.Series:
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


def describe_event_effect(
    intervals: pd.DataFrame,
    stats: pd.DataFrame,
    event: str = "flush",
    counter: str = metrics.FLUSHES,
    active: str | None = metrics.FLUSH_ACTIVE,
    column: str = "p99_ms",
) -> str:
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


def describe_events_effect(
    intervals: pd.DataFrame, events: pd.DataFrame, kind: str = "flush", column: str = "p99_ms"
) -> str:
    """Like :func:`describe_event_effect`, from the server's timed events (:mod:`perflab.timeline.events`):
    an interval is "with a <kind>" when an event of that kind overlaps the time its slow requests were
    in flight (``[start - p99, end]``, the rule of :mod:`perflab.timeline.attribution`)."""
    iv = intervals
    if "tag" in iv:
        iv = iv[iv["tag"] == "corrected"]
    if "count" in iv:
        iv = iv[iv["count"] > 0]
    if len(iv) == 0:
        return f"No latency intervals were recorded, so the effect of a {kind} cannot be measured."
    ev = events[events["event"] == kind] if events is not None and len(events) else None
    if ev is None or len(ev) == 0:
        return (
            f"No {kind} ran during the {len(iv)} measured intervals (the server reported none), so this run "
            f"shows no {kind} effect."
        )
    s, e = ev["start_s"].to_numpy(), ev["end_s"].to_numpy()
    flags = np.array([bool(((s < r.end_s) & (e > r.start_s - r.p99_ms / 1000.0)).any()) for r in iv.itertuples()])
    return _effect_sentence(iv, flags, kind, column, "the server reported none")


def _effect_sentence(iv: pd.DataFrame, flags, event: str, column: str, why_none: str) -> str:
    with_ev, without = iv[flags], iv[~flags]
    level = column.replace("_ms", "").replace("p999", "p99.9")
    if len(with_ev) == 0:
        return (
            f"No {event} ran during the {len(iv)} measured intervals ({why_none}), so this run shows no {event} effect."
        )
    if len(without) == 0:
        return f"A {event} was running in every one of the {len(iv)} measured intervals; there is no quiet interval to compare with."
    d = compare_samples(without[column], with_ev[column])
    worst = float(with_ev[column].max())
    if d.significant:
        return (
            f"{level} is {d.direction} in the {d.n_b} intervals during which a {event} ran: median {fmt.ms(d.median_b)} "
            f"(worst {fmt.ms(worst)}) vs {fmt.ms(d.median_a)} in the {d.n_a} without ({d.evidence})."
        )
    return (
        f"No difference in {level} detectable between the {d.n_b} intervals with a {event} (median "
        f"{fmt.ms(d.median_b)}, worst {fmt.ms(worst)}) and the {d.n_a} without ({fmt.ms(d.median_a)}; "
        f"{d.evidence})."
    )


def describe_trend(
    intervals: pd.DataFrame, column: str = "p99_ms", alpha: float = 0.01, min_change: float = 0.5
) -> str:
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
            return (
                f"{level} grows during the run ({fmt.ms(tr.first)} in the first third, {fmt.ms(tr.last)} in the last; "
                f"{tr.evidence}): requests queue up, the rate is above what the server sustains."
            )
        return (
            f"{level} falls during the run ({fmt.ms(tr.first)} to {fmt.ms(tr.last)}; {tr.evidence}): a warm-up effect."
        )
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
    (:mod:`perflab.timeline.attribution`)."""
    return [f"{k}: {r.attribution.summary()}" for k, r in runs.items() if r.attribution is not None]
