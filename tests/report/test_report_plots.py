"""The report's figures: the breakpoint curve, the breakpoint overview, timelines, thumbnails."""

import math

import pandas as pd
import pytest

from perflab.breakpoint import BreakpointResult, Probe, Verdict
from perflab.config import BreakpointCriteria, BreakpointParams
from perflab.report import plots


def search(points, rate, hi, stop="max_probes reached while bisecting"):
    probes = [Probe(i, r, Verdict(ok, ["ok" if ok else "p99 42 ms > SLA 10 ms"],
                                  {"achieved_rate": r, "p50_ms": p / 5, "p99_ms": p, "p999_ms": p * 2}), "bracket")
              for i, (r, ok, p) in enumerate(points)]
    verdict = "resolved" if hi is not None else "above-range"
    return BreakpointResult(rate, (rate, hi), verdict, probes, BreakpointParams(), BreakpointCriteria(), stop)


SEARCH = search([(1000, True, 2.0), (2000, True, 3.0), (4000, False, 80.0), (3000, False, 30.0)], 2000, 3000)


def test_breakpoint_curve_shows_percentiles_probes_sla_and_interval():
    fig = plots.breakpoint_curve(SEARCH)
    names = [t.name for t in fig.data]
    assert names == ["p99", "p50", "p99.9", "breakpoint"]
    p99 = fig.data[0]
    assert list(p99.x) == [1000, 2000, 3000, 4000]
    assert list(p99.marker.symbol) == ["circle", "circle", "x", "x"]             # passing / failing probes
    assert list(fig.data[2].y) == [4.0, 6.0, 60.0, 160.0]
    bp = fig.data[3]
    assert list(bp.x) == [2000] and list(bp.error_x.arrayminus) == [0] and list(bp.error_x.array) == [1000]
    assert fig.layout.yaxis.type == "log" and "ms" in fig.layout.yaxis.title.text
    assert "requests/s" in fig.layout.xaxis.title.text and fig.layout.title.text
    sla = [a for a in fig.layout.annotations if a.text.startswith("SLA")]
    assert len(sla) == 1 and sla[0].y == pytest.approx(math.log10(10)), "log axis: the label's y is the exponent"
    assert [s.type for s in fig.layout.shapes].count("rect") == 1                 # the interval, shaded


def test_breakpoint_curve_marks_probes_the_lab_doubts():
    """Probes carrying a ``validity`` record: suspect ones get a ring and their reason in the hover."""
    res = search([(1000, True, 2.0), (2000, True, 3.0), (3000, False, 30.0)], 2000, 3000)
    res.probes[1].verdict.validity = {"verdict": "suspect", "reasons": ["generator 5% late"], "checks": {}}
    p99 = plots.breakpoint_curve(res).data[0]
    assert list(p99.marker.line.width) == [1, 3, 1] and p99.marker.line.color[1] == "#e6a700"
    assert "validity: suspect (generator 5% late)" in p99.hovertext[1] and "validity" not in p99.hovertext[0]


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
