"""An A/B comparison in a notebook: its verdicts in words, the pairs as a figure, the finding.

What a notebook does with :func:`perflab.compare_ab` (notebook 08, and 03, 04, 05 wherever they compare
two things)::

    from perflab.analysis import ab as abx
    res = pl.compare_ab(sync_cfg, async_cfg, workload, rates=[5000, 20000], params=pl.ABParams(), prefill=prefill)
    nb.show_markdown(abx.commentary(res))          # every verdict, each naming its method and n
    abx.figure(res).show()                          # B/A of every pair (or both searches' curves)
    findings.show_finding(abx.answer(res), key_number=abx.key_number(res), validity=abx.validity(res),
                          preview=abx.figure(res))

Several configurations against one (03: each mode against sync, 04: each executor configuration against
the first, 05: each backend against lsm), each pair of servers interleaved in a run of its own::

    found = abx.against(servers, workload, "nb03-breakpoint", baseline="sync", search=search, prefill=prefill)
    nb.show_markdown(abx.overview(found))          # one verdict per comparison, naming its method
    abx.figure(found).show()                        # every configuration's search (or B/A of every pair)
    bps = abx.searches(found)                       # each configuration's search (the baseline's first)
    findings.show_finding(abx.answer_against(found), key_number=abx.key_against(found), validity=found.validity,
                          breakpoints=abx.search_rows(found, "get-random", 64), preview=abx.figure(found))

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


def family(params, rates: int = 1) -> paired.Family:
    """The tests a comparison at ``rates`` rates makes with ``params`` (an ``ABParams``), with their level."""
    return paired.Family(params.alpha, params.max_pairs, rates)


def _verdict_rows(res) -> list[dict]:
    from ..ab.result import ABResult, recorded_verdicts, verdict_rows
    if isinstance(res, ABResult):
        return verdict_rows(res)
    return recorded_verdicts(res)


def _pairs(res) -> pd.DataFrame:
    from ..ab.result import ABResult
    if isinstance(res, ABResult):
        return res.pairs if res.pairs is not None else pd.DataFrame()
    pairs = res.read_frame("pairs.csv")
    return pairs if pairs is not None else pd.DataFrame()


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
    """The comparison's validity level: the worst of its measured probes (of several comparisons, a dict:
    the worst of theirs)."""
    if isinstance(res, dict):
        from ..measure.validity import Level
        worst = Level.worst(validity(r) for r in res.values())
        return str(worst) if worst is not None else None
    return getattr(res, "run", res).validity


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


def _name(key) -> str:
    return key if isinstance(key, str) else " ".join(map(str, key if isinstance(key, tuple) else (key,)))


def _label(results, key) -> str:
    """How a comparison's key reads: its label when ``results`` came from :func:`against`, else the key."""
    return getattr(results, "labels", {}).get(key) or _name(key)


def overview(results: dict) -> str:
    """Markdown: one bullet per comparison (key -> comparison), its answer naming its method: what a
    notebook that compares several configurations against one shows (:func:`against`)."""
    return "\n".join(f"- **{_label(results, k)}**: {answer(r)}" for k, r in results.items())


# --- several configurations, each against one ---------------------------------------------------------

class Comparisons(dict):
    """What :func:`against` returns: key -> ``ABResult`` of each configuration against the ``baseline``
    key (which has none), with every key's label (``labels``, the baseline's included)."""

    def __init__(self, baseline, labels: dict):
        super().__init__()
        self.baseline = baseline
        self.labels = labels

    @property
    def validity(self) -> str | None:
        """The worst validity level of the comparisons (``None`` when there are none)."""
        return validity(self) if self else None


def against(servers: dict, load, name: str, baseline=None, label=None, **options) -> Comparisons:
    """Every configuration of ``servers`` (key -> ``ServerConfig``, in order) compared with ``baseline`` (a
    key; default the first), interleaved: :func:`perflab.compare_ab` of the baseline (A) and the
    configuration (B) with ``options`` (``rates`` or ``search``, ``params``, ``criteria``, ``prefill``,
    ``placement``...), one ``ab`` run each named ``<name>-<key>``. ``label``: a key's words (called with the
    key, or with its parts when it is a tuple; default the key). Prints one line per comparison: its
    verdict, naming the method, and its run.

    Why against one baseline: a comparison is interleaved only between the two servers it runs side by
    side; two configurations that were each compared with the baseline were measured one after the other,
    so no verdict is drawn between them here."""
    import warnings

    from ..ab import compare_ab

    if baseline is None:
        baseline = next(iter(servers), None)
    if baseline not in servers:
        raise ValueError(f"baseline: {baseline!r} is not among the configurations ({', '.join(map(_name, servers))})")
    words = {k: (label(*k) if isinstance(k, tuple) else label(k)) if label else _name(k) for k in servers}
    out = Comparisons(baseline, words)
    for key, cfg in servers.items():
        if key == baseline:
            continue
        slug = "-".join(map(str, key)) if isinstance(key, tuple) else str(key)
        with warnings.catch_warnings():
            # notebooks pick few pairs on purpose (the quick plan); the verdict says when none could claim
            warnings.filterwarnings("ignore", message="with at most")
            res = compare_ab(servers[baseline], cfg, load, name=f"{name}-{slug}", progress=False, **options)
        out[key] = res
        print(f"{words[key]} against {words[baseline]}: {answer(res)} {res.seconds:.0f} s; run {res.run_id}")
    return out


def searches(results: Comparisons) -> dict:
    """Each configuration's breakpoint search from breakpoint comparisons against one baseline
    (:func:`against` with ``search``): the baseline's from the first comparison (every comparison searched
    it again, side by side with its B), then each B's. Key -> ``BreakpointResult``."""
    found = {k: r for k, r in results.items() if r.mode == "breakpoint"}
    if not found:
        return {}
    return {results.baseline: next(iter(found.values())).searches["A"], **{k: r.searches["B"] for k, r in found.items()}}


def search_rows(results: Comparisons, workload: str, connections: int | None = None) -> list[dict]:
    """The findings' breakpoint rows of breakpoint comparisons against one baseline (one per configuration,
    as :func:`searches` picks them; ``mode``: its label; ``run_id``: the comparison that searched it)."""
    runs = {results.baseline: next(iter(results.values()), None), **results}
    return [{"workload": workload, "connections": connections, "mode": _label(results, k), "rate": s.rate,
             "interval": list(s.interval), "verdict": str(s.outcome), "validity": runs[k].run.validity,
             "run_id": runs[k].run_id} for k, s in searches(results).items()]


def _stop_ratio(res) -> float | None:
    row = next((x for x in _verdict_rows(res) if x.get("stop_rule")), {})
    v = row.get("ratio")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) and v > 0 else None


def best(results: dict):
    """The key of the comparison whose B did best against A by its stop rule's ratio (the highest
    breakpoint ratio, or the lowest latency ratio); ``None`` when none has a ratio."""
    scored = {}
    for k, r in results.items():
        v = _stop_ratio(r)
        if v is not None:
            scored[k] = v if getattr(r, "mode", None) == "breakpoint" else 1 / v
    return max(scored, key=scored.get) if scored else None


def answer_against(results: Comparisons, what: str = "") -> str:
    """The finding of comparisons against one baseline (``what``: a prefix naming them, e.g. ``"PUT"``):
    with one, its answer; with several, how many differ from the baseline and the verdict of the one that
    did best against it, naming its method; with none, that only the baseline was measured."""
    base = _label(results, results.baseline)
    lead = f"{what}: " if what else ""
    if not results:
        return f"{lead}Only {base} was measured, so nothing was compared."
    if len(results) == 1:
        return lead + answer(next(iter(results.values())))
    differ = sum(bool(r.significant) for r in results.values())
    top = best(results)
    text = (f"{lead}Against {base}, {differ} of {fmt.count(len(results), 'configuration')} "
            f"{'differs' if differ == 1 else 'differ'} (each compared with it interleaved, in a run of its own)")
    if top is None:
        return text + "; none has a ratio to rank."
    return text + f"; the best, {_label(results, top)}: {answer(results[top])}"


def key_against(results: Comparisons) -> dict:
    """The finding's key number of comparisons against one baseline: :func:`key_number` of the best one
    (:func:`best`), its label naming the configuration when there are several."""
    top = best(results)
    if top is None:
        return {"label": "B/A", "value": None, "unit": "x", "interval": None}
    k = key_number(results[top])
    return {**k, "label": f"{k['label']} ({_label(results, top)})"} if len(results) > 1 else k


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


def ratios_figure(results: dict, title: str | None = None) -> go.Figure:
    """Several comparisons at fixed rates (key -> comparison, e.g. from :func:`against`): B/A of each pair
    on the stop rule's metric, one series per comparison (log axis), with the ±margin band."""
    fig = go.Figure()
    margin = None
    for k, r in results.items():
        pairs = _pairs(r)
        row = next((x for x in _verdict_rows(r) if x.get("stop_rule")), None)
        if pairs.empty or row is None or f"log_ratio_{row['metric']}" not in pairs:
            continue
        name = f"{_label(results, k)}: {row['metric']}"
        fig.add_trace(go.Scatter(x=pairs["pair"] + 1, y=np.exp(pairs[f"log_ratio_{row['metric']}"].astype(float)),
                                 mode="markers+lines", name=name, line=dict(width=1),
                                 hovertemplate=f"{name}<br>pair %{{x}}<br>B/A %{{y:.3f}}<extra></extra>"))
        margin = margin or row.get("margin")
    fig.add_hline(y=1.0, line=dict(color="#444", width=1))
    if margin:
        lo, hi = paired.band(margin)
        fig.add_hrect(y0=lo, y1=hi, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    base = _label(results, results.baseline) if hasattr(results, "baseline") else "A"
    fig.update_xaxes(title="pair (in the order measured)")
    fig.update_yaxes(title=f"latency against {base}, pair by pair (log scale)", type="log")
    fig.update_layout(title=title or f"Each configuration against {base}, interleaved: B/A of every pair",
                      template="plotly_white", hovermode="closest", height=420)
    return fig


def pairs(fields: dict | None):
    """A notebook's ``pairs`` parameter (``ABParams`` fields: probe lengths, the stop rule, the budget) as the
    :class:`~perflab.config.ABParams` of its interleaved comparisons; a field it does not have is named."""
    import dataclasses

    from ..config import ABParams

    if fields is not None and not isinstance(fields, dict):
        raise ValueError(f"pairs: expected a dict of ABParams fields, got {type(fields).__name__}")
    unknown = sorted(set(fields or {}) - {f.name for f in dataclasses.fields(ABParams)})
    if unknown:
        raise ValueError(f"pairs: {', '.join(map(repr, unknown))} is no ABParams field (probe_duration, warmup, "
                         f"max_pairs, budget, alpha, idle_pairs...)")
    return ABParams(**(fields or {}))


def figure(res, title: str | None = None) -> go.Figure:
    """The comparison's figure: the pairs (:func:`pairs_figure`) at fixed rates, or both searches'
    breakpoint curves when breakpoints were compared. Of several comparisons against one baseline
    (:func:`against`): every configuration's search, or :func:`ratios_figure`."""
    from ..ab.result import ABResult
    from .plots import breakpoint_curve

    if isinstance(res, Comparisons):
        bps = searches(res)
        if bps:
            return breakpoint_curve({_label(res, k): s for k, s in bps.items()}, sla_ms=next(iter(res.values())).sla_ms,
                                    title=title or f"Each configuration's search, side by side with "
                                    f"{_label(res, res.baseline)}'s (probes interleaved A B B A)")
        return ratios_figure(res, title)
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
