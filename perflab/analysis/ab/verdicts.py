"""An A/B comparison's verdicts in words, each naming its method and n.

Every function here takes a verdict row: what :func:`perflab.ab.result.verdict_rows` makes of a comparison
that just ran and what a recorded ``ab`` run holds (:func:`perflab.ab.result.recorded_verdicts`), so a
comparison reads the same in a notebook, on the command line (``perflab ab``) and in ``perflab compare``.
A row's ``metric`` says which verdict it is: ``p50``, ``p99``, ``p99.9``, ``cpu`` (the server's CPU time per
request; each by interleaved pairs: a Wilcoxon signed-rank test on the pairs' log-ratios and a bootstrap
interval of the median ratio), ``category`` (a profiled comparison's microseconds per request in one category: the same test on the pairs'
differences), ``pass`` (pass/fail
at the SLA: an exact McNemar test) or ``breakpoint`` (interleaved searches: the ratio's interval from both
searches' intervals); :mod:`perflab.stats.paired` says when each one claims.
"""

from __future__ import annotations

import math

from ... import fmt
from ...config.ab import METRIC
from ...stats.methods import Method
from ...stats.paired import CONFIDENCE, Conclusion, band, min_pairs_for
from ...stats.significance import Direction


def where(rate: float | None) -> str:
    """' at 1,000 req/s'."""
    return f" at {fmt.rate(rate)}" if rate else ""


def ci_text(lo, hi, confidence: float = CONFIDENCE) -> str:
    """'95% CI 0.65x-0.80x'."""
    return f"{100 * confidence:g}% CI {fmt.ratio(lo)}-{fmt.ratio(hi)}"


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def named(metric: str) -> str:
    """How a sentence names a metric: ``p99``, ``CPU per request``."""
    return METRIC[metric].words if metric in METRIC else metric


def paired_sentence(row: dict, where: str = "", a: str = "A", b: str = "B") -> str:
    """A latency metric's verdict: "B's p99 at 30,000 req/s is 0.72x A's (95% CI 0.65x-0.80x, n = 24 pairs;
    interleaved pairs, Wilcoxon p = 1.2e-07)", or why no difference is claimed."""
    metric, n, ratio, method = named(row["metric"]), row["n"], row["ratio"], row["method"]
    conclusion = Conclusion(row["conclusion"])
    if conclusion is Conclusion.TOO_FEW:
        return f"too few pairs to compare {metric}{where}: n = {n} (at least {row.get('min_pairs')}; {method})"
    ci = ci_text(row["ci_lo"], row["ci_hi"], row.get("confidence") or CONFIDENCE)
    how = f"{method}, Wilcoxon p = {fmt.p_sci(row['p_value'])}"
    if conclusion is Conclusion.DIFFERENT:
        return f"{b}'s {metric}{where} is {fmt.ratio(ratio)} {a}'s ({ci}, n = {n} pairs; {how})"
    margin = row["margin"]
    if conclusion is Conclusion.EQUIVALENT:
        return (
            f"no difference beyond ±{fmt.pct(margin)} in {metric}{where}: {b}/{a} {fmt.ratio(ratio)} ({ci}, "
            f"n = {n} pairs; {how})"
        )
    lo, hi = row["ci_lo"], row["ci_hi"]
    if lo > 1 or hi < 1:  # the interval excludes 1, but the rule does not claim: say why
        if band(margin)[0] <= ratio <= band(margin)[1]:
            why = f"within the ±{fmt.pct(margin)} margin"
        elif _missing(row.get("level")):
            why = "the test is consulted at the looks only"
        else:
            why = f"the test does not reach the comparison's level {fmt.p_sci(row['level'])}"
        return (
            f"no difference established in {metric}{where} with n = {n} pairs: {b}/{a} {fmt.ratio(ratio)} "
            f"({ci}), but {why} ({how})"
        )
    return f"no difference detectable in {metric}{where} with n = {n} pairs ({b}/{a} {fmt.ratio(ratio)}, {ci}; {how})"


def pass_sentence(row: dict, where: str = "", sla: str = "the SLA", a: str = "A", b: str = "B") -> str:
    """Pass/fail at the SLA in the pairs: 'B passes the SLA in fewer probes than A: A passed 24 of 24 probes,
    B 0 (exact McNemar p = ...; interleaved pairs)'."""
    counts = f"{a} passed {row['a_value']} of {row['n']} probes, {b} {row['b_value']}"
    test = f"exact McNemar p = {fmt.p_sci(row['p_value'])}; {Method.INTERLEAVED_PAIRS}"
    if Conclusion(row["conclusion"]) is Conclusion.DIFFERENT:
        word = "fewer" if row["direction"] == Direction.LOWER else "more"
        return f"{b} passes {sla}{where} in {word} probes than {a}: {counts} ({test})"
    return f"pass at {sla}{where}: {counts}; no difference detectable ({test})"


def interval_sentence(row: dict, where: str = "", a: str = "A", b: str = "B") -> str:
    """Two breakpoints of interleaved searches: "B's breakpoint is 0.80x A's (interval 0.72x-0.87x; A ..., B
    ...; interleaved searches)", or why no difference is claimed."""
    what, method = row["metric"], row["method"]
    if _missing(row.get("ratio")):
        return f"{what}{where} not compared: a search found none (no probed rate passed; {method})"
    lo = row["ci_lo"] or 0.0
    hi = math.inf if _missing(row["ci_hi"]) else row["ci_hi"]  # a recorded run holds an open end as null
    span = f"interval {fmt.ratio(lo) if lo > 0 else '0'}-{fmt.ratio(hi)}"
    ea, eb = fmt.estimate(row["a_value"], row.get("a_interval")), fmt.estimate(row["b_value"], row.get("b_interval"))
    conclusion, ratio = Conclusion(row["conclusion"]), row["ratio"]
    if conclusion is Conclusion.DIFFERENT:
        return f"{b}'s {what}{where} is {fmt.ratio(ratio)} {a}'s ({span}; {a} {ea}, {b} {eb}; {method})"
    if conclusion is Conclusion.EQUIVALENT:
        return (
            f"no difference beyond ±{fmt.pct(row['margin'])} in {what}{where}: {b}/{a} {fmt.ratio(ratio)} "
            f"({span}; {method})"
        )
    return (
        f"no difference detectable in {what}{where} ({b}/{a} {fmt.ratio(ratio)}, {span}; {a} {ea}, {b} {eb}; {method})"
    )


def _us(v) -> str:
    return f"{v:.3g} us" if abs(v) < 100 else f"{v:,.0f} us"


def category_sentence(row: dict, where: str = "", a: str = "A", b: str = "B") -> str:
    """A profiled comparison's category: "B spends 12 us more per request in storage than A at 2,000 req/s
    (95% CI 10 us-14 us, n = 24 pairs; interleaved pairs, Wilcoxon p = 1e-8)", or why no difference is claimed."""
    c, n = row["category"], row["n"]
    conclusion = Conclusion(row["conclusion"])
    if conclusion is Conclusion.TOO_FEW:
        return f"too few profiled pairs to compare the CPU per request in {c}{where}: n = {n} ({row['method']})"
    lo, hi, d = row["ci_lo"], row["ci_hi"], row["difference"]
    ci = f"{100 * (row.get('confidence') or CONFIDENCE):g}% CI {_us(lo)} to {_us(hi)}"
    how = f"{row['method']}, Wilcoxon p = {fmt.p_sci(row['p_value'])}"
    if conclusion is Conclusion.DIFFERENT:
        return (
            f"{b} spends {_us(abs(d))} {'more' if d > 0 else 'less'} per request in {c} than {a}{where} "
            f"({ci}, n = {n} pairs; {how})"
        )
    return (
        f"no difference detectable in the CPU per request in {c}{where} with n = {n} pairs: {b} - {a} "
        f"{'+' if d >= 0 else '-'}{_us(abs(d))} ({ci}; {how})"
    )


def sentence(row: dict, sla: str = "the SLA", a: str = "A", b: str = "B") -> str:
    """The verdict of any row in one sentence (where it was measured included)."""
    w = where(row.get("rate"))
    if row["metric"] == "pass":
        return pass_sentence(row, w, sla, a, b)
    if row["metric"] == "category":
        return category_sentence(row, w, a, b)
    if row["metric"] == "breakpoint":
        return interval_sentence(row, w, a, b)
    return paired_sentence(row, w, a, b)


def stop_reason(row: dict) -> str:
    """Why the stop rule stopped, in words, from the row of its metric (``stop_rule``)."""
    stop, metric = row["stop"], named(row["metric"])
    if stop == "equivalent":
        return (
            f"the {100 * (row.get('confidence') or CONFIDENCE):g}% interval of {metric} lies within "
            f"±{fmt.pct(row['margin'])}"
        )
    if stop == "not-worse":
        return (
            f"the {100 * (row.get('confidence') or CONFIDENCE):g}% interval of {metric} lies below "
            f"+{fmt.pct(row['margin'])}: B is no worse than A beyond the margin"
        )
    if stop == "different":
        return (
            f"the test claims a difference in {metric} at n = {row['n']} (p = {fmt.p_sci(row['p_value'])} "
            f"<= {fmt.p_sci(row['level'])}) and the interval excludes 1"
        )
    if stop == "max-pairs":
        return f"max_pairs ({row['max_pairs']}) measured without a verdict"
    budget = f" ({row['budget_s']:g} s)" if row.get("budget_s") else ""
    return f"the time budget{budget} ended without a verdict"


def idle_sentence(idle: dict, metric: str = "p99") -> str:
    """What the idle side cost the busy one (``idle``: the recorded ``idle_cost``, :meth:`IdleCost.to_dict`),
    a difference stated only where its own test reaches its level: "A's p99 at 1,000 req/s with B idle but
    running is 1.31x A's with B frozen (...)"; else that none was shown, or that none can be with so few
    pairs ("not measurable with n = 4 pairs: a claim at level 1e-06 needs 21")."""
    r = idle["ratios"][metric]
    if r["conclusion"] == Conclusion.TOO_FEW:
        return f"the idle side's cost was not measured: {r['n']} usable pairs"
    busy, other = idle["busy"], idle["idle"]
    what = (
        f"{busy}'s {named(metric)}{where(idle['rate'])} with {other} idle but running against {busy}'s with "
        f"{other} frozen"
    )
    measured = (
        f"{fmt.ratio(r['ratio'])} ({ci_text(*r['ci'], r.get('confidence') or CONFIDENCE)}, n = {r['n']} "
        f"pairs; {Method.INTERLEAVED_PAIRS})"
    )
    level = r.get("level")
    if level is None or r["n"] < min_pairs_for(level):
        need = f": a claim at level {fmt.p_sci(level)} needs {min_pairs_for(level)}" if level else ""
        return f"{what}: not measurable with n = {r['n']} pairs{need} (measured {measured}, no claim)"
    if r["conclusion"] == Conclusion.DIFFERENT:
        return f"{what}: {measured}, p = {fmt.p_sci(r['p_value'])} <= {fmt.p_sci(level)}: the idle side costs this"
    if r["conclusion"] == Conclusion.EQUIVALENT:
        return f"{what}: {measured}: within the margin, no cost shown"
    return f"{what}: {measured}: no difference shown at level {fmt.p_sci(level)}"
