"""The search logic alone: which rate to probe next, and what the probes establish.

``search(probe, params, estimate)`` calls ``probe(rate, phase) -> Judgement`` and returns an
:class:`Estimate` whose :class:`Outcome` says how far it got. Two phases:

1. **Bracket and bisect**, one probe per rate. From a ramp's ``estimate`` the bracket is
   ``estimate × (1 ± ramp_margin)``, both ends probed (and widened by ``growth`` while the estimate
   proves wrong); without one, the rate grows (or shrinks) by ``growth`` from ``start_rate`` until the
   judgement flips. Then bisect until ``hi - lo <= precision × lo``.
2. **Edges**: probe ``L`` and ``H`` (below) again until each has ``repeats`` unanimous probes. A probe
   that disagrees makes its rate *mixed*, which moves that edge outwards to the next unanimous rate
   (or ``precision`` beyond the last probed one); when that leaves a gap wider than ``precision``
   between an edge and the nearest probed rate inside ``[L, H]``, the search probes half-way
   (*refine*) and establishes the edges again, until the budget runs out.

What the probes establish is computed from all of them, whatever the path: ``L`` is the highest rate
below which every probe passed, ``H`` the lowest rate above which every probe failed; the result is the
interval ``[L, H]`` widened by ``precision`` on each side (a bisection cannot place an edge better than its
step, so two searches on different grids would otherwise exclude each other's points) and the point
estimate, the highest rate below ``H`` that passed at least half of its probes. So the interval covers
what repeated probes show, not the precision of one bisection. (Simulated with a capacity that varies
per probe by a normal 2% / 4% / 8%, 300 triples of searches with the default 14 probes: three searches
lie within ±5% of their median with each interval holding the other two points in 96% / 73% / 38% of
triples; the median half-width is 6.4% / 6.9% / 8.4%, the 90th percentile 8.1% / 9.6% / 14.3%.)
An inconclusive probe (invalid: :attr:`~perflab.measure.judgement.Judgement.doubt` says whose numbers it
showed) is retried ``retries`` times; it never counts as the server failing. Where the generator was at its
own limit, the rate marks where measuring stops (outcome ``generator-limited``); where the machine was busy,
the rate is simply not known. A failed probe that ``doubtful`` later judges the machine's (the session
found a quieter moment than the one it ran in) stops counting too, and the edges are probed again. A search
resolves only on conclusive probes; one that could not get there because the machine kept it from measuring
ends ``cannot-tell`` and, like ``generator-limited``, shows no point, only ``at_least``: the highest rate
below which every conclusive probe passed. Rates are whole requests/s and the sequence of probes depends
only on the judgements.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from ..config import BreakpointParams
from ..measure.judgement import GENERATOR, Judgement


class Outcome(StrEnum):
    """How far a search got."""

    #: both edges of the interval were probed ``repeats`` times, unanimously
    RESOLVED = "resolved"
    #: the probe budget ran out before both edges were unanimous
    UNRESOLVED = "unresolved"
    #: probes above a rate were invalid because the generator was at its own limit: no breakpoint
    GENERATOR_LIMITED = "generator-limited"
    #: the machine kept the search from measuring the server (other programs, a starved generator): no breakpoint
    CANNOT_TELL = "cannot-tell"
    #: every rate up to ``max_rate`` passed
    ABOVE_RANGE = "above-range"
    #: no rate passed, down to ``min_rate``
    NONE_PASSED = "none-passed"


@dataclass
class Estimate:
    """What a search established: ``rate``, the point estimate (``None`` if nothing passed); ``interval``:
    ``(L, H)`` (``H`` is ``None`` when no rate above ``L`` failed); ``outcome``; ``history``: every probe
    as ``(rate, phase, Judgement)``; ``edges``: the probed rates ``L`` and ``H`` themselves (the interval
    adds the search's step to them)."""

    rate: float | None
    interval: tuple[float | None, float | None]
    outcome: Outcome
    stop_reason: str
    history: list = field(default_factory=list)
    limit: float | None = None
    edges: tuple[float | None, float | None] = (None, None)

    #: the highest probed rate below which every conclusive probe passed (what a search with no point still shows)
    at_least: float | None = None

    @property
    def halfwidth(self) -> float | None:
        """Half the interval's width relative to the point (0.04 = ±4%); ``None`` when open."""
        lo, hi = self.interval
        if lo is None or hi is None or not self.rate:
            return None
        return (hi - lo) / 2 / self.rate


class _Budget(Exception):
    pass


def _round(r: float) -> float:
    return float(max(1, round(r)))


def establish(seen: dict[float, list[bool]]) -> tuple[float | None, float | None, float | None]:
    """``(L, H, point)`` from the conclusive judgements per rate (see the module docstring)."""
    rates = sorted(r for r, v in seen.items() if v)
    lo = None
    for r in rates:
        if all(seen[r]):
            lo = r
        else:
            break
    hi = None
    for r in reversed(rates):
        if not any(seen[r]):
            hi = r
        else:
            break
    majority = [r for r in rates if (hi is None or r < hi) and sum(seen[r]) * 2 >= len(seen[r])]
    point = max(majority) if majority else None
    if point is not None and lo is not None:
        point = max(point, lo)
    return lo, hi, point


def search(
    probe: Callable[[float, str], Judgement],
    params: BreakpointParams | None = None,
    estimate: float | None = None,
    on_probe: Callable[[float, Judgement], None] | None = None,
    doubtful: Callable[[Judgement], bool] | None = None,
) -> Estimate:
    """Run the search (see the module docstring). ``estimate``: the ramp's breakpoint estimate;
    ``doubtful(judgement)``: whether a failed probe is, by now, known to show the machine and not the server
    (asked again at every step)."""
    p = params or BreakpointParams()
    history: list = []
    state = {"extended": 0}
    limited: set[float] = set()  # rates where the generator reached its own limit
    busy: set[float] = set()  # rates the machine kept from being measured

    def conclusive(j: Judgement) -> bool:
        return j.passed is True or (j.passed is False and not (doubtful is not None and doubtful(j)))

    def seen_now() -> dict[float, list[bool]]:
        out: dict[float, list[bool]] = defaultdict(list)
        for r, _, j in history:
            if conclusive(j):
                out[r].append(j.passed)
        return out

    seen = seen_now()

    def limit() -> float | None:
        """Where measuring stops: the lowest rate above every rate that passed where the generator reached
        its own limit (an invalid probe below a passing rate was a stall of the machine, not that limit)."""
        passed = [r for r, v in seen.items() if any(v)]
        top = max(passed) if passed else 0.0
        above = [r for r in limited if r > top]
        return min(above) if above else None

    def extension() -> float:
        """How far beyond the probed range a bracket that proved too narrow reaches: the ramp's margin,
        doubling with each extension (a mixed edge is usually near; a far-off estimate is not)."""
        return min(1 + p.ramp_margin * 2 ** state["extended"], p.growth)

    def clip(r: float) -> float:
        return _round(min(max(r, p.min_rate), p.max_rate))

    def run(rate: float, phase: str) -> bool | None:
        nonlocal seen
        for attempt in range(p.retries + 1):
            # the budget counts what the probes established; those the machine spoiled are run again beyond it,
            # up to as many again
            if sum(conclusive(j) for _, _, j in history) >= p.max_probes or len(history) >= 2 * p.max_probes:
                raise _Budget
            v = probe(rate, phase if attempt == 0 else phase + "-retry")
            history.append((rate, phase, v))
            seen = seen_now()
            if on_probe:
                on_probe(rate, v)
            if conclusive(v):
                busy.discard(rate)
                return v.passed
        (limited if v.doubt == GENERATOR else busy).add(rate)
        return None

    def grow_bracket() -> tuple[float, float | None]:
        """Phase 1 without an estimate: multiply by ``growth`` until the judgement flips."""
        r = clip(p.start_rate)
        lo = hi = None
        while True:
            ok = run(r, "bracket")
            if ok:
                lo = r
                if hi is not None or r >= p.max_rate:
                    return lo, hi
                nxt = clip(r * p.growth)
                if limit() is not None and nxt >= limit():
                    return lo, limit()
                r = nxt
            else:
                hi = r
                if lo is not None:
                    return lo, hi
                if r <= p.min_rate:
                    return None, hi
                r = clip(r / p.growth)

    def bisect(lo: float, hi: float) -> tuple[float, float]:
        while hi - lo > p.precision * lo:
            mid = _round((lo + hi) / 2)
            if mid <= lo or mid >= hi:
                break
            ok = run(mid, "bisect")
            if ok:
                lo = mid
            else:
                hi = mid  # a failure, or an inconclusive probe: nothing above it can be measured
        return lo, hi

    def verify(lo: float, hi: float) -> tuple[float | None, float | None]:
        """Phase 1 from an estimate: probe both ends of the bracket, widening by ``growth`` while wrong."""
        while True:
            ok = run(lo, "bracket")
            if ok:
                break
            hi = lo
            if lo <= p.min_rate:
                return None, hi
            lo = clip(lo / p.growth)
        while True:
            if limit() is not None and hi >= limit():
                return lo, limit()
            if seen[hi] and not any(seen[hi]):  # failed already while lowering lo
                return lo, hi
            ok = run(hi, "bracket")
            if not ok:
                return lo, hi
            lo = hi
            if hi >= p.max_rate:
                return lo, None
            hi = clip(hi * p.growth)

    stop = ""
    try:
        if estimate is not None and estimate > 0:
            lo, hi = verify(clip(estimate * (1 - p.ramp_margin)), clip(estimate * (1 + p.ramp_margin)))
        else:
            lo, hi = grow_bracket()
        if lo is None:
            stop = f"failed at min_rate {p.min_rate:g}: no rate passes"
        elif hi is None:
            stop = f"passed at max_rate {p.max_rate:g}: the breakpoint is above the search range"
        else:
            bisect(lo, hi)
            while True:  # phase 2: both edges until each has `repeats` unanimous probes
                seen = seen_now()  # a failure judged the machine's since is no longer counted
                lo_e, hi_e, _ = establish(seen)
                probed = sorted(r for r, v in seen.items() if v)
                if not probed:
                    stop = "no probe was conclusive"
                    break
                if lo_e is None:  # even the lowest probed rate failed once: bracket again below it
                    if probed[0] <= p.min_rate:
                        stop = f"mixed judgements down to min_rate {p.min_rate:g}"
                        break
                    r = clip(probed[0] / extension())
                    state["extended"] += 1
                    if run(r, "bracket"):
                        bisect(r, probed[0])
                elif len(seen[lo_e]) < p.repeats:
                    run(lo_e, "edge")
                elif limit() is not None and (hi_e is None or hi_e >= limit()):
                    stop = f"inconclusive at {limit():g}/s: the generator reached its own limit there"
                    break
                elif hi_e is None:  # even the highest probed rate passed once: bracket again above it
                    if probed[-1] >= p.max_rate:
                        stop = f"passed at max_rate {p.max_rate:g}"
                        break
                    r = clip(probed[-1] * extension())
                    state["extended"] += 1
                    if run(r, "bracket") is False:
                        bisect(probed[-1], r)
                elif len(seen[hi_e]) < p.repeats:
                    run(hi_e, "edge")
                elif (gap := _widest_gap(seen, lo_e, hi_e, p.precision)) is not None:
                    run(_round(sum(gap) / 2), "refine")
                else:
                    stop = "converged"
                    break
    except _Budget:
        stop = f"max_probes ({p.max_probes} conclusive, {len(history)} in all) reached"
    seen = seen_now()
    lo_e, hi_e, point = establish(seen)
    edges = (lo_e, hi_e)
    lim = limit()
    doubted = any(j.passed is False and not conclusive(j) for _, _, j in history)
    outcome = _outcome(p, seen, lo_e, hi_e, lim, bool(busy) or doubted, stop)
    at_least = lo_e
    if outcome is Outcome.GENERATOR_LIMITED:
        hi_e = lim if hi_e is None else min(hi_e, lim)
    elif hi_e is not None:
        hi_e = _round(hi_e * (1 + p.precision))  # the bisection cannot place an edge better than its step
    if lo_e is not None:
        lo_e = _round(max(lo_e * (1 - p.precision), 1))
    if outcome in (Outcome.GENERATOR_LIMITED, Outcome.CANNOT_TELL):
        point = None  # no headline number: at most what it keeps up with
    return Estimate(point, (lo_e, hi_e), outcome, stop, history, lim, edges, at_least)


def _widest_gap(seen, lo: float, hi: float, precision: float) -> tuple[float, float] | None:
    """Between ``L`` and the lowest rate above it that was probed, or between ``H`` and the highest one
    below it: the wider of the two gaps if it exceeds ``precision`` (a mixed rate moved an edge far out,
    and probing half-way can bring it back), else ``None``."""
    inner = sorted(r for r, v in seen.items() if v and lo < r < hi)
    gaps = [(lo, inner[0] if inner else hi), (inner[-1] if inner else lo, hi)]
    a, b = max(gaps, key=lambda g: (g[1] - g[0]) / g[0])
    return (a, b) if b - a > precision * a and _round((a + b) / 2) not in (a, b) else None


def _outcome(p: BreakpointParams, seen, lo, hi, limit, machine: bool, stop) -> Outcome:
    """How far the search got; ``machine``: some probe was inconclusive, or a failure doubtful, because of the
    machine (then a search that did not resolve could not tell, rather than found mixed judgements)."""
    if lo is None and not any(any(v) for v in seen.values()):
        return (
            Outcome.CANNOT_TELL
            if machine and limit is None
            else Outcome.NONE_PASSED
            if limit is None
            else Outcome.GENERATOR_LIMITED
        )
    if limit is not None and (hi is None or hi > limit):
        return Outcome.GENERATOR_LIMITED
    if hi is None:
        if any(r >= p.max_rate and all(v) for r, v in seen.items() if v):
            return Outcome.ABOVE_RANGE
        return Outcome.CANNOT_TELL if machine else Outcome.UNRESOLVED
    if lo is not None and len(seen[lo]) >= p.repeats and len(seen[hi]) >= p.repeats:
        return Outcome.RESOLVED
    return Outcome.CANNOT_TELL if machine else Outcome.UNRESOLVED
