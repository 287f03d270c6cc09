"""Figures of everything recorded: breakpoints against when they were searched, and the p99 of every
fixed-rate run against its offered rate."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ... import fmt
from .. import labels


def breakpoints_over_time(rows: list[dict], title: str | None = None) -> go.Figure:
    """Every recorded breakpoint against when it was searched (``created_at``, UTC), with its interval as
    a vertical bar: one colour per workload and connection count, one symbol per configuration (``mode``).
    ``rows``: breakpoint rows with ``created_at`` (:func:`perflab.analysis.recorded.breakpoint_rows`);
    rows without a rate (none passed) are left out."""
    found = [r for r in rows if r.get("rate") is not None]
    if not found:
        raise ValueError("rows must hold at least one breakpoint with a rate")
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"]
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "star", "cross", "pentagon"]
    workloads = list(dict.fromkeys(labels.row(r) for r in found))
    configurations = list(dict.fromkeys(str(r.get("mode") or "") for r in found))
    fig = go.Figure()
    for w in workloads:
        for c in configurations:
            group = [r for r in found if labels.row(r) == w and str(r.get("mode") or "") == c]
            if not group:
                continue
            iv = [r.get("interval") or [None, None] for r in group]
            fig.add_trace(
                go.Scatter(
                    x=pd.to_datetime([r["created_at"] for r in group], utc=True),
                    y=[r["rate"] for r in group],
                    mode="markers",
                    name=f"{w}, {c}" if c else w,
                    marker=dict(
                        size=10,
                        color=palette[workloads.index(w) % len(palette)],
                        symbol=symbols[configurations.index(c) % len(symbols)],
                    ),
                    error_y=dict(
                        type="data",
                        symmetric=False,
                        array=[(hi - r["rate"]) if hi is not None else 0 for r, (_, hi) in zip(group, iv)],
                        arrayminus=[(r["rate"] - lo) if lo is not None else 0 for r, (lo, _) in zip(group, iv)],
                    ),
                    hovertext=[
                        f"{w}, {c}<br>breakpoint {fmt.rate(r['rate'])}<br>interval {fmt.interval(i)}"
                        f"<br>run {r.get('run_id')}<br>commit {r.get('version_commit') or 'n/a'}"
                        for r, i in zip(group, iv)
                    ],
                    hoverinfo="text",
                )
            )
    fig.update_xaxes(title="recorded at (UTC)")
    fig.update_yaxes(title="breakpoint, requests/s (bar: its interval)", rangemode="tozero")
    fig.update_layout(
        title=title or "Breakpoints over time",
        template="plotly_white",
        hovermode="closest",
        legend_title_text="workload, configuration",
    )
    return fig


def fixed_rate_scatter(loads: pd.DataFrame, title: str | None = None) -> go.Figure:
    """p99 (log axis) of every recorded fixed-rate run against its offered rate: one colour per
    ``configuration``, one symbol per ``validity``; hover: run, script, connections, p50 and p99.9.
    ``loads``: :func:`perflab.analysis.recorded.fixed_rate_runs`."""
    need = {"target_rate", "p99_ms", "configuration", "validity", "run_id"}
    if loads is None or loads.empty or not need <= set(loads.columns):
        raise ValueError(f"loads must be a non-empty table with columns {', '.join(sorted(need))}")
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"]
    symbols = {"valid": "circle", "suspect": "diamond", "invalid": "x"}
    configurations = list(dict.fromkeys(loads["configuration"]))
    fig = go.Figure()
    for (cfg, validity), g in loads.groupby(["configuration", "validity"], sort=False):
        hover = [
            f"{cfg} ({validity})<br>{fmt.rate(r.target_rate)} offered<br>p99 {fmt.ms(r.p99_ms)}"
            + "".join(f"<br>{k} {getattr(r, k)}" for k in ("script", "connections") if hasattr(r, k))
            + "".join(
                f"<br>{n} {fmt.ms(getattr(r, k))}"
                for k, n in (("p50_ms", "p50"), ("p999_ms", "p99.9"))
                if hasattr(r, k)
            )
            + f"<br>run {r.run_id}"
            for r in g.itertuples()
        ]
        fig.add_trace(
            go.Scatter(
                x=g["target_rate"],
                y=g["p99_ms"],
                mode="markers",
                name=f"{cfg}, {validity}",
                marker=dict(
                    size=9,
                    color=palette[configurations.index(cfg) % len(palette)],
                    symbol=symbols.get(validity, "circle-open"),
                ),
                hovertext=hover,
                hoverinfo="text",
            )
        )
    fig.update_xaxes(title="offered rate, requests/s", rangemode="tozero")
    fig.update_yaxes(title="p99, ms (log scale)", type="log")
    fig.update_layout(
        title=title or "p99 of every fixed-rate run (symbol: validity)",
        template="plotly_white",
        hovermode="closest",
        legend_title_text="configuration, validity",
    )
    return fig
