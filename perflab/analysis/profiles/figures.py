"""Figures of profiles: where the time goes by category, for several runs or configurations, and a
differential flame graph of two profiles."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...profiling import flame
from ...profiling.profile import Profile

#: the colour of each profile category, the same in every figure and flame graph preview
CATEGORY_COLORS = {
    "GC": "#8c564b",
    "JIT": "#c49c94",
    "executor queue": "#9467bd",
    "locks": "#d62728",
    "storage: WAL": "#bcbd22",
    "storage: flush": "#ff7f0e",
    "storage: compaction": "#ffbb78",
    "storage: SSTable read": "#2ca02c",
    "storage: memtable": "#98df8a",
    "storage: other": "#dbdb8d",
    "network write": "#1f77b4",
    "network read": "#aec7e8",
    "request handling": "#17becf",
    "HTTP parsing": "#9edae5",
    "other": "#c7c7c7",
}


def _stacks_of(obj) -> tuple[pd.DataFrame, str]:
    if isinstance(obj, Profile):
        return obj.stacks, obj.event
    if isinstance(obj, pd.DataFrame) and {"stack", "samples"} <= set(obj.columns):
        return obj, "cpu"
    raise ValueError(f"expected a Profile or a stacks DataFrame, got {type(obj).__name__}")


def _short_ids(nodes: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Node ids as short numbers: the tree's path ids repeat every ancestor's name, which made a deep
    profile's figure megabytes large."""
    index = {pid: f"n{k}" for k, pid in enumerate(nodes["id"])}
    return [index[i] for i in nodes["id"]], [index.get(p, "") for p in nodes["parent"]]


def flame_diff(base, new, min_share: float = 0.005, title: str | None = None) -> go.Figure:
    """Differential flame graph: the call tree of ``new`` coloured by the change of each frame's
    share of all samples against ``base`` (red grew, blue shrank; shares normalize away
    different durations and rates)."""
    sb, _ = _stacks_of(base)
    sn, event = _stacks_of(new)
    # thread groups, not names: worker-1 in one run is worker-2 in the other
    nb = flame.icicle_nodes(sb, min_share=0, threads="group").set_index("id")["share"]
    nn = flame.icicle_nodes(sn, min_share=min_share, threads="group")
    if nn.empty:
        raise ValueError("the new profile has no samples")
    delta = (nn["share"] - nn["id"].map(nb).fillna(0.0)) * 100
    lim = max(float(delta.abs().max()), 0.5)
    ids, parents = _short_ids(nn)
    fig = go.Figure(
        go.Icicle(
            ids=ids,
            parents=parents,
            labels=nn["label"],
            values=nn["value"],
            branchvalues="total",
            marker=dict(
                colors=delta, colorscale="RdBu_r", cmid=0, cmin=-lim, cmax=lim, colorbar=dict(title="Δ share, pp")
            ),
            customdata=np.stack([nn["share"] * 100, delta], axis=1),
            hovertemplate="%{label}<br>now %{customdata[0]:.2f}% of samples"
            "<br>change %{customdata[1]:+.2f} pp<extra></extra>",
            tiling=dict(orientation="v", flip="y"),
        )
    )
    fig.update_layout(
        title=title or f"Differential {event} flame graph (red: grew, blue: shrank)",
        margin=dict(t=50, l=5, r=5, b=5),
        height=700,
    )
    return fig


def category_bars(profiles: dict, title: str | None = None, normalize: bool = True, by: str = "run") -> go.Figure:
    """Stacked horizontal bars: share of each category per configuration.

    ``profiles``: label -> Profile, stacks DataFrame or a categories DataFrame
    (``category, samples, share``); ``by`` names what a bar is (the axis title: ``run``,
    ``configuration``)."""
    if not isinstance(profiles, dict) or not profiles:
        raise ValueError("profiles must be a non-empty dict of label -> profile")
    table = {}
    for label, obj in profiles.items():
        if isinstance(obj, pd.DataFrame) and {"category", "share"} <= set(obj.columns):
            cats = obj
        else:
            st, ev = _stacks_of(obj)
            cats = flame.categorize(st, ev)
        table[label] = cats.set_index("category")["share" if normalize else "samples"]
    df = pd.DataFrame(table).fillna(0.0)
    fig = go.Figure()
    for cat in flame.CATEGORY_ORDER:
        if cat not in df.index or df.loc[cat].sum() == 0:
            continue
        vals = df.loc[cat] * (100 if normalize else 1)
        fig.add_trace(
            go.Bar(
                y=list(df.columns),
                x=vals,
                name=cat,
                orientation="h",
                marker_color=CATEGORY_COLORS.get(cat),
                hovertemplate="%{y}<br>" + cat + ": %{x:.1f}" + ("%" if normalize else " samples") + "<extra></extra>",
            )
        )
    fig.update_layout(
        barmode="stack",
        title=title or "Where the time goes, by category",
        xaxis_title="share of samples, %" if normalize else "samples",
        template="plotly_white",
        yaxis_title=by,
        legend=dict(title_text="category", orientation="h", yanchor="top", y=-0.25, traceorder="normal"),
        height=300 + 50 * len(df.columns),
        margin=dict(b=150),
    )
    fig.update_yaxes(autorange="reversed")  # first configuration on top, as listed
    return fig
