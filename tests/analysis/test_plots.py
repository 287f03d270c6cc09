"""Figures: the right traces, axes and labels, from real parsed data (fixtures) and synthetic searches and
stacks."""

import math

import pandas as pd
import pytest
from synthetic import experiment, load

from perflab.analysis import plots
from perflab.breakpoint import BreakpointResult, Outcome, Probe
from perflab.measure.judgement import Judgement
from perflab.config import BreakpointCriteria, BreakpointParams
from perflab.measure.wrk_output import parse_wrk_output
from perflab.profiling import flame


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
    assert any("p99.9" in h for h in stall.hovertext)
    u = plots.percentile_spectrum(outputs, uncorrected=True)
    assert "uncorrected" in u.layout.title.text and len(u.data) == 1  # put has no -U block
    with pytest.raises(ValueError, match="runs must be a non-empty dict"):
        plots.percentile_spectrum({})


def search(points, rate, hi, stop="max_probes reached while bisecting"):
    """A search from ``(rate, passed, p99)`` points (passed None: an inconclusive probe)."""
    probes = [Probe(i, r, Judgement(ok, ["ok" if ok else "p99 42 ms > SLA 10 ms"],
                                    {"achieved_rate": r, "p50_ms": p / 5, "p99_ms": p, "p999_ms": p * 2}), "bracket")
              for i, (r, ok, p) in enumerate(points)]
    outcome = Outcome.RESOLVED if hi is not None else Outcome.ABOVE_RANGE
    return BreakpointResult(rate, (rate, hi), outcome, probes, BreakpointParams(), BreakpointCriteria(), stop)


SEARCH = search([(1000, True, 2.0), (2000, True, 3.0), (4000, False, 80.0), (3000, False, 30.0)], 2000, 3000)


def test_breakpoint_curve_shows_percentiles_probes_sla_and_interval():
    fig = plots.breakpoint_curve(SEARCH)
    names = [t.name for t in fig.data]
    assert names == ["p99 of each probe", "p50", "p99", "p99.9", "breakpoint"]
    probes = fig.data[0]
    assert list(probes.x) == [1000, 2000, 3000, 4000] and probes.mode == "markers"
    assert list(probes.marker.symbol) == ["circle", "circle", "x", "x"]             # passing / failing probes
    assert list(fig.data[3].y) == [4.0, 6.0, 60.0, 160.0]
    bp = fig.data[4]
    assert list(bp.x) == [2000] and list(bp.error_x.arrayminus) == [0] and list(bp.error_x.array) == [1000]
    assert "[2,000, 3,000]" in bp.hovertext[0]
    assert fig.layout.yaxis.type == "log" and "ms" in fig.layout.yaxis.title.text
    assert "requests/s" in fig.layout.xaxis.title.text and fig.layout.title.text
    sla = [a for a in fig.layout.annotations if a.text.startswith("SLA")]
    assert len(sla) == 1 and sla[0].y == pytest.approx(math.log10(10)), "log axis: the label's y is the exponent"
    assert [s.type for s in fig.layout.shapes].count("rect") == 1                 # the interval, shaded


def test_breakpoint_curve_lines_go_through_each_rate_once():
    """Repeated probes at one rate (the search's edges) do not make the lines zigzag: one point per rate,
    in rate order, at the median of that rate's probes; every probe keeps its own marker."""
    res = search([(1000, True, 2.0), (3000, False, 30.0), (2000, True, 3.0), (2000, False, 11.0),
                  (3000, False, 50.0), (2000, True, 5.0), (2500, None, 9.0)], 2000, 3000)
    fig = plots.breakpoint_curve(res)
    probes = fig.data[0]
    assert len(probes.x) == 7 and list(probes.x) == sorted(probes.x)
    assert list(probes.marker.symbol).count("diamond-open") == 1                   # the inconclusive probe
    p99 = next(t for t in fig.data if t.name == "p99")
    assert list(p99.x) == [1000, 2000, 2500, 3000] and list(p99.y) == [2.0, 5.0, 9.0, 40.0]


def test_breakpoint_curve_marks_probes_the_lab_doubts():
    """Probes carrying a ``validity`` record: suspect ones get a ring and their reason in the hover."""
    res = search([(1000, True, 2.0), (2000, True, 3.0), (3000, False, 30.0)], 2000, 3000)
    res.probes[1].judgement.validity = {"verdict": "suspect", "reasons": ["generator 5% late"], "checks": {}}
    probes = plots.breakpoint_curve(res).data[0]
    assert list(probes.marker.line.width) == [1, 3, 1] and probes.marker.line.color[1] == "#e6a700"
    assert "validity: suspect (generator 5% late)" in probes.hovertext[1] and "validity" not in probes.hovertext[0]


def test_breakpoint_curve_open_interval_and_several_searches():
    above = search([(1000, True, 1.0), (2000, True, 1.5)], 2000, None, "passed at max_rate 2000: above")
    fig = plots.breakpoint_curve({"sync": SEARCH, "async": above}, sla_ms=10)
    names = [t.name for t in fig.data]
    assert {"sync: p99", "async: p99", "sync: breakpoint", "async: breakpoint"} <= set(names)
    open_bp = fig.data[names.index("async: breakpoint")]
    assert open_bp.error_x.array[0] > 0 and "open)" in open_bp.hovertext[0]


def test_breakpoint_overview_rows():
    rows = [{"workload": "GET", "connections": 64, "mode": "sync", "rate": 2000.0, "interval": [2000.0, 2400.0]},
            {"workload": "GET", "connections": 64, "mode": "async", "rate": 3000.0, "interval": [3000.0, None]},
            {"workload": "PUT", "connections": 1, "mode": "sync", "rate": None, "interval": [None, 250.0]}]
    fig = plots.breakpoint_overview(rows)
    ys = [y for t in fig.data for y in t.y]
    assert set(ys) == {"GET, 64 conn, sync", "GET, 64 conn, async", "PUT, 1 conn, sync"}
    none = [t for t in fig.data if t.text and "none passed" in t.text]
    assert len(none) == 1 and list(none[0].x) == [250.0]
    assert fig.layout.xaxis.title.text.startswith("breakpoint, requests/s")
    with pytest.raises(ValueError, match="non-empty list"):
        plots.breakpoint_overview([])


def test_latency_timelines_overlay_runs():
    iv = pd.DataFrame({"start_s": [0, 1], "end_s": [1, 2], "p50_ms": [1.0, 1.1], "p99_ms": [2.0, 5.0]})
    fig = plots.latency_timelines({"A": iv, "B": iv})
    assert [t.name for t in fig.data] == ["A: p99", "A: p50", "B: p99", "B: p50"]
    assert fig.layout.xaxis.title.text.startswith("time since") and "ms" in fig.layout.yaxis.title.text


def test_thumbnail_is_small_static_json():
    fig = plots.breakpoint_curve(SEARCH, title="A search")
    t = plots.thumbnail(fig)
    assert t["layout"]["height"] == 220 and t["layout"]["showlegend"] is False
    assert t["layout"]["title"]["text"] == "A search" and "template" not in t["layout"]
    assert len(t["data"]) == len(fig.data)
    with pytest.raises(ValueError, match="preview must be a plotly Figure"):
        plots.thumbnail([1, 2])


STACKS = flame.read_collapsed("[w-1 tid=1];a;perflab/server/ApiHandler.handle;one/nio/net/JavaSocket.write 60\n"
                              "[w-1 tid=1];a;perflab/storage/lsm/MemTable.get 40\n")
NEW = flame.read_collapsed("[w-2 tid=7];a;perflab/server/ApiHandler.handle;one/nio/net/JavaSocket.write 20\n"
                           "[w-2 tid=7];a;perflab/storage/lsm/MemTable.get 80\n")


def test_flame_diff_colours_each_frame_by_its_change():
    d = plots.flame_diff(STACKS, NEW, min_share=0).data[0]
    assert d.branchvalues == "total" and d.tiling.flip == "y"  # root at the bottom, as flame graphs are drawn
    assert max(len(i) for i in d.ids) < 6, "short node ids keep deep profiles small"
    colour = dict(zip(d.labels, d.marker.colors))
    assert colour["perflab/storage/lsm/MemTable.get"] == pytest.approx(40.0)  # 40% -> 80%: +40 pp
    assert colour["perflab/server/ApiHandler.handle"] == pytest.approx(-40.0)


def test_category_bars():
    fig = plots.category_bars({"sync": STACKS, "async": NEW})
    names = [t.name for t in fig.data]
    assert names == ["storage: memtable", "network write"]  # CATEGORY_ORDER, empty ones left out
    mem = fig.data[0]
    assert list(mem.y) == ["sync", "async"] and list(mem.x) == pytest.approx([40.0, 80.0])
    with pytest.raises(ValueError, match="expected a Profile or a stacks DataFrame"):
        plots.category_bars({"x": 1})


def test_category_bars_name_what_a_bar_is():
    cats = pd.DataFrame({"category": ["network read", "GC"], "share": [0.7, 0.3]})
    fig = plots.category_bars({"sync / lsm": cats}, by="configuration")
    assert fig.layout.yaxis.title.text == "configuration"
    assert [t.name for t in fig.data] == ["GC", "network read"] and list(fig.data[1].x) == pytest.approx([70.0])


def test_percentile_spectrum_takes_experiment_results():
    fig = plots.percentile_spectrum({"PUT": experiment(load(2.0)), "GET": load(1.0)})
    assert [t.name for t in fig.data] == ["PUT", "GET"]
    assert max(fig.data[0].y) == pytest.approx(6.0) and max(fig.data[1].y) == pytest.approx(3.0)


GRID = pd.DataFrame({"workers": [1, 1, 4, 4], "queue": [16, 1024, 16, 1024],
                     "breakpoint, req/s": [1000.0, 1200.0, float("nan"), 2500.0],
                     "rejected share": [0.5, 0.1, 0.4, 0.0]}).set_index(["workers", "queue"])


def test_executor_heatmap_puts_workers_down_and_queues_across():
    fig = plots.executor_heatmap(GRID, "breakpoint, req/s", "Breakpoint by workers and queue")
    hm = fig.data[0]
    assert list(hm.y) == ["1", "4"] and list(hm.x) == ["16", "1024"]
    assert hm.z[0] == pytest.approx([1000.0, 1200.0]) and math.isnan(hm.z[1][0]) and hm.z[1][1] == 2500.0
    assert hm.texttemplate == "%{z:,.0f}" and fig.layout.title.text == "Breakpoint by workers and queue"
    assert fig.layout.xaxis.title.text == "queue capacity" and fig.layout.yaxis.title.text == "worker threads"
    assert fig.layout.yaxis.autorange == "reversed"                     # 1 worker on top
    share = plots.executor_heatmap(GRID, "rejected share", "503s", ".1%", "Magma").data[0]
    assert share.texttemplate == "%{z:.1%}" and share.z[0] == pytest.approx([0.5, 0.1])
    with pytest.raises(ValueError, match="value: 'p99' is not a column"):
        plots.executor_heatmap(GRID, "p99", "x")
    with pytest.raises(ValueError, match=r"table must be indexed by workers, queue, got \[None\]"):
        plots.executor_heatmap(GRID.reset_index(), "rejected share", "x")


def test_breakpoints_over_time_one_colour_per_workload_one_symbol_per_configuration():
    rows = [{"workload": "get-random", "connections": 4, "mode": "sync / lsm", "rate": 1000.0, "interval": [900.0, 1100.0],
             "created_at": "2026-11-20T10:00:00+00:00", "run_id": "a", "git_commit": "c1"},
            {"workload": "get-random", "connections": 4, "mode": "sync / lsm", "rate": 1200.0, "interval": [1100.0, None],
             "created_at": "2026-11-21T10:00:00+00:00", "run_id": "b", "git_commit": "c2"},
            {"workload": "get-random", "connections": 4, "mode": "async / lsm", "rate": 2000.0,
             "interval": [1900.0, 2100.0], "created_at": "2026-11-21T11:00:00+00:00", "run_id": "c", "git_commit": "c2"},
            {"workload": "put", "connections": 4, "mode": "sync / lsm", "rate": None, "interval": [None, 300.0],
             "created_at": "2026-11-21T12:00:00+00:00", "run_id": "d", "git_commit": "c2"}]
    fig = plots.breakpoints_over_time(rows)
    assert [t.name for t in fig.data] == ["get-random, 4 conn, sync / lsm", "get-random, 4 conn, async / lsm"]
    sync, async_ = fig.data
    assert list(sync.y) == [1000.0, 1200.0] and sync.marker.color == async_.marker.color
    assert sync.marker.symbol != async_.marker.symbol
    assert list(sync.error_y.array) == [100.0, 0] and list(sync.error_y.arrayminus) == [100.0, 100.0]
    assert "run b" in sync.hovertext[1] and "commit c2" in sync.hovertext[1] and "[1,100, open)" in sync.hovertext[1]
    assert fig.layout.xaxis.title.text == "recorded at (UTC)" and fig.layout.title.text == "Breakpoints over time"
    with pytest.raises(ValueError, match="at least one breakpoint with a rate"):
        plots.breakpoints_over_time(rows[3:])


def test_fixed_rate_scatter_colours_configurations_and_marks_validity():
    loads = pd.DataFrame({"target_rate": [500, 1000, 500], "p99_ms": [1.0, 2.5, 40.0],
                          "configuration": ["sync / lsm", "sync / lsm", "async / lsm"],
                          "validity": ["valid", "valid", "suspect"], "run_id": ["a", "b", "c"],
                          "script": ["put.lua"] * 3, "connections": [4, 4, 4], "p50_ms": [0.2, 0.3, 5.0]})
    fig = plots.fixed_rate_scatter(loads)
    assert [t.name for t in fig.data] == ["sync / lsm, valid", "async / lsm, suspect"]
    assert list(fig.data[0].x) == [500, 1000] and list(fig.data[0].y) == [1.0, 2.5]
    assert fig.data[0].marker.symbol == "circle" and fig.data[1].marker.symbol == "diamond"
    assert "p50 5.00 ms" in fig.data[1].hovertext[0] and "run c" in fig.data[1].hovertext[0]
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.title.text == "offered rate, requests/s"
    with pytest.raises(ValueError, match="loads must be a non-empty table"):
        plots.fixed_rate_scatter(pd.DataFrame())
