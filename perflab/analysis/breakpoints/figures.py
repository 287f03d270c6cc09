"""Figures of breakpoint searches: the curve of one or several searches (latency against the offered rate,
every probe, the breakpoint with its interval) and every breakpoint on one axis."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from ... import fmt
from ...breakpoint import BreakpointResult
from ...breakpoint.hold import PHASE as HOLD
from .. import labels
from ..marks import sla_line


def _probe_rows(pr) -> pd.DataFrame:
    """Probes of one search as rows ``rate, passed, p50_ms, p99_ms, p999_ms, achieved_rate, reason,
    validity`` (the probe's validity level when it records one, else None)."""
    if isinstance(pr, BreakpointResult):
        rows = []
        for p in pr.probes:
            m = p.judgement.metrics or {}
            v = p.validity
            rows.append(
                {
                    "rate": p.rate,
                    "phase": p.phase,
                    "passed": p.judgement.passed,
                    "reason": p.judgement.reason,
                    "p50_ms": m.get("p50_ms"),
                    "p99_ms": m.get("p99_ms"),
                    "p999_ms": m.get("p999_ms"),
                    "achieved_rate": m.get("achieved_rate", p.rate),
                    "validity": v.get("verdict") if isinstance(v, dict) else None,
                    "validity_reasons": "; ".join(v.get("reasons") or []) if isinstance(v, dict) else "",
                }
            )
        df = pd.DataFrame(
            rows,
            columns=[
                "rate",
                "phase",
                "passed",
                "reason",
                "p50_ms",
                "p99_ms",
                "p999_ms",
                "achieved_rate",
                "validity",
                "validity_reasons",
            ],
        )
    elif isinstance(pr, pd.DataFrame):
        df = pr.copy()
    elif isinstance(getattr(pr, "table", None), pd.DataFrame):  # a search read back from its records
        df = pr.table.copy()
    else:
        raise ValueError("probes must be a BreakpointResult, a probes DataFrame, or a dict of them")
    if not {"rate", "p99_ms", "passed"} <= set(df.columns):
        raise ValueError("probes table needs columns rate, p99_ms, passed")
    return df.sort_values("rate", kind="stable")


def breakpoint_curve(
    probes, breakpoint: float | None = None, sla_ms: float | None = None, title: str | None = None
) -> go.Figure:
    """The breakpoint curve: p99 of every probe against its offered rate (log latency), passing probes as
    filled circles, failing ones as crosses, inconclusive ones as open diamonds, the sustain windows that held
    the breakpoint (:mod:`perflab.breakpoint.hold`) as squares (hover: the reason; a thick amber or black ring:
    a probe whose validity is suspect or invalid); lines through the median p50, p99
    and p99.9 at each rate (a rate probed several times has one point per line), the SLA line,
    and each search's breakpoint with its interval (a diamond with a horizontal bar from the highest
    passing to the lowest failing rate; an open end when nothing failed above it).

    ``probes``: a BreakpointResult, its ``table``, or a DataFrame with ``rate, p99_ms, passed`` (and
    optionally ``p50_ms, p999_ms, achieved_rate, reason``); several searches: a dict label -> any of
    these. ``breakpoint`` overrides the rate of a single search."""
    series = probes if isinstance(probes, dict) else {"": probes}
    if not series:
        raise ValueError("probes must not be an empty dict")
    fig = go.Figure()
    palette = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f", "#bcbd22"]
    single = len(series) == 1
    max_rate = 0.0
    for n, (label, pr) in enumerate(series.items()):
        df = _probe_rows(pr)
        searched = not isinstance(pr, pd.DataFrame)
        bp = (
            breakpoint
            if (breakpoint is not None and single)
            else (getattr(pr, "rate", None) if searched else breakpoint)
        )
        if isinstance(pr, BreakpointResult) and sla_ms is None:
            sla_ms = pr.criteria.sla_p99 * 1000
        elif searched and sla_ms is None:
            sla_ms = getattr(pr, "sla_ms", None)
        colour = palette[n % len(palette)] if not single else "#444"
        prefix = f"{label}: " if label else ""
        max_rate = max(max_rate, float(df["rate"].max()) if len(df) else 0.0)
        reasons = df["reason"] if "reason" in df else pd.Series([""] * len(df), index=df.index)
        achieved = df["achieved_rate"] if "achieved_rate" in df else df["rate"]
        validity = [
            v if isinstance(v, str) else None for v in (df["validity"] if "validity" in df else [None] * len(df))
        ]
        why_valid = [
            v if isinstance(v, str) else ""
            for v in (df["validity_reasons"] if "validity_reasons" in df else [""] * len(df))
        ]
        held = [
            isinstance(ph, str) and ph.startswith(HOLD) for ph in (df["phase"] if "phase" in df else [None] * len(df))
        ]
        hover = [
            f"{prefix}{fmt.rate(r)} offered"
            + (" (sustain window)" if h else "")
            + f"<br>achieved {a:,.1f}/s<br>p99 {fmt.ms(p)}<br>{why}"
            + (f"<br>validity: {v}" + (f" ({vr})" if vr else "") if v else "")
            for r, a, p, why, v, vr, h in zip(df["rate"], achieved, df["p99_ms"], reasons, validity, why_valid, held)
        ]
        # passed: True, False, or empty (an inconclusive probe, read back as NaN)
        state = [
            "pass" if v is True or v == 1 else "fail" if v is False or v == 0 else "inconclusive" for v in df["passed"]
        ]
        # a probe the lab judged suspect or invalid gets a thick amber or black ring: look twice at it
        ring = [{"suspect": "#e6a700", "invalid": "#000"}.get(v, colour) for v in validity]
        width = [3 if v in ("suspect", "invalid") else 1 for v in validity]
        fig.add_trace(
            go.Scatter(
                x=df["rate"],
                y=df["p99_ms"],
                mode="markers",
                name=f"{prefix}p99 of each probe",
                legendgroup=str(n),
                marker=dict(
                    size=11,
                    symbol=[
                        {"pass": "square" if h else "circle", "fail": "square-x" if h else "x"}.get(k, "diamond-open")
                        for k, h in zip(state, held)
                    ],
                    color=[{"pass": "#2ca02c", "fail": "#d62728"}.get(k, "#7f7f7f") for k in state],
                    line=dict(width=width, color=ring),
                ),
                hovertext=hover,
                hoverinfo="text",
            )
        )
        # one point per rate (the median of its probes), in rate order: repeated probes do not zigzag
        medians = df.groupby("rate", sort=True)[[c for c in ("p50_ms", "p99_ms", "p999_ms") if c in df]].median()
        for col, name, dash in (("p50_ms", "p50", "dot"), ("p99_ms", "p99", "solid"), ("p999_ms", "p99.9", "dash")):
            if col in medians and medians[col].notna().any():
                fig.add_trace(
                    go.Scatter(
                        x=medians.index,
                        y=medians[col],
                        mode="lines",
                        name=f"{prefix}{name}",
                        legendgroup=str(n),
                        line=dict(dash=dash, color=colour, width=1.5),
                        hovertemplate=f"{prefix}%{{x:,.0f}} req/s<br>{name} %{{y:.3f}} ms "
                        f"(median of the rate's probes)<extra></extra>",
                    )
                )
        if bp:
            iv = getattr(pr, "interval", None)
            at = medians["p99_ms"].get(bp)
            y = float(at) if at is not None and at == at else (sla_ms or float(df["p99_ms"].median()))
            lo = iv[0] if iv and iv[0] is not None else bp
            hi = iv[1] if iv and iv[1] is not None else None
            right = (hi if hi is not None else max(max_rate, bp) * 1.15) - bp
            text = f"{prefix}breakpoint {fmt.rate(bp)}, interval {fmt.interval((lo, hi))}"
            fig.add_trace(
                go.Scatter(
                    x=[bp],
                    y=[y],
                    mode="markers",
                    name=f"{prefix}breakpoint",
                    legendgroup=str(n),
                    marker=dict(symbol="diamond", size=14, color=colour, line=dict(width=1, color="#000")),
                    error_x=dict(
                        type="data",
                        symmetric=False,
                        array=[right],
                        arrayminus=[bp - lo],
                        thickness=3,
                        width=6,
                        color=colour,
                    ),
                    hovertext=[text],
                    hoverinfo="text",
                )
            )
            if single:
                fig.add_vrect(
                    x0=lo,
                    x1=hi if hi is not None else bp + right,
                    fillcolor="#2ca02c",
                    opacity=0.08,
                    line_width=0,
                    layer="below",
                )
            if single:
                fig.add_vline(
                    x=bp,
                    line_dash="dash",
                    line_color="#2ca02c",
                    opacity=0.7,
                    annotation_text=f"breakpoint {fmt.rate(bp)}",
                    annotation_position="top left",
                )
            else:  # labels of several searches would pile up at one rate: the legend and hover name them
                fig.add_vline(x=bp, line_dash="dash", line_color=colour, opacity=0.5)
    if sla_ms:
        sla_line(fig, sla_ms, f"SLA p99 {sla_ms:g} ms", True, "dot")
    fig.update_xaxes(title="offered rate, requests/s", rangemode="tozero")
    fig.update_yaxes(title="latency, ms (log scale)", type="log")
    fig.update_layout(
        title=title
        or "Breakpoint search: latency against the offered rate "
        "(circles passed, crosses failed, diamonds inconclusive)",
        template="plotly_white",
        hovermode="closest",
        legend=dict(groupclick="togglegroup"),
        height=520,
    )
    return fig


def breakpoint_overview(rows: list[dict], title: str | None = None) -> go.Figure:
    """Every breakpoint with its interval on one axis, one row per workload × connections × mode; the
    colour is the notebook a row came from (``notebook`` key) or else its mode. ``rows``: dicts with
    ``workload, connections, mode, rate, interval`` (the findings' breakpoint rows); a row without a
    rate is marked "none passed" at the upper end of its interval."""
    if not rows:
        raise ValueError("rows must be a non-empty list of breakpoint rows")
    fig = go.Figure()
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"]
    key = "notebook" if all(r.get("notebook") for r in rows) else "mode"
    groups = list(dict.fromkeys(str(r.get(key) or "") for r in rows))
    top = max(
        [r["rate"] for r in rows if r.get("rate")] + [v for r in rows for v in (r.get("interval") or []) if v] + [1]
    )
    order = list(dict.fromkeys(_row_label(r) for r in rows))
    for k, group in enumerate(groups):
        colour = palette[k % len(palette)]
        xs, ys, plus, minus, hover = [], [], [], [], []
        for r in (r for r in rows if str(r.get(key) or "") == group):
            lab = _row_label(r)
            iv = r.get("interval") or [r.get("rate"), r.get("rate")]
            if r.get("rate") is None:
                below = iv[1] if iv and iv[1] is not None else 0
                fig.add_trace(
                    go.Scatter(
                        x=[below],
                        y=[lab],
                        mode="markers+text",
                        text=["none passed"],
                        textposition="middle right",
                        showlegend=False,
                        marker=dict(symbol="x", size=10, color="#d62728"),
                        hovertext=[f"{lab}: no probed rate passed (lowest tried {fmt.rate(below)})"],
                        hoverinfo="text",
                    )
                )
                continue
            lo = iv[0] if iv[0] is not None else r["rate"]
            hi = iv[1] if iv[1] is not None else top * 1.1
            xs.append(r["rate"])
            ys.append(lab)
            minus.append(r["rate"] - lo)
            plus.append(hi - r["rate"])
            hover.append(
                f"{lab}<br>breakpoint {fmt.rate(r['rate'])}<br>interval {fmt.interval((lo, iv[1]))}"
                + (f"<br>{r['verdict']}" if r.get("verdict") else "")
                + (f"<br>{group}" if group else "")
            )
        if xs:
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="markers",
                    name=group or "breakpoint",
                    marker=dict(size=11, symbol="diamond", color=colour),
                    error_x=dict(
                        type="data", symmetric=False, array=plus, arrayminus=minus, thickness=2.5, width=5, color=colour
                    ),
                    hovertext=hover,
                    hoverinfo="text",
                )
            )
    fig.update_xaxes(title="breakpoint, requests/s (bar: its interval)", rangemode="tozero")
    fig.update_yaxes(
        title="workload, connections, mode",
        type="category",
        categoryorder="array",
        categoryarray=order[::-1],
        automargin=True,
    )
    fig.update_layout(
        title=title or "Breakpoints with their intervals",
        template="plotly_white",
        legend_title_text=key,
        height=max(260, 110 + 30 * len(order)),
        hovermode="closest",
    )
    return fig


def _row_label(r: dict) -> str:
    return labels.row(r) + (f", {r['mode']}" if r.get("mode") else "")
