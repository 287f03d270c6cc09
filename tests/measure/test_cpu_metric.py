"""The server's CPU per request: what a load's result and record say, where an A/B pair reads it from, and the
CPU window of /proc-less samples (synthetic: no server)."""

from __future__ import annotations

import math

import pytest

from perflab import LoadParams
from perflab.ab.run import value
from perflab.config.ab import METRIC, METRICS
from perflab.measure.result import LoadResult
from perflab.server.cpu import ProcessCpu


def _result(requests: int, cpu_s: float | None) -> LoadResult:
    res = LoadResult(
        LoadParams(rate=1000, duration=1),
        "http://x",
        [],
        0,
        "",
        {"requests": requests, "latency_us": {"p50": 100, "p99": 400, "p99.9": 900}},
    )
    res.server_cpu_s = cpu_s
    return res


def test_cpu_per_request_is_the_windows_cpu_over_the_answered_requests():
    r = _result(2000, 0.05)
    assert r.cpu_us_per_request == pytest.approx(25.0)
    rec = r.record()
    assert rec["server_cpu_s"] == 0.05 and rec["cpu_us_per_request"] == pytest.approx(25.0)
    assert math.isnan(_result(0, 0.05).cpu_us_per_request) and math.isnan(_result(100, None).cpu_us_per_request)


def test_every_metric_says_once_where_its_value_is_and_in_which_unit():
    assert METRICS == ("p50", "p99", "p99.9", "cpu")
    assert [METRIC[m].column for m in METRICS] == ["p50_ms", "p99_ms", "p99.9_ms", "cpu_us"]
    r = _result(2000, 0.05)
    assert value(r, "p50") == 0.1 and value(r, "p99.9") == 0.9 and value(r, "cpu") == pytest.approx(25.0)
    assert not METRIC["cpu"].latency and all(METRIC[m].latency for m in ("p50", "p99", "p99.9"))


def test_the_window_reads_the_samples_at_its_edges():
    """A server busy on one core until 1.6 s, idle after, sampled every 0.25 s: a window ending at 1.6 s read
    between the samples at 1.5 and 1.75 s comes out 0.06 s short; with a sample taken at the edge (appended
    late, by its own timer) it is exact."""
    cpu = ProcessCpu(lambda: {None: 1})
    t0 = 1000.0
    for i in range(9):
        t = t0 + 0.25 * i
        cpu.samples.append((t, None, 1, min(t - t0, 1.6), 1 << 20, 0.0, 1.0 + i))
    assert cpu.window(t0 + 0.5, t0 + 1.6).cpu_s == pytest.approx(1.04)  # interpolated: wrong
    cpu.samples.append((t0 + 1.6, None, 1, 1.6, 1 << 20, 0.0, 7.4))
    assert cpu.window(t0 + 0.5, t0 + 1.6).cpu_s == pytest.approx(1.1)  # at the edge: exact
