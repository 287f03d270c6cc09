"""Figures: the right traces, axes and labels, from real parsed data (fixtures) and synthetic stacks."""

import math

import pandas as pd
import plotly.graph_objects as go
import pytest

from perflab import flame, parse_wrk_output, plots
from perflab.breakpoint import BreakpointResult, Probe, Verdict
from perflab.config import BreakpointCriteria, BreakpointParams


@pytest.fixture(scope="module")
def outputs(shared_dir):
    d = shared_dir / "fixtures" / "wrk2"
    return {"put c1": parse_wrk_output((d / "put-t1-c1-R2000-L.txt").read_text()),
            "stall": parse_wrk_output((d / "stall-t1-c1-R2000-L-U.txt").read_text())}


def test_percentile_spectrum_axis(outputs):
    fig = plots.percentile_spectrum(outputs, sla_ms=10)
    assert [t.name for t in fig.data] == ["put c1", "stall"]
    xa = fig.layout.xaxis
    assert xa.type == "log" and "99.9%" in xa.ticktext and "90%" in xa.ticktext
    assert "latency, ms" in fig.layout.yaxis.title.text
    stall = fig.data[1]
    assert all(math.isfinite(x) for x in stall.x)  # the 100% row is drawn, not lost as inf
    assert max(stall.y) == pytest.approx(1002.495)
    assert "p99.9" in stall.hovertext[-10] or any("p99.9" in h for h in stall.hovertext)
    u = plots.percentile_spectrum(outputs, uncorrected=True)
    assert "uncorrected" in u.layout.title.text and len(u.data) == 1  # put has no -U block
    with pytest.raises(ValueError, match="runs must be a non-empty dict"):
        plots.percentile_spectrum({})


def intervals():
    return pd.DataFrame({"start_s": [0, 1, 2], "end_s": [1, 2, 3], "count": [100, 100, 100],
                         "p50_ms": [1, 1.2, 5], "p90_ms": [2, 2, 9], "p99_ms": [3, 4, 20], "max_ms": [4, 6, 40]})


def test_latency_over_time_with_server_stats():
    stats = pd.DataFrame({"t_s": [0.5, 1.5, 2.5], "storage.flushes_delta": [0, 1, 0],
                          "storage.compactions_delta": [0, 0, 1], "jvm.gc_ms_delta": [0, 3, 12],
                          "executor.queue_depth": [0, 5, 40], "executor.rejected_delta": [0, 0, 0]})
    fig = plots.latency_over_time(intervals(), stats)
    names = [t.name for t in fig.data]
    assert names[:4] == ["p50", "p90", "p99", "max"]
    assert {"responses/s", "flushes", "compactions", "GC ms", "queue depth"} <= set(names)
    assert "rejected (503)" not in names  # all-zero series are left out
    assert fig.layout.xaxis4.title.text.startswith("time since the start")
    assert plots.latency_over_time(intervals()).layout.height == 500
    with pytest.raises(ValueError, match="no intervals to plot"):
        plots.latency_over_time(intervals().iloc[0:0])


def test_throughput_latency_marks_breakpoint():
    probes = [Probe(i, r, Verdict(ok, ["ok" if ok else "p99 too high"], {"achieved_rate": r, "p99_ms": p, "p50_ms": p / 3}), "bracket")
              for i, (r, ok, p) in enumerate([(100, True, 2.0), (200, True, 3.0), (400, False, 80.0), (300, False, 30.0)])]
    res = BreakpointResult(200, (200, 300), "resolved", probes, BreakpointParams(), BreakpointCriteria(), "x")
    fig = plots.throughput_latency(res)
    p99 = fig.data[0]
    assert list(p99.x) == [100, 200, 300, 400] and fig.layout.yaxis.type == "log"
    assert [s for s in p99.marker.symbol] == ["circle", "circle", "x", "x"]
    texts = [a.text for a in fig.layout.annotations]
    assert any("breakpoint 200" in t for t in texts) and any("SLA p99 10" in t for t in texts)
    two = plots.throughput_latency({"sync": res, "async": res.table})
    assert {t.name for t in two.data} >= {"sync: p99", "async: p99"}


STACKS = flame.read_collapsed("[w-1 tid=1];a;perflab/server/ApiHandler.handle;one/nio/net/JavaSocket.write 60\n"
                              "[w-1 tid=1];a;perflab/storage/lsm/MemTable.get 40\n")
NEW = flame.read_collapsed("[w-2 tid=7];a;perflab/server/ApiHandler.handle;one/nio/net/JavaSocket.write 20\n"
                           "[w-2 tid=7];a;perflab/storage/lsm/MemTable.get 80\n")


def test_icicle_and_diff():
    fig = plots.flame_icicle(STACKS, min_share=0)
    ic = fig.data[0]
    assert isinstance(ic, go.Icicle) and ic.branchvalues == "total"
    paths = [plots.icicle_path(ic, i) for i in ic.ids]
    assert "all" in paths and ic.values[paths.index("all")] == 100
    assert max(len(i) for i in ic.ids) < 6, "short node ids keep deep profiles small"
    assert ic.tiling.flip == "y"  # root at the bottom, as flame graphs are drawn
    d = plots.flame_diff(STACKS, NEW, min_share=0).data[0]
    col = {plots.icicle_path(d, i): c for i, c in zip(d.ids, d.marker.colors)}
    assert col["all;[w];a;perflab/storage/lsm/MemTable.get"] == pytest.approx(40.0)  # 40% -> 80%: +40 pp
    assert col["all;[w];a;perflab/server/ApiHandler.handle"] == pytest.approx(-40.0)


def test_category_bars():
    fig = plots.category_bars({"sync": STACKS, "async": NEW})
    names = [t.name for t in fig.data]
    assert names == ["storage: memtable", "network write"]  # CATEGORY_ORDER, empty ones left out
    mem = fig.data[0]
    assert list(mem.y) == ["sync", "async"] and list(mem.x) == pytest.approx([40.0, 80.0])
    with pytest.raises(ValueError, match="expected a Profile or a stacks DataFrame"):
        plots.category_bars({"x": 1})
