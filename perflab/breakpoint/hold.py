"""Holding a breakpoint: does the server keep up with it for longer than a probe lasts?

A search decides on probes of a few seconds. A server that keeps up for 3 s may not for 20: a queue that
grows slowly, a garbage collector that runs every few seconds, a compaction, a cache that fills. So after a
search that found a breakpoint, one window of ``sustain`` seconds runs at its rate and is judged like a probe.
When it keeps up, the breakpoint stands, now held. When it does not, the next window runs ``sustain_step``
lower (or at once at the search's lower edge, the highest rate below which every probe passed, when that is lower
still: a search that did not resolve can propose a point far above it) until one holds, then half-way between the
highest rate that held and the lowest that did not, up to ``sustain_tries`` windows in all. The breakpoint is the
highest rate that held, with the interval up to the lowest one above it that did not; how much the short probes
overestimated it is part of the result. When no window holds, there is no breakpoint to report, only the rate
below which it lies. A window the machine spoiled
(inconclusive: :mod:`perflab.measure.judgement`) is run again like any probe; one that stays inconclusive leaves
the search unconfirmed: cannot tell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import BreakpointParams
from ..measure.judgement import Judgement
from .search import Estimate, Outcome, _round

#: the phase a sustain window runs in (probes.csv, the index's loads)
PHASE = "hold"
#: searches whose point a window holds: the others have no breakpoint to hold
HELD = (Outcome.RESOLVED, Outcome.UNRESOLVED)


@dataclass(frozen=True)
class Hold:
    """One sustain window: its ``rate``, ``seconds``, whether it kept up (``None``: inconclusive), why, and the
    figures it was judged on."""

    rate: float
    seconds: float
    passed: bool | None
    reason: str
    p99_ms: float | None = None
    achieved_ratio: float | None = None

    @classmethod
    def of(cls, rate: float, seconds: float, j: Judgement) -> "Hold":
        return cls(rate, seconds, j.passed, j.reason, j.metrics.get("p99_ms"), j.metrics.get("achieved_ratio"))

    def to_dict(self) -> dict:
        return {"rate": self.rate, "seconds": self.seconds, "passed": self.passed, "reason": self.reason,
                "p99_ms": self.p99_ms, "achieved_ratio": self.achieved_ratio}

    @classmethod
    def from_dict(cls, d: dict) -> "Hold":
        return cls(d["rate"], d["seconds"], d["passed"], d["reason"], d.get("p99_ms"), d.get("achieved_ratio"))


@dataclass
class Kept:
    """What a search reports after its holds: ``rate`` (``None``: no breakpoint to report), ``interval``,
    ``outcome``, ``stop_reason`` in words, ``at_least`` and the windows (``holds``)."""

    rate: float | None
    interval: tuple
    outcome: Outcome
    stop_reason: str
    at_least: float | None
    holds: list = field(default_factory=list)


def hold(found: Estimate, params: BreakpointParams,
         probe: Callable[[float, str, float], Judgement]) -> Kept:
    """Hold ``found``'s breakpoint (see the module docstring); ``probe(rate, phase, seconds)`` runs one window."""
    as_found = Kept(found.rate, found.interval, found.outcome, found.stop_reason, found.at_least)
    if params.sustain <= 0 or found.rate is None or found.outcome not in HELD:
        return as_found
    secs, rate = params.sustain, found.rate
    failed: list[float] = []
    kept: list[float] = []
    holds: list[Hold] = []
    for _ in range(params.sustain_tries):
        for attempt in range(params.retries + 1):
            j = probe(rate, PHASE if attempt == 0 else PHASE + "-retry", secs)
            holds.append(Hold.of(rate, secs, j))
            if j.conclusive:
                break
        if not j.conclusive:
            if kept:
                break   # what held stands; the machine only kept the refinement from going on
            return Kept(None, found.interval, Outcome.CANNOT_TELL,
                        f"{found.stop_reason}; holding {rate:,.0f}/s for {secs:g} s was inconclusive {len(holds)} "
                        f"times ({j.reason})", found.at_least, holds)
        (kept if j.passed else failed).append(rate)
        if j.passed and not failed:
            return Kept(rate, found.interval, found.outcome, f"{found.stop_reason}; held {rate:,.0f}/s for {secs:g} s",
                        found.at_least, holds)
        if kept:   # between the highest rate that held and the lowest above it that did not: bisect
            lo, hi = max(kept), min(r for r in failed if r > max(kept))
            if hi - lo <= params.precision * lo:
                break
            rate = _round((lo + hi) / 2)
        else:
            step = rate * (1 - params.sustain_step)
            rate = _round(min(step, found.at_least) if found.at_least and found.at_least < rate else step)
    if kept:
        lo = max(kept)
        hi = min(r for r in failed if r > lo)
        return Kept(lo, (_round(lo * (1 - params.precision)), hi), found.outcome,
                    f"{found.stop_reason}; {_rates(sorted(failed, reverse=True))} did not hold for {secs:g} s, "
                    f"{_rates(sorted(kept, reverse=True))} did", lo, holds)
    return Kept(None, (None, min(failed)), Outcome.UNRESOLVED,
                f"{found.stop_reason}; held for {secs:g} s: {_rates(failed)}, none kept up", None, holds)


def _rates(rates: list[float]) -> str:
    return ", ".join(f"{r:,.0f}/s" for r in rates)
