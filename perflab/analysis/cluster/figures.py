"""Figures of a cluster run (:class:`~perflab.cluster_run.ClusterResult`), on the latency timeline's
axis (seconds into the measured window):

* :func:`status_timeline` — latency per interval above, what the clients got per bin below (answered, 4xx,
  504, other 5xx, no answer), the faults as lines and the spans a node was down or paused shaded; the
  title says when answers were not all successes, so no latency reads as "held the load" unnoticed;
* :func:`node_panels` — per node: client requests it coordinated and internal requests it served per
  second, its CPU (cores) and RSS, and its events (flushes, GC, peer_down/peer_up, faults) as marks;
* :func:`key_distribution` — keys per node from the routing function (owner, replicas) and as the nodes
  store them, with the coefficient of variation;
* :func:`consistency_timeline` — the checker's reads per bin by outcome, writes acknowledged or not;
* :func:`ramp_curves` — p99 per interval against the rate a ramp offered, with each ramp's estimate.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ... import fmt
from ..marks import rate_line
from .sentences import ramp_estimate

#: colours of what the clients got, the same in every cluster figure
STATUS_COLOURS = {"answered": "#2ca02c", "4xx": "#ff7f0e", "504": "#d62728", "5xx": "#8c564b", "no_answer": "#7f7f7f"}
STATUS_NAMES = {
    "answered": "answered (2xx, 404)",
    "4xx": "4xx",
    "504": "504 (no quorum)",
    "5xx": "other 5xx",
    "no_answer": "no answer (timeouts, refused, reset)",
}
OUTCOME_COLOURS = {
    "ok": "#2ca02c",
    "unavailable": "#7f7f7f",
    "stale": "#d62728",
    "missed": "#9467bd",
    "resurrected": "#e377c2",
    "unknown": "#000000",
}
_NODE_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
_SPANS = {"node_down": "rgba(214,39,40,0.15)", "node_paused": "rgba(255,127,14,0.15)"}
_FAULTS = ("kill", "stop", "pause", "resume", "restart")


def _node_colour(i) -> str:
    return _NODE_COLOURS[int(i) % len(_NODE_COLOURS)]


def _not_served_note(res) -> str:
    a = res.answers or {}
    n = a.get("requests") or 0
    bad = {k: a.get(k, 0) for k in ("504", "4xx", "5xx", "timeout", "connect", "read", "write") if a.get(k)}
    if not bad:
        return f"every one of {n:,} answers a success"
    return "not every answer a success: " + ", ".join(f"{v:,} {k}" for k, v in bad.items()) + f" of {n:,}"


def _fault_marks(fig: go.Figure, events: pd.DataFrame | None, rows: list[int]) -> None:
    if events is None or not len(events):
        return
    for kind, colour in _SPANS.items():
        for r in events[events["event"] == kind].itertuples():
            for row in rows:
                fig.add_vrect(
                    x0=r.start_s,
                    x1=max(r.end_s, r.start_s + 0.01),
                    fillcolor=colour,
                    line_width=0,
                    layer="below",
                    row=row,
                    col=1,
                )
    for r in events[events["event"].isin(_FAULTS)].itertuples():
        node = r.node if hasattr(r, "node") else (r.details or {}).get("node")
        for row in rows:
            fig.add_vline(x=r.start_s, line_dash="dot", line_color="#444", row=row, col=1)
        fig.add_annotation(
            x=r.start_s,
            y=1.0,
            yref="paper",
            text=f"{r.event} {node}",
            showarrow=False,
            yanchor="bottom",
            font={"size": 10},
        )


def status_timeline(res, title: str | None = None) -> go.Figure:
    """Latency per interval (p50, p99, log) over the answers by status per bin (see the module docstring)."""
    iv = res.load.intervals
    iv = iv[iv["count"] > 0] if len(iv) else iv
    st = res.statuses
    if st is None or not len(st):
        raise ValueError("statuses: this result has no answers by status (was it a cluster run?)")
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.55, 0.45], vertical_spacing=0.06)
    mid = (iv["start_s"] + iv["end_s"]) / 2
    for col, name, dash in (("p99_ms", "p99", "solid"), ("p50_ms", "p50", "dash")):
        fig.add_trace(
            go.Scatter(
                x=mid,
                y=iv[col],
                mode="lines",
                name=name,
                line={"dash": dash, "width": 1.5},
                hovertemplate=f"{name} %{{y:.3f}} ms at %{{x:.2f}} s<extra></extra>",
            ),
            row=1,
            col=1,
        )
    x = (st["start_s"] + st["end_s"]) / 2
    width = float((st["end_s"] - st["start_s"]).median()) * 0.9
    for col in ("answered", "4xx", "504", "5xx", "no_answer"):
        if col not in st or st[col].isna().all() or not st[col].fillna(0).sum():
            continue
        fig.add_trace(
            go.Bar(
                x=x,
                y=st[col].fillna(0),
                width=width,
                name=STATUS_NAMES[col],
                marker_color=STATUS_COLOURS[col],
                hovertemplate=f"{STATUS_NAMES[col]}: %{{y:,.0f}} in the bin at %{{x:.1f}} s<extra></extra>",
            ),
            row=2,
            col=1,
        )
    _fault_marks(fig, res.events, [1, 2])
    quorum = f"{res.quorum}, " if hasattr(res, "quorum") else ""
    fig.update_layout(
        barmode="stack",
        template="plotly_white",
        hovermode="closest",
        margin={"t": 70},
        title=title or f"Latency and what the clients got ({quorum}{_not_served_note(res)})",
        legend={"title": {"text": "series"}},
    )
    fig.update_yaxes(title_text="latency, ms (log)", type="log", row=1, col=1)
    fig.update_yaxes(title_text=f"requests per {width / 0.9:g} s", row=2, col=1)
    fig.update_xaxes(title_text="seconds into the measured window", row=2, col=1)
    return fig


def _per_second(stats: pd.DataFrame, column: str) -> pd.DataFrame:
    """``node, part, t_s, rate``: a counter's change per second; ``part`` is the incarnation (a node that
    restarted is a new line, not one drawn across the time it was down)."""
    if column not in stats:
        return pd.DataFrame(columns=["node", "part", "t_s", "rate"])
    df = stats[["node", "t_s", column]].copy()
    df["part"] = stats["incarnation"] if "incarnation" in stats else 0
    df["rate"] = df[column] / df.groupby(["node", "part"])["t_s"].diff()
    return df.dropna(subset=["rate"])


def _segments(df: pd.DataFrame, part: str) -> pd.DataFrame:
    """``df`` with a NaN row between ``part`` groups of a node, so a line breaks where a node was down."""
    out = []
    for _, g in df.groupby(part, sort=False):
        out += [g, pd.DataFrame([{c: (g[c].iloc[-1] if c == "node" else float("nan")) for c in g.columns}])]
    return pd.concat(out[:-1], ignore_index=True) if out else df


def node_panels(res, title: str | None = None) -> go.Figure:
    """Per node, on one axis: requests coordinated and internal requests served per second (``/v0/stats``),
    CPU in cores and RSS (``/proc``), the node's events as marks (see the module docstring)."""
    stats, cpu, ev = res.stats, res.cpu, res.events
    has_stats = stats is not None and len(stats) and "node" in stats
    rows = (["client requests coordinated, /s", "internal requests served, /s"] if has_stats else []) + [
        "CPU, cores",
        "RSS, MB",
        "events by node",
    ]
    fig = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, vertical_spacing=0.04, subplot_titles=rows)
    r = 1
    nodes = sorted(set(cpu["node"])) if cpu is not None and len(cpu) else list(range(res.nodes))
    if has_stats:
        for col in ("cluster.coordinated_delta", "cluster.internal_served_delta"):
            per = _per_second(stats, col)
            for n, g in per.groupby("node"):
                g = _segments(g.sort_values("t_s"), "part")
                fig.add_trace(
                    go.Scatter(
                        x=g["t_s"],
                        y=g["rate"],
                        mode="lines",
                        name=f"node {n}",
                        legendgroup=f"node {n}",
                        showlegend=r == 1,
                        line={"color": _node_colour(n)},
                        hovertemplate=f"node {n}: %{{y:,.0f}}/s at %{{x:.1f}} s<extra></extra>",
                    ),
                    row=r,
                    col=1,
                )
            r += 1
    if cpu is not None and len(cpu):
        for n, g in cpu.groupby("node"):
            g = _segments(g.sort_values("t_s"), "pid")
            fig.add_trace(
                go.Scatter(
                    x=g["t_s"],
                    y=g["cores"],
                    mode="lines",
                    name=f"node {n}",
                    legendgroup=f"node {n}",
                    showlegend=not has_stats,
                    line={"color": _node_colour(n)},
                    hovertemplate=f"node {n}: %{{y:.2f}} cores<extra></extra>",
                ),
                row=r,
                col=1,
            )
            fig.add_trace(
                go.Scatter(
                    x=g["t_s"],
                    y=g["rss"] / 2**20,
                    mode="lines",
                    name=f"node {n}",
                    legendgroup=f"node {n}",
                    showlegend=False,
                    line={"color": _node_colour(n)},
                    hovertemplate=f"node {n}: %{{y:.0f}} MB<extra></extra>",
                ),
                row=r + 1,
                col=1,
            )
    r += 2
    if ev is not None and len(ev) and "node" in ev:
        marks = ev[ev["node"].notna()]
        for kind, g in marks.groupby("event"):
            fig.add_trace(
                go.Scatter(
                    x=g["start_s"],
                    y=g["node"].astype(int),
                    mode="markers",
                    name=kind,
                    marker={"symbol": "x" if kind in _FAULTS else "line-ns-open", "size": 10},
                    text=[f"{kind} on node {int(n)}, {d:.1f} ms" for n, d in zip(g["node"], g["dur_ms"])],
                    hovertemplate="%{text} at %{x:.2f} s<extra></extra>",
                ),
                row=r,
                col=1,
            )
        fig.update_yaxes(tickvals=nodes, ticktext=[f"node {n}" for n in nodes], row=r, col=1)
    _fault_marks(fig, ev, list(range(1, len(rows) + 1)))
    fig.update_layout(
        template="plotly_white",
        height=220 * len(rows),
        hovermode="closest",
        title=title or f"Each node on one timeline ({res.nodes} nodes, {getattr(res, 'quorum', '')})",
    )
    for i, name in enumerate(rows, 1):
        fig.update_yaxes(title_text=name.split(",")[-1].strip() if "," in name else "node", row=i, col=1)
    fig.update_xaxes(title_text="seconds into the measured window", row=len(rows), col=1)
    return fig


def key_distribution(dist, title: str | None = None) -> go.Figure:
    """Keys per node: owner (from = 1) and replicas (the run's from) by the server's routing function, and
    what each node stores (its own live records), with each count's coefficient of variation."""
    df = dist.frame()
    cvs = dist.cvs()
    fig = go.Figure()
    series = [
        ("owners", "owner by the built-in routing (from = 1)"),
        ("replicas", f"replica by the built-in routing (from = {dist.frm})"),
        ("stored", "stored: the node's own count (GET /v0/entities)"),
    ]
    for col, name in series:
        if df[col].isna().all():
            continue
        cvt = f", CV {cvs[col]:.3f}" if cvs.get(col) is not None else ""
        fig.add_trace(
            go.Bar(
                x=[f"node {i}" for i in df["node"]],
                y=df[col],
                name=name + cvt,
                hovertemplate=f"{name}: %{{y:,}} keys<extra></extra>",
            )
        )
    warn = dist.warning()
    fig.update_layout(
        barmode="group",
        template="plotly_white",
        title=title
        or (
            f"Keys per node, {dist.keys:,} keys"
            + (" (from = nodes: replica counts are equal by construction)" if warn else "")
        ),
        xaxis_title="node",
        yaxis_title="keys",
        legend={"title": {"text": "count (coefficient of variation)"}},
    )
    return fig


def consistency_timeline(res, bin_s: float = 1.0, title: str | None = None) -> go.Figure:
    """The checker's operations per ``bin_s`` on the window's axis: reads by outcome (ok, unavailable,
    stale, missed, resurrected, unknown) stacked, writes acknowledged and not as lines; faults marked."""
    ops = res.checker_ops
    if ops is None or not len(ops):
        raise ValueError("checker_ops: this run had no consistency checker")
    t0 = res.load.measure_start or 0.0
    df = ops.assign(t=((ops["t_send"] - t0) // bin_s) * bin_s + bin_s / 2)
    fig = go.Figure()
    reads = df[df["op"] == "GET"]
    for outcome, colour in OUTCOME_COLOURS.items():
        g = reads[reads["outcome"] == outcome].groupby("t").size()
        if len(g):
            fig.add_trace(
                go.Bar(
                    x=g.index,
                    y=g.values,
                    name=f"read: {outcome}",
                    marker_color=colour,
                    width=bin_s * 0.9,
                    hovertemplate=f"{outcome} reads: %{{y}} at %{{x:.1f}} s<extra></extra>",
                )
            )
    writes = df[df["op"] != "GET"]
    for outcome, dash in (("acked", "solid"), ("maybe", "dot"), ("refused", "dash")):
        g = writes[writes["outcome"] == outcome].groupby("t").size()
        if len(g):
            fig.add_trace(
                go.Scatter(
                    x=g.index,
                    y=g.values,
                    mode="lines+markers",
                    name=f"write/delete: {outcome}",
                    line={"dash": dash, "color": "#1f77b4"},
                )
            )
    if res.events is not None and len(res.events):
        for r in res.events[res.events["event"].isin(_FAULTS)].itertuples():
            fig.add_vline(x=r.start_s, line_dash="dot", line_color="#444")
    v = res.consistency
    fig.update_layout(
        barmode="stack",
        template="plotly_white",
        xaxis_title="seconds into the measured window (the final read-back after it)",
        yaxis_title=f"operations per {bin_s:g} s",
        title=title
        or (
            f"The consistency checker: {v.level} ({fmt.number(v.counts['reads'])} reads)"
            if v is not None
            else "The consistency checker"
        ),
    )
    return fig


def ramp_curves(ramps: dict, criteria, title: str | None = None) -> go.Figure:
    """p99 of each 100 ms interval against the rate the ramp offered in it (``{label: result of a ramp}``),
    the SLA and each ramp's estimate (:func:`.sentences.ramp_estimate`)."""
    fig = go.Figure()
    for i, (label, r) in enumerate(ramps.items()):
        rows = pd.DataFrame(r.load.summary.get("intervals") or [])
        iv = r.load.intervals
        if not len(rows) or not len(iv):
            continue
        rows["rate"] = rows["offered"] / (rows["end_s"] - rows["start_s"])
        p99 = {round(float(a), 3): float(b) for a, b in zip(iv["start_s"], iv["p99_ms"])}
        rows["p99_ms"] = [p99.get(round(float(s), 3)) for s in rows["start_s"]]
        colour = _node_colour(i)
        fig.add_trace(
            go.Scatter(
                x=rows["rate"],
                y=rows["p99_ms"],
                mode="lines+markers",
                name=label,
                marker={"size": 4},
                line={"color": colour},
                hovertemplate=f"{label}: p99 %{{y:.2f}} ms at %{{x:,.0f}} req/s<extra></extra>",
            )
        )
        est = ramp_estimate(r, criteria)
        if est.rate is not None:
            rate_line(fig, est.rate, f"{label}: ~{fmt.rate(est.rate)}", True, colour)
    sla = criteria.sla_p99 * 1000
    fig.add_hline(y=sla, line_dash="dot", line_color="red")
    fig.update_layout(
        template="plotly_white",
        title=title or "Ramp: p99 per interval against the offered rate",
        xaxis_title="offered rate, req/s (log)",
        yaxis_title="p99 per interval, ms (log)",
        xaxis_type="log",
        yaxis_type="log",
        legend={"title": {"text": "run"}},
    )
    return fig
