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
        v = rng.lognormal(mean=5.5, sigma=0.6, size=n)  # ~250 us typical
    elif kind == "pareto":
        v = (rng.pareto(1.1, size=n) + 1) * 80  # heavy tail, up to seconds
    elif kind == "bimodal":
        v = np.where(rng.random(n) < 0.97, rng.normal(300, 40, n), rng.normal(45_000, 9_000, n))  # GC pauses
    elif kind == "exponential":
        v = rng.exponential(2_000, size=n)
    else:
        v = rng.integers(1, 2048, size=n)  # the exact (1 us) range
    return np.clip(np.round(v), 1, HIGHEST_US).astype(np.int64)


def _histogram(values) -> HdrHistogram:
    h = HdrHistogram(1, HIGHEST_US, SIGNIFICANT)  # perflab-load's layout: 1 us .. 24 h, 3 digits
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
        lines = [
            "#[StartTime: 1000.000 (seconds since epoch), x]",
            '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
        ]
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
        start = time.time() + 3.0  # both must be connected by then, on a busy machine too
        procs = []
        for i in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        str(loadgen_binary),
                        "-t2",
                        "-c4",
                        "-d2s",
                        "-R2000",
                        "-L",
                        "--segment",
                        f"{i}/2",
                        "--start-at",
                        f"{start:.6f}",
                        "--json",
                        str(tmp_path / f"s{i}.json"),
                        "--hdr-log",
                        str(tmp_path / f"s{i}.hdr"),
                        "--hdr-interval",
                        "100ms",
                        srv.url + "/v0/status",
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
            )
        for p in procs:
            assert p.wait(timeout=30) == 0, p.stderr.read().decode()
    parts = [
        Part(f"h{i}", json.loads((tmp_path / f"s{i}.json").read_text()), (tmp_path / f"s{i}.hdr").read_text())
        for i in range(2)
    ]
    for p in parts:
        # the merge's arithmetic is perflab-load's: one host's own log gives back its own summary
        again, _ = merge([Part(p.name, p.summary, p.log, shift_s=1e-12)])
        for key in ("latency_us", "spectrum", "intervals", "requests", "offered", "steps"):
            assert again[key] == p.summary[key], key
    summary, log = merge(parts)
    s0, s1 = parts[0].summary, parts[1].summary
    assert summary["requests"] == s0["requests"] + s1["requests"] and summary["offered"] == 4000
    assert summary["target_rate"] == 2000.0 and summary["threads"] == 2 and summary["connections"] == 4
    assert [iv["offered"] for iv in summary["intervals"]] == [200] * 20  # the whole plan, interval by interval
    one = Stats(
        sum(
            counts_of(HdrHistogram.decode(line.split(",")[-1]))
            for p in parts
            for line in p.log.splitlines()
            if line[:1].isdigit()
        )
    )
    assert summary["latency_us"] == one.latency_object() and summary["spectrum"] == one.spectrum()
    assert "segment" not in summary and summary["merged"]["hosts"] == ["h0", "h1"]


def test_three_decimals_are_rounded_as_perflab_load_rounds_them():
    from perflab.measure.merge import _round3

    # a mean of 169.5025 us (a sum of integers over a count) is 169.503 in perflab-load's JSON
    assert _round3(339005 / 2000) == 169.503 and _round3(0.0005) == 0.001 and _round3(-0.0005) == -0.001
    assert _round3(2.0004) == 2.0 and _round3(0.0) == 0.0


def _part_to(name: str, url: str, index: int, values_by_interval, codes_by_interval, kinds_by_interval) -> Part:
    """One part of a load split over two entry nodes (``--segment index/2``), each sent to its own URL."""
    lines = [
        "#[StartTime: 1000.000 (seconds since epoch), x]",
        '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"',
    ]
    intervals = []
    for i, vals in enumerate(values_by_interval):
        lines.append(f"{i:.3f},1.000,{max(vals) / 1000:.3f},{_histogram(vals).encode().decode()}")
        errors = sum(kinds_by_interval[i].values())
        intervals.append(
            {
                "start_s": float(i),
                "end_s": float(i + 1),
                "offered": len(vals),
                "completed": len(vals),
                "errors": errors,
                "error_kinds": kinds_by_interval[i],
                "status_codes": codes_by_interval[i],
            }
        )
    n = sum(len(v) for v in values_by_interval)
    codes: dict = {}
    for c in codes_by_interval:
        for k, v in c.items():
            codes[k] = codes.get(k, 0) + v
    summary = {
        "tool": "perflab-load",
        "version": "0.1.0",
        "url": url,
        "threads": 1,
        "connections": 2,
        "segment": {"index": index, "count": 2, "threads": 2, "connections": 4, "target_rate": 10.0},
        "duration_s": 2.0,
        "target_rate": 5.0,
        "achieved_rate": n / 2,
        "start_ms": 1_000_000,
        "end_ms": 1_002_000,
        "warmup_start_ms": 999_000,
        "requests": n,
        "bytes_read": 10 * n,
        "bytes_written": 0,
        "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "status": codes.get("504", 0)},
        "status_codes": codes,
        "steps": [],
        "offered": n,
        "unsent": 0,
        "schedule_lag_us": {"mean": 2.0, "p50": 1, "p99": 5 * (index + 1), "p999": 9, "max": 9, "late_1ms": index},
        "cpu": {"user_s": 0.1, "sys_s": 0.1, "cpus_allowed": [index], "threads": [{"tid": index}]},
        "intervals": intervals,
    }
    return Part(name, summary, "\n".join(lines) + "\n")


def test_parts_sent_to_several_entry_nodes_merge_into_one_exact_run():
    """A cluster's load split over entry nodes: every URL kept, answers by status and errors by kind added
    per interval (504s included), latency one histogram of every request, the worst part's schedule lag."""
    a = [[100, 200, 300], [400]]
    b = [[1000, 2000], [3000, 4000, 5000]]
    pa = _part_to("node0", "http://127.0.0.1:1", 0, a, [{"201": 3}, {"201": 1}], [{}, {}])
    pb = _part_to(
        "node1", "http://127.0.0.1:2", 1, b, [{"201": 2}, {"201": 1, "504": 2}], [{}, {"status": 2, "timeout": 0}]
    )
    summary, log = merge([pa, pb])
    assert summary["url"] == "http://127.0.0.1:1,http://127.0.0.1:2"
    assert summary["requests"] == 9 and summary["status_codes"] == {"201": 7, "504": 2}
    assert summary["errors"]["status"] == 2 and summary["target_rate"] == 10.0 and summary["threads"] == 2
    assert [iv["completed"] for iv in summary["intervals"]] == [5, 4]
    assert summary["intervals"][1]["status_codes"] == {"201": 2, "504": 2}
    assert summary["intervals"][1]["error_kinds"] == {"status": 2, "timeout": 0}
    assert summary["schedule_lag_us"]["p99"] == 10 and summary["schedule_lag_us"]["late_1ms"] == 1
    assert summary["merged"]["hosts"] == ["node0", "node1"]
    one = Stats(counts_of(_histogram(sum(a + b, []))))
    assert summary["latency_us"] == one.latency_object() and summary["spectrum"] == one.spectrum()
    # the same URL twice (two generator hosts to one server) is named once
    again, _ = merge([pa, Part("gen2", {**pb.summary, "url": pa.summary["url"]}, pb.log)])
    assert again["url"] == "http://127.0.0.1:1"
