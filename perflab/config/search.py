"""``BreakpointCriteria`` (when a probe passes) and ``BreakpointParams`` (how the search probes)."""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Params, option

BRACKETS = ("ramp", "growth")


@dataclass(frozen=True)
class BreakpointCriteria(Params):
    """When a probe at a fixed rate counts as "the server keeps up".

    The trend check rejects a probe whose per-interval latency grows during the probe (a queue
    building up): the median p50 of the last third of intervals exceeds ``trend_factor`` times the
    first third's plus ``trend_floor``, and p50's rank correlation with time is at least
    ``trend_min_corr``.
    """

    min_achieved: float = option(
        0.99, "float", "achieved/offered rate a passing probe reaches", min=0, min_open=True, max=1
    )
    sla_p99: float = option(0.010, "duration", "p99 bound of a passing probe", min=0, min_open=True, flag="--sla")
    max_error_ratio: float = option(
        0.001,
        "float",
        "requests not served (socket errors, 4xx but a GET's 404, 5xx) per request a passing probe may have",
        min=0,
        max=0.5,
        flag="--max-errors",
    )
    trend: bool = option(True, "bool", "reject a probe whose latency grows during it")
    trend_factor: float = option(2.0, "float", "growth of p50 (last third / first third) that is a trend", min=1)
    trend_floor: float = option(0.001, "duration", "growth of p50 below this is never a trend", min=0)
    trend_min_corr: float = option(0.6, "float", "rank correlation of p50 with time needed for a trend", min=0, max=1)


@dataclass(frozen=True)
class BreakpointParams(Params):
    """How the breakpoint search probes (see :mod:`perflab.breakpoint`).

    With ``bracket='ramp'`` one run ramps the rate exponentially from ``start_rate`` to ``max_rate``
    over ``ramp_duration`` (stopping once p99 is well over the SLA); the rate where it broke, ±
    ``ramp_margin``, is bisected with fixed-rate probes to ``precision``; then both edges are probed
    again until each has ``repeats`` probes, so the result is an interval that covers what repeated
    probes show. ``bracket='growth'`` (wrk2, which has no ramp) multiplies the rate by ``growth``
    from ``start_rate`` instead.
    """

    start_rate: float = option(1000.0, "rate", "first rate (the ramp starts here)", min=0, min_open=True)
    max_rate: float = option(1_000_000.0, "rate", "highest rate ever offered", min=0, min_open=True)
    min_rate: float = option(10.0, "rate", "lowest rate ever probed", min=0, min_open=True)
    bracket: str = option("ramp", "enum", "how the search first locates the breakpoint", choices=BRACKETS)
    ramp_duration: float = option(
        10.0, "duration", "length of the bracketing ramp (stops early past the breakpoint)", min=1
    )
    ramp_margin: float = option(
        0.2,
        "float",
        "half-width of the bracket around the ramp's estimate (a ramp is not steady state)",
        min=0.02,
        max=0.9,
    )
    growth: float = option(2.0, "float", "rate factor per step with bracket='growth'", min=1, min_open=True, max=100)
    precision: float = option(
        0.04,
        "float",
        "bisect until the bracket is within this fraction (also the margin the interval adds on each side)",
        min=0,
        min_open=True,
        max=0.9,
    )
    repeats: int = option(2, "int", "unanimous probes needed at each edge of the interval", min=1, max=20)
    max_probes: int = option(
        14,
        "int",
        "conclusive fixed-rate probes per search, repeats included (probes the "
        "machine spoiled run beyond it, up to as many again)",
        min=2,
        max=200,
    )
    probe_duration: float = option(3.0, "duration", "measured window of a probe", min=0.5)
    warmup: float = option(1.0, "duration", "unrecorded load before each probe's window", min=0)
    cooldown: float = option(0.5, "duration", "idle time between probes (queues drain)", min=0)
    server_warmup: float | None = option(
        None,
        "duration",
        "unrecorded load at start_rate before the search "
        "(default, for a JVM: 5,000 requests, C2's compile threshold, at least 2 "
        "s, at most ramp_duration; none for a server without a JIT)",
        min=0,
        optional=True,
        default_text="auto",
    )
    restart_server: bool = option(False, "bool", "a fresh server for every probe")
    retries: int = option(
        2,
        "int",
        "repeat a probe that is invalid as a measure of the server (the machine was "
        "busy, or the generator at its limit) this many times",
        min=0,
        max=10,
    )
    quiet_wait: float = option(
        10.0,
        "duration",
        "before each probe, wait up to this long for other programs to use "
        "no more CPU than at the session's quietest (perflab.core.quiet)",
        min=0,
    )
    sustain: float = option(
        20.0,
        "duration",
        "after the search, hold its breakpoint in windows this long and keep it "
        "only if the server keeps up in most of them; else step down (0: no check)",
        min=0,
    )
    hold_windows: int = option(
        3,
        "int",
        "windows held at each rate; the rate holds when most keep up (2 of 3), fails when most do not",
        min=1,
        max=9,
    )
    fresh_start: bool = option(
        True,
        "bool",
        "start every held window on a fresh server: a new process on the "
        "storage as it was before the search (prefill or fill again), warmed up again "
        "(a server perflab cannot restart is held as it runs)",
    )
    hold_above: float = option(
        1.3,
        "float",
        "a rate that holds is checked from above: this many times it must fail "
        "from fresh starts too, or it is held in turn (the search underestimated)",
        min=1,
        min_open=True,
        max=4,
    )
    sustain_tries: int = option(
        4,
        "int",
        "rates held at most: the breakpoint, higher or lower ones until one holds "
        "and one above it fails, then half-way between",
        min=1,
        max=10,
    )
    sustain_step: float = option(
        0.1,
        "float",
        "each rate held after one that did not hold is this much lower (until one holds)",
        min=0.01,
        max=0.9,
    )
    seed: int = option(0, "int", "seed=<n> appended to the script arguments with seed_arg")
    seed_arg: bool = option(False, "bool", "append seed=<seed> to the script arguments")

    def _check(self):
        if not self.min_rate <= self.start_rate <= self.max_rate:
            raise ValueError(
                f"start_rate: must be within [min_rate, max_rate] = [{self.min_rate:g}, "
                f"{self.max_rate:g}], got {self.start_rate:g}"
            )
        if self.repeats * 2 > self.max_probes:
            raise ValueError(
                f"max_probes: must allow the repeats at both edges (>= {2 * self.repeats}), got {self.max_probes}"
            )
