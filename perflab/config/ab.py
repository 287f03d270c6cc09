"""``ABParams``: how an interleaved A/B comparison measures and when it stops (:mod:`perflab.ab`)."""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Params, option


@dataclass(frozen=True)
class Metric:
    """A quantity every A/B pair compares (B/A of its value in the pair's two probes): ``name`` (what
    ``--metric`` takes), ``key`` (the :meth:`perflab.measure.result.LoadResult.record` entry its value comes
    from), the ``unit`` of that value, ``words`` (how a sentence names it) and whether it is a ``latency`` (what
    the generator measures, so a probe the generator held back, an invalid one, has the generator's numbers;
    the server's CPU time is the server's whatever the generator did). The one place that says so."""

    name: str
    key: str
    unit: str
    words: str
    latency: bool = True

    @property
    def column(self) -> str:
        """The suffix of its columns in a pair table (``a_<column>``, ``b_<column>``): ``p50_ms``, ``cpu_us``."""
        return f"{self.name}_{self.unit}"


#: every metric a pair compares, by name: three latency percentiles and the server's CPU time per answered
#: request over the probe's window (``cpu``), the stop rule's among them
METRIC = {
    m.name: m
    for m in (
        Metric("p50", "p50_ms", "ms", "p50"),
        Metric("p99", "p99_ms", "ms", "p99"),
        Metric("p99.9", "p999_ms", "ms", "p99.9"),
        Metric("cpu", "cpu_us_per_request", "us", "CPU per request", latency=False),
    )
}
METRICS = tuple(METRIC)
#: pair counts at which the stop rule's test is consulted (a claim is possible only there and at the end); a
#: look below the fewest pairs that can reach the level cannot claim, and is not counted
LOOKS = (8, 12, 16, 24, 32, 48, 64, 96, 128)
MAX_PAIRS = LOOKS[-1]
#: the defaults of the comparison (:mod:`perflab.stats.paired` says why these)
ALPHA = 1e-6
MARGIN = 0.05
MIN_PAIRS = 8


@dataclass(frozen=True)
class ABParams(Params):
    """How ``perflab ab`` / :func:`perflab.compare_ab` measures two servers side by side.

    Probes alternate in balanced blocks (A B B A, then B A A B) at the same offered rates; each adjacent
    A-B pair gives ratios of p50, p99, p99.9 and the server's CPU per request, and pass/fail at the SLA. The stop rule
    (:mod:`perflab.stats.paired`) ends a rate's comparison once the interval of ``metric``'s median
    ratio lies within ``±margin`` (``stop_at``: or below ``1 + margin``) or the test claims a difference, or after ``max_pairs`` pairs, or when
    the ``budget`` ends. ``alpha`` bounds the probability that a comparison of two identical servers
    claims any difference (all its tests together).
    """

    probe_duration: float = option(1.0, "duration", "measured window of each probe", min=0.2)
    warmup: float = option(0.5, "duration", "unrecorded load before each probe's window", min=0)
    server_warmup: float = option(
        3.0,
        "duration",
        "unrecorded load on each server before the first pair (and after each restart): the JIT settles",
        min=0,
    )
    cooldown: float = option(0.1, "duration", "idle time between probes", min=0)
    metric: str = option("p99", "enum", "the metric the stop rule decides on", choices=METRICS)
    stop_at: str = option(
        "equivalent",
        "enum",
        "when the stop rule may stop without a claim: once the metric's "
        "interval lies within ±margin (equivalent), or once it shows B no worse than A beyond the "
        "margin (not-worse: a check for regressions)",
        choices=("equivalent", "not-worse"),
    )
    min_pairs: int = option(MIN_PAIRS, "int", "pairs before any verdict", min=2, max=MAX_PAIRS)
    max_pairs: int = option(
        64,
        "int",
        "at most this many pairs per rate (the stop rule usually stops earlier)",
        min=2,
        max=MAX_PAIRS,
        flag="--pairs",
    )
    budget: float | None = option(
        300.0,
        "duration",
        "time for the pairs of all rates; the verdict then says the budget ended",
        min=1,
        optional=True,
    )
    margin: float = option(
        MARGIN,
        "float",
        "ratios within ±margin count as no difference (covers what two processes of one configuration differ by)",
        min=0,
        min_open=True,
        max=0.5,
    )
    alpha: float = option(
        ALPHA,
        "float",
        "probability that comparing two identical servers claims any "
        "difference (split over every test the comparison makes)",
        min=0,
        min_open=True,
        max=0.05,
    )
    restart_per_block: bool = option(
        False,
        "bool",
        "restart both servers before every block (fresh processes, "
        "so a persistent difference between two JVMs becomes noise)",
    )
    drop_invalid: bool = option(
        False,
        "bool",
        "leave pairs with an invalid probe (the generator, not the server, "
        "set its numbers) out of the test; by default they count: the generator's lateness "
        "is in both sides' latency and pulls their ratio toward 1",
    )
    profile: bool = option(
        False,
        "bool",
        "record each side's CPU with async-profiler during the pairs (1 ms "
        "samples): where B spends more CPU per request than A, per category (network, HTTP "
        "parsing, storage, GC, your code...), with intervals",
    )
    idle_pairs: int = option(
        4,
        "int",
        "pairs measuring what the idle server costs the busy one (A with B idle "
        "against A with B frozen by SIGSTOP); 0: not measured",
        min=0,
        max=MAX_PAIRS,
    )
    seed: int = option(0, "int", "seed of the bootstrap intervals", flag="--bootstrap-seed")

    def _check(self):
        if self.profile and self.restart_per_block:
            raise ValueError(
                "profile: one recording per server runs through the pairs; a server restarted before "
                "every block (restart_per_block) would end it"
            )
        if self.min_pairs > self.max_pairs:
            raise ValueError(f"min_pairs: must be <= max_pairs ({self.max_pairs}), got {self.min_pairs}")
        if self.warmup > self.probe_duration:
            raise ValueError(
                f"warmup: must not be longer than the probe's window ({self.probe_duration:g} s), got {self.warmup:g} s"
            )
