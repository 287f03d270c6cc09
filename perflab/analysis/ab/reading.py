"""One A/B comparison read for people: as :func:`perflab.compare_ab` returned it (an ``ABResult``) or as a
recorded ``ab`` run holds it (:func:`perflab.open_run`), so a report or ``perflab compare`` tells a
comparison it did not run the same way. Its verdicts in words are :mod:`.verdicts`'."""

from __future__ import annotations

import math

import pandas as pd

from ... import fmt
from ...ab.result import ABResult, recorded_verdicts, verdict_rows
from ...measure.validity import Level
from ...stats.methods import Method
from ..breakpoints import estimate
from .verdicts import idle_sentence, sentence, stop_reason, where


def rows_of(res) -> list[dict]:
    """Every verdict as a row (the ``ab`` index rows)."""
    return verdict_rows(res) if isinstance(res, ABResult) else recorded_verdicts(res)


def pairs_of(res) -> pd.DataFrame:
    """One row per pair (empty when none was recorded: a breakpoint comparison)."""
    pairs = res.pairs if isinstance(res, ABResult) else res.read_frame("pairs.csv")
    return pairs if pairs is not None else pd.DataFrame()


def labels_of(res) -> tuple[str, str]:
    """Who A and B are."""
    if isinstance(res, ABResult):
        return res.a.label, res.b.label
    return (res.params.get("a") or {}).get("label", "A"), (res.params.get("b") or {}).get("label", "B")


def _method(res) -> Method:
    return Method(res.method if isinstance(res, ABResult) else res.results.get("method"))


def _sla_ms(res) -> float | None:
    if isinstance(res, ABResult):
        return res.sla_ms
    sla = (res.params.get("criteria") or {}).get("sla_p99")
    return sla * 1000 if sla else None


def lines(res) -> list[str]:
    """Who A and B are and how they were compared, every verdict as a sentence (the stop rule's metric first
    at each rate), why each rate stopped, each side's search (of a comparison that just ran), and what the
    idle side cost: what ``perflab ab`` prints."""
    a, b = labels_of(res)
    rows = rows_of(res)
    sla = f"the SLA (p99 <= {fmt.ms(_sla_ms(res))})" if _sla_ms(res) else "the SLA"
    out = [f"A = {a}, B = {b}; {_method(res).description}", validity_line(res)]
    for r in (r for r in rows if r["metric"] == "breakpoint"):
        out.append(sentence(r))
        for side, s in ((res.searches or {}) if isinstance(res, ABResult) else {}).items():
            out.append(f"{side}'s search: {estimate(s)}; {s.stop_reason}")
    for rate in dict.fromkeys(r["rate"] for r in rows if r["metric"] != "breakpoint"):
        at = [r for r in rows if r["rate"] == rate and r["metric"] != "breakpoint"]
        quiet = [r for r in at if r["metric"] == "category" and r["conclusion"] != "different"]
        out += [sentence(r, sla) for r in at if r not in quiet]
        if quiet:  # the categories without a claim, in one line (each one's interval is in the table)
            out.append(
                f"no difference detectable in the CPU per request in {', '.join(r['category'] for r in quiet)}"
                f"{where(rate)} (n = {quiet[0]['n']} pairs; {quiet[0]['method']}, each a Wilcoxon test on "
                f"the pairs' differences)"
            )
        primary = next(r for r in at if r["stop_rule"])
        out.append(f"stopped{where(rate)} after {primary['measured']} pairs: {stop_reason(primary)}")
    idle = (
        (res.idle_cost.to_dict() if res.idle_cost else None)
        if isinstance(res, ABResult)
        else res.results.get("idle_cost")
    )
    if idle:
        metric = res.metric if isinstance(res, ABResult) else res.results.get("metric")
        out.append(idle_sentence(idle, metric if metric in idle["ratios"] else "p99"))
    return out


def validity_line(res) -> str:
    """The run's validity beside its verdicts: its level, how many probes were invalid and how many pairs
    held one (their ratios are pulled toward 1, or left out with ``drop_invalid``)."""
    meta = res.run.meta if isinstance(res, ABResult) else res.meta
    v = meta.get("validity") or {}
    counts = ((v.get("checks") or {}).get("probes") or {}).get("value") or {}
    probes = sum(counts.values()) if isinstance(counts, dict) else 0
    pairs = pairs_of(res)
    held = int(pairs["invalid"].notna().sum()) if pairs is not None and "invalid" in pairs else 0
    text = f"validity: {v.get('verdict') or 'not recorded'}"
    if probes:
        text += f"; {counts.get('invalid', 0)} of {probes} probes invalid (the generator, not the server, set them)"
    if pairs is not None and len(pairs):
        text += f"; {held} of {len(pairs)} pairs held an invalid probe"
    return text


def commentary(res) -> str:
    """Markdown: who A and B are and how they were compared, then :func:`lines` as a list."""
    a, b = labels_of(res)
    if not rows_of(res):
        return f"**A** = {a}, **B** = {b}: the comparison recorded no verdict (status {res.status})."
    method = _method(res)
    out = [f"**A** = `{a}`, **B** = `{b}`, compared by *{method}*: {method.description}."]
    out += [f"- {line[0].upper()}{line[1:]}" for line in lines(res)[1:]]  # the first says who A and B are
    return "\n".join(out)


def _stop_rule_row(res) -> dict | None:
    return next((r for r in rows_of(res) if r.get("stop_rule")), None)


def answer_comparison(res) -> str:
    """The comparison's answer in one sentence: the verdict on the stop rule's metric at the first rate
    (or the breakpoints'), with who A and B are."""
    row = _stop_rule_row(res)
    a, b = labels_of(res)
    if row is None:
        return f"A ({a}) and B ({b}) were not compared: the run recorded no verdict."
    s = sentence(row)
    return f"{s[0].upper()}{s[1:]} (A = {a}, B = {b})."


def key_number(res) -> dict:
    """The key number of a finding: B/A of the stop rule's metric at the first rate (or of the breakpoints),
    with its interval."""
    r = _stop_rule_row(res)
    if r is None:
        return {"label": "B/A", "value": None, "unit": "x", "interval": None}
    lo, hi = r.get("ci_lo"), r.get("ci_hi")
    iv = [lo if lo is not None and math.isfinite(lo) else None, hi if hi is not None and math.isfinite(hi) else None]
    val = r.get("ratio")
    return {
        "label": f"B/A {r['metric']}{where(r.get('rate'))}",
        "value": val if val is not None and math.isfinite(val) else None,
        "unit": "x",
        "interval": iv if any(v is not None for v in iv) else None,
    }


def stop_ratio(res) -> float | None:
    """B/A of the stop rule's metric (``None`` when there is none)."""
    v = (_stop_rule_row(res) or {}).get("ratio")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) and v > 0 else None


def validity(res) -> str | None:
    """The comparison's validity level: the worst of its measured probes (of several comparisons, a dict:
    the worst of theirs)."""
    if isinstance(res, dict):
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
    df = pd.DataFrame(rows_of(res))
    return df[[c for c in cols if c in df]] if not df.empty else df


def breakpoint_rows(res, workload: str, connections: int | None = None) -> list[dict]:
    """The findings' breakpoint rows of a breakpoint comparison (one per side, ``mode``: its label);
    ``[]`` for a comparison at fixed rates."""
    if not isinstance(res, ABResult) or res.mode != "breakpoint":
        return []
    return [
        {
            "workload": workload,
            "connections": connections,
            "mode": f"{name}: {s.label}",
            "rate": res.searches[name].rate,
            "interval": list(res.searches[name].interval),
            "verdict": str(res.searches[name].outcome),
            "validity": res.run.validity,
            "run_id": res.run_id,
        }
        for name, s in (("A", res.a), ("B", res.b))
    ]
