"""The latency timeline: interval p50/p99/max on the generator's clock, with the server's events as
shaded spans by kind and the spikes marked, zoomable (a range slider under the plot).

``timeline(result)`` takes an :class:`~perflab.experiment.ExperimentResult` (its latency intervals,
events and attribution) or ``timeline(intervals, events)`` the two DataFrames.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

#: a stable colour per event kind, so every timeline of the lab reads the same way
KIND_COLOURS = {"flush": "#1f77b4", "compaction": "#ff7f0e", "gc": "#2ca02c", "write_stall": "#d62728",
                "wal_sync": "#9467bd", "queue_full": "#8c564b", "debug_pause": "#7f7f7f"}
_OTHER = ["#e377c2", "#bcbd22", "#17becf"]


def _colour(kind: str, i: int) -> str:
    return KIND_COLOURS.get(kind, _OTHER[i % len(_OTHER)])


def timeline(result_or_intervals, events: pd.DataFrame | None = None, spikes: pd.DataFrame | None = None,
             title: str | None = None) -> go.Figure:
    """Interval latency (ms, log axis) against seconds into the measured window, events as spans."""
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
            fig.add_trace(go.Scatter(x=mid, y=iv[col], mode="lines", name=name, line={"dash": dash, "width": 1.5},
                                     hovertemplate=f"{name} %{{y:.3f}} ms at %{{x:.2f}} s<extra></extra>"))
    if spikes is not None and len(spikes):
        fig.add_trace(go.Scatter(x=(spikes["start_s"] + spikes["end_s"]) / 2, y=spikes["p99_ms"], mode="markers",
                                 name="spike", marker={"symbol": "x", "size": 9, "color": "black"},
                                 text=[", ".join(c) or "no event" for c in spikes.get("causes", [[]] * len(spikes))],
                                 hovertemplate="spike: p99 %{y:.2f} ms; overlaps %{text}<extra></extra>"))
    if events is not None and len(events):
        for i, (kind, ev) in enumerate(events.groupby("event", sort=True)):
            xs, ys, text = [], [], []
            for s, e, d in zip(ev["start_s"], ev["end_s"], ev["dur_ms"]):
                e = max(e, s + 0.0005)  # a sub-millisecond pause still gets a visible sliver
                xs += [s, s, e, e, s, None]
                ys += [0, 1, 1, 0, 0, None]
                text += [f"{kind} {d:.2f} ms"] * 5 + [None]
            fig.add_trace(go.Scatter(x=xs, y=ys, yaxis="y2", fill="toself", mode="lines", name=f"{kind} ({len(ev)})",
                                     line={"width": 0}, fillcolor=_colour(kind, i), opacity=0.25, text=text,
                                     hoveron="fills+points", hovertemplate="%{text}<extra></extra>"))
    fig.update_layout(
        title=title or "Latency per interval and the server's events",
        xaxis={"title": "seconds into the measured window", "rangeslider": {"visible": True}},
        yaxis={"title": "latency, ms (log)", "type": "log"},
        yaxis2={"overlaying": "y", "range": [0, 1], "visible": False, "fixedrange": True},
        legend={"title": {"text": "series / events"}}, hovermode="closest", margin={"t": 50})
    return fig
