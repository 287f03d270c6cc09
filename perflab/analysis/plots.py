"""Plotly figures of the lab's results, drawn for people: titles, units, hover text.

* :func:`percentile_spectrum` — the HdrHistogram plot: latency vs percentile on the ``1/(1-p)``
  log axis labelled 90%, 99%, 99.9%..., several runs overlaid.
* :func:`timeline` — one run's latency per interval with the server's events as spans
  (:mod:`.timeline`); :func:`latency_timelines` — p50/p99 per interval of several runs on one axis.
* :func:`breakpoint_curve` — the breakpoint search: p50/p99/p99.9 of each probe against the offered
  rate, passing and failing probes, the SLA line, the breakpoint and its interval.
* :func:`breakpoint_overview` — every breakpoint with its interval, by workload, connections, mode;
  :func:`breakpoints_over_time` — recorded breakpoints against the time they were searched.
* :func:`executor_heatmap` — a value (breakpoint, rejections, p99) over worker threads × queue capacity.
* :func:`fixed_rate_scatter` — p99 of recorded fixed-rate runs against their offered rate.
* :func:`flame_diff` — an interactive differential flame graph (icicle) of two profiles.
* :func:`category_bars` — where the time goes, by category, for several configurations.
* :func:`thumbnail` — a figure made small and static for the report's index page.

Every figure has a title and every axis a title with its unit; the report's browser check verifies
the drawn pages for that.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import fmt
from ..profiling import flame
from .findings import workload_label

CATEGORY_COLORS = {
    "GC": "#8c564b", "JIT": "#c49c94", "executor queue": "#9467bd", "locks": "#d62728",
    "storage: WAL": "#bcbd22", "storage: flush": "#ff7f0e", "storage: compaction": "#ffbb78",
    "storage: SSTable read": "#2ca02c", "storage: memtable": "#98df8a", "storage: other": "#dbdb8d",
    "network write": "#1f77b4", "network read": "#aec7e8", "request handling": "#17becf",
    "HTTP parsing": "#9edae5", "other": "#c7c7c7",
}
_PCT_TICKS = [(1, "0%"), (2, "50%"), (10, "90%"), (100, "99%"), (1e3, "99.9%"), (1e4, "99.99%"),
              (1e5, "99.999%"), (1e6, "99.9999%")]


def _spectrum_of(obj, uncorrected: bool = False) -> pd.DataFrame:
    from ..measure.result import LoadResult
    from ..measure.wrk_output import WrkOutput
    if not isinstance(obj, pd.DataFrame) and isinstance(getattr(obj, "load", None), LoadResult):
        obj = obj.load   # an experiment's result: its load
    if isinstance(obj, LoadResult):
        return obj.spectrum_uncorrected if uncorrected else obj.spectrum
    if isinstance(obj, WrkOutput):
        return obj.spectrum_uncorrected if uncorrected else obj.spectrum
    if isinstance(obj, pd.DataFrame) and {"latency_ms", "percentile"} <= set(obj.columns):
        return obj
    raise ValueError(f"runs values must be LoadResult, WrkOutput or spectrum DataFrames, got {type(obj).__name__}")


def percentile_spectrum(runs: dict, uncorrected: bool = False, title: str | None = None,
                        log_y: bool = False, sla_ms: float | None = None) -> go.Figure:
    """Latency by percentile for each run in ``runs`` (label -> ExperimentResult / LoadResult / WrkOutput /
    spectrum).

    x is ``1/(1-p)`` on a log axis (wrk2/HdrHistogram convention) labelled with percentiles; the
    100% point is drawn at the end of each curve. ``sla_ms`` draws a horizontal SLA line.
    """
    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict of label -> result")
    fig = go.Figure()
    xmax = 10.0
    for label, obj in runs.items():
        sp = _spectrum_of(obj, uncorrected)
        if sp.empty:
            continue
        sp = sp.copy()
        finite = np.isfinite(sp["inverse"]) if "inverse" in sp else np.isfinite(1 / (1 - sp["percentile"]))
        inv = 1 / (1 - sp["percentile"].clip(upper=1 - 1e-12))
        last_inv = float(inv[finite].max()) if finite.any() else 1.0
        inv = inv.where(finite, last_inv * 1.5)  # 100% drawn just right of the last finite point
        xmax = max(xmax, float(inv.max()))
        pct = sp["percentile"] * 100
        hover = [f"{label}<br>p{p:.5g} = {v:.3f} ms" + (f"<br>count {c:,}" if c is not None else "")
                 for p, v, c in zip(pct, sp["latency_ms"], sp.get("total_count", [None] * len(sp)))]
        fig.add_trace(go.Scatter(x=inv, y=sp["latency_ms"], mode="lines+markers", name=str(label),
                                 marker=dict(size=4), hovertext=hover, hoverinfo="text"))
    ticks = [t for t in _PCT_TICKS if t[0] <= xmax * 1.01]
    fig.update_xaxes(type="log", tickvals=[t[0] for t in ticks], ticktext=[t[1] for t in ticks],
                     title="percentile (axis: 1/(1-p), log scale)")
    fig.update_yaxes(title="latency, ms", type="log" if log_y else "linear", rangemode="tozero")
    if sla_ms:
        _sla_line(fig, sla_ms, f"SLA {sla_ms:g} ms", log_y, "dash")
    kind = "uncorrected (from actual send time)" if uncorrected else "corrected for coordinated omission"
    fig.update_layout(title=title or f"Latency by percentile — {kind}", hovermode="closest",
                      legend_title_text="run", template="plotly_white")
    return fig


def _sla_line(fig: go.Figure, sla_ms: float, text: str, log_y: bool, dash: str) -> None:
    """A horizontal SLA line with its label. On a log axis an annotation's y is the exponent (plotly's
    convention), and add_hline's own label would sit at 10^SLA and stretch the axis to it."""
    fig.add_hline(y=sla_ms, line_dash=dash, line_color="red")
    fig.add_annotation(text=text, xref="x domain", x=1, xanchor="right", yanchor="bottom", showarrow=False,
                       y=math.log10(sla_ms) if log_y else sla_ms, font=dict(color="red"))


def _probe_rows(pr) -> pd.DataFrame:
    """Probes of one search as rows ``rate, passed, p50_ms, p99_ms, p999_ms, achieved_rate, reason,
    validity`` (the probe's validity level when it records one, else None)."""
    from ..breakpoint import BreakpointResult
    if isinstance(pr, BreakpointResult):
        rows = []
        for p in pr.probes:
            m = p.judgement.metrics or {}
            v = p.validity
            rows.append({"rate": p.rate, "passed": p.judgement.passed, "reason": p.judgement.reason,
                         "p50_ms": m.get("p50_ms"), "p99_ms": m.get("p99_ms"), "p999_ms": m.get("p999_ms"),
                         "achieved_rate": m.get("achieved_rate", p.rate),
                         "validity": v.get("verdict") if isinstance(v, dict) else None,
                         "validity_reasons": "; ".join(v.get("reasons") or []) if isinstance(v, dict) else ""})
        df = pd.DataFrame(rows, columns=["rate", "passed", "reason", "p50_ms", "p99_ms", "p999_ms", "achieved_rate",
                                         "validity", "validity_reasons"])
    elif isinstance(pr, pd.DataFrame):
        df = pr.copy()
    elif isinstance(getattr(pr, "table", None), pd.DataFrame):   # a search read back from its records
        df = pr.table.copy()
    else:
        raise ValueError("probes must be a BreakpointResult, a probes DataFrame, or a dict of them")
    if not {"rate", "p99_ms", "passed"} <= set(df.columns):
        raise ValueError("probes table needs columns rate, p99_ms, passed")
    return df.sort_values("rate", kind="stable")


def breakpoint_curve(probes, breakpoint: float | None = None, sla_ms: float | None = None,
                     title: str | None = None) -> go.Figure:
    """The breakpoint curve: p99 of every probe against its offered rate (log latency), passing probes as
    filled circles, failing ones as crosses, inconclusive ones as open diamonds (hover: the reason; a thick
    amber or black ring: a probe whose validity is suspect or invalid); lines through the median p50, p99
    and p99.9 at each rate (a rate probed several times has one point per line), the SLA line,
    and each search's breakpoint with its interval (a diamond with a horizontal bar from the highest
    passing to the lowest failing rate; an open end when nothing failed above it).

    ``probes``: a BreakpointResult, its ``table``, or a DataFrame with ``rate, p99_ms, passed`` (and
    optionally ``p50_ms, p999_ms, achieved_rate, reason``); several searches: a dict label -> any of
    these. ``breakpoint`` overrides the rate of a single search."""
    from ..breakpoint import BreakpointResult
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
        bp = breakpoint if (breakpoint is not None and single) else (getattr(pr, "rate", None) if searched else breakpoint)
        if isinstance(pr, BreakpointResult) and sla_ms is None:
            sla_ms = pr.criteria.sla_p99 * 1000
        elif searched and sla_ms is None:
            sla_ms = getattr(pr, "sla_ms", None)
        colour = palette[n % len(palette)] if not single else "#444"
        prefix = f"{label}: " if label else ""
        max_rate = max(max_rate, float(df["rate"].max()) if len(df) else 0.0)
        reasons = df["reason"] if "reason" in df else pd.Series([""] * len(df), index=df.index)
        achieved = df["achieved_rate"] if "achieved_rate" in df else df["rate"]
        validity = [v if isinstance(v, str) else None for v in (df["validity"] if "validity" in df else [None] * len(df))]
        why_valid = [v if isinstance(v, str) else "" for v in (df["validity_reasons"] if "validity_reasons" in df
                                                              else [""] * len(df))]
        hover = [f"{prefix}{fmt.rate(r)} offered<br>achieved {a:,.1f}/s<br>p99 {fmt.ms(p)}<br>{why}"
                 + (f"<br>validity: {v}" + (f" ({vr})" if vr else "") if v else "")
                 for r, a, p, why, v, vr in zip(df["rate"], achieved, df["p99_ms"], reasons, validity, why_valid)]
        # passed: True, False, or empty (an inconclusive probe, read back as NaN)
        state = ["pass" if v is True or v == 1 else "fail" if v is False or v == 0 else "inconclusive"
                 for v in df["passed"]]
        # a probe the lab judged suspect or invalid gets a thick amber or black ring: look twice at it
        ring = [{"suspect": "#e6a700", "invalid": "#000"}.get(v, colour) for v in validity]
        width = [3 if v in ("suspect", "invalid") else 1 for v in validity]
        fig.add_trace(go.Scatter(
            x=df["rate"], y=df["p99_ms"], mode="markers", name=f"{prefix}p99 of each probe", legendgroup=str(n),
            marker=dict(size=11, symbol=[{"pass": "circle", "fail": "x"}.get(k, "diamond-open") for k in state],
                        color=[{"pass": "#2ca02c", "fail": "#d62728"}.get(k, "#7f7f7f") for k in state],
                        line=dict(width=width, color=ring)),
            hovertext=hover, hoverinfo="text"))
        # one point per rate (the median of its probes), in rate order: repeated probes do not zigzag
        medians = df.groupby("rate", sort=True)[[c for c in ("p50_ms", "p99_ms", "p999_ms") if c in df]].median()
        for col, name, dash in (("p50_ms", "p50", "dot"), ("p99_ms", "p99", "solid"), ("p999_ms", "p99.9", "dash")):
            if col in medians and medians[col].notna().any():
                fig.add_trace(go.Scatter(x=medians.index, y=medians[col], mode="lines", name=f"{prefix}{name}",
                                         legendgroup=str(n), line=dict(dash=dash, color=colour, width=1.5),
                                         hovertemplate=f"{prefix}%{{x:,.0f}} req/s<br>{name} %{{y:.3f}} ms "
                                                       f"(median of the rate's probes)<extra></extra>"))
        if bp:
            iv = getattr(pr, "interval", None)
            at = medians["p99_ms"].get(bp)
            y = float(at) if at is not None and at == at else (sla_ms or float(df["p99_ms"].median()))
            lo = iv[0] if iv and iv[0] is not None else bp
            hi = iv[1] if iv and iv[1] is not None else None
            right = (hi if hi is not None else max(max_rate, bp) * 1.15) - bp
            text = f"{prefix}breakpoint {fmt.rate(bp)}, interval {fmt.interval((lo, hi))}"
            fig.add_trace(go.Scatter(
                x=[bp], y=[y], mode="markers", name=f"{prefix}breakpoint", legendgroup=str(n),
                marker=dict(symbol="diamond", size=14, color=colour, line=dict(width=1, color="#000")),
                error_x=dict(type="data", symmetric=False, array=[right], arrayminus=[bp - lo], thickness=3, width=6,
                             color=colour),
                hovertext=[text], hoverinfo="text"))
            if single:
                fig.add_vrect(x0=lo, x1=hi if hi is not None else bp + right, fillcolor="#2ca02c", opacity=0.08,
                              line_width=0, layer="below")
            if single:
                fig.add_vline(x=bp, line_dash="dash", line_color="#2ca02c", opacity=0.7,
                              annotation_text=f"breakpoint {fmt.rate(bp)}", annotation_position="top left")
            else:   # labels of several searches would pile up at one rate: the legend and hover name them
                fig.add_vline(x=bp, line_dash="dash", line_color=colour, opacity=0.5)
    if sla_ms:
        _sla_line(fig, sla_ms, f"SLA p99 {sla_ms:g} ms", True, "dot")
    fig.update_xaxes(title="offered rate, requests/s", rangemode="tozero")
    fig.update_yaxes(title="latency, ms (log scale)", type="log")
    fig.update_layout(title=title or "Breakpoint search: latency against the offered rate "
                      "(circles passed, crosses failed, diamonds inconclusive)", template="plotly_white", hovermode="closest",
                      legend=dict(groupclick="togglegroup"), height=520)
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
    top = max([r["rate"] for r in rows if r.get("rate")] + [v for r in rows for v in (r.get("interval") or []) if v] + [1])
    order = list(dict.fromkeys(_row_label(r) for r in rows))
    for k, group in enumerate(groups):
        colour = palette[k % len(palette)]
        xs, ys, plus, minus, hover = [], [], [], [], []
        for r in (r for r in rows if str(r.get(key) or "") == group):
            lab = _row_label(r)
            iv = r.get("interval") or [r.get("rate"), r.get("rate")]
            if r.get("rate") is None:
                below = iv[1] if iv and iv[1] is not None else 0
                fig.add_trace(go.Scatter(x=[below], y=[lab], mode="markers+text", text=["none passed"],
                                         textposition="middle right", showlegend=False,
                                         marker=dict(symbol="x", size=10, color="#d62728"),
                                         hovertext=[f"{lab}: no probed rate passed (lowest tried {fmt.rate(below)})"],
                                         hoverinfo="text"))
                continue
            lo = iv[0] if iv[0] is not None else r["rate"]
            hi = iv[1] if iv[1] is not None else top * 1.1
            xs.append(r["rate"])
            ys.append(lab)
            minus.append(r["rate"] - lo)
            plus.append(hi - r["rate"])
            hover.append(f"{lab}<br>breakpoint {fmt.rate(r['rate'])}<br>interval {fmt.interval((lo, iv[1]))}"
                         + (f"<br>{r['verdict']}" if r.get("verdict") else "") + (f"<br>{group}" if group else ""))
        if xs:
            fig.add_trace(go.Scatter(x=xs, y=ys, mode="markers", name=group or "breakpoint",
                                     marker=dict(size=11, symbol="diamond", color=colour),
                                     error_x=dict(type="data", symmetric=False, array=plus, arrayminus=minus,
                                                  thickness=2.5, width=5, color=colour),
                                     hovertext=hover, hoverinfo="text"))
    fig.update_xaxes(title="breakpoint, requests/s (bar: its interval)", rangemode="tozero")
    fig.update_yaxes(title="workload, connections, mode", type="category", categoryorder="array",
                     categoryarray=order[::-1], automargin=True)
    fig.update_layout(title=title or "Breakpoints with their intervals", template="plotly_white",
                      legend_title_text=key, height=max(260, 110 + 30 * len(order)), hovermode="closest")
    return fig


def breakpoints_over_time(rows: list[dict], title: str | None = None) -> go.Figure:
    """Every recorded breakpoint against when it was searched (``created_at``, UTC), with its interval as
    a vertical bar: one colour per workload and connection count, one symbol per configuration (``mode``).
    ``rows``: breakpoint rows with ``created_at`` (:func:`perflab.analysis.history.breakpoint_rows`);
    rows without a rate (none passed) are left out."""
    found = [r for r in rows if r.get("rate") is not None]
    if not found:
        raise ValueError("rows must hold at least one breakpoint with a rate")
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"]
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "star", "cross", "pentagon"]
    workloads = list(dict.fromkeys(workload_label(r) for r in found))
    configurations = list(dict.fromkeys(str(r.get("mode") or "") for r in found))
    fig = go.Figure()
    for w in workloads:
        for c in configurations:
            group = [r for r in found if workload_label(r) == w and str(r.get("mode") or "") == c]
            if not group:
                continue
            iv = [r.get("interval") or [None, None] for r in group]
            fig.add_trace(go.Scatter(
                x=pd.to_datetime([r["created_at"] for r in group], utc=True), y=[r["rate"] for r in group],
                mode="markers", name=f"{w}, {c}" if c else w,
                marker=dict(size=10, color=palette[workloads.index(w) % len(palette)],
                            symbol=symbols[configurations.index(c) % len(symbols)]),
                error_y=dict(type="data", symmetric=False, array=[(hi - r["rate"]) if hi is not None else 0
                                                                  for r, (_, hi) in zip(group, iv)],
                             arrayminus=[(r["rate"] - lo) if lo is not None else 0 for r, (lo, _) in zip(group, iv)]),
                hovertext=[f"{w}, {c}<br>breakpoint {fmt.rate(r['rate'])}<br>interval {fmt.interval(i)}"
                           f"<br>run {r.get('run_id')}<br>commit {r.get('git_commit') or 'n/a'}"
                           for r, i in zip(group, iv)], hoverinfo="text"))
    fig.update_xaxes(title="recorded at (UTC)")
    fig.update_yaxes(title="breakpoint, requests/s (bar: its interval)", rangemode="tozero")
    fig.update_layout(title=title or "Breakpoints over time", template="plotly_white", hovermode="closest",
                      legend_title_text="workload, configuration")
    return fig


def _row_label(r: dict) -> str:
    return workload_label(r) + (f", {r['mode']}" if r.get("mode") else "")


def executor_heatmap(table: pd.DataFrame, value: str, title: str, text_format: str = ",.0f",
                     colorscale: str = "Viridis") -> go.Figure:
    """``value`` (a column of ``table``) over the executor grid: worker threads down, queue capacity across,
    the number written in each cell (``text_format``, a d3 format: ``,.0f``, ``.1%``). ``table`` is indexed
    by ``workers, queue`` (:mod:`perflab.analysis.tables` with ``index=("workers", "queue")``); a cell
    without a value (no rate passed) stays empty."""
    if list(table.index.names) != ["workers", "queue"]:
        raise ValueError(f"table must be indexed by workers, queue, got {list(table.index.names)}")
    if value not in table:
        raise ValueError(f"value: {value!r} is not a column of the table ({', '.join(table.columns)})")
    grid = pd.to_numeric(table[value], errors="coerce").unstack("queue")
    fig = go.Figure(go.Heatmap(
        z=grid.to_numpy(), x=[str(q) for q in grid.columns], y=[str(w) for w in grid.index], colorscale=colorscale,
        texttemplate=f"%{{z:{text_format}}}", colorbar=dict(title=value),
        hovertemplate=f"%{{y}} workers, queue %{{x}}<br>{value}: %{{z:{text_format}}}<extra></extra>"))
    fig.update_xaxes(title="queue capacity", type="category")
    fig.update_yaxes(title="worker threads", type="category", autorange="reversed")
    fig.update_layout(title=title, template="plotly_white")
    return fig


def fixed_rate_scatter(loads: pd.DataFrame, title: str | None = None) -> go.Figure:
    """p99 (log axis) of every recorded fixed-rate run against its offered rate: one colour per
    ``configuration``, one symbol per ``validity``; hover: run, script, connections, p50 and p99.9.
    ``loads``: :func:`perflab.analysis.history.fixed_rate_runs`."""
    need = {"target_rate", "p99_ms", "configuration", "validity", "run_id"}
    if loads is None or loads.empty or not need <= set(loads.columns):
        raise ValueError(f"loads must be a non-empty table with columns {', '.join(sorted(need))}")
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#7f7f7f"]
    symbols = {"valid": "circle", "suspect": "diamond", "invalid": "x"}
    configurations = list(dict.fromkeys(loads["configuration"]))
    fig = go.Figure()
    for (cfg, validity), g in loads.groupby(["configuration", "validity"], sort=False):
        hover = [f"{cfg} ({validity})<br>{fmt.rate(r.target_rate)} offered<br>p99 {fmt.ms(r.p99_ms)}"
                 + "".join(f"<br>{k} {getattr(r, k)}" for k in ("script", "connections") if hasattr(r, k))
                 + "".join(f"<br>{n} {fmt.ms(getattr(r, k))}" for k, n in (("p50_ms", "p50"), ("p999_ms", "p99.9"))
                           if hasattr(r, k)) + f"<br>run {r.run_id}" for r in g.itertuples()]
        fig.add_trace(go.Scatter(x=g["target_rate"], y=g["p99_ms"], mode="markers", name=f"{cfg}, {validity}",
                                 marker=dict(size=9, color=palette[configurations.index(cfg) % len(palette)],
                                             symbol=symbols.get(validity, "circle-open")),
                                 hovertext=hover, hoverinfo="text"))
    fig.update_xaxes(title="offered rate, requests/s", rangemode="tozero")
    fig.update_yaxes(title="p99, ms (log scale)", type="log")
    fig.update_layout(title=title or "p99 of every fixed-rate run (symbol: validity)", template="plotly_white",
                      hovermode="closest", legend_title_text="configuration, validity")
    return fig


def latency_timelines(runs: dict, title: str | None = None) -> go.Figure:
    """p50 (dotted) and p99 (solid) per interval of several runs on one time axis (seconds since each
    run's measured window began). ``runs``: label -> LoadResult or intervals DataFrame."""
    from ..measure.result import LoadResult
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
                fig.add_trace(go.Scatter(x=t, y=iv[col], mode="lines+markers", name=f"{label}: {name}",
                                         line=dict(color=colour, dash=dash), marker=dict(size=4),
                                         hovertemplate=f"{label}<br>t=%{{x:.1f}} s<br>{name} %{{y:.3f}} ms<extra></extra>"))
    fig.update_xaxes(title="time since the start of the measured window, s")
    fig.update_yaxes(title="latency per interval, ms", rangemode="tozero")
    fig.update_layout(title=title or "Latency over time (p99 solid, p50 dotted)", template="plotly_white",
                      hovermode="x unified")
    return fig


def thumbnail(fig, height: int = 220) -> dict:
    """A small static copy of a figure for the index page: its JSON with a compact layout (no
    legend, small margins and fonts, the template reduced to a white background and grey grid)."""
    import json
    if isinstance(fig, go.Figure):
        d = json.loads(fig.to_json())
    elif isinstance(fig, dict) and "data" in fig:
        d = json.loads(json.dumps(fig))
    else:
        raise ValueError(f"preview must be a plotly Figure, got {type(fig).__name__}")
    layout = d.setdefault("layout", {})
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    layout.pop("template", None)
    for key, ax in list(layout.items()):
        if key.startswith(("xaxis", "yaxis")) and isinstance(ax, dict):
            ax.setdefault("gridcolor", "#eee")
            ax.setdefault("zerolinecolor", "#ddd")
            t = ax.get("title")
            if isinstance(t, dict):
                t["font"] = {"size": 9}
    layout.update(height=height, width=None, showlegend=False, margin={"l": 44, "r": 8, "t": 28, "b": 34},
                  font={"size": 9}, paper_bgcolor="#fff", plot_bgcolor="#fff",
                  title={"text": text or "", "font": {"size": 11}, "x": 0.01, "xanchor": "left"})
    for ann in layout.get("annotations", []) or []:
        ann["font"] = {"size": 8}
    for tr in d.get("data", []):
        if tr.get("type") in ("icicle", "treemap", "sunburst"):
            tr["textfont"] = {"size": 8}
    return d


def _stacks_of(obj) -> tuple[pd.DataFrame, str]:
    from ..profiling.profiler import Profile
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
    fig = go.Figure(go.Icicle(ids=ids, parents=parents, labels=nn["label"], values=nn["value"],
                              branchvalues="total",
                              marker=dict(colors=delta, colorscale="RdBu_r", cmid=0, cmin=-lim, cmax=lim,
                                          colorbar=dict(title="Δ share, pp")),
                              customdata=np.stack([nn["share"] * 100, delta], axis=1),
                              hovertemplate="%{label}<br>now %{customdata[0]:.2f}% of samples"
                                            "<br>change %{customdata[1]:+.2f} pp<extra></extra>",
                              tiling=dict(orientation="v", flip="y")))
    fig.update_layout(title=title or f"Differential {event} flame graph (red: grew, blue: shrank)",
                      margin=dict(t=50, l=5, r=5, b=5), height=700)
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
        fig.add_trace(go.Bar(y=list(df.columns), x=vals, name=cat, orientation="h",
                             marker_color=CATEGORY_COLORS.get(cat),
                             hovertemplate="%{y}<br>" + cat + ": %{x:.1f}" + ("%" if normalize else " samples") + "<extra></extra>"))
    fig.update_layout(barmode="stack", title=title or "Where the time goes, by category",
                      xaxis_title="share of samples, %" if normalize else "samples", template="plotly_white",
                      yaxis_title=by,
                      legend=dict(title_text="category", orientation="h", yanchor="top", y=-0.25, traceorder="normal"),
                      height=300 + 50 * len(df.columns), margin=dict(b=150))
    fig.update_yaxes(autorange="reversed")  # first configuration on top, as listed
    return fig


from .timeline import timeline  # noqa: E402,F401  (the latency timeline with the server's events)
