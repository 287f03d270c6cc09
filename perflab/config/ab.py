"""``ABParams``: how an interleaved A/B comparison measures and when it stops (:mod:`perflab.ab`)."""

from __future__ import annotations

from dataclasses import dataclass

from .fields import Params, option

#: the latency metrics a pair compares (``LoadResult`` percentiles), the stop rule's among them
METRICS = ("p50", "p99", "p99.9")
#: pair counts at which the stop rule's test is consulted (a claim is possible only there and at the end); a
#: look below the fewest pairs that can reach the level cannot claim, and is not counted
LOOKS = (8, 12, 16, 24, 32, 48, 64, 96, 128)
MAX_PAIRS = LOOKS[-1]
#: the defaults of the comparison (:mod:`perflab.measure.paired` says why these)
ALPHA = 1e-6
MARGIN = 0.05
MIN_PAIRS = 8


@dataclass(frozen=True)
class ABParams(Params):
    """How ``perflab ab`` / :func:`perflab.compare_ab` measures two servers side by side.

    Probes alternate in balanced blocks (A B B A, then B A A B) at the same offered rates; each adjacent
    A-B pair gives ratios of p50, p99 and p99.9 and pass/fail at the SLA. The stop rule
    (:mod:`perflab.measure.paired`) ends a rate's comparison once the interval of ``metric``'s median
    ratio lies within ``±margin`` or the test claims a difference, or after ``max_pairs`` pairs, or when
    the ``budget`` ends. ``alpha`` bounds the probability that a comparison of two identical servers
    claims any difference (all its tests together).
    """

    probe_duration: float = option(1.0, "duration", "measured window of each probe", min=0.2)
    warmup: float = option(0.5, "duration", "unrecorded load before each probe's window", min=0)
    server_warmup: float = option(3.0, "duration", "unrecorded load on each server before the first pair (and "
                                  "after each restart): the JIT settles", min=0)
    cooldown: float = option(0.1, "duration", "idle time between probes", min=0)
    metric: str = option("p99", "enum", "the metric the stop rule decides on", choices=METRICS)
    min_pairs: int = option(MIN_PAIRS, "int", "pairs before any verdict", min=2, max=MAX_PAIRS)
    max_pairs: int = option(64, "int", "at most this many pairs per rate (the stop rule usually stops earlier)",
                            min=2, max=MAX_PAIRS, flag="--pairs")
    budget: float | None = option(300.0, "duration", "time for the pairs of all rates; the verdict then says "
                                  "the budget ended", min=1, optional=True)
    margin: float = option(MARGIN, "float", "ratios within ±margin count as no difference (covers what "
                           "two processes of one configuration differ by)", min=0, min_open=True, max=0.5)
    alpha: float = option(ALPHA, "float", "probability that comparing two identical servers claims any "
                          "difference (split over every test the comparison makes)", min=0, min_open=True, max=0.05)
    restart_per_block: bool = option(False, "bool", "restart both servers before every block (fresh processes, "
                                     "so a persistent difference between two JVMs becomes noise)")
    drop_invalid: bool = option(False, "bool", "leave pairs with an invalid probe (the generator, not the server, "
                                "set its numbers) out of the test; by default they count: the generator's lateness "
                                "is in both sides' latency and pulls their ratio toward 1")
    idle_pairs: int = option(4, "int", "pairs measuring what the idle server costs the busy one (A with B idle "
                             "against A with B frozen by SIGSTOP); 0: not measured", min=0, max=MAX_PAIRS)
    seed: int = option(0, "int", "seed of the bootstrap intervals", flag="--bootstrap-seed")

    def _check(self):
        if self.min_pairs > self.max_pairs:
            raise ValueError(f"min_pairs: must be <= max_pairs ({self.max_pairs}), got {self.min_pairs}")
        if self.warmup > self.probe_duration:
            raise ValueError(f"warmup: must not be longer than the probe's window ({self.probe_duration:g} s), "
                             f"got {self.warmup:g} s")

