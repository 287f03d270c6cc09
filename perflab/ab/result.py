"""What an A/B comparison found, and how it is recorded and read back.

One run of kind ``ab`` holds everything: ``meta.json`` (both sides, the method, the test, the family
of tests with its level, every verdict with n, interval and p-value, the stop reason, the idle side's
cost, warnings), ``pairs.csv`` (one row per pair: both probes' p50/p99/p99.9 and CPU per request,
log-ratios, pass/fail, validity, whether the pair counted), ``probes/`` (every probe's raw generator
files), ``sides/runs/`` (each side's own session run: server logs, ``/v0/stats``, the machine's speed) and
index rows:

* ``ab`` -- one row per verdict (rate x metric, or the breakpoint): ratio, interval, n, p, conclusion,
  direction, method, stop reason; only written once the comparison has finished, so a failed or
  interrupted run is never read as a comparison;
* ``ab_pairs`` -- one row per pair; ``loads`` -- one row per probe (side, block, validity);
* a profiled comparison (:mod:`.profiles`) adds ``ab`` rows of metric ``category`` (B - A of a category's
  microseconds per request: ``difference`` with its interval) and ``categories.csv`` (every pair's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ..records import Run
from ..stats.methods import Method
from ..stats.paired import Conclusion, Family, IntervalRatio, PairedRatio, PassFail, Stop
from .sides import Side, identical


@dataclass
class RateVerdict:
    """The comparison at one offered ``rate``: the stop rule's ``primary`` metric, the ``others`` (tested
    once, at the end), pass/fail at the SLA, why it stopped (``stop``, with the ``budget_s`` it had) and how
    many pairs were measured."""

    rate: float
    primary: PairedRatio
    others: dict
    passing: PassFail
    stop: Stop
    budget_s: float | None
    measured: int
    #: a profiled comparison's: category -> PairedDifference of its microseconds per request (:mod:`.profiles`)
    categories: dict = field(default_factory=dict)

    @property
    def metrics(self) -> dict[str, PairedRatio]:
        return {self.primary.metric: self.primary, **self.others}


@dataclass
class IdleCost:
    """What the idle server costs the busy one: A's probes with B idle-but-running against A's probes with
    B frozen (SIGSTOP), interleaved at ``rate``; ``ratios``: per metric, idle over frozen (an interval, no
    claim)."""

    rate: float
    ratios: dict
    busy: str = "A"
    idle: str = "B"

    def to_dict(self) -> dict:
        return {
            "rate": self.rate,
            "busy": self.busy,
            "idle": self.idle,
            "against": "frozen (SIGSTOP)",
            "ratios": {m: r.to_dict() for m, r in self.ratios.items()},
        }


@dataclass
class ABResult:
    """What :func:`perflab.compare_ab` returns (see the module docstring for what is recorded)."""

    run: Run
    sides: tuple[Side, Side]
    mode: str  # "rates" or "breakpoint"
    method: Method
    rates: list = field(default_factory=list)  # RateVerdict per rate (mode "rates")
    breakpoint: IntervalRatio | None = None  # mode "breakpoint"
    searches: dict | None = None  # side -> BreakpointResult (mode "breakpoint")
    idle_cost: IdleCost | None = None
    pairs: pd.DataFrame | None = None
    family: Family | None = None
    metric: str = "p99"
    margin: float = 0.05
    sla_ms: float | None = None
    seconds: float | None = None
    warnings: list = field(default_factory=list)

    @property
    def a(self) -> Side:
        return self.sides[0]

    @property
    def b(self) -> Side:
        return self.sides[1]

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def validity(self) -> str | None:
        """The comparison's validity level (its run's: from every measured probe)."""
        return self.run.validity

    @property
    def identical(self) -> bool:
        return identical(*self.sides)

    def verdict(self, rate: float | None = None, metric: str | None = None):
        """The verdict at ``rate`` (default: the first) on ``metric`` (default: the stop rule's), or the
        breakpoint's."""
        if self.mode == "breakpoint":
            return self.breakpoint
        rv = self.rates[0] if rate is None else next((r for r in self.rates if r.rate == rate), None)
        if rv is None:
            raise ValueError(f"rate: no comparison at {rate!r}; compared at {[r.rate for r in self.rates]}")
        if metric == "pass":
            return rv.passing
        return rv.metrics[metric or self.metric]

    @property
    def significant(self) -> bool:
        """Whether any verdict claims a difference."""
        if self.mode == "breakpoint":
            return bool(self.breakpoint and self.breakpoint.significant)
        return any(r.significant for rv in self.rates for r in rv.metrics.values()) or any(
            rv.passing.conclusion is Conclusion.DIFFERENT for rv in self.rates
        )

    @property
    def table(self) -> pd.DataFrame:
        """One row per verdict (the ``ab`` index rows without the run columns)."""
        return pd.DataFrame(verdict_rows(self))

    def __repr__(self):
        return f"<ABResult {self.run.id}: {self.mode}, {self.method}, significant={self.significant}>"


def verdict_rows(res: ABResult) -> list[dict]:
    """The ``ab`` index rows of a result."""
    base = {
        "a": res.a.label,
        "b": res.b.label,
        "mode": res.mode,
        "method": str(res.method),
        "level": res.family.level if res.family else None,
        "margin": res.margin,
    }
    rows = []
    if res.breakpoint is not None:
        d = res.breakpoint.to_dict()
        rows.append(
            {
                **base,
                "rate": None,
                "metric": "breakpoint",
                "stop_rule": True,
                "ratio": d["ratio"],
                "ci_lo": d["ci"][0],
                "ci_hi": d["ci"][1],
                "n": None,
                "p_value": None,
                "conclusion": d["conclusion"],
                "direction": d["direction"],
                "test": d["test"],
                "a_value": d["a"],
                "b_value": d["b"],
                "stop": None,
                "stop_reason": "; ".join(f"{k}: {s.stop_reason}" for k, s in (res.searches or {}).items()),
                "a_interval": d["a_interval"],
                "b_interval": d["b_interval"],
            }
        )
    for rv in res.rates:
        for m, r in rv.metrics.items():
            d = r.to_dict()
            rows.append(
                {
                    **base,
                    "rate": rv.rate,
                    "metric": m,
                    "stop_rule": m == res.metric,
                    "ratio": d["ratio"],
                    "ci_lo": d["ci"][0],
                    "ci_hi": d["ci"][1],
                    "n": d["n"],
                    "p_value": d["p_value"],
                    "conclusion": d["conclusion"],
                    "direction": d["direction"],
                    "test": d["test"],
                    "a_value": None,
                    "b_value": None,
                    "stop": str(rv.stop),
                    "measured": rv.measured,
                    "budget_s": rv.budget_s,
                    "max_pairs": res.family.max_pairs,
                    "confidence": d["confidence"],
                    "min_pairs": r.min_pairs,
                }
            )
        for c, d in rv.categories.items():
            x = d.to_dict()
            rows.append(
                {
                    **base,
                    "rate": rv.rate,
                    "metric": "category",
                    "category": c,
                    "stop_rule": False,
                    "ratio": None,
                    "ci_lo": x["ci"][0],
                    "ci_hi": x["ci"][1],
                    "n": x["n"],
                    "p_value": x["p_value"],
                    "conclusion": x["conclusion"],
                    "direction": x["direction"],
                    "test": x["test"],
                    "a_value": x["a_median"],
                    "b_value": x["b_median"],
                    "difference": x["difference"],
                    "stop": str(rv.stop),
                    "measured": rv.measured,
                    "confidence": x["confidence"],
                }
            )
        p = rv.passing
        rows.append(
            {
                **base,
                "rate": rv.rate,
                "metric": "pass",
                "stop_rule": False,
                "ratio": None,
                "ci_lo": None,
                "ci_hi": None,
                "n": p.n,
                "p_value": p.p_value,
                "conclusion": str(p.conclusion),
                "direction": str(p.direction),
                "test": p.to_dict()["test"],
                "a_value": p.a_passed,
                "b_value": p.b_passed,
                "stop": str(rv.stop),
                "measured": rv.measured,
                "budget_s": rv.budget_s,
                "max_pairs": res.family.max_pairs,
            }
        )
    return rows


def record(res: ABResult) -> None:
    """Write the result into its run: ``pairs.csv``, the ``ab`` and ``ab_pairs`` index rows, the results
    and the validity record in ``meta.json``."""
    run = res.run
    rows = verdict_rows(res)
    if res.pairs is not None and len(res.pairs):
        run.write_frame("pairs.csv", res.pairs, artifact="pairs")
        run.add_rows("ab_pairs", res.pairs.to_dict("records"))
    run.add_rows("ab", rows)
    primary = next((r for r in rows if r["stop_rule"]), rows[0] if rows else {})
    run.set_result(
        mode=res.mode,
        method=str(res.method),
        method_description=res.method.description,
        test=primary.get("test"),
        metric=res.metric if res.mode == "rates" else "breakpoint",
        family=res.family.to_dict() if res.family else None,
        verdicts=rows,
        ratio=primary.get("ratio"),
        ci=[primary.get("ci_lo"), primary.get("ci_hi")],
        n=primary.get("n"),
        conclusion=primary.get("conclusion"),
        direction=primary.get("direction"),
        stop=primary.get("stop"),
        stop_reason=primary.get("stop_reason"),
        idle_cost=res.idle_cost.to_dict() if res.idle_cost else None,
        seconds=res.seconds,
        warnings=res.warnings,
        identical=res.identical,
    )


def recorded_verdicts(run: Run) -> list[dict]:
    """The verdict rows an ``ab`` run recorded (empty for a run that did not finish)."""
    if run.kind != "ab":
        raise ValueError(f"run {run.id} is a {run.kind} run, not an A/B comparison")
    return list(run.results.get("verdicts") or []) if run.status == "ok" else []
