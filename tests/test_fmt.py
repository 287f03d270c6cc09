"""Numbers as people read them: one module, the same text everywhere."""

import math

import numpy as np
import pytest

from perflab import fmt


def test_latencies_rates_shares_and_ratios():
    assert fmt.ms(0.038) == "38 us" and fmt.ms(0.92) == "0.92 ms" and fmt.ms(12.43) == "12.4 ms"
    assert fmt.ms(2450) == "2.45 s" and fmt.ms(None) == "n/a" and fmt.ms(math.nan) == "n/a"
    assert fmt.rate(41234.4) == "41,234 req/s" and fmt.rate(None) == "n/a"
    assert fmt.pct(0.342) == "34%" and fmt.pct(0.004) == "0.4%" and fmt.pct(0) == "0%"
    assert fmt.ratio(0.7213) == "0.72x" and fmt.ratio(12.6) == "13x" and fmt.ratio(math.inf) == "inf"
    assert fmt.level(99.9) == "p99.9" and fmt.level(50) == "p50" and fmt.level(100) == "max"
    assert fmt.p_value(0.0004) == "p < 0.001" and fmt.p_value(0.0342) == "p = 0.034"
    assert fmt.number(50000) == "50,000" and fmt.number(0.9171) == "0.917" and fmt.number(1.5, "ms") == "1.50 ms"


def test_intervals_with_open_ends():
    assert fmt.interval((48000, 52000)) == "[48,000, 52,000]"
    assert fmt.interval([48000, 52000], "req/s") == "[48,000, 52,000] req/s"
    assert (
        fmt.interval((1000, None))
        == "[1,000, open)"
        == fmt.interval((1000, math.inf))
        == fmt.interval((1000, math.nan))
    )
    assert fmt.interval((None, 1250), "req/s") == "< 1,250 req/s"
    assert fmt.interval(None) == "" and fmt.interval((None, None)) == ""


def test_an_estimate_with_its_interval():
    assert fmt.estimate(50000, (48000, 52000), "req/s") == "50,000 req/s (interval [48,000, 52,000])"
    assert fmt.estimate(1.234, None, "ms") == "1.23 ms"
    assert fmt.estimate(None, (None, 250), "req/s") == "none passed (below 250 req/s)"


def test_a_count_with_its_noun():
    assert fmt.count(1, "connection") == "1 connection" and fmt.count(64, "connection") == "64 connections"
    assert fmt.count(np.int64(2), "flush thread") == "2 flush threads" and fmt.count(0, "worker") == "0 workers"
    assert fmt.count(12000, "probe") == "12,000 probes"
    with pytest.raises(ValueError, match="count needs an integer and a noun, got 1.5"):
        fmt.count(1.5, "worker")
