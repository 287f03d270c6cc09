"""An A/B comparison in a notebook: its verdicts in words, the pairs as a figure, the finding.

What a notebook does with :func:`perflab.compare_ab` (notebook 08, and 03, 04, 05 wherever they compare
two things)::

    from perflab.analysis import ab as abx
    res = pl.compare_ab(sync_cfg, async_cfg, workload, rates=[5000, 20000], params=pl.ABParams(), prefill=prefill)
    nb.show_markdown(abx.commentary(res))          # every verdict, each naming its method and n
    abx.figure(res).show()                          # B/A of every pair (or both searches' curves)
    findings.show_finding(abx.answer(res), key_number=abx.key_number(res), validity=abx.validity(res),
                          preview=abx.figure(res))

Several configurations against one (each mode against sync, each worker count against one)::

    abs_ = {m: pl.compare_ab(servers["sync"], s, workload, search=params, criteria=criteria, prefill=prefill,
                             name=f"nb03-ab-sync-{m}") for m, s in servers.items() if m != "sync"}
    nb.show_markdown(abx.overview(abs_))
    display(abx.table(abs_))

Every function also takes a recorded ``ab`` run (:func:`perflab.open_run`), so a report or ``perflab
compare`` can draw a comparison it did not run.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .. import fmt
from ..measure import paired
from ..measure.methods import Method


def _verdict_rows(res) -> list[dict]:
    from ..ab.result import ABResult, recorded_verdicts, verdict_rows
    if isinstance(res, ABResult):
        return verdict_rows(res)
    return recorded_verdicts(res)


def _pairs(res) -> pd.DataFrame:
    from ..ab.result import ABResult
    if isinstance(res, ABResult):
        return res.pairs if res.pairs is not None else pd.DataFrame()
    p = res.dir / "pairs.csv"
    return pd.read_csv(p) if p.is_file() else pd.DataFrame()


def _labels(res) -> tuple[str, str]:
    from ..ab.result import ABResult
    if isinstance(res, ABResult):
        return res.a.label, res.b.label
    return (res.params.get("a") or {}).get("label", "A"), (res.params.get("b") or {}).get("label", "B")


def commentary(res) -> str:
    """Markdown: who A and B are and how they were compared, then every verdict (the stop rule's metric
    first at each rate) and the idle side's cost, each sentence naming its method and n."""
    from ..ab.result import ABResult
    a, b = _labels(res)
    lines = res.lines() if isinstance(res, ABResult) else list(res.results.get("lines") or [])
    if not lines:
        return f"**A** = {a}, **B** = {b}: the comparison recorded no verdict (status {res.status})."
    method = Method(res.method if isinstance(res, ABResult) else res.results.get("method"))
    out = [f"**A** = `{a}`, **B** = `{b}`, compared by *{method}*: {method.description}."]
    out += [f"- {line[0].upper()}{line[1:]}" for line in lines[1:]]   # lines[0] says who A and B are
    return "\n".join(out)


def answer(res) -> str:
    """The comparison's answer in one sentence: the verdict on the stop rule's metric at the first rate
    (or the breakpoints'), with who A and B are."""
    rows = [r for r in _verdict_rows(res) if r.get("stop_rule")]
    a, b = _labels(res)
    if not rows:
        return f"A ({a}) and B ({b}) were not compared: the run recorded no verdict."
    s = rows[0]["sentence"]
    return f"{s[0].upper()}{s[1:]} (A = {a}, B = {b})."


def key_number(res) -> dict:
    """The finding's key number: B/A of the stop rule's metric at the first rate (or of the breakpoints),
    with its interval."""
    rows = [r for r in _verdict_rows(res) if r.get("stop_rule")]
    if not rows:
        return {"label": "B/A", "value": None, "unit": "x", "interval": None}
    r = rows[0]
    where = f" at {fmt.rate(r['rate'])}" if r.get("rate") else ""
    lo, hi = r.get("ci_lo"), r.get("ci_hi")
    iv = [lo if lo is not None and math.isfinite(lo) else None, hi if hi is not None and math.isfinite(hi) else None]
    val = r.get("ratio")
    return {"label": f"B/A {r['metric']}{where}", "value": val if val is not None and math.isfinite(val) else None,
            "unit": "x", "interval": iv if any(v is not None for v in iv) else None}


def validity(res) -> str | None:
    """The comparison's validity level: the worst of its measured probes."""
    run = getattr(res, "run", res)
    return run.validity


def table(res) -> pd.DataFrame:
    """Every verdict as a row: rate, metric, B/A with its interval, n, p, conclusion, method. ``res``: one
    comparison, or a dict label -> comparison (a ``comparison`` column first)."""
    cols = ["rate", "metric", "ratio", "ci_lo", "ci_hi", "n", "p_value", "conclusion", "direction", "method", "stop"]
    if isinstance(res, dict):
        parts = [table(r).assign(comparison=label) for label, r in res.items()]
        df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        return df[["comparison"] + [c for c in df.columns if c != "comparison"]] if not df.empty else df
    df = pd.DataFrame(_verdict_rows(res))
    return df[[c for c in cols if c in df]] if not df.empty else df


def overview(results: dict) -> str:
    """Markdown: one bullet per comparison (label -> comparison), its answer naming its method: what a
    notebook that compares several configurations against one shows (03: each mode against sync, 04:
    each worker count against one, 05: each backend against lsm)."""
    return "\n".join(f"- **{label}**: {answer(r)}" for label, r in results.items())


def pairs_figure(res, metrics=paired.METRICS, title: str | None = None) -> go.Figure:
    """B/A of every pair (log axis; the order the pairs were measured in), per metric, with the median
    ratio and its interval as a line and a band; pairs left out of the test (an invalid probe) as open
    markers; the ±margin band shaded."""
    pairs = _pairs(res)
    rows = {(r.get("rate"), r.get("metric")): r for r in _verdict_rows(res)}
    fig = go.Figure()
    palette = {"p50": "#1f77b4", "p99": "#d62728", "p99.9": "#9467bd"}
    margin = None
    if pairs.empty:
        fig.add_annotation(text="no pairs recorded (a breakpoint comparison: see its searches)", showarrow=False,
                           x=0.5, y=0.5, xref="paper", yref="paper")
    multi = pairs["rate"].nunique() > 1 if not pairs.empty else False
    for rate, grp in (pairs.groupby("rate", sort=False) if not pairs.empty else []):
        for m in metrics:
            col = f"log_ratio_{m}"
            if col not in grp:
                continue
            name = f"{m}" + (f" at {fmt.rate(rate)}" if multi else "")
            used = grp["used"].astype(bool)
            x = grp["pair"] + 1
            y = np.exp(grp[col].astype(float))
            colour = palette.get(m, "#333")
            fig.add_trace(go.Scatter(x=x[used], y=y[used], mode="markers", name=name, marker=dict(color=colour, size=7),
                                     hovertemplate=f"{name}<br>pair %{{x}}<br>B/A %{{y:.3f}}<extra></extra>"))
            if (~used).any():
                fig.add_trace(go.Scatter(x=x[~used], y=y[~used], mode="markers", name=f"{name}: left out (invalid probe)",
                                         marker=dict(color=colour, size=7, symbol="circle-open"),
                                         hovertemplate=f"{name}, left out<br>pair %{{x}}<br>B/A %{{y:.3f}}<extra></extra>"))
            v = rows.get((rate, m))
            if v and v.get("ratio") and v.get("ci_lo"):
                x0, x1 = float(x.min()), float(x.max())
                fig.add_trace(go.Scatter(x=[x0, x1, x1, x0], y=[v["ci_lo"], v["ci_lo"], v["ci_hi"], v["ci_hi"]],
                                         fill="toself", mode="none", fillcolor=colour, opacity=0.15, showlegend=False,
                                         hoverinfo="skip"))
                fig.add_trace(go.Scatter(x=[x0, x1], y=[v["ratio"], v["ratio"]], mode="lines", showlegend=False,
                                         line=dict(color=colour, width=2),
                                         hovertemplate=f"{name}: median B/A {fmt.ratio(v['ratio'])}, 95% CI "
                                                       f"{fmt.ratio(v['ci_lo'])}-{fmt.ratio(v['ci_hi'])}<extra></extra>"))
            margin = margin or (v or {}).get("margin")
    fig.add_hline(y=1.0, line=dict(color="#444", width=1))
    if margin:
        lo, hi = paired.band(margin)
        fig.add_hrect(y0=lo, y1=hi, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    a, b = _labels(res)
    fig.update_xaxes(title="pair (in the order measured)")
    fig.update_yaxes(title="B/A latency of the pair (log scale)", type="log")
    fig.update_layout(title=title or f"B ({b}) against A ({a}), pair by pair: median and 95% interval per metric",
                      template="plotly_white", hovermode="closest", height=420)
    return fig


def side(common: dict | None, fields: dict | None, commit: str | None = None, what: str = "a"):
    """A notebook's side: the built-in server with ``common`` fields updated by the side's own
    (``ServerConfig`` keyword arguments), at ``commit`` when given (a :class:`~perflab.Commit`, built
    apart when the comparison starts). A bad field fails here, named with the side (``a: mode: ...``)."""
    from ..ab.sides import Commit
    from ..config import ServerConfig

    for name, d in (("common", common), (what, fields)):
        if d is not None and not isinstance(d, dict):
            raise ValueError(f"{name}: expected a dict of ServerConfig fields, got {type(d).__name__}")
    import dataclasses

    known = {f.name for f in dataclasses.fields(ServerConfig)}
    for name, d in (("common", common), (what, fields)):
        unknown = sorted(set(d or {}) - known)
        if unknown:
            raise ValueError(f"{name}: {', '.join(map(repr, unknown))} is no ServerConfig field (a server flag, "
                             f"'-' written '_')")
    try:
        cfg = ServerConfig(**{**(common or {}), **(fields or {})})
        return Commit(commit, cfg) if commit else cfg
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None


def figure(res, title: str | None = None) -> go.Figure:
    """The comparison's figure: the pairs (:func:`pairs_figure`) at fixed rates, or both searches'
    breakpoint curves when breakpoints were compared."""
    from ..ab.result import ABResult
    from .plots import breakpoint_curve

    if isinstance(res, ABResult) and res.mode == "breakpoint":
        return breakpoint_curve({f"A ({res.a.label})": res.searches["A"], f"B ({res.b.label})": res.searches["B"]},
                                sla_ms=res.sla_ms, title=title or "Both searches, probes interleaved A B B A: latency "
                                "against the offered rate")
    return pairs_figure(res, title=title)


def breakpoint_rows(res, workload: str, connections: int | None = None) -> list[dict]:
    """The findings' breakpoint rows of a breakpoint comparison (one per side, ``mode``: its label);
    ``[]`` for a comparison at fixed rates."""
    from ..ab.result import ABResult

    if not isinstance(res, ABResult) or res.mode != "breakpoint":
        return []
    return [{"workload": workload, "connections": connections, "mode": f"{name}: {s.label}",
             "rate": res.searches[name].rate, "interval": list(res.searches[name].interval),
             "verdict": str(res.searches[name].outcome), "validity": res.run.validity, "run_id": res.run_id}
            for name, s in (("A", res.a), ("B", res.b))]
