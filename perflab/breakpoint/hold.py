"""Holding a breakpoint: does the server keep up with it from a fresh start, more than once?

A search decides on probes of a few seconds, on a server that has been running, warming and (for writes)
growing for minutes. Another tool that starts the server afresh and loads it at that rate may not see it keep
up: a queue that grows slowly, a collector every few seconds, a compaction, a JIT that compiled otherwise, a
machine whose speed moved in between. So after a search that found a breakpoint, its rate is *held*:
``hold_windows`` windows of ``sustain`` seconds, each (with ``fresh_start``) on a fresh start of the server, a new
process on the storage as it was before the search (the prefill or the fill written again) and warmed up again.
The rate holds when most windows keep up (2 of 3), fails when most do not; each window records the machine's
speed and the other programs' CPU beside it, so a window the machine spoiled is run again like any probe
(:mod:`perflab.measure.judgement`).

From the search's point: a rate that holds is checked from above, ``hold_above`` times it must fail from fresh
starts too, or it is held in turn (the search underestimated it: its writes had grown the database). A rate
that fails steps down ``sustain_step`` (or at once to the search's lower edge when that is lower still: a search
that did not resolve can propose a point far above it) until one holds. Then half-way between the highest rate
that held and the lowest above it that failed, until they are within ``precision`` or ``sustain_tries`` rates
have been held. The breakpoint is the highest rate that held, its interval up to the lowest rate above it that
failed: both ends true from fresh starts. When no rate holds, only the rate it lies below; a rate the machine
kept from being judged ends the holds: what held stands, else the search cannot tell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..config import BreakpointParams
from ..measure.judgement import Judgement
from .search import Estimate, Outcome, _round

#: the phase a held window runs in (probes.csv, the index's loads)
PHASE = "hold"
#: searches whose point a window holds: the others have no breakpoint to hold
HELD = (Outcome.RESOLVED, Outcome.UNRESOLVED)


@dataclass(frozen=True)
class Hold:
    """One held window: its ``rate``, ``seconds``, whether it kept up (``None``: inconclusive), why, the figures it
    was judged on, other programs' CPU beside it (cores), the machine's slowdown against its fastest, and
    whether it ran on a fresh start of the server."""

    rate: float
    seconds: float
    passed: bool | None
    reason: str
    p99_ms: float | None = None
    achieved_ratio: float | None = None
    others_cores: float | None = None
    host_slowdown: float | None = None
    fresh: bool | None = None

    @classmethod
    def of(cls, rate: float, seconds: float, j: Judgement) -> Hold:
        host = (((j.validity or {}).get("checks") or {}).get("host_speed") or {}).get("value")
        return cls(
            rate,
            seconds,
            j.passed,
            j.reason,
            j.metrics.get("p99_ms"),
            j.metrics.get("achieved_ratio"),
            j.metrics.get("others_cores"),
            host,
            j.metrics.get("fresh_start"),
        )

    def to_dict(self) -> dict:
        return {
            "rate": self.rate,
            "seconds": self.seconds,
            "passed": self.passed,
            "reason": self.reason,
            "p99_ms": self.p99_ms,
            "achieved_ratio": self.achieved_ratio,
            "others_cores": self.others_cores,
            "host_slowdown": self.host_slowdown,
            "fresh": self.fresh,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Hold:
        return cls(
            d["rate"],
            d["seconds"],
            d["passed"],
            d["reason"],
            d.get("p99_ms"),
            d.get("achieved_ratio"),
            d.get("others_cores"),
            d.get("host_slowdown"),
            d.get("fresh"),
        )


@dataclass(frozen=True)
class RateHeld:
    """The windows at one rate: how many kept up and how many did not, and the verdict (``None``: the machine
    kept the windows from deciding)."""

    rate: float
    kept_up: int
    fell_behind: int
    held: bool | None

    @property
    def words(self) -> str:
        """'kept up in 2 of 3 windows', 'fell behind in 1 of 1 window'"""
        n = self.kept_up + self.fell_behind
        return (
            f"{'kept up' if self.held else 'fell behind'} in {self.kept_up if self.held else self.fell_behind} "
            f"of {n} window{'s' if n != 1 else ''}"
        )


@dataclass
class Kept:
    """What a search reports after its holds: ``rate`` (``None``: no breakpoint to report), ``interval``,
    ``outcome``, ``stop_reason`` in words, ``at_least``, the windows (``holds``) and each rate's verdict
    (``rates``)."""

    rate: float | None
    interval: tuple
    outcome: Outcome
    stop_reason: str
    at_least: float | None
    holds: list = field(default_factory=list)
    rates: list = field(default_factory=list)


def needed(windows: int) -> int:
    """Windows that must keep up for a rate to hold: most of them (2 of 3, 1 of 1, 2 of 2)."""
    return windows // 2 + 1


def hold_rate(
    rate: float, params: BreakpointParams, window: Callable[[float, str, float], Judgement]
) -> tuple[RateHeld, list[Hold], str | None]:
    """Hold ``rate`` in up to ``hold_windows`` windows, stopping once most kept up or most could not; a window the
    machine spoiled runs again (``retries``). The verdict, the windows, and why the machine kept it undecided."""
    n, need = params.hold_windows, needed(params.hold_windows)
    up = down = 0
    holds: list[Hold] = []
    for _ in range(n):
        for attempt in range(params.retries + 1):
            j = window(rate, PHASE if attempt == 0 else PHASE + "-retry", params.sustain)
            holds.append(Hold.of(rate, params.sustain, j))
            if j.conclusive:
                break
        if not j.conclusive:
            return RateHeld(rate, up, down, None), holds, j.reason
        up, down = up + bool(j.passed), down + (not j.passed)
        if up >= need or down > n - need:
            break
    return RateHeld(rate, up, down, up >= need), holds, None


def hold(found: Estimate, params: BreakpointParams, window: Callable[[float, str, float], Judgement]) -> Kept:
    """Hold ``found``'s breakpoint (see the module docstring); ``window(rate, phase, seconds)`` runs one window
    (on a fresh start of the server, when the caller can give one)."""
    as_found = Kept(found.rate, found.interval, found.outcome, found.stop_reason, found.at_least)
    if params.sustain <= 0 or found.rate is None or found.outcome not in HELD:
        return as_found
    rate: float | None = found.rate
    rates: list[RateHeld] = []
    holds: list[Hold] = []
    for _ in range(params.sustain_tries):
        verdict, got, why = hold_rate(rate, params, window)
        holds += got
        if verdict.held is None:
            if any(r.held for r in rates):
                break  # what held stands; the machine only kept the refinement from going on
            return Kept(
                None,
                found.interval,
                Outcome.CANNOT_TELL,
                f"{found.stop_reason}; holding {rate:,.0f}/s for {params.sustain:g} s could not be judged ({why})",
                found.at_least,
                holds,
                rates + [verdict],
            )
        rates.append(verdict)
        rate = _next(rate, rates, found, params)
        if rate is None:
            break
    return _kept(found, params, rates, holds)


def _next(rate: float, rates: list[RateHeld], found: Estimate, params: BreakpointParams) -> float | None:
    """The next rate to hold, ``None`` when the held and the failed rate above it are within ``precision`` (or
    the next one up would pass ``max_rate``)."""
    held = [r.rate for r in rates if r.held]
    if held:
        above = [r.rate for r in rates if not r.held and r.rate > max(held)]
        if not above:  # nothing above has failed from a fresh start yet: look above
            up = _round(max(held) * params.hold_above)
            return up if up <= params.max_rate and up > max(held) else None
        lo, hi = max(held), min(above)
        return None if hi - lo <= params.precision * lo else _round((lo + hi) / 2)
    step = rate * (1 - params.sustain_step)
    return _round(min(step, found.at_least) if found.at_least and found.at_least < rate else step)


def _kept(found: Estimate, params: BreakpointParams, rates: list[RateHeld], holds: list[Hold]) -> Kept:
    how = f"{params.sustain:g} s windows" + (", each from a fresh start" if params.fresh_start else "")
    held = [r for r in rates if r.held]
    failed = [r for r in rates if r.held is False]
    if not held:
        return Kept(
            None,
            (None, min(r.rate for r in failed)),
            Outcome.UNRESOLVED,
            f"{found.stop_reason}; held in {how}: {_list(failed)}; none kept up",
            None,
            holds,
            rates,
        )
    best = max(held, key=lambda r: r.rate)
    above = [r for r in failed if r.rate > best.rate]
    tried = f"in {how}: {_list(sorted(rates, key=lambda r: -r.rate))}"
    if not above:
        return Kept(
            best.rate,
            (best.rate, None),
            Outcome.UNRESOLVED,
            f"{found.stop_reason}; held {tried}; no rate above {best.rate:,.0f}/s fell behind",
            best.rate,
            holds,
            rates,
        )
    hi = min(above, key=lambda r: r.rate)
    return Kept(
        best.rate, (best.rate, hi.rate), Outcome.RESOLVED, f"{found.stop_reason}; held {tried}", best.rate, holds, rates
    )


def _list(rates: list[RateHeld]) -> str:
    """'2,000/s fell behind in 2 of 2 windows, 1,800/s kept up in 2 of 3 windows'"""
    return ", ".join(f"{r.rate:,.0f}/s {r.words}" for r in rates)
