"""The commentary generator: sentences must follow the numbers they are given."""

import math

import pandas as pd
import pytest

from perflab.report import commentary as c


def spectrum(points):
    """A wrk2-style spectrum from (percentile 0..1, latency_ms) points, 10,000 requests."""
    rows = [(ms, p, max(1, int(p * 10000)), (1 / (1 - p)) if p < 1 else math.inf) for p, ms in points]
    return pd.DataFrame(rows, columns=["latency_ms", "percentile", "total_count", "inverse"])


FLAT_THEN_CLIFF = spectrum([(0.0, 0.05), (0.5, 0.40), (0.75, 0.50), (0.9, 0.60), (0.99, 9.0),
                            (0.999, 12.0), (0.9999, 13.0), (1.0, 14.0)])


def test_formatting_units():
    assert c.fmt_ms(0.038) == "38 us"
    assert c.fmt_ms(0.92) == "0.92 ms"
    assert c.fmt_ms(12.43) == "12.4 ms"
    assert c.fmt_ms(2450) == "2.45 s"
    assert c.fmt_rate(41234.4) == "41,234 req/s"
    assert c.fmt_pct(0.342) == "34%"
    assert c.fmt_pct(0.004) == "0.4%"
    assert c.fmt_level(99.9) == "p99.9" and c.fmt_level(100) == "max"


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


def test_compare_spectra_orders_by_latency():
    fast = spectrum([(0.0, 0.1), (0.5, 0.2), (0.99, 1.0), (1.0, 2.0)])
    text = c.compare_spectra({"sync": FLAT_THEN_CLIFF, "async": fast})
    assert text == "At p99: async 1.00 ms, sync 9.00 ms (9.0x async)."


def intervals(p99s):
    return pd.DataFrame({"tag": "corrected", "start_s": range(len(p99s)),
                         "end_s": [i + 1 for i in range(len(p99s))], "p99_ms": p99s})


def stats_with_flush_at(seconds, n, step=0.25):
    """Stats sampled every `step` s; one flush completes in the middle of each second in `seconds`."""
    ts = [i * step for i in range(int(n / step) + 1)]
    flushes = [sum(1 for f in seconds if f + 0.5 <= t) for t in ts]
    return pd.DataFrame({"t_s": ts, "storage.flushes": flushes, "storage.flush_active": [0] * len(ts)})


def test_event_effect_compares_intervals_with_and_without_a_flush():
    p99 = [1.0] * 10
    p99[3], p99[7] = 20.0, 30.0
    text = c.describe_event_effect(intervals(p99), stats_with_flush_at({3, 7}, 10))
    assert text.startswith("p99 jumps when a flush runs: median 25.0 ms (worst 30.0 ms)")
    assert "over the 2 intervals with a flush, vs 1.00 ms over the 8 without (25x)" in text


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
    assert "grows during the run" in c.describe_trend(intervals([1, 1, 2, 4, 8, 16, 32, 64]))
    assert "stays flat" in c.describe_trend(intervals([1, 1.1, 0.9, 1, 1, 1.05]))
    small = c.describe_trend(intervals([0.2, 0.3, 0.3, 0.8, 0.9, 0.8]))
    assert small == ("p99 rises from 0.30 ms in the first half to 0.80 ms in the second, a change of less than "
                     "1.00 ms: no sign of a queue building up.")


def test_categories_normalise_and_keep_focus():
    text = c.describe_categories({"network I/O": 41, "HTTP parsing": 18, "storage": 9, "GC": 6,
                                  "JIT": 4, "locks": 2, "other": 20}, "cpu", top=3, focus=("locks",))
    assert text == "Of the CPU samples, 41% network I/O, 20% other, 18% HTTP parsing, 2% locks."


def test_breakpoint_sentence_names_the_first_failing_probe():
    probes = pd.DataFrame({"rate": [1000, 2000, 4000, 3000], "ok": [True, True, False, False],
                           "reason": ["", "", "p99 40 ms > 10 ms", "achieved 91% < 99%"]})
    text = c.describe_breakpoint("GET, 64 connections", 2000, probes)
    assert text == ("**GET, 64 connections** keeps up to 2,000 req/s; the lowest failing probe, 3,000 req/s, "
                    "failed because achieved 91% < 99% (4 probes).")
    never_failed = c.describe_breakpoint("GET", 2000, probes[probes.ok])
    assert never_failed == ("**GET** keeps up to 2,000 req/s; no probe failed, so the limit is higher than "
                            "the search reached (2 probes).")
    none = c.describe_breakpoint("PUT", None, probes[probes.rate > 2000])
    assert none.startswith("**PUT**: no probed rate met the criteria (even 3,000 req/s failed")


def test_compare_values_ratios_against_the_lowest():
    text = c.compare_values({"sync": 30000, "async": 45000, "virtual": None})
    assert text == "Breakpoint: async 45,000 req/s (1.5x sync), sync 30,000 req/s."


def test_diff_lists_growth_and_shrinkage():
    diff = pd.DataFrame({"category": ["executor queue", "network I/O", "storage"], "delta": [0.12, -0.08, 0.001]})
    text = c.describe_diff(diff, "sync", "async")
    assert text == "From sync to async, grew: executor queue (+12 points); shrank: network I/O (-8 points)."
