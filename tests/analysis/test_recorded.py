"""Everything recorded so far (the summary notebook): index rows turned into labels, breakpoint rows, tables,
sentences and figures, and the stories the notebook shows."""

import time

import pandas as pd
import pytest

import perflab as pl
from perflab.analysis import recorded as story
from perflab.analysis.recorded import figures as hfig
from perflab.analysis.recorded import sentences as hsay
from perflab.analysis.recorded import tables as recorded
from perflab.records import new_run
from perflab.stats.significance import compare_intervals

CONFIGS = pd.DataFrame(
    {
        "server_mode": ["sync", "async", "async", None],
        "server_backend": ["lsm", "lsm", "rocksdb", None],
        "server_workers": [2.0, 1.0, float("nan"), float("nan")],
        "server_queue": [1024.0, 128.0, 16.0, None],
    }
)


def test_one_label_per_server_configuration():
    # workers and queue belong to the async mode's executor: the other modes record their defaults, unused
    assert list(recorded.configuration(CONFIGS)) == [
        "sync / lsm",
        "async / lsm / 1 worker / queue 128",
        "async / rocksdb / queue 16",
        "your server",
    ]


SEARCHES = pd.DataFrame(
    {
        "run_id": ["b1", "b2", "b3", "b4"],
        "workload": ["get-random", "get-random", "get-random", "put"],
        "connections": [4, 4, 4, 4],
        "server_mode": ["sync", "sync", "async", "sync"],
        "server_backend": ["lsm"] * 4,
        "breakpoint_rate": [1000.0, 1200.0, 3000.0, float("nan")],
        "lo": [900.0, 1100.0, 2800.0, float("nan")],
        "hi": [1100.0, float("nan"), 3200.0, 100.0],
        "verdict": ["resolved", "unresolved", "resolved", "none-passed"],
        "validity": ["valid", None, "suspect", "valid"],
        "version_commit": ["c1", "c1", "c1", "c1"],
        "created_at": ["2026-11-20T10:00:00", "2026-11-21T10:00:00", "2026-11-20T11:00:00", "2026-11-20T12:00:00"],
    }
)


def test_recorded_searches_as_breakpoint_rows_and_the_latest_of_each():
    rows = recorded.breakpoint_rows(SEARCHES)
    assert [r["run_id"] for r in rows] == ["b1", "b3", "b4", "b2"]  # oldest first
    assert rows[3] == {
        "workload": "get-random",
        "connections": 4,
        "mode": "sync / lsm",
        "rate": 1200.0,
        "interval": [1100.0, None],
        "verdict": "unresolved",
        "validity": None,
        "run_id": "b2",
        "created_at": "2026-11-21T10:00:00",
        "version_commit": "c1",
    }
    assert rows[2]["rate"] is None and rows[2]["interval"] == [None, 100.0]
    latest = recorded.latest(rows)
    assert [r["run_id"] for r in latest] == ["b2", "b3", "b4"]
    assert recorded.searched_again(rows) and not recorded.searched_again(latest)
    assert recorded.searched_again([dict(latest[0], version_commit="c0")] + latest[1:])  # two commits
    frame = recorded.breakpoint_frame(latest)
    assert list(frame["configuration"]) == ["sync / lsm", "async / lsm", "sync / lsm"]
    assert list(frame["interval, req/s"]) == ["[1,100, open)", "[2,800, 3,200]", "< 100"]
    assert list(frame["validity"]) == ["not assessed", "suspect", "valid"]
    assert recorded.breakpoint_rows(pd.DataFrame()) == []


RUNS = pd.DataFrame(
    {
        "run_id": ["r1", "r2", "r3"],
        "kind": ["experiment", "breakpoint", "experiment"],
        "name": ["a", "b", "c"],
        "status": ["ok"] * 3,
        "validity": ["valid", None, "valid"],
        "created_at": ["2026-11-20T10:00:00", "2026-11-22T10:00:00", "2026-11-21T10:00:00"],
        "version_commit": ["c1", "c2", "c2"],
        "server_mode": ["sync"] * 3,
        "server_backend": ["lsm"] * 3,
    }
)


def test_runs_counted_by_kind_and_listed_newest_first():
    counts = recorded.runs_by_kind(RUNS)
    assert counts.to_dict("records") == [
        {"kind": "breakpoint", "validity": "not assessed", "runs": 1},
        {"kind": "experiment", "validity": "valid", "runs": 2},
    ]
    newest = recorded.newest_runs(RUNS, 2)
    assert list(newest["run_id"]) == ["r2", "r3"] and list(newest["validity"]) == ["not assessed", "valid"]
    assert list(newest.columns) == [
        "run_id",
        "kind",
        "name",
        "status",
        "validity",
        "created_at",
        "version_commit",
        "configuration",
    ]


def test_fixed_rate_runs_leave_probes_out():
    loads = pd.DataFrame(
        {
            "kind": ["experiment", "breakpoint", "experiment"],
            "script": ["/x/put.lua", "get.lua", None],
            "server_mode": ["sync", "sync", "async"],
            "server_backend": ["lsm", "lsm", "rocksdb"],
            "validity": ["valid", "valid", None],
            "p99_ms": [1.0, 2.0, 3.0],
        }
    )
    out = recorded.fixed_rate_runs(loads)
    assert list(out["script"]) == ["put.lua", "no script"] and list(out["configuration"]) == [
        "sync / lsm",
        "async / rocksdb",
    ]
    assert list(out["validity"]) == ["valid", "not assessed"]
    assert (
        recorded.fixed_rate_runs(pd.DataFrame()).empty
        and recorded.fixed_rate_runs(loads[loads.kind == "breakpoint"]).empty
    )


def test_mean_categories_per_configuration():
    cats = pd.DataFrame(
        {
            "run_id": ["a", "a", "b", "b", "c"],
            "event": ["cpu", "cpu", "cpu", "cpu", "alloc"],
            "category": ["network read", "GC", "network read", "JIT", "GC"],
            "samples": [600, 400, 800, 200, 50],
            "share": [0.6, 0.4, 0.8, 0.2, 1.0],
            "server_mode": ["sync"] * 5,
            "server_backend": ["lsm"] * 5,
        }
    )
    means = recorded.mean_categories(cats)
    assert list(means) == ["sync / lsm"]
    m = means["sync / lsm"]
    # pooled: each category's samples of all the profiles together, so the shares add up and carry their counts
    assert dict(zip(m["category"], m["share"])) == {"network read": 0.7, "GC": 0.2, "JIT": 0.1}
    assert dict(zip(m["category"], m["samples"])) == {"network read": 1400, "GC": 400, "JIT": 200}
    assert set(m["profiles"]) == {2}
    assert recorded.mean_categories(cats, "lock") == {} and recorded.mean_categories(pd.DataFrame()) == {}


def test_every_run_recorded_is_counted_and_those_left_out_say_why(data_root):
    """The runs the summary leaves out (invalid, failed) are counted with why, not dropped from the count: a
    student's 6 runs, one invalid, read '5 runs are counted (5 suspect)'."""

    def one(name, verdict, reasons=(), status="ok", error=None):
        run = new_run(
            "experiment",
            name,
            {"server": {"mode": "sync"}},
            environment={},
            version={"commit": "c" * 40, "label": None},
        )
        run.meta["validity"] = {"verdict": verdict, "reasons": list(reasons)}
        run.finish(status, error)
        return run

    for i in range(5):
        one(f"s{i}", "suspect", ["the machine was busy"])
    time.sleep(0.01)  # created_at has milliseconds: two runs a millisecond apart could tie for the newest
    bad = one("bad", "invalid", ["achieved 40% of the offered rate", "p99 rose over the run"])
    runs = pl.recorded("runs")
    assert len(runs) == 5 and [r["run_id"] for r in runs.attrs["left_out"]] == [bad.id]
    why = "1 invalid (left out of the tables and figures: achieved 40% of the offered rate)"
    assert hsay.answer_recorded(runs, []) == f"6 runs recorded, of the server at 1 commit: 5 suspect, {why}."
    assert hsay.describe_recorded_runs(runs) == (
        f"6 runs recorded, of the server at 1 commit: 5 suspect, {why}; the newest is `{bad.id}`."
    )
    assert pl.recorded("runs", include_invalid=True).attrs["left_out"] == []
    time.sleep(0.01)
    failed = one("crash", None, status="failed", error=RuntimeError("the server did not start"))
    runs = pl.recorded("runs")
    assert hsay.answer_recorded(runs, []) == (
        f"7 runs recorded, of the server at 1 commit: 5 suspect, {why}, 1 failed "
        "(left out of the tables and figures: the server did not start)."
    )
    assert hsay.describe_recorded_runs(runs).endswith(f"; the newest is `{failed.id}`.")
    only_bad = pl.recorded("runs", label="nothing")  # no run of that label: nothing recorded, nothing left out
    assert only_bad.attrs["left_out"] == [] and hsay.answer_recorded(only_bad, []).startswith("No run is recorded yet")
    everything_left = runs.iloc[0:0]
    everything_left.attrs["left_out"] = runs.attrs["left_out"]
    assert hsay.answer_recorded(everything_left, []) == (
        f"2 runs recorded, of the server at 1 commit: {why}, 1 failed "
        "(left out of the tables and figures: the server did not start)."
    )


def test_update_index_says_what_it_holds(data_root):
    run = new_run("experiment", "x", {"server": {"mode": "sync"}}, environment={})
    run.add_rows("loads", [{"p99_ms": 1.0}])
    run.finish("ok")
    assert story.update_index() == f"data root: {data_root}; index tables: index_info, loads, runs"
    assert list(pl.recorded("loads", update=False)["p99_ms"]) == [1.0]


RECORDED_RUNS = pd.DataFrame(
    {
        "run_id": ["r1", "r2", "r3"],
        "kind": ["experiment", "breakpoint", "experiment"],
        "created_at": ["2026-11-20T10:00:00", "2026-11-22T10:00:00", "2026-11-21T10:00:00"],
        "version_commit": ["c1", "c2", None],
        "validity": ["valid", "suspect", None],
    }
)


def test_the_records_of_every_run_in_sentences():
    assert hsay.describe_recorded_runs(RECORDED_RUNS) == (
        "3 runs recorded, of the server at 2 commits: 1 valid, 1 suspect, 1 not assessed; the newest is `r2`."
    )
    assert hsay.describe_recorded_runs(pd.DataFrame()).startswith("No run is recorded yet")
    rows = [
        {"workload": "get-random", "connections": 4, "mode": "sync / lsm", "rate": 1000.0, "interval": [900.0, 1100.0]},
        {
            "workload": "get-random",
            "connections": 4,
            "mode": "async / lsm",
            "rate": 3000.0,
            "interval": [2800.0, 3200.0],
        },
        {"workload": "put", "connections": 4, "mode": "sync / lsm", "rate": 500.0, "interval": [450.0, 550.0]},
    ]
    assert hsay.compare_configurations(rows) == (
        "- get-random, 4 conn: async / lsm's breakpoint is higher than sync / lsm's "
        "(sequential intervals): " + compare_intervals([900.0, 1100.0], [2800.0, 3200.0]).evidence + "."
    )
    assert hsay.compare_configurations(rows[2:]) == "Each workload has one configuration recorded: nothing to compare."
    assert hsay.compare_configurations([]).startswith("No breakpoint search is recorded yet")
    assert hsay.answer_recorded(RECORDED_RUNS, rows) == (
        "3 runs recorded, of the server at 2 commits: 1 valid, 1 suspect, "
        "1 not assessed; the highest breakpoint is 3,000 req/s (get-random, "
        "4 conn, async / lsm)."
    )
    loads = pd.DataFrame(
        {
            "p99_ms": [1.0, 12.1, 2.0],
            "target_rate": [500, 3000, 500],
            "script": ["put.lua"] * 3,
            "configuration": ["sync / lsm"] * 3,
            "validity": ["valid"] * 3,
            "run_id": ["a", "b", "c"],
        }
    )
    assert hsay.describe_fixed_rate_runs(loads) == (
        "3 fixed-rate runs; the highest p99 is 12.1 ms (put.lua at 3,000 req/s, "
        "sync / lsm, validity valid, run `b`); the median p99 is 2.00 ms."
    )
    assert hsay.describe_fixed_rate_runs(pd.DataFrame()).startswith("No fixed-rate run is recorded yet")
    means = {
        "sync / lsm": pd.DataFrame(
            {"category": ["network read", "GC"], "samples": [1600, 400], "share": [0.8, 0.2], "profiles": [3, 3]}
        )
    }
    assert hsay.describe_mean_categories(means) == (
        "**sync / lsm** (3 profiles): Of the 2,000 CPU samples, 80% (1,600) network read, 20% (400) GC."
    )
    few = {"sync / lsm": means["sync / lsm"].assign(samples=[80, 20])}
    assert hsay.describe_mean_categories(few) == (
        "**sync / lsm** (3 profiles): 100 cpu samples in all, too few to split by category (at least 1,000)."
    )
    assert hsay.describe_mean_categories({}) == "No cpu profile is recorded yet (notebooks 1 and 3 record them)."


def test_breakpoints_over_time_one_colour_per_workload_one_symbol_per_configuration():
    rows = [
        {
            "workload": "get-random",
            "connections": 4,
            "mode": "sync / lsm",
            "rate": 1000.0,
            "interval": [900.0, 1100.0],
            "created_at": "2026-11-20T10:00:00+00:00",
            "run_id": "a",
            "version_commit": "c1",
        },
        {
            "workload": "get-random",
            "connections": 4,
            "mode": "sync / lsm",
            "rate": 1200.0,
            "interval": [1100.0, None],
            "created_at": "2026-11-21T10:00:00+00:00",
            "run_id": "b",
            "version_commit": "c2",
        },
        {
            "workload": "get-random",
            "connections": 4,
            "mode": "async / lsm",
            "rate": 2000.0,
            "interval": [1900.0, 2100.0],
            "created_at": "2026-11-21T11:00:00+00:00",
            "run_id": "c",
            "version_commit": "c2",
        },
        {
            "workload": "put",
            "connections": 4,
            "mode": "sync / lsm",
            "rate": None,
            "interval": [None, 300.0],
            "created_at": "2026-11-21T12:00:00+00:00",
            "run_id": "d",
            "version_commit": "c2",
        },
    ]
    fig = hfig.breakpoints_over_time(rows)
    assert [t.name for t in fig.data] == ["get-random, 4 conn, sync / lsm", "get-random, 4 conn, async / lsm"]
    sync, async_ = fig.data
    assert list(sync.y) == [1000.0, 1200.0] and sync.marker.color == async_.marker.color
    assert sync.marker.symbol != async_.marker.symbol
    assert list(sync.error_y.array) == [100.0, 0] and list(sync.error_y.arrayminus) == [100.0, 100.0]
    assert "run b" in sync.hovertext[1] and "commit c2" in sync.hovertext[1] and "[1,100, open)" in sync.hovertext[1]
    assert fig.layout.xaxis.title.text == "recorded at (UTC)" and fig.layout.title.text == "Breakpoints over time"
    with pytest.raises(ValueError, match="at least one breakpoint with a rate"):
        hfig.breakpoints_over_time(rows[3:])


def test_fixed_rate_scatter_colours_configurations_and_marks_validity():
    loads = pd.DataFrame(
        {
            "target_rate": [500, 1000, 500],
            "p99_ms": [1.0, 2.5, 40.0],
            "configuration": ["sync / lsm", "sync / lsm", "async / lsm"],
            "validity": ["valid", "valid", "suspect"],
            "run_id": ["a", "b", "c"],
            "script": ["put.lua"] * 3,
            "connections": [4, 4, 4],
            "p50_ms": [0.2, 0.3, 5.0],
        }
    )
    fig = hfig.fixed_rate_scatter(loads)
    assert [t.name for t in fig.data] == ["sync / lsm, valid", "async / lsm, suspect"]
    assert list(fig.data[0].x) == [500, 1000] and list(fig.data[0].y) == [1.0, 2.5]
    assert fig.data[0].marker.symbol == "circle" and fig.data[1].marker.symbol == "diamond"
    assert "p50 5.00 ms" in fig.data[1].hovertext[0] and "run c" in fig.data[1].hovertext[0]
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.title.text == "offered rate, requests/s"
    with pytest.raises(ValueError, match="loads must be a non-empty table"):
        hfig.fixed_rate_scatter(pd.DataFrame())


def test_the_stories_of_notebook_06(data_root):
    where = story.where("48h", "yes", False)
    assert where == {
        "since_days": 2.0,
        "include_failed": True,
        "include_invalid": False,
        "update": False,
        "commit": None,
        "label": None,
    }
    assert story.where(commit="ABC1234", label=" stage  6")["commit"] == "abc1234"
    assert story.where(label="stage 6")["label"] == "stage 6"
    with pytest.raises(ValueError, match="commit: a hex commit hash"):
        story.where(commit="main")
    assert story.where()["since_days"] is None
    with pytest.raises(ValueError, match="since: must be a duration like"):
        story.where("two days")
    empty = story.runs(pd.DataFrame(), 10)
    assert empty.parts == [hsay.describe_recorded_runs(pd.DataFrame())]
    runs = story.runs(RECORDED_RUNS.assign(name="x", status="ok", placement="shared", elapsed_s=1.0), 2)
    assert len(runs.parts) == 3 and len(runs.parts[1]) == 2  # by kind, the 2 newest, a sentence
    bps = story.breakpoints(SEARCHES, 1)
    assert bps.figure.layout.title.text.startswith("Latest breakpoint of each workload and configuration")
    assert isinstance(bps.parts[1], type(bps.figure))  # searched again: over time
    assert len(bps.table) == 1 and bps.text.startswith("- get-random, 4 conn: ")
    f = story.answer(RECORDED_RUNS, SEARCHES)
    assert f.answer == hsay.answer_recorded(RECORDED_RUNS, recorded.breakpoint_rows(SEARCHES))
    assert f.key_number["label"] == "highest breakpoint (get-random, 4 conn, async / lsm)" and f.validity == "suspect"
    assert story.fixed_rate(pd.DataFrame()).parts == [hsay.describe_fixed_rate_runs(pd.DataFrame())]
    assert story.categories(pd.DataFrame()).text.startswith("No cpu profile is recorded yet")
