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

import math
from dataclasses import dataclass

import numpy as np

from ..config import BreakpointCriteria, BreakpointParams, LoadParams

#: stop the ramp once p99 exceeds the SLA by this factor in consecutive intervals
STOP_FACTOR = 5.0
#: consecutive bad intervals that mark the break
BAD_RUN = 2


@dataclass(frozen=True)
class RampEstimate:
    """``rate``: the estimated breakpoint (``None``: the ramp found none); ``t_s``: when it broke
    (seconds into the ramp); ``reason`` in words."""

    rate: float | None
    t_s: float | None
    reason: str

    def to_dict(self) -> dict:
        return {"rate": self.rate, "t_s": self.t_s, "reason": self.reason}


def ramp_load(base: LoadParams, params: BreakpointParams, criteria: BreakpointCriteria) -> LoadParams:
    """The ramp run's parameters, derived from the search's workload ``base``."""
    return base.replace(ramp=(params.start_rate, params.max_rate), ramp_curve="exp", duration=params.ramp_duration,
                        warmup=0, stop_on_p99=criteria.sla_p99 * STOP_FACTOR, hdr_interval=0.1,
                        rate_steps=None, step_duration=None)


def offered_rate(load: LoadParams, t_s: float) -> float:
    """The rate an exponential ramp offers ``t_s`` seconds into its window."""
    a, b = load.ramp
    return a * (b / a) ** (min(max(t_s, 0.0), load.duration) / load.duration)


def estimate(result, criteria: BreakpointCriteria) -> RampEstimate:
    """The breakpoint estimate from a ramp's :class:`~perflab.measure.load.LoadResult`."""
    iv = result.intervals
    load = result.params
    if iv is None or len(iv) == 0:
        return RampEstimate(None, None, "the ramp recorded no latency intervals")
    sla_ms = criteria.sla_p99 * 1000
    bad = []
    for row in iv.itertuples():
        length = row.end_s - row.start_s
        offered = _offered_count(load, row.start_s, row.end_s)
        completed_ok = row.count >= 0.5 * offered if length > 0 else True
        bad.append(not (row.count > 0 and row.p99_ms <= sla_ms and completed_ok))
    bad = np.array(bad)
    for i in range(len(bad)):
        # two bad intervals in a row, or bad to the end (the ramp stops itself shortly after breaking)
        if bad[i:i + BAD_RUN].all() and (i + BAD_RUN <= len(bad) or result.summary.get("stopped_early")
                                          or len(bad) < 2 * BAD_RUN):
            if i == 0:
                return RampEstimate(load.ramp[0], 0.0, f"p99 above {sla_ms:g} ms from the ramp's start "
                                                          f"({load.ramp[0]:,.0f}/s)")
            t = float(iv["start_s"].iloc[i - 1])
            rate = offered_rate(load, t)
            return RampEstimate(rate, float(iv["start_s"].iloc[i]),
                                f"the ramp kept up until {t:.1f} s ({rate:,.0f}/s offered); from "
                                f"{float(iv['start_s'].iloc[i]):.1f} s on p99 missed {sla_ms:g} ms")
    top = offered_rate(load, float(iv["end_s"].iloc[-1]))
    return RampEstimate(top, None, f"the ramp kept up to its end ({top:,.0f}/s offered)")


def _offered_count(load: LoadParams, s: float, e: float) -> float:
    """Requests an exponential ramp schedules in ``[s, e)`` (the integral of its rate)."""
    a, b = load.ramp
    d = load.duration
    k = math.log(b / a) / d if b != a else 0.0
    s, e = min(max(s, 0.0), d), min(max(e, 0.0), d)
    if k == 0:
        return a * (e - s)
    return a / k * (math.exp(k * e) - math.exp(k * s))
