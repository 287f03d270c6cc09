"""Bracketing a breakpoint with one ramp instead of doubling fixed-rate probes from a low rate.

One perflab-load run raises the rate exponentially from ``start_rate`` to ``max_rate`` (a constant factor
per second: even resolution over decades of rates, and the JIT warms up on the way) and stops shortly
after p99 leaves the SLA far behind. The 100 ms latency intervals then show where the server stopped
keeping up: the estimate is the offered rate of the last interval before the first two consecutive
intervals that miss the SLA (p99 above it, or far fewer completions than offered). A ramp is not a
steady state (queues build with a delay, caches warm), so the search only uses the estimate to place
its first bracket, ``estimate × (1 ± ramp_margin)``, and checks it with fixed-rate probes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..config import BreakpointCriteria, BreakpointParams, LoadParams
from ..core.probe import jvm_warmup_s

#: stop the ramp once p99 exceeds the SLA by this factor in consecutive intervals
STOP_FACTOR = 5.0
#: a ramp that breaks this early says the server was cold or stalled, not where its limit is
COLD_BREAK_S = 1.0
#: consecutive bad intervals that mark the break
BAD_RUN = 2


@dataclass(frozen=True)
class RampEstimate:
    """``rate``: the estimated breakpoint (``None``: the ramp found none); ``t_s``: when it broke
    (seconds into the ramp); ``reason`` in words."""

    rate: float | None
    t_s: float | None
    reason: str
    #: it broke within :data:`COLD_BREAK_S`: no estimate
    cold: bool = False
    #: seconds of load the server had before the ramp
    warmed_s: float = 0.0

    def to_dict(self) -> dict:
        return {"rate": self.rate, "t_s": self.t_s, "reason": self.reason, "cold": self.cold, "warmed_s": self.warmed_s}


def ramp_load(base: LoadParams, params: BreakpointParams, criteria: BreakpointCriteria) -> LoadParams:
    """The ramp run's parameters, derived from the search's workload ``base``."""
    return base.replace(
        ramp=(params.start_rate, params.max_rate),
        ramp_curve="exp",
        duration=params.ramp_duration,
        warmup=0,
        stop_on_p99=criteria.sla_p99 * STOP_FACTOR,
        hdr_interval=0.1,
        rate_steps=None,
        step_duration=None,
    )


def estimate(result, criteria: BreakpointCriteria, warmed_s: float = 0.0) -> RampEstimate:
    """The breakpoint estimate from a ramp's :class:`~perflab.measure.result.LoadResult`: its hdr-log
    intervals (latency) and the generator's per-interval counts (``summary["intervals"]``: what the
    schedule offered and what completed in each); ``warmed_s``: the load the server had before it."""
    est = _estimate(result, criteria)
    return RampEstimate(est.rate, est.t_s, est.reason, est.cold, warmed_s)


def _estimate(result, criteria: BreakpointCriteria) -> RampEstimate:
    rows = result.summary.get("intervals") or []
    iv = result.intervals
    if not rows or iv is None or len(iv) == 0:
        return RampEstimate(None, None, "the ramp recorded no latency intervals")
    p99 = {round(float(r.start_s), 3): float(r.p99_ms) for r in iv.itertuples() if r.count > 0}
    sla_ms = criteria.sla_p99 * 1000
    bad, rates = [], []
    for r in rows:
        length = r["end_s"] - r["start_s"]
        rates.append(r["offered"] / length if length > 0 else 0.0)
        lat = p99.get(round(float(r["start_s"]), 3))
        bad.append(not (lat is not None and lat <= sla_ms and r["completed"] >= 0.5 * r["offered"]))
    bad = np.array(bad)
    for i in range(len(bad)):
        # two bad intervals in a row, or bad to the end (the ramp stops itself shortly after breaking)
        if bad[i : i + BAD_RUN].all() and (
            i + BAD_RUN <= len(bad) or result.summary.get("stopped_early") or len(bad) < 2 * BAD_RUN
        ):
            broke = float(rows[i]["start_s"])
            if broke < COLD_BREAK_S:
                return RampEstimate(
                    None,
                    broke,
                    f"the ramp broke {broke:.1f} s in, at {rates[max(i - 1, 0)]:,.0f}/s: "
                    f"too early to place a bracket (a cold or stalled server, or a "
                    f"limit near start_rate); the search grows from start_rate",
                    cold=True,
                )
            t = float(rows[i - 1]["start_s"])
            return RampEstimate(
                rates[i - 1],
                float(rows[i]["start_s"]),
                f"the ramp kept up until {t:.1f} s ({rates[i - 1]:,.0f}/s offered); from "
                f"{float(rows[i]['start_s']):.1f} s on p99 missed {sla_ms:g} ms",
            )
    return RampEstimate(rates[-1], None, f"the ramp kept up to its end ({rates[-1]:,.0f}/s offered)")


def bracket(
    ramp: Callable[[str], object], warm_again: Callable[[], None], criteria: BreakpointCriteria, warmed_s: float
) -> tuple[RampEstimate, RampEstimate | None]:
    """The ramp's estimate, and the first ramp's when it had to be run twice: ``ramp(name)`` runs one ramp (its
    output under ``name``) and returns its result. A ramp that broke at once on a server that was warmed
    (``warmed_s`` > 0: its JIT still compiling on a busy machine, or a stall) is run once more after
    ``warm_again()`` (as much warm-up again); still cold, the search grows from start_rate."""
    first = estimate(ramp("ramp"), criteria, warmed_s)
    if not (first.cold and warmed_s):
        return first, None
    warm_again()
    return estimate(ramp("ramp-again"), criteria, 2 * warmed_s), first


def use_ramp(params: BreakpointParams, base: LoadParams, split: bool) -> bool:
    """Whether a search brackets with a ramp: asked for, with perflab-load, and not split over several
    generator processes (the ramp stops itself on p99, which one part of a split load cannot do for all:
    a split load brackets by growth, as wrk2 does)."""
    return params.bracket == "ramp" and base.tool == "perflab-load" and not split


def server_warmup(params: BreakpointParams, jvm: bool) -> float:
    """Seconds of unrecorded load at ``start_rate`` a server gets before a search (its ramp, or its first
    probe): ``params.server_warmup`` when given; else, for a JVM, :func:`perflab.core.probe.jvm_warmup_s`, at most
    ``ramp_duration`` (a JIT-cold server fails its first probe, or breaks its ramp in the first second, far below
    its limit); nothing for a server without a JIT."""
    if params.server_warmup is not None:
        return params.server_warmup
    if not jvm:
        return 0.0
    return jvm_warmup_s(params.start_rate, params.ramp_duration)
