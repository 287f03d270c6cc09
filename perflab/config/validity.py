"""``ValidityThresholds``: when a run is a valid measure of the server (see :mod:`perflab.measure.validity`).

Every threshold of the validity record is a field here, documented once; ``fail`` thresholds make a run
``invalid`` (the generator, not the server, set the numbers), ``warn`` thresholds make it ``suspect``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Params, option


@dataclass(frozen=True)
class ValidityThresholds(Params):
    """Limits of the checks in a run's validity record (shares are fractions, times seconds)."""

    min_achieved: float = option(
        0.99,
        "float",
        "achieved/offered rate below this: warn (the offered load was not delivered)",
        min=0,
        min_open=True,
        max=1,
    )
    lag_floor: float = option(0.0002, "duration", "generator schedule lag (p99) below this never matters", min=0)
    lag_share_warn: float = option(
        0.1, "float", "generator lag p99 as a share of the measured p99: warn above", min=0, min_open=True, max=1
    )
    lag_share_fail: float = option(
        0.5, "float", "... fail above: the latency is mostly the generator's own", min=0, min_open=True, max=1
    )
    generator_cpu_warn: float = option(
        0.7, "float", "busiest generator thread's CPU, share of one core: warn above", min=0, min_open=True, max=1
    )
    generator_cpu_fail: float = option(
        0.9, "float", "... fail above: the generator thread is saturated", min=0, min_open=True, max=1
    )
    runqueue_warn: float = option(
        0.1,
        "float",
        "share of the window the busiest generator thread waited for a CPU: warn above",
        min=0,
        min_open=True,
        max=1,
    )
    machine_busy_warn: float = option(
        0.95,
        "float",
        "share of all CPUs busy over the window: warn above (server and generator compete for CPU)",
        min=0,
        min_open=True,
        max=1,
    )
    others_warn: float = option(
        0.1,
        "float",
        "share of all CPUs other programs used beyond the session's quiet "
        "level (the least they used at any check while the server idled): warn above; a "
        "breakpoint probe waits for this much quiet before it starts",
        min=0,
        max=1,
    )
    others_fail: float = option(
        0.25,
        "float",
        "... fail above: the machine, not the server, set the numbers (a "
        "failed breakpoint probe is then inconclusive and probed again)",
        min=0,
        max=1,
    )
    shared_warn: float = option(
        0.25,
        "float",
        "share of all CPUs other programs used over the window, however steadily: warn above (a shared machine)",
        min=0,
        max=1,
    )
    first_interval_factor: float = option(
        3.0, "float", "first interval's p99 over the median of the others: warn above (JIT or warm-up outlier)", min=1
    )
    first_interval_floor: float = option(0.001, "duration", "... unless the difference is below this", min=0)
    trend_alpha: float = option(
        0.01,
        "float",
        "stationarity: Kendall's tau test of p50 against time at this level...",
        min=0,
        min_open=True,
        max=0.5,
    )
    trend_change: float = option(
        0.5,
        "float",
        "... and a Theil-Sen change over the window above this share of the median: warn",
        min=0,
        min_open=True,
    )
    min_intervals: int = option(10, "int", "fewer latency intervals than this: stationarity is not judged", min=3)
    max_error_ratio: float = option(
        0.001,
        "float",
        "requests not served (socket errors, 4xx but a GET's 404, 5xx) per request: warn above",
        min=0,
        max=1,
    )
    min_hit_ratio: float = option(
        0.99,
        "float",
        "share of GETs that found their key (200 of 200 + 404) below "
        "which a load meant to read data is invalid (it read an empty or unfilled "
        "store); a load that asks for misses (allow_misses) is not judged",
        min=0,
        max=1,
    )
    host_speed_warn: float = option(
        1.25,
        "float",
        "a fixed loop timed on every CPU around the window took this "
        "many times its fastest time in the session: warn (the machine itself slowed "
        "down: see perflab.hostspeed)",
        min=1,
        min_open=True,
    )

    def _check(self):
        for a, b in (
            ("lag_share_warn", "lag_share_fail"),
            ("generator_cpu_warn", "generator_cpu_fail"),
            ("others_warn", "others_fail"),
        ):
            if getattr(self, a) > getattr(self, b):
                raise ValueError(f"{a}: must be <= {b} ({getattr(self, b):g}), got {getattr(self, a):g}")
