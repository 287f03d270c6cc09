"""Findings: what a notebook states for the index page, checked on the way in and read back out."""

import json

import nbformat
import plotly.graph_objects as go
import pytest
from synthetic import experiment, load

from perflab.analysis import findings, labels
from perflab.breakpoint import BreakpointResult, Outcome, Probe
from perflab.config import BreakpointCriteria, BreakpointParams
from perflab.measure.judgement import Judgement
from perflab.records import new_run


def test_make_finding_normalises_and_keeps_extra_breakpoint_keys():
    f = findings.make_finding(
        "  GET keeps up to 50,000 req/s. ",
        key_number={
            "label": "GET breakpoint, 64 connections",
            "value": 50000,
            "unit": "req/s",
            "interval": (48000, 52000),
        },
        validity="suspect",
        breakpoints=[
            {
                "workload": "GET",
                "connections": 64,
                "mode": "async",
                "rate": 50000,
                "interval": [48000, None],
                "verdict": "resolved",
                "validity": "valid",
                "run_id": "r1",
            }
        ],
    )
    assert f["answer"] == "GET keeps up to 50,000 req/s."
    assert f["key_number"] == {
        "label": "GET breakpoint, 64 connections",
        "value": 50000.0,
        "unit": "req/s",
        "interval": [48000.0, 52000.0],
    }
    assert f["breakpoints"][0]["interval"] == [48000.0, None] and f["breakpoints"][0]["run_id"] == "r1"
    assert "preview" not in f
    json.dumps(f)  # plain JSON, as the notebook output stores it


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"answer": ""}, "answer must be a non-empty sentence"),
        ({"validity": "fine"}, "validity must be one of valid, suspect, invalid or None, got 'fine'"),
        ({"key_number": {"value": 3}}, "key_number needs a non-empty 'label'"),
        ({"key_number": {"label": "x", "value": float("nan")}}, "key_number 'value' must be a finite number"),
        ({"key_number": {"label": "x", "value": 1, "interval": [5, 1]}}, "key_number 'interval' must have lo <= hi"),
        ({"key_number": {"label": "x", "value": 1, "units": "ms"}}, "key_number: unknown keys units"),
        ({"breakpoints": [{"connections": 4}]}, r"breakpoints\[0\] needs a 'workload'"),
        (
            {"breakpoints": [{"workload": "GET", "connections": 0}]},
            r"breakpoints\[0\]: 'connections' must be an integer >= 1",
        ),
        ({"breakpoints": [{"workload": "GET", "interval": [1]}]}, r"breakpoints\[0\]: 'interval' must be \[lo, hi\]"),
        ({"breakpoints": [{"workload": "GET", "validity": "ok"}]}, r"breakpoints\[0\]: 'validity' must be one of"),
        ({"preview": "a picture"}, "preview must be a plotly Figure, got str"),
    ],
)
def test_bad_findings_are_refused_with_the_reason(kwargs, message):
    args = {"answer": "An answer.", **kwargs}
    with pytest.raises(ValueError, match=message):
        findings.make_finding(**args)


def test_a_finding_shows_a_box_and_a_machine_readable_copy(monkeypatch):
    import IPython.display as d

    shown = []
    monkeypatch.setattr(d, "display", lambda obj, **kw: shown.append((obj, kw)))
    f = findings.Finding(
        "p99 stays under 2 ms.",
        {"label": "p99", "value": 1.5, "unit": "ms"},
        preview=go.Figure(go.Scatter(x=[1], y=[2]), layout=dict(title="t")),
    )
    assert f.show() is None
    bundle, kw = shown[0]
    assert kw == {"raw": True}
    stored = bundle[findings.MIME]
    assert stored["answer"] == "p99 stays under 2 ms." and stored["preview"]["layout"]["height"] == 220
    assert "p99 stays under 2 ms." in bundle["text/html"] and "1.50 ms" in bundle["text/html"]
    assert bundle["text/plain"] == "p99 stays under 2 ms. (p99: 1.50 ms)"
    assert (
        f.with_validity_of("valid").validity == "valid" and f.with_validity_of("valid", "suspect").validity == "suspect"
    )
    assert findings.Finding("x", validity="invalid").with_validity_of("valid").validity == "invalid"


def test_the_findings_list_joins_every_subjects_lines(monkeypatch):
    import IPython.display as d

    shown = []
    monkeypatch.setattr(d, "display", lambda obj, **kw: shown.append(obj))
    assert findings.bullets(["a", "", "b"], ["c"]) == "- a\n- b\n- c" and findings.bullets([]) == ""
    findings.show(["a"], [], ["b"])
    findings.show([""])
    assert [s.data for s in shown] == ["- a\n- b"]


def test_labels():
    assert (
        labels.load("PUT", 1) == "PUT, 1 connection"
        and labels.load("GET", 64, "split") == "GET, 64 connections [split]"
    )
    assert labels.executor(1, 16) == "1 worker, queue 16" and labels.memtable("4m", 2) == "memtable 4m, 2 flush threads"
    assert labels.row({"workload": "GET", "connections": 64}) == "GET, 64 conn" and labels.row({"workload": "x"}) == "x"


def test_thumbnail_is_small_static_json():
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(title="A search", xaxis_title="rate"))
    t = findings.thumbnail(fig)
    assert t["layout"]["height"] == 220 and t["layout"]["showlegend"] is False
    assert t["layout"]["title"]["text"] == "A search" and "template" not in t["layout"]
    assert len(t["data"]) == len(fig.data)
    with pytest.raises(ValueError, match="preview must be a plotly Figure"):
        findings.thumbnail([1, 2])


def test_read_takes_the_last_finding_of_an_executed_notebook():
    nb = nbformat.v4.new_notebook()
    first, last = findings.make_finding("first"), findings.make_finding("last")
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={findings.MIME: first, "text/plain": "first"}),
        nbformat.v4.new_output("stream", name="stdout", text="noise\n"),
        nbformat.v4.new_output("display_data", data={findings.MIME: last, "text/plain": "last"}),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), cell]
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)  # as stored on disk
    assert [f["answer"] for f in findings.read_all(nb)] == ["first", "last"]
    assert findings.read(nb)["answer"] == "last"
    nb.cells = nb.cells[:1]
    assert findings.read(nb) is None


def test_validity_is_the_worst_level_of_the_results_that_have_one(tmp_path):
    from perflab.measure.validity import Level, Validity

    suspect = Validity(Level.SUSPECT, ["generator lagged"], {})
    run = new_run("experiment", "x", data_root=tmp_path, environment={})
    assert findings.validity_of(run) is None  # a run that recorded none
    run.update(validity={"verdict": "invalid", "reasons": [], "checks": {}})
    assert findings.validity_of("valid", suspect) == "suspect"
    assert findings.validity_of("valid", run, suspect) == "invalid"
    assert findings.validity_of(None, object()) is None


def probe(i, rate, ok, p99, validity="valid"):
    return Probe(
        i,
        rate,
        Judgement(
            ok,
            ["ok" if ok else "p99 too high"],
            {"p50_ms": p99 / 4, "p99_ms": p99},
            {"verdict": validity, "reasons": []},
        ),
        "edge",
    )


def test_breakpoint_row_from_a_search(tmp_path):
    """The row is what the search's run recorded (interval, outcome, the validity of its edge probes,
    workload and connections); the notebook may name the workload and mode."""
    run = new_run(
        "breakpoint",
        "nb02-GET",
        params={"server": {"mode": "async"}, "load": {"connections": 64}},
        data_root=tmp_path,
        environment={},
    )
    run.set_result(
        workload="GET", connections=64, breakpoint_rate=2000.0, interval=[1920.0, 2496.0], verdict="resolved"
    )
    run.update(validity={"verdict": "suspect", "reasons": [], "checks": {}})
    res = BreakpointResult(
        2000.0,
        (1920.0, 2496.0),
        Outcome.RESOLVED,
        [probe(0, 2000, True, 3), probe(1, 2400, False, 30, "suspect")],
        BreakpointParams(),
        BreakpointCriteria(),
        "converged",
        run=run,
        edges=(2000.0, 2400.0),
    )
    row = findings.breakpoint_row(res)
    assert row == {
        "workload": "GET",
        "connections": 64,
        "mode": "async",
        "rate": 2000.0,
        "interval": [1920.0, 2496.0],
        "verdict": "resolved",
        "validity": "suspect",
        "run_id": run.id,
        # recorded by a search that held its breakpoint (or could not tell); none here
        "at_least": None,
        "search_rate": None,
        "sustain_s": None,
        "held": None,
        "overestimate": None,
        "why": None,
        "held_windows": None,
        "fresh_start": None,
        "others_max_cores": None,
        "others_median_cores": None,
    }
    assert findings.breakpoint_row(res, workload="GET /v0/entity", mode="sync")["mode"] == "sync"


def test_numbers_and_intervals_read_well():
    assert (
        findings.key_number_text({"label": "x", "value": 50000, "unit": "req/s", "interval": [48000, 52000]})
        == "50,000 req/s (interval [48,000, 52,000])"
    )
    assert findings.key_number_text({"label": "x", "value": 1.234, "unit": "ms", "interval": None}) == "1.23 ms"
    assert (
        findings.key_number_text({"label": "x", "value": None, "unit": "req/s", "interval": [None, 250]})
        == "none passed (below 250 req/s)"
    )


def test_key_numbers_and_the_highest_row():
    rows = [
        {"workload": "GET", "connections": 64, "mode": "sync", "rate": 2000.0, "interval": [1900.0, 2100.0]},
        {"workload": "GET", "connections": 1, "mode": "async", "rate": 3000.0, "interval": [2800.0, None]},
        {"workload": "PUT", "connections": 64, "mode": "sync", "rate": None, "interval": [None, 100.0]},
    ]
    assert findings.highest(rows) is rows[1] and findings.highest(rows[2:]) is None
    assert findings.key_breakpoint(rows[1], "{mode} breakpoint, {connection_count}") == {
        "label": "async breakpoint, 1 connection",
        "value": 3000.0,
        "unit": "req/s",
        "interval": [2800.0, None],
    }
    none = findings.key_breakpoint(rows[2], "{workload} breakpoint")
    assert (
        none["value"] is None
        and findings.key_number_text(findings.check_key_number(none)) == "none passed (below 100 req/s)"
    )
    assert findings.key_breakpoint(None, "{mode}") is None
    with pytest.raises(ValueError, match="label: '{server} breakpoint' names 'server', which the row does not have"):
        findings.key_breakpoint(rows[0], "{server} breakpoint")
    assert findings.key_latency("GET p99, 64 connections", experiment(load(1.23456))) == {
        "label": "GET p99, 64 connections",
        "value": 1.235,
        "unit": "ms",
    }
