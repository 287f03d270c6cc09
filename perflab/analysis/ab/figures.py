"""Figures of A/B comparisons: B/A of every pair, several comparisons' pairs on one axis, or the searches'
breakpoint curves."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ... import fmt
from ...ab.result import ABResult
from ...stats import paired
from ..breakpoints import breakpoint_curve
from .baseline import Comparisons, label_of, searches
from .reading import labels_of, pairs_of, rows_of
from .verdicts import named


def pairs_figure(res, metrics=paired.METRICS, title: str | None = None) -> go.Figure:
    """B/A of every pair (log axis; the order the pairs were measured in), per metric, with the median
    ratio and its interval as a line and a band; pairs left out of the test (an invalid probe) as open
    markers; the ±margin band shaded."""
    pairs = pairs_of(res)
    rows = {(r.get("rate"), r.get("metric")): r for r in rows_of(res)}
    fig = go.Figure()
    palette = {"p50": "#1f77b4", "p99": "#d62728", "p99.9": "#9467bd", "cpu": "#2ca02c"}
    margin = None
    if pairs.empty:
        fig.add_annotation(
            text="no pairs recorded (a breakpoint comparison: see its searches)",
            showarrow=False,
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
        )
    multi = pairs["rate"].nunique() > 1 if not pairs.empty else False
    for rate, grp in pairs.groupby("rate", sort=False) if not pairs.empty else []:
        for m in metrics:
            col = f"log_ratio_{m}"
            if col not in grp:
                continue
            name = named(m) + (f" at {fmt.rate(rate)}" if multi else "")
            used = grp["used"].astype(bool)
            x = grp["pair"] + 1
            y = np.exp(grp[col].astype(float))
            colour = palette.get(m, "#333")
            fig.add_trace(
                go.Scatter(
                    x=x[used],
                    y=y[used],
                    mode="markers",
                    name=name,
                    marker=dict(color=colour, size=7),
                    hovertemplate=f"{name}<br>pair %{{x}}<br>B/A %{{y:.3f}}<extra></extra>",
                )
            )
            if (~used).any():
                fig.add_trace(
                    go.Scatter(
                        x=x[~used],
                        y=y[~used],
                        mode="markers",
                        name=f"{name}: left out (invalid probe)",
                        marker=dict(color=colour, size=7, symbol="circle-open"),
                        hovertemplate=f"{name}, left out<br>pair %{{x}}<br>B/A %{{y:.3f}}<extra></extra>",
                    )
                )
            v = rows.get((rate, m))
            if v and v.get("ratio") and v.get("ci_lo"):
                x0, x1 = float(x.min()), float(x.max())
                fig.add_trace(
                    go.Scatter(
                        x=[x0, x1, x1, x0],
                        y=[v["ci_lo"], v["ci_lo"], v["ci_hi"], v["ci_hi"]],
                        fill="toself",
                        mode="none",
                        fillcolor=colour,
                        opacity=0.15,
                        showlegend=False,
                        hoverinfo="skip",
                    )
                )
                fig.add_trace(
                    go.Scatter(
                        x=[x0, x1],
                        y=[v["ratio"], v["ratio"]],
                        mode="lines",
                        showlegend=False,
                        line=dict(color=colour, width=2),
                        hovertemplate=f"{name}: median B/A {fmt.ratio(v['ratio'])}, 95% CI "
                        f"{fmt.ratio(v['ci_lo'])}-{fmt.ratio(v['ci_hi'])}<extra></extra>",
                    )
                )
            margin = margin or (v or {}).get("margin")
    fig.add_hline(y=1.0, line=dict(color="#444", width=1))
    if margin:
        lo, hi = paired.band(margin)
        fig.add_hrect(y0=lo, y1=hi, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    a, b = labels_of(res)
    fig.update_xaxes(title="pair (in the order measured)")
    fig.update_yaxes(title="B/A of the pair: latency, CPU per request (log scale)", type="log")
    fig.update_layout(
        title=title or f"B ({b}) against A ({a}), pair by pair: median and 95% interval per metric",
        template="plotly_white",
        hovermode="closest",
        height=420,
    )
    return fig


def ratios_figure(results: dict, title: str | None = None) -> go.Figure:
    """Several comparisons at fixed rates (key -> comparison, e.g. from :func:`against`): B/A of each pair
    on the stop rule's metric, one series per comparison (log axis), with the ±margin band."""
    fig = go.Figure()
    margin = None
    for k, r in results.items():
        pairs = pairs_of(r)
        row = next((x for x in rows_of(r) if x.get("stop_rule")), None)
        if pairs.empty or row is None or f"log_ratio_{row['metric']}" not in pairs:
            continue
        name = f"{label_of(results, k)}: {named(row['metric'])}"
        fig.add_trace(
            go.Scatter(
                x=pairs["pair"] + 1,
                y=np.exp(pairs[f"log_ratio_{row['metric']}"].astype(float)),
                mode="markers+lines",
                name=name,
                line=dict(width=1),
                hovertemplate=f"{name}<br>pair %{{x}}<br>B/A %{{y:.3f}}<extra></extra>",
            )
        )
        margin = margin or row.get("margin")
    fig.add_hline(y=1.0, line=dict(color="#444", width=1))
    if margin:
        lo, hi = paired.band(margin)
        fig.add_hrect(y0=lo, y1=hi, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    base = label_of(results, results.baseline) if hasattr(results, "baseline") else "A"
    fig.update_xaxes(title="pair (in the order measured)")
    fig.update_yaxes(title=f"B/A against {base}, pair by pair (log scale)", type="log")
    fig.update_layout(
        title=title or f"Each configuration against {base}, interleaved: B/A of every pair",
        template="plotly_white",
        hovermode="closest",
        height=420,
    )
    return fig


def categories_figure(res, title: str | None = None) -> go.Figure | None:
    """A profiled comparison: B - A of each category's CPU per request (median over the pairs, with its 95%
    interval), the claimed ones solid; ``None`` when the comparison was not profiled."""
    rows = [r for r in rows_of(res) if r["metric"] == "category"]
    if not rows:
        return None
    rows = sorted(rows, key=lambda r: (r.get("rate") or 0, -abs(r["difference"] or 0)))
    multi = len({r.get("rate") for r in rows}) > 1
    names = [r["category"] + (f" at {fmt.rate(r['rate'])}" if multi else "") for r in rows]
    claimed = [r["conclusion"] == "different" for r in rows]
    fig = go.Figure(
        go.Bar(
            x=[r["difference"] for r in rows],
            y=names,
            orientation="h",
            marker=dict(
                color=[
                    "#d62728" if c and r["difference"] > 0 else "#1f77b4" if c else "#c7c7c7"
                    for c, r in zip(claimed, rows)
                ]
            ),
            error_x=dict(
                type="data",
                symmetric=False,
                array=[(r["ci_hi"] or 0) - r["difference"] for r in rows],
                arrayminus=[r["difference"] - (r["ci_lo"] or 0) for r in rows],
                visible=True,
            ),
            customdata=[[r["n"], r["ci_lo"], r["ci_hi"], r["conclusion"]] for r in rows],
            hovertemplate="%{y}: B - A %{x:.3g} us per request<br>95% CI %{customdata[1]:.3g} to %{customdata[2]:.3g}"
            "<br>n = %{customdata[0]} pairs, %{customdata[3]}<extra></extra>",
        )
    )
    fig.add_vline(x=0, line=dict(color="#444", width=1))
    a, b = labels_of(res)
    fig.update_xaxes(title="B - A: CPU per request in the category (us; median of the pairs, 95% interval)")
    fig.update_layout(
        title=title or f"Where B ({b}) spends more CPU per request than A ({a}): claimed in colour",
        template="plotly_white",
        height=max(300, 28 * len(rows) + 120),
        showlegend=False,
        yaxis=dict(autorange="reversed"),
    )
    return fig


def figure(res, title: str | None = None) -> go.Figure:
    """The comparison's figure: the pairs (:func:`pairs_figure`) at fixed rates, or both searches'
    breakpoint curves when breakpoints were compared. Of several comparisons against one baseline
    (:func:`against`): every configuration's search, or :func:`ratios_figure`."""
    if isinstance(res, Comparisons):
        bps = searches(res)
        if bps:
            return breakpoint_curve(
                {label_of(res, k): s for k, s in bps.items()},
                sla_ms=next(iter(res.values())).sla_ms,
                title=title
                or f"Each configuration's search, side by side with "
                f"{label_of(res, res.baseline)}'s (probes interleaved A B B A)",
            )
        return ratios_figure(res, title)
    if isinstance(res, ABResult) and res.mode == "breakpoint":
        return breakpoint_curve(
            {f"A ({res.a.label})": res.searches["A"], f"B ({res.b.label})": res.searches["B"]},
            sla_ms=res.sla_ms,
            title=title or "Both searches, probes interleaved A B B A: latency against the offered rate",
        )
    return pairs_figure(res, title=title)
