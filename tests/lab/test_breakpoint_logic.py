"""The search logic and the verdicts, on synthetic inputs (the real search is in test_breakpoint_server.py)."""

import math

import pandas as pd
import pytest

from perflab import BreakpointCriteria, BreakpointParams
from perflab.breakpoint import Verdict, latency_trend, search


def capacity_probe(capacity, calls):
    def probe(rate, phase):
        calls.append((rate, phase))
        ok = rate <= capacity
        return Verdict(ok, ["ok" if ok else f"over capacity {capacity}"])
    return probe


@pytest.mark.parametrize("capacity, start", [(4321, 1000), (150, 1000), (1000, 1000), (77_000, 500)])
def test_search_brackets_then_bisects_to_precision(capacity, start):
    calls = []
    p = BreakpointParams(start_rate=start, precision=0.05, max_probes=20)
    lo, hi, converged, hist, stop = search(capacity_probe(capacity, calls), p)
    assert converged and stop == "converged"
    assert lo <= capacity < hi
    assert (hi - lo) <= 0.05 * lo + 1
    assert (capacity - lo) / capacity <= 0.05
    assert len(calls) == len(hist) <= 20
    assert len({r for r, _ in calls}) == len(calls)  # no rate probed twice
    # deterministic: the same verdicts give the same sequence
    calls2 = []
    assert search(capacity_probe(capacity, calls2), p)[:3] == (lo, hi, converged) and calls2 == calls


def test_search_bounds():
    calls = []
    lo, hi, conv, _, stop = search(capacity_probe(10**9, calls), BreakpointParams(start_rate=1000, max_rate=5000))
    assert lo == 5000 and hi is None and not conv and "above the search range" in stop
    lo, hi, conv, _, stop = search(capacity_probe(1, []), BreakpointParams(start_rate=100, min_rate=10))
    assert lo is None and hi == 10 and "no rate passes" in stop
    lo, hi, conv, hist, stop = search(capacity_probe(4321, []), BreakpointParams(start_rate=1000, max_probes=4))
    assert len(hist) == 4 and not conv and "max_probes" in stop


def intervals(p50s):
    return pd.DataFrame({"start_s": range(len(p50s)), "end_s": range(1, len(p50s) + 1),
                         "count": [100] * len(p50s), "p50_ms": p50s})


def test_trend_detection():
    c = BreakpointCriteria()
    rising, desc = latency_trend(intervals([0.5, 8, 20, 35, 50, 64]), c)
    assert rising and "p50 went from" in desc
    assert not latency_trend(intervals([0.5, 0.6, 0.4, 0.55, 0.5, 0.6]), c)[0]
    # a single spike is not a trend
    assert not latency_trend(intervals([0.5, 0.5, 40, 0.5, 0.6, 0.5]), c)[0]
    # growth from microseconds to a bit more microseconds is below the floor
    assert not latency_trend(intervals([0.02, 0.03, 0.04, 0.05, 0.06, 0.07]), c)[0]
    assert latency_trend(intervals([1, 2]), c) == (False, "too few intervals to judge a trend")


def test_retries_absorb_a_transient_failure():
    flaky = {"n": 0}

    def probe(rate, phase):
        # the first probe at 3000 fails once (a stall), the repetition passes
        if rate == 3000 and flaky["n"] == 0:
            flaky["n"] += 1
            return Verdict(False, ["stall"])
        return Verdict(rate <= 3500, ["x"])

    lo, hi, conv, hist, _ = search(probe, BreakpointParams(start_rate=750, retries=1, max_probes=30))
    assert conv and 3500 * 0.95 <= lo <= 3500 < hi
    assert [(r, v.passed) for r, _, v in hist if r == 3000] == [(3000, False), (3000, True)]
    # without retries the stall decides the bracket
    flaky["n"] = 0
    lo2, *_ = search(probe, BreakpointParams(start_rate=750, retries=0, max_probes=30))
    assert lo2 < 3000
    with pytest.raises(ValueError, match="retries must be >= 0"):
        BreakpointParams(retries=-1)
