"""The judgement of one probe at a fixed rate: it passed when the server kept up with it.

A probe passes when the generator achieved at least ``min_achieved`` of the rate, p99 (corrected:
measured from the scheduled send time) is within the SLA, socket errors and 5xx are at most
``max_error_ratio`` of requests, and latency shows no upward trend within the probe (a queue that
builds up means the rate is over the limit even while p99 still looks fine).

A failing probe whose validity record says ``invalid`` for another reason than what it failed on neither
passes nor fails: it is *inconclusive*, and the search never counts it as the server failing. Its ``doubt``
says whose the numbers were: ``generator`` when the generator was at its own limit (its busiest thread
saturated a core: measured, not inferred from its lateness), ``machine`` when the machine took the CPU (other
programs used more than at the session's quietest, or the generator fell behind its schedule while it had CPU
to spare: it waited for one). A probe whose answers are not successes (400s, 5xx, no answer) or whose reads found no
data (404s: an empty store) fails: no rate is "kept up with" by errors. A probe
that meets every criterion passes whatever the generator's checks say: its lateness is inside the
corrected latency, so it can only have made the server look worse.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from ..config import BreakpointCriteria
from .validity import NOT_AGAINST_A_PASS, OVERLOAD_SYMPTOMS, Level, Validity

#: why an inconclusive probe's numbers were not the server's
GENERATOR, MACHINE = "generator", "machine"
#: the share of a window the generator's threads waited for a CPU below which a late generator was not starved
STARVED = 0.01


@dataclass
class Judgement:
    """What one probe showed: ``passed`` (``None``: inconclusive, the probe was invalid) and the
    reasons (every failed criterion, or "ok: ..."); ``validity``: the probe's validity record (dict);
    ``doubt``: an inconclusive probe's cause (:data:`GENERATOR` or :data:`MACHINE`), ``cause`` in words."""

    passed: bool | None
    reasons: list[str]
    metrics: dict = field(default_factory=dict)
    validity: dict | None = None
    doubt: str | None = None
    cause: str | None = None

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons)

    @property
    def conclusive(self) -> bool:
        return self.passed is not None


def latency_trend(intervals: pd.DataFrame, criteria: BreakpointCriteria | None = None) -> tuple[bool, str]:
    """Whether per-interval latency grows during a probe (a queue building up).

    ``intervals``: rows with ``p50_ms`` ordered by time (``LoadResult.intervals``). Trend when the
    median p50 of the last third exceeds ``trend_factor`` x the first third's + ``trend_floor`` and
    p50's rank correlation with time is at least ``trend_min_corr``. Needs 3+ intervals.
    """
    c = criteria or BreakpointCriteria()
    if intervals is None or len(intervals) < 3 or "p50_ms" not in intervals:
        return False, "too few intervals to judge a trend"
    df = intervals[intervals["count"] > 0] if "count" in intervals else intervals
    if len(df) < 3:
        return False, "too few non-empty intervals to judge a trend"
    y = df["p50_ms"].astype(float).reset_index(drop=True)
    k = max(1, len(y) // 3)
    first, last = float(y.iloc[:k].median()), float(y.iloc[-k:].median())
    x = pd.Series(range(len(y)), dtype=float)
    corr = x.rank().corr(y.rank())
    corr = 0.0 if corr is None or math.isnan(corr) else float(corr)
    rising = last > c.trend_factor * first + c.trend_floor * 1000 and corr >= c.trend_min_corr
    desc = f"p50 went from {first:.3f} ms to {last:.3f} ms over the probe (rank corr {corr:.2f})"
    return rising, desc


def evaluate(result, criteria: BreakpointCriteria | None = None, validity=None) -> Judgement:
    """Judge one probe (a :class:`~perflab.measure.result.LoadResult`) against ``criteria``; with a
    ``validity`` record (:class:`~perflab.measure.validity.Validity`) that is ``invalid``, the probe
    is inconclusive."""
    c = criteria or BreakpointCriteria()
    ratio, p99, errs, n = result.achieved_ratio, result.p99_ms, result.unserved, result.offered
    err = errs / n if n else (0.0 if errs == 0 else math.inf)
    trend, desc = latency_trend(result.intervals, c) if c.trend else (False, "trend check off")
    metrics = {
        "achieved_rate": result.achieved_rate,
        "achieved_ratio": ratio,
        "p50_ms": result.p50_ms,
        "p99_ms": p99,
        "p999_ms": result.p999_ms,
        "max_ms": result.max_ms,
        "errors": errs,
        "error_ratio": err,
        "requests": result.requests,
        "offered": n,
        "trend": trend,
        "trend_desc": desc,
    }
    vd = validity.to_dict() if validity is not None else None
    reasons = []
    if not (ratio >= c.min_achieved):
        reasons.append(f"achieved {result.achieved_rate:.1f}/s = {ratio:.1%} of target < {c.min_achieved:.0%}")
    if not (p99 <= c.sla_p99 * 1000):
        reasons.append(f"p99 {p99:.2f} ms > SLA {c.sla_p99 * 1000:g} ms")
    if not (err <= c.max_error_ratio):
        reasons.append(f"not served {errs:,} of {n:,} offered = {err:.2%} > {c.max_error_ratio:.2%}")
    others = validity.checks.get("others") if validity is not None else None
    metrics["others_cores"] = others.value if others is not None and others.status != "n/a" else None
    hits = validity.checks.get("hits") if validity is not None else None
    if hits is not None and hits.status == "fail":
        reasons.append(hits.note.split(":")[0])  # reads that found no data: no rate is kept up with by 404s
    if trend:
        reasons.append("latency trend: " + desc)
    if reasons:
        if validity is not None:
            # the shortfall, trend, errors or misses the probe failed on are its finding, not a doubt about it;
            # what is left decides whether it is inconclusive (the generator, not the server, set the numbers)
            doubt = validity.ignoring(OVERLOAD_SYMPTOMS + ("hits",))
            if doubt.level is Level.INVALID:
                kind, why = cause(doubt)
                return Judgement(None, [f"inconclusive, {why}: " + "; ".join(doubt.reasons)], metrics, vd, kind, why)
            burst = validity.checks.get("others_burst")
            slow_only = len(reasons) == 1 and not p99 <= c.sla_p99 * 1000
            if slow_only and burst is not None and burst.status == "warn":
                # a tail over the SLA with the rate kept and no queue building, beside a burst of another program:
                # the spike may be theirs, so the probe says nothing about the server
                why = "another program burst inside the window"
                return Judgement(None, [f"inconclusive, {why}: {reasons[0]}; {burst.note}"], metrics, vd, MACHINE, why)
            vd = validity.ignoring(OVERLOAD_SYMPTOMS).to_dict()
        return Judgement(False, reasons, metrics, vd)
    if validity is not None:
        # the rate was achieved and p99 met the SLA with the generator's lateness inside it: a slow or late
        # generator, or other programs' CPU, can only have made the server look worse, so they do not void a pass
        vd = validity.ignoring(NOT_AGAINST_A_PASS).to_dict()
    return Judgement(True, [f"ok: achieved {ratio:.1%}, p99 {p99:.2f} ms, errors {errs}"], metrics, vd)


def cause(doubt: Validity) -> tuple[str, str]:
    """Whose numbers an invalid probe shows, as ``(kind, words)``: the generator at its own limit (a thread
    saturated), else the machine (other programs' CPU, or a generator that fell behind with CPU to spare)."""
    failed = {name for name, c in doubt.checks.items() if c.status == "fail"}
    if "generator_cpu" in failed:
        return GENERATOR, "the generator was at its limit"
    if "others" in failed:
        return MACHINE, "the machine was busy"
    if "schedule_lag" in failed:
        wait = doubt.checks.get("generator_runqueue")
        if wait is None or not isinstance(wait.value, float):
            return MACHINE, "the machine starved the generator"
        if wait.value < STARVED:  # no CPU was missing: its lateness was its own (sockets, a stall), not the machine's
            return MACHINE, (
                f"the generator fell behind its schedule (its threads waited {wait.value:.0%} of the window for a CPU)"
            )
        return (
            MACHINE,
            f"the machine starved the generator (its threads waited {wait.value:.0%} of the window for a CPU)",
        )
    return MACHINE, "the measurement is invalid"
