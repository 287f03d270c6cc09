"""A metric across commits: one point per commit in order (its median, bars: the range of its repeats), each
change point a dashed line between the commits it separates, a confirmed regression named with its ratio and
interval from the interleaved check."""

from __future__ import annotations

import plotly.graph_objects as go

from ... import fmt
from ..ab.verdicts import named

#: how each check's outcome is drawn
_COLOUR = {"regression": "#d62728", "improvement": "#2ca02c"}


def _label(p: dict) -> str:
    return f"{p['position']}: {p['commit'][:7]}"


def history_figure(results: dict, metric: str, title: str | None = None) -> go.Figure:
    """``metric`` (cpu, p50, p99) across the commits of a recorded history's ``results``."""
    points = [p for p in results["points"] if not p.get("skipped")]
    x = [_label(p) for p in points]
    vals = [p["metrics"][metric] for p in points]
    unit = "us" if metric == "cpu" else "ms"
    fig = go.Figure(
        go.Scatter(
            x=x,
            y=[v["value"] for v in vals],
            mode="lines+markers",
            name=named(metric),
            error_y=dict(
                type="data",
                symmetric=False,
                array=[v["hi"] - v["value"] for v in vals],
                arrayminus=[v["value"] - v["lo"] for v in vals],
            ),
            hovertext=[
                f"{p['commit'][:10]} {p.get('subject') or ''}<br>{named(metric)} {v['value']:,.3g} {unit} "
                f"(range {v['lo']:,.3g}-{v['hi']:,.3g} over {len(v['repeats'])})<br>run {p.get('point_run')}"
                for p, v in zip(points, vals)
            ],
            hoverinfo="text",
        )
    )
    where = {p["position"]: i for i, p in enumerate(points)}
    if metric == results["metric"]:
        for c in results["candidates"]:
            if c["position"] not in where:
                continue
            i = where[c["position"]]
            colour = _COLOUR.get(c["outcome"], "#7f7f7f")
            fig.add_vline(x=i - 0.5, line_dash="dash", line_color=colour)
            chk = c.get("check") or {}
            text = c["outcome"]
            if chk.get("ratio") is not None and c["outcome"] in _COLOUR:
                lo, hi = chk["ci"]
                text += f" {fmt.ratio(chk['ratio'])} ({fmt.ratio(lo)}-{fmt.ratio(hi)})"
            fig.add_annotation(
                x=i - 0.5, y=1.0, yref="paper", text=text, showarrow=False, yanchor="bottom", font=dict(color=colour)
            )
    fig.update_xaxes(title="commit, in order (position: short hash)", type="category")
    fig.update_yaxes(title=f"{named(metric)}, {unit} (bars: range of the repeats)", rangemode="tozero")
    fig.update_layout(
        title=title
        or f"{named(metric)} across commits" + (" (dashed: change points)" if metric == results["metric"] else ""),
        template="plotly_white",
        showlegend=False,
        margin=dict(t=70),
    )
    return fig
