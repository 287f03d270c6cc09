"""The commentary generator: sentences must follow the numbers they are given."""

import math

import numpy as np
import pandas as pd
import pytest

from perflab.analysis import commentary as c


def spectrum(points):
    """A wrk2-style spectrum from (percentile 0..1, latency_ms) points, 10,000 requests."""
    rows = [(ms, p, max(1, int(p * 10000)), (1 / (1 - p)) if p < 1 else math.inf) for p, ms in points]
    return pd.DataFrame(rows, columns=["latency_ms", "percentile", "total_count", "inverse"])


FLAT_THEN_CLIFF = spectrum([(0.0, 0.05), (0.5, 0.40), (0.75, 0.50), (0.9, 0.60), (0.99, 9.0),
                            (0.999, 12.0), (0.9999, 13.0), (1.0, 14.0)])


def test_value_at_reads_the_spectrum_and_rejects_empty():
    assert c.value_at(FLAT_THEN_CLIFF, 50) == 0.40
    assert c.value_at(FLAT_THEN_CLIFF, 99) == 9.0
    assert c.value_at(FLAT_THEN_CLIFF, 100) == 14.0
    with pytest.raises(ValueError, match="empty"):
        c.value_at(spectrum([]), 50)


def test_describe_spectrum_names_the_cliff():
    text = c.describe_spectrum("PUT, 1 connection", FLAT_THEN_CLIFF, sla_ms=10)
    assert text.startswith("**PUT, 1 connection**: p50 0.40 ms, p99 9.00 ms")
    assert "from p90 (0.60 ms) to p99 (9.00 ms), 15x" in text
    assert "within the 10.0 ms SLA" in text
    above = c.describe_spectrum("x", FLAT_THEN_CLIFF, sla_ms=5)
    assert "above the 5.00 ms SLA" in above


def test_describe_spectrum_ignores_levels_the_sample_cannot_resolve():
    small = spectrum([(0.0, 1.0), (0.5, 1.0), (0.9, 1.1), (0.99, 1.2), (0.999, 50.0), (1.0, 60.0)])
    small["total_count"] = (small["percentile"] * 500).clip(lower=1).astype(int)   # 500 requests
    text = c.describe_spectrum("tiny", small)
    assert "p99.9" in text and "50.0 ms" in text                 # still reported as a level...
    assert "to p99.9" not in text                                # ...but not called the steepest step


def intervals(p99s):
    return pd.DataFrame({"tag": "corrected", "start_s": range(len(p99s)),
                         "end_s": [i + 1 for i in range(len(p99s))], "p99_ms": p99s})


def stats_with_flush_at(seconds, n, step=0.25):
    """Stats sampled every `step` s; one flush completes in the middle of each second in `seconds`."""
    ts = [i * step for i in range(int(n / step) + 1)]
    flushes = [sum(1 for f in seconds if f + 0.5 <= t) for t in ts]
    return pd.DataFrame({"t_s": ts, "storage.flushes": flushes, "storage.flush_active": [0] * len(ts)})


def test_event_effect_claims_a_difference_only_with_the_test_behind_it():
    rng = np.random.default_rng(7)
    p99 = list(rng.lognormal(0, 0.2, 40))
    flush_at = {3, 9, 15, 21, 27, 33}
    for i in flush_at:
        p99[i] *= 8
    text = c.describe_event_effect(intervals(p99), stats_with_flush_at(flush_at, 40, step=0.1))
    assert text.startswith("p99 is higher in the ") and "during which a flush ran" in text
    assert "Mann-Whitney p" in text and "n = " in text


def test_event_effect_says_no_difference_when_the_data_cannot_tell():
    # Two flushed intervals out of ten: a spike in one of them is not evidence (n = 2).
    p99 = [1.0] * 10
    p99[3] = 20.0
    text = c.describe_event_effect(intervals(p99), stats_with_flush_at({3, 7}, 10))
    assert text.startswith("No difference in p99 detectable between the 2 intervals with a flush")
    assert "n = 8 vs 2" in text


def test_compare_latency_names_the_test_and_n():
    rng = np.random.default_rng(3)
    fast = intervals(list(rng.lognormal(0, 0.2, 30)))
    slow = intervals(list(rng.lognormal(np.log(3), 0.2, 30)))
    same = intervals(list(rng.lognormal(0, 0.2, 30)))
    text = c.compare_latency({"sync": slow, "async": fast, "virtual": same})
    assert text.startswith("p99 per interval: async median")
    assert "sync 3." in text and "higher (n = 30 vs 30, Mann-Whitney p < 0.001" in text
    assert "virtual" in text and "no difference detectable (n = 30 vs 30" in text


def test_event_attribution_with_coarse_sampling_is_conservative():
    # sampled once a second at x.5, a flush done at 3.5 may belong to [2,3] or [3,4]: both are marked
    st = pd.DataFrame({"t_s": [t + 0.5 for t in range(6)], "storage.flushes": [0, 0, 0, 1, 1, 1]})
    flags = c.intervals_with_events(intervals([1.0] * 5), st, "storage.flushes")
    assert list(flags) == [False, False, True, True, False]


def test_event_effect_uses_the_active_gauge():
    st = pd.DataFrame({"t_s": [0, 1, 2, 3, 4, 5], "storage.flushes": [0] * 6,
                       "storage.flush_active": [0, 0, 1, 0, 0, 0]})
    flags = c.intervals_with_events(intervals([1.0] * 5), st, "storage.flushes", "storage.flush_active")
    assert list(flags) == [False, True, True, False, False]


def test_event_effect_says_when_no_flush_ran():
    text = c.describe_event_effect(intervals([1.0] * 5), stats_with_flush_at(set(), 5))
    assert "No flush ran during the 5 measured intervals" in text


def test_trend_detects_a_growing_queue_and_a_flat_run():
    grows = c.describe_trend(intervals([1, 1, 2, 4, 8, 16, 32, 64, 90, 120]))
    assert "grows during the run" in grows and "Kendall p" in grows and "n = 10" in grows
    assert "shows no trend" in c.describe_trend(intervals([1, 1.1, 0.9, 1, 1, 1.05, 0.95, 1.1]))
    assert c.describe_trend(intervals([1, 2, 3])) == ""  # too few to say anything


def test_categories_normalise_and_keep_focus():
    text = c.describe_categories({"network I/O": 41, "HTTP parsing": 18, "storage": 9, "GC": 6,
                                  "JIT": 4, "locks": 2, "other": 20}, "cpu", top=3, focus=("locks",))
    assert text == "Of the CPU samples, 41% network I/O, 20% other, 18% HTTP parsing, 2% locks."


def _bp(rate, interval, judged=(), outcome="resolved"):
    from perflab import BreakpointCriteria, BreakpointParams
    from perflab.breakpoint import BreakpointResult, Judgement, Outcome, Probe
    probes = [Probe(i, r, Judgement(ok, [why], {}, {"verdict": "valid", "reasons": []}), "bisect")
              for i, (r, ok, why) in enumerate(judged)]
    rates = [r for r, ok, _ in judged if ok is not None]
    edges = (max((r for r, ok, _ in judged if ok), default=None), min((r for r, ok, _ in judged if ok is False), default=None))
    return BreakpointResult(rate, interval, Outcome(outcome), probes, BreakpointParams(), BreakpointCriteria(),
                            "converged", edges=edges if rates else (None, None))


def test_breakpoint_sentence_gives_the_interval_and_the_first_failing_probe():
    r = _bp(2000, (1920, 2184), [(1000, True, "ok"), (2000, True, "ok"), (4000, False, "p99 40 ms > 10 ms"),
                                 (2100, False, "achieved 91% < 99%"), (3000, None, "inconclusive")])
    text = c.describe_breakpoint("GET, 64 connections", r)
    assert text == ("**GET, 64 connections** keeps up to 2,000 req/s (interval [1,920, 2,184] req/s, resolved; "
                    "probes valid); the lowest failing probe, 2,100 req/s, failed because achieved 91% < 99%; "
                    "1 probe(s) were invalid (the generator was the limit) and not counted (5 probes).")
    # the machine's own speed: said when it changed beyond the threshold, not otherwise
    r.host_spread, r.host_limit = 2.31, 1.25
    assert c.describe_breakpoint("GET", r).endswith(
        "(5 probes). The machine's speed changed during the search: a fixed loop before each probe took up to "
        "2.31x its fastest time (warn above 1.25x), so a repeat moves with it.")
    r.host_spread = 1.1
    assert c.describe_breakpoint("GET", r).endswith("(5 probes).")
    none = c.describe_breakpoint("PUT", _bp(None, (None, 10), [(10, False, "p99")], "none-passed"))
    assert none.startswith("**PUT**: no probed rate met the criteria (none-passed)")


def test_breakpoints_differ_only_when_their_intervals_do_not_overlap():
    text = c.compare_breakpoints({"sync": _bp(30000, (28800, 31200)), "async": _bp(45000, (43200, 46800)),
                                  "virtual": _bp(44000, (42000, 46000))})
    assert text.startswith("Breakpoint: async 45,000 req/s ([43,200, 46,800])")
    assert "virtual 44,000 req/s ([42,000, 46,000]), no difference detectable (intervals" in text
    assert "sync 30,000 req/s ([28,800, 31,200]), lower (intervals" in text and "do not overlap" in text


def test_diff_lists_growth_and_shrinkage():
    diff = pd.DataFrame({"category": ["executor queue", "network I/O", "storage"], "delta": [0.12, -0.08, 0.001]})
    text = c.describe_diff(diff, "sync", "async")
    assert text == "From sync to async, grew: executor queue (+12 points); shrank: network I/O (-8 points)."
