"""The exact merge of generator hosts' histograms (perflab.measure.merge).

A property test: random latencies from several distributions (heavy tails included), split at random
among N histograms with the generator's histogram settings and passed through the interval log's
encoding, merge to exactly what one histogram of every value gives: p50 ... p99.99, max, count. And the
merge is perflab-load's own arithmetic: from one host's interval log it reproduces that host's summary to
the digit, and two real segments of one run merge into the summary of the whole run.
"""

from __future__ import annotations

import json
import subprocess
import time

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from perflab.measure.merge import HIGHEST_US, SIGNIFICANT, Part, Stats, counts_of, merge, merge_logs

PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
KINDS = ["lognormal", "pareto", "bimodal", "exponential", "small"]


def _latencies(rng: np.random.Generator, kind: str, n: int) -> np.ndarray:
    if kind == "lognormal":
        v = rng.lognormal(mean=5.5, sigma=0.6, size=n)                     # ~250 us typical
    elif kind == "pareto":
        v = (rng.pareto(1.1, size=n) + 1) * 80                              # heavy tail, up to seconds
    elif kind == "bimodal":
        v = np.where(rng.random(n) < 0.97, rng.normal(300, 40, n), rng.normal(45_000, 9_000, n))  # GC pauses
    elif kind == "exponential":
        v = rng.exponential(2_000, size=n)
    else:
        v = rng.integers(1, 2048, size=n)                                   # the exact (1 us) range
    return np.clip(np.round(v), 1, HIGHEST_US).astype(np.int64)


def _histogram(values) -> HdrHistogram:
    h = HdrHistogram(1, HIGHEST_US, SIGNIFICANT)     # perflab-load's layout: 1 us .. 24 h, 3 digits
    for v in values:
        h.record_value(int(v))
    return h


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", KINDS)
def test_merged_histograms_equal_one_histogram_of_every_value(kind, seed):
    rng = np.random.default_rng(seed * 101 + KINDS.index(kind))
    values = _latencies(rng, kind, int(rng.integers(200, 5000)))
    n = int(rng.integers(2, 6))
    owner = rng.integers(0, n, size=len(values))
    # each host's histogram goes through the log's encoding (compressed, base64) as it does in a run
    parts = [counts_of(HdrHistogram.decode(_histogram(values[owner == i]).encode())) for i in range(n)]
    merged = Stats(np.sum(parts, axis=0))
    one = Stats(counts_of(_histogram(values)))
    assert merged.total == one.total == len(values)
    for p in PERCENTILES:
        assert merged.value_at_percentile(p) == one.value_at_percentile(p), p
    assert merged.max() == one.max() and merged.min() == one.min()
    assert merged.latency_object() == one.latency_object() and merged.spectrum() == one.spectrum()
    # and the merged percentiles are the true ones to the histogram's precision (3 significant digits)
    exact = np.sort(values)
    for p in PERCENTILES:
        rank = max(int(p / 100 * len(values) + 0.5), 1)
        assert abs(merged.value_at_percentile(p) - exact[rank - 1]) <= exact[rank - 1] * 1e-3 + 1


def test_interval_logs_add_on_the_common_grid():
    rng = np.random.default_rng(7)

    def log(values_by_start: dict) -> str:
        lines = ["#[StartTime: 1000.000 (seconds since epoch), x]", '"StartTimestamp","Interval_Length",'
                 '"Interval_Max","Interval_Compressed_Histogram"']
        for start, vals in values_by_start.items():
            lines.append(f"{start},0.100,{max(vals) / 1000:.3f},{_histogram(vals).encode().decode()}")
        return "\n".join(lines) + "\n"

    a = {"0.000": rng.integers(50, 500, 40), "0.100": rng.integers(50, 500, 40)}
    b = {"0.000": rng.integers(50, 9000, 30), "0.100": rng.integers(50, 500, 35)}
    text, merged = merge_logs([log(a), log(b)], 1234.5, "test")
    assert "#[StartTime: 1234.500" in text
    for start in ("0.000", "0.100"):
        want = Stats(counts_of(_histogram(np.concatenate([a[start], b[start]]))))
        got = Stats(merged[("", start)][1])
        assert got.total == len(a[start]) + len(b[start]) and got.latency_object() == want.latency_object()


def _serve():
    from perflab.config import ServerConfig
    from perflab.server import start_server
    return start_server(ServerConfig(backend="memory"))


def test_a_real_split_run_merges_into_the_whole_runs_numbers(server_build, loadgen_binary, tmp_path):
    """Two perflab-load segments of one run, started together: each summary is reproduced from its own log;
    their merge holds exactly the sum of their counts and one histogram of all their latencies."""
    with _serve() as srv:
        start = time.time() + 3.0   # both must be connected by then, on a busy machine too
        procs = []
        for i in range(2):
            procs.append(subprocess.Popen(
                [str(loadgen_binary), "-t2", "-c4", "-d2s", "-R2000", "-L", "--segment", f"{i}/2",
                 "--start-at", f"{start:.6f}", "--json", str(tmp_path / f"s{i}.json"), "--hdr-log",
                 str(tmp_path / f"s{i}.hdr"), "--hdr-interval", "100ms", srv.url + "/v0/status"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for p in procs:
            assert p.wait(timeout=30) == 0, p.stderr.read().decode()
    parts = [Part(f"h{i}", json.loads((tmp_path / f"s{i}.json").read_text()), (tmp_path / f"s{i}.hdr").read_text())
             for i in range(2)]
    for p in parts:
        # the merge's arithmetic is perflab-load's: one host's own log gives back its own summary
        again, _ = merge([Part(p.name, p.summary, p.log, shift_s=1e-12)])
        for key in ("latency_us", "spectrum", "intervals", "requests", "offered", "steps"):
            assert again[key] == p.summary[key], key
    summary, log = merge(parts)
    s0, s1 = parts[0].summary, parts[1].summary
    assert summary["requests"] == s0["requests"] + s1["requests"] and summary["offered"] == 4000
    assert summary["target_rate"] == 2000.0 and summary["threads"] == 2 and summary["connections"] == 4
    assert [iv["offered"] for iv in summary["intervals"]] == [200] * 20     # the whole plan, interval by interval
    one = Stats(sum(counts_of(HdrHistogram.decode(line.split(",")[-1]))
                    for p in parts for line in p.log.splitlines() if line[:1].isdigit()))
    assert summary["latency_us"] == one.latency_object() and summary["spectrum"] == one.spectrum()
    assert "segment" not in summary and summary["merged"]["hosts"] == ["h0", "h1"]


def test_three_decimals_are_rounded_as_perflab_load_rounds_them():
    from perflab.measure.merge import _round3

    # a mean of 169.5025 us (a sum of integers over a count) is 169.503 in perflab-load's JSON
    assert _round3(339005 / 2000) == 169.503 and _round3(0.0005) == 0.001 and _round3(-0.0005) == -0.001
    assert _round3(2.0004) == 2.0 and _round3(0.0) == 0.0
