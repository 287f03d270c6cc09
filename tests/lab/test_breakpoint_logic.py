"""The search logic, the ramp's estimate and the verdicts, on synthetic inputs (the real search runs
against real servers in test_breakpoint_server.py)."""

import math
import random
import statistics

import pandas as pd
import pytest

from perflab import BreakpointCriteria, BreakpointParams, LoadParams
from perflab.breakpoint import BreakpointResult, Outcome, Probe, establish, search
from perflab.breakpoint import ramp as ramp_mod
from perflab.measure.judgement import GENERATOR, MACHINE, Judgement, latency_trend
from perflab.measure.result import LoadResult


def capacity_probe(capacity, calls=None, noise=0.0, seed=0, invalid_above=None):
    """A server that keeps up below a capacity that varies per probe by a normal ``noise`` share."""
    rng = random.Random(seed)

    def probe(rate, phase):
        if calls is not None:
            calls.append((rate, phase))
        if invalid_above is not None and rate > invalid_above:
            return Judgement(None, ["inconclusive: the generator was at its limit"], doubt=GENERATOR)
        ok = rate <= capacity * (1 + rng.gauss(0, noise))
        return Judgement(ok, ["ok" if ok else f"over capacity {capacity}"])

    return probe


@pytest.mark.parametrize(
    "capacity, estimate",
    [(50_000, 52_000), (50_000, 80_000), (50_000, 20_000), (2000, 2100), (150, None), (77_000, None)],
)
def test_a_steady_capacity_is_found_with_repeated_edges(capacity, estimate):
    calls = []
    p = BreakpointParams(start_rate=min(1000, capacity), precision=0.04, repeats=2, max_probes=16)
    o = search(capacity_probe(capacity, calls), p, estimate)
    assert o.outcome == "resolved" and o.stop_reason == "converged"
    lo, hi = o.interval
    assert lo <= o.rate <= capacity < hi
    assert (capacity - o.rate) / capacity <= 0.04
    assert o.halfwidth <= 0.08  # the bisection's step plus its margin on both sides
    rates = [r for r, _ in calls]
    edges = [r for r, ph in calls if ph == "edge"]
    assert edges and all(
        rates.count(r) >= 2 for r in (max(r for r in rates if r <= capacity), min(r for r in rates if r > capacity))
    )
    # deterministic: the same verdicts give the same sequence
    calls2 = []
    assert search(capacity_probe(capacity, calls2), p, estimate).interval == o.interval and calls2 == calls


def test_three_noisy_searches_agree_within_their_intervals():
    # A capacity that moves by a normal 2% per probe, as a shared machine does: three searches from
    # different ramp estimates must land within 5% of their median, each interval holding the others' points.
    ok = 0
    for k in range(20):
        res = [
            search(
                capacity_probe(50_000, noise=0.02, seed=3 * k + i),
                BreakpointParams(max_probes=16),
                random.Random(3 * k + i).uniform(40_000, 65_000),
            )
            for i in range(3)
        ]
        med = statistics.median(o.rate for o in res)
        within = all(abs(o.rate / med - 1) <= 0.05 for o in res)
        cover = all(o.interval[0] <= q.rate <= o.interval[1] for o in res for q in res)
        ok += within and cover
    assert ok >= 16, ok  # simulated: 94% of triples; the threshold leaves room for the draw


def test_bounds_and_verdicts():
    o = search(capacity_probe(10**9), BreakpointParams(start_rate=1000, max_rate=5000, bracket="growth"))
    assert o.outcome == "above-range" and o.interval == (4800.0, None) and "above the search range" in o.stop_reason
    o = search(capacity_probe(1), BreakpointParams(start_rate=100, min_rate=10))
    assert o.outcome == "none-passed" and o.rate is None and "no rate passes" in o.stop_reason
    o = search(capacity_probe(4321), BreakpointParams(start_rate=1000, max_probes=4, repeats=2))
    assert len(o.history) == 4 and o.outcome == "unresolved" and "max_probes" in o.stop_reason


def test_an_invalid_probe_is_never_the_server_failing():
    # The generator cannot measure above 100k/s: the search says so instead of calling it the server's limit.
    calls = []
    o = search(capacity_probe(10**9, calls, invalid_above=100_000), BreakpointParams(retries=1), 150_000)
    assert o.outcome == "generator-limited" and "the generator" in o.stop_reason
    assert o.limit is not None and o.limit > 100_000 and o.interval[1] == o.limit
    # no headline number: only what the server kept up with
    assert o.rate is None and o.at_least is not None and o.at_least <= 100_000
    # each inconclusive probe was retried once before giving up on the rate
    inconclusive = [r for r, ph in calls if r > 100_000]
    assert all(inconclusive.count(r) == 2 for r in set(inconclusive))


def test_a_busy_machine_is_cannot_tell_never_a_limit_nor_a_breakpoint():
    # Above 30k/s every probe runs while another program takes the CPU: the search cannot tell, and says what
    # it kept up with instead of a breakpoint or a generator limit.
    def probe(rate, phase):
        if rate > 30_000:
            return Judgement(None, ["inconclusive, the machine was busy"], doubt=MACHINE)
        return Judgement(rate <= 50_000, ["ok"])

    o = search(probe, BreakpointParams(retries=1, max_probes=12), 40_000)
    assert o.outcome == "cannot-tell" and o.rate is None and o.limit is None, (o.outcome, o.stop_reason)
    assert o.at_least is not None and o.at_least <= 30_000


def test_a_failure_later_judged_the_machines_is_probed_again():
    # The first probes at the upper edge failed while another program ran (their others_cores 1.0); a later
    # quiet check shows the machine at 0.0, so those failures no longer count and the edge is probed again.
    level = {"cores": 1.0}
    calls = []

    def probe(rate, phase):
        calls.append((rate, phase))
        busy_now = len(calls) <= 3
        ok = rate <= (30_000 if busy_now else 50_000)
        if len(calls) == 3:
            level["cores"] = 0.0  # the machine quietens: what failed while it was busy is doubtful
        return Judgement(ok, ["ok" if ok else "p99 over the SLA"], {"others_cores": 1.0 if busy_now else 0.0})

    def doubtful(j):
        return j.metrics["others_cores"] > level["cores"] + 0.5

    o = search(probe, BreakpointParams(max_probes=20, repeats=2), 40_000, doubtful=doubtful)
    assert o.outcome == "resolved", (o.outcome, calls)
    lo, hi = o.interval
    assert lo <= o.rate <= 50_000 < hi and o.rate > 40_000, (o.interval, calls)


def test_establish_uses_every_probe():
    seen = {40: [True], 45: [True, True], 48: [True, False, True], 50: [False, True], 52: [False, False], 60: [False]}
    assert establish(seen) == (45, 52, 50)  # 50 passed half its probes
    assert establish({10: [False], 20: [False]}) == (None, 10, None)


def _intervals(p50s):
    return pd.DataFrame(
        {"start_s": range(len(p50s)), "end_s": range(1, len(p50s) + 1), "count": [100] * len(p50s), "p50_ms": p50s}
    )


def test_trend_detection():
    c = BreakpointCriteria()
    rising, desc = latency_trend(_intervals([0.5, 8, 20, 35, 50, 64]), c)
    assert rising and "p50 went from" in desc
    assert not latency_trend(_intervals([0.5, 0.6, 0.4, 0.55, 0.5, 0.6]), c)[0]
    assert not latency_trend(_intervals([0.5, 0.5, 40, 0.5, 0.6, 0.5]), c)[0]  # one spike is not a trend
    assert not latency_trend(_intervals([0.02, 0.03, 0.04, 0.05, 0.06, 0.07]), c)[0]  # below the floor
    assert latency_trend(_intervals([1, 2]), c) == (False, "too few intervals to judge a trend")


class _FakeHdr:
    def __init__(self, df):
        self.intervals = df


def _offered(a, b, d, s, e):
    """Requests an exponential ramp from a to b over d seconds schedules in [s, e)."""
    k = math.log(b / a) / d
    return a / k * (math.exp(k * e) - math.exp(k * s))


def _ramp_result(capacity, a=1000, b=1_000_000, duration=10.0, sla_ms=10.0):
    """What a server of ``capacity`` shows during an exponential ramp, at 100 ms intervals, in the shape
    perflab-load reports it (hdr-log intervals plus the summary's per-interval counts)."""
    load = ramp_mod.ramp_load(
        LoadParams(path="/v0/status"),
        BreakpointParams(start_rate=a, max_rate=b, ramp_duration=duration),
        BreakpointCriteria(sla_p99=sla_ms / 1000),
    )
    rows, counts, backlog = [], [], 0.0
    for i in range(int(duration * 10)):
        s, e = i / 10, (i + 1) / 10
        offered = _offered(a, b, duration, s, e)
        served = min(offered + backlog, capacity * 0.1)
        backlog += offered - served
        p99 = 0.5 + backlog / capacity * 1000  # queueing delay, ms
        rows.append(
            {
                "tag": "corrected",
                "start_s": s,
                "end_s": e,
                "count": served,
                "p50_ms": p99 / 2,
                "p99_ms": p99,
                "max_ms": p99,
            }
        )
        counts.append({"start_s": s, "end_s": e, "offered": round(offered), "completed": round(served), "errors": 0})
        if p99 > sla_ms * ramp_mod.STOP_FACTOR:
            break
    summary = {
        "target_rate": a,
        "achieved_rate": 1.0,
        "intervals": counts,
        "stopped_early": {"at_s": counts[-1]["end_s"]} if len(counts) < duration * 10 else None,
    }
    return LoadResult(load, "http://x", [], 0, "", summary, hdr=_FakeHdr(pd.DataFrame(rows)))


@pytest.mark.parametrize("capacity", [2000, 48_000, 300_000])
def test_the_ramp_estimate_lands_near_the_capacity(capacity):
    est = ramp_mod.estimate(_ramp_result(capacity), BreakpointCriteria())
    assert est.rate == pytest.approx(capacity, rel=0.2), est.reason
    assert est.t_s is not None and "kept up until" in est.reason


def test_the_ramp_reports_when_it_never_broke():
    est = ramp_mod.estimate(_ramp_result(10**9, b=100_000), BreakpointCriteria())
    assert est.t_s is None and "kept up to its end" in est.reason and est.rate == pytest.approx(100_000, rel=0.05)


def test_an_invalid_probe_below_passing_rates_is_a_stall_not_a_limit():
    # A shared machine stalls the generator at one low rate after higher rates passed: the result is the
    # server's breakpoint with an ordered interval, not "generator-limited" at the stall.
    stalls = {"left": 2}

    def probe(rate, phase):
        if phase.startswith("edge") and stalls["left"]:  # the first edge probe and its retry
            stalls["left"] -= 1
            return Judgement(None, ["inconclusive: a stall"])
        return Judgement(rate <= 20_000, ["ok" if rate <= 20_000 else "over"])

    o = search(probe, BreakpointParams(retries=1, max_probes=20), 19_000)
    assert any(v.passed is None for _, _, v in o.history), "the scenario must contain a stall"
    assert o.outcome == "resolved" and o.limit is None, (o.outcome, o.interval)
    lo, hi = o.interval
    assert lo <= 20_000 < hi


def test_a_one_off_failure_at_an_edge_is_refined_not_left_as_a_wide_interval():
    # capacity 50k, but the first repeat at the lower edge hits a stall (a GC, a neighbour): that rate is
    # mixed, L falls back to the bracket's low end, and the search probes half-way to win the range back
    calls, stalled = [], []

    def probe(rate, phase):
        calls.append((rate, phase))
        if phase == "edge" and rate <= 50_000 and not stalled:
            stalled.append(rate)
            return Judgement(False, ["p99 30 ms > SLA 10 ms (a stall)"])
        return Judgement(rate <= 50_000, ["ok" if rate <= 50_000 else "over"])

    o = search(probe, BreakpointParams(max_probes=16), 50_000)
    assert stalled and any(ph == "refine" for _, ph in calls)
    lo, hi = o.interval
    assert lo <= o.rate <= 50_000 < hi
    assert lo >= 50_000 * 0.85, (o.interval, calls)  # without refining: the bracket's 40,000
    assert o.outcome == "resolved"


def test_the_load_at_the_breakpoint_is_the_last_passing_probe_at_its_rate():
    def probe(i, rate, passed, p99):
        summary = {"target_rate": rate, "achieved_rate": rate, "latency_us": {"p99": p99 * 1000}}
        return Probe(
            i,
            rate,
            Judgement(passed, ["x"]),
            "verify",
            LoadResult(LoadParams(path="/", rate=rate), "", [], 0, "", summary),
        )

    probes = [
        probe(0, 1000, True, 1.0),
        probe(1, 2000, True, 2.0),
        probe(2, 3000, False, 30.0),
        probe(3, 2000, True, 2.5),
        probe(4, 2000, False, 12.0),
    ]
    result = BreakpointResult(
        2000, (1900, 3000), Outcome.UNRESOLVED, probes, BreakpointParams(), BreakpointCriteria(), "x"
    )
    assert result.at_breakpoint.p99_ms == 2.5
    assert (
        BreakpointResult(
            None, (None, 1000), Outcome.NONE_PASSED, probes[2:3], BreakpointParams(), BreakpointCriteria(), "x"
        ).at_breakpoint
        is None
    )


def test_a_ramp_that_breaks_in_its_first_second_places_no_bracket():
    # a server that is slow from the start (a cold JVM): the break in the first second is no estimate
    est = ramp_mod.estimate(_ramp_result(100), BreakpointCriteria())
    assert est.cold and est.rate is None and "too early to place a bracket" in est.reason and est.t_s < 1.0
    # a search that began that way on a server with no warm-up cannot be valid; after a warm-up it can
    probe = Probe(0, 100.0, Judgement(True, ["ok"], {}, {"verdict": "valid", "reasons": []}), "bracket")
    cold = BreakpointResult(
        100.0,
        (96.0, 104.0),
        Outcome.RESOLVED,
        [probe],
        BreakpointParams(),
        BreakpointCriteria(),
        "converged",
        est.to_dict(),
        edges=(100.0, None),
    )
    assert cold.cold_start and cold.validity == "suspect"
    warmed = ramp_mod.estimate(_ramp_result(100), BreakpointCriteria(), warmed_s=2.0)
    warm = BreakpointResult(
        100.0,
        (96.0, 104.0),
        Outcome.RESOLVED,
        [probe],
        BreakpointParams(),
        BreakpointCriteria(),
        "converged",
        warmed.to_dict(),
        edges=(100.0, None),
    )
    assert not warm.cold_start and warm.validity == "valid"


def test_a_warmed_server_whose_ramp_broke_at_once_is_warmed_again_and_ramped_once_more():
    """Seen in a quick report: a JVM warmed 1.5 s still compiled into its ramp, which broke at 1,130/s; the
    search then grew from start_rate and five probes ended at 6,000 req/s, a sixteenth of the server's limit."""
    calls = []

    def ramp(results):
        def run(name):
            calls.append(name)
            return results.pop(0)

        return run

    cold, fine = _ramp_result(100), _ramp_result(50_000)
    est, first = ramp_mod.bracket(ramp([cold, fine]), lambda: calls.append("warm"), BreakpointCriteria(), 1.5)
    assert calls == ["ramp", "warm", "ramp-again"] and first.cold and not est.cold and est.rate > 10_000
    assert est.warmed_s == 3.0 and first.warmed_s == 1.5
    calls.clear()  # a ramp that brackets is run once
    est, first = ramp_mod.bracket(ramp([fine]), lambda: calls.append("warm"), BreakpointCriteria(), 1.5)
    assert calls == ["ramp"] and first is None
    calls.clear()  # no warm-up at all (not a JVM): nothing to repeat, the search grows from start_rate
    est, first = ramp_mod.bracket(ramp([cold]), lambda: calls.append("warm"), BreakpointCriteria(), 0.0)
    assert calls == ["ramp"] and est.cold and first is None
    calls.clear()  # cold twice: the second one's estimate (cold), the search grows from start_rate
    est, first = ramp_mod.bracket(
        ramp([cold, _ramp_result(100)]), lambda: calls.append("warm"), BreakpointCriteria(), 2.0
    )
    assert calls == ["ramp", "warm", "ramp-again"] and est.cold and first.cold


def test_a_jvm_is_warmed_before_a_search_long_enough_for_c2():
    assert ramp_mod.server_warmup(BreakpointParams(start_rate=1000), jvm=True) == 5.0  # 5,000 requests
    assert ramp_mod.server_warmup(BreakpointParams(start_rate=10_000), jvm=True) == 2.0  # at least 2 s
    assert ramp_mod.server_warmup(BreakpointParams(start_rate=100, ramp_duration=8), jvm=True) == 8.0  # at most
    assert ramp_mod.server_warmup(BreakpointParams(), jvm=False) == 0.0  # no JIT to warm
    assert ramp_mod.server_warmup(BreakpointParams(server_warmup=1.5), jvm=True) == 1.5


def _held(capacity_long, found, params=BreakpointParams(sustain=20, sustain_tries=4, sustain_step=0.1)):
    """Hold ``found`` against a server that keeps up for a long window (from a fresh start) only up to
    ``capacity_long``."""
    from perflab.breakpoint.hold import hold

    calls = []

    def window(rate, phase, seconds):
        calls.append((rate, phase, seconds))
        ok = rate <= capacity_long
        return Judgement(
            ok, ["ok" if ok else "p99 over the SLA"], {"p99_ms": 3.0 if ok else 80.0, "achieved_ratio": 1.0}
        )

    return hold(found, params, window), calls


def _rates(calls):
    """Each rate held, once (its windows run one after another)."""
    return [r for i, (r, _, _) in enumerate(calls) if i == 0 or calls[i - 1][0] != r]


def test_a_breakpoint_holds_in_most_of_its_windows_and_a_rate_above_it_must_fail():
    from perflab.breakpoint.search import Estimate

    found = Estimate(2000.0, (1920.0, 2080.0), Outcome.RESOLVED, "converged", at_least=2000.0)
    # 2,000 holds in 2 windows of 3 (the third is not needed); 1.3x above it fails in 2; then half-way
    kept, calls = _held(2100, found)
    assert calls[:4] == [(2000.0, "hold", 20)] * 2 + [(2600.0, "hold", 20)] * 2
    assert _rates(calls) == [2000.0, 2600.0, 2300.0, 2150.0] and len(calls) == 8
    assert (kept.rate, kept.interval, kept.outcome) == (2000.0, (2000.0, 2150.0), Outcome.RESOLVED)
    assert kept.stop_reason == (
        "converged; held in 20 s windows, each from a fresh start: 2,600/s fell behind in 2 of "
        "2 windows, 2,300/s fell behind in 2 of 2 windows, 2,150/s fell behind in 2 of 2 "
        "windows, 2,000/s kept up in 2 of 2 windows"
    )
    # the search underestimated (its writes had grown the store): what held from fresh starts is reported
    kept, calls = _held(2700, found)
    assert _rates(calls) == [2000.0, 2600.0, 3380.0, 2990.0]
    assert (kept.rate, kept.interval, kept.outcome) == (2600.0, (2600.0, 2990.0), Outcome.RESOLVED)
    # nothing above ever fails within the tries: a lower bound only
    kept, calls = _held(1e9, found)
    assert _rates(calls) == [2000.0, 2600.0, 3380.0, 4394.0]
    assert kept.rate == 4394.0 and kept.interval == (4394.0, None) and kept.outcome == Outcome.UNRESOLVED
    assert "no rate above 4,394/s fell behind" in kept.stop_reason


def test_a_breakpoint_that_does_not_hold_is_stepped_down_then_bisected():
    from perflab.breakpoint.search import Estimate

    found = Estimate(2000.0, (1920.0, 2080.0), Outcome.RESOLVED, "converged", at_least=2000.0)
    # 2,000 does not hold, 1,800 does; half-way, 1,900 does not, 1,850 does
    kept, calls = _held(1860, found)
    assert _rates(calls) == [2000.0, 1800.0, 1900.0, 1850.0]
    assert kept.rate == 1850.0 and kept.interval == (1850.0, 1900.0) and kept.outcome == Outcome.RESOLVED
    # the refinement stops once the held and the failed rate are within the search's precision
    kept, calls = _held(1990, found, BreakpointParams(sustain=20, sustain_tries=6, precision=0.04))
    assert _rates(calls) == [2000.0, 1800.0, 1900.0, 1950.0] and kept.rate == 1950.0
    # none holds: no number, only where it lies below
    kept, _ = _held(100, found)
    assert kept.rate is None and kept.interval == (None, round(2000 * 0.9**3)) and kept.outcome == Outcome.UNRESOLVED
    assert kept.stop_reason.endswith("1,458/s fell behind in 2 of 2 windows; none kept up"), kept.stop_reason
    # a search that did not resolve proposed a point far above its lower edge: the next rate goes there at once
    loose = Estimate(5728.0, (1818.0, 6000.0), Outcome.UNRESOLVED, "max_probes", at_least=1894.0)
    kept, calls = _held(2000, loose)
    assert _rates(calls) == [5728.0, 1894.0, 3811.0, 2852.0] and kept.rate == 1894.0
    assert kept.interval == (1894.0, 2852.0)
    # no breakpoint to hold (cannot tell), or no window asked for: nothing runs
    for f, p in (
        (Estimate(None, (None, None), Outcome.CANNOT_TELL, "x", at_least=900.0), BreakpointParams()),
        (found, BreakpointParams(sustain=0)),
    ):
        kept, calls = _held(5000, f, p)
        assert calls == [] and kept.rate == f.rate


def test_windows_that_disagree_decide_by_majority_and_say_so():
    from perflab.breakpoint.hold import hold, needed
    from perflab.breakpoint.search import Estimate

    assert [needed(n) for n in (1, 2, 3, 5)] == [1, 2, 2, 3]
    found = Estimate(2000.0, (1920.0, 2080.0), Outcome.RESOLVED, "converged", at_least=2000.0)
    # at 2,000 the machine's speed moves: pass, fail, pass; everything above fails
    seen = {}

    def window(rate, phase, seconds):
        seen[rate] = seen.get(rate, 0) + 1
        ok = rate <= 2000 and seen[rate] != 2
        return Judgement(ok, ["ok" if ok else "p99 over the SLA"], {"p99_ms": 3.0, "achieved_ratio": 1.0})

    kept = hold(found, BreakpointParams(sustain=20, sustain_tries=2), window)
    assert seen == {2000.0: 3, 2600.0: 2} and kept.rate == 2000.0
    assert [(r.rate, r.kept_up, r.fell_behind, r.held) for r in kept.rates] == [
        (2000.0, 2, 1, True),
        (2600.0, 0, 2, False),
    ]
    assert "2,000/s kept up in 2 of 3 windows" in kept.stop_reason
    # one window a rate: the old single hold
    seen.clear()
    kept = hold(found, BreakpointParams(sustain=20, sustain_tries=2, hold_windows=1), window)
    assert seen == {2000.0: 1, 2600.0: 1} and kept.rate == 2000.0


def test_a_hold_the_machine_spoiled_is_run_again_then_cannot_tell():
    from perflab.breakpoint.hold import hold
    from perflab.breakpoint.search import Estimate

    found = Estimate(2000.0, (1920.0, 2080.0), Outcome.RESOLVED, "converged", at_least=2000.0)
    spoiled = []

    def probe(rate, phase, seconds):
        spoiled.append(phase)
        return Judgement(None, ["inconclusive, the machine was busy: ..."], doubt=MACHINE, cause="the machine was busy")

    kept = hold(found, BreakpointParams(retries=2), probe)
    assert spoiled == ["hold", "hold-retry", "hold-retry"]
    assert kept.rate is None and kept.outcome == Outcome.CANNOT_TELL and kept.at_least == 2000.0
    assert "could not be judged" in kept.stop_reason
