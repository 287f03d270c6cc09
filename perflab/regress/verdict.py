"""Is B slower than A? One comparison's verdict on the metric that decides, read as a regression check.

The comparison (:func:`perflab.compare_ab`) gives a verdict row (:func:`perflab.ab.result.verdict_rows`): a
ratio B/A with its interval, and its conclusion. For a regression check only one direction matters, *worse*
(a latency or the CPU per request higher; a breakpoint lower), and the verdict becomes an :class:`Outcome`:

* ``regression``: the comparison claims B differs from A in the worse direction (its test at its level, the
  interval excluding 1, the ratio beyond the margin: :mod:`perflab.stats.paired`);
* ``improvement``: it claims a difference in the better direction, or its interval lies entirely beyond the
  margin on the better side (a check that stops once B is shown no worse does not wait for the claim);
* ``not worse``: no claim, but the interval's worse end lies within the margin (B is no worse than A beyond
  it), or the interval lies within ±margin;
* ``undecided``: neither, at this precision;
* ``unmeasured``: no verdict to read (too few usable pairs, a search that found no breakpoint, or a latency
  whose probes were mostly invalid: the generator, not the server, set their numbers; the server's CPU time
  is its own whatever the generator did).

Only ``regression`` is a claim that B is slower, so a check of identical servers ends in ``regression`` at
most as often as the comparison claims any difference: with probability at most its ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from ..config.ab import METRIC
from ..stats.paired import Conclusion, band
from ..stats.significance import Direction


class Outcome(StrEnum):
    """What one comparison says about B against A (see the module docstring)."""

    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    NOT_WORSE = "not worse"
    UNDECIDED = "undecided"
    UNMEASURED = "unmeasured"

    @property
    def slower(self) -> bool:
        return self is Outcome.REGRESSION

    @property
    def fine(self) -> bool:
        """B shown no worse than A beyond the margin (better included)."""
        return self in (Outcome.IMPROVEMENT, Outcome.NOT_WORSE)


@dataclass(frozen=True)
class Check:
    """The verdict on ``metric`` (at ``rate``) of one comparison, read as a regression check: the
    :class:`Outcome`, B/A with its interval, n and p (``None`` for a breakpoint), the test's level, the
    margin, the comparison's validity and run, and ``why`` when it could not be read."""

    outcome: Outcome
    metric: str
    rate: float | None
    ratio: float | None
    ci: tuple[float | None, float | None]
    n: int | None
    p_value: float | None
    level: float | None
    margin: float
    conclusion: str
    method: str
    validity: str | None = None
    run_id: str | None = None
    why: str | None = None

    def to_dict(self) -> dict:
        return {
            "outcome": str(self.outcome),
            "metric": self.metric,
            "rate": self.rate,
            "ratio": self.ratio,
            "ci": list(self.ci),
            "n": self.n,
            "p_value": self.p_value,
            "level": self.level,
            "margin": self.margin,
            "conclusion": self.conclusion,
            "method": self.method,
            "validity": self.validity,
            "run_id": self.run_id,
            "why": self.why,
        }


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not math.isnan(v) else None


def judge(row: dict, validity: str | None = None, run_id: str | None = None) -> Check:
    """The :class:`Check` of one verdict ``row`` (its metric, ratio, interval, conclusion, direction); a
    latency (or breakpoint) of an ``invalid`` comparison (``validity``) is unmeasured whatever its numbers say."""
    metric = row["metric"]
    lo, hi = _number(row.get("ci_lo")), _number(row.get("ci_hi"))
    if metric == "breakpoint" and hi is None and row.get("ratio") is not None:
        hi = math.inf  # a recorded open end
    conclusion = Conclusion(row["conclusion"])
    higher_is_worse = metric != "breakpoint"
    worse = Direction.HIGHER if higher_is_worse else Direction.LOWER
    margin = row["margin"]
    why = None
    if validity == "invalid" and (metric not in METRIC or METRIC[metric].latency):
        outcome, why = Outcome.UNMEASURED, "most probes were invalid (the generator, not the server, set their numbers)"
    elif conclusion is Conclusion.TOO_FEW or row.get("ratio") is None:
        outcome, why = Outcome.UNMEASURED, "too few usable pairs" if metric != "breakpoint" else "a search found none"
    elif conclusion is Conclusion.DIFFERENT:
        outcome = Outcome.REGRESSION if row["direction"] == worse else Outcome.IMPROVEMENT
    elif conclusion is Conclusion.EQUIVALENT:
        outcome = Outcome.NOT_WORSE
    else:
        inner_lo, inner_hi = band(margin)
        within = (hi is not None and hi <= inner_hi) if higher_is_worse else (lo is not None and lo >= inner_lo)
        better = (hi is not None and hi < inner_lo) if higher_is_worse else (lo is not None and lo > inner_hi)
        outcome = Outcome.IMPROVEMENT if better else Outcome.NOT_WORSE if within else Outcome.UNDECIDED
    return Check(
        outcome,
        metric,
        row.get("rate"),
        _number(row.get("ratio")),
        (lo, hi),
        row.get("n"),
        _number(row.get("p_value")),
        _number(row.get("level")),
        margin,
        str(conclusion),
        row.get("method") or "",
        validity,
        run_id,
        why,
    )


def decisive_row(rows: list[dict], metric: str, rate: float | None = None) -> dict:
    """The row of ``metric`` (at ``rate``, default the first compared) among a comparison's verdict rows."""
    found = [r for r in rows if r["metric"] == metric and (rate is None or r.get("rate") == rate)]
    if not found:
        raise ValueError(f"the comparison has no verdict on {metric}" + (f" at {rate:g} req/s" if rate else ""))
    return found[0]
