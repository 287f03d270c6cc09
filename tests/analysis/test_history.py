"""The summary notebook's view of the record: index rows turned into labels, breakpoint rows, tables."""

import pandas as pd

import perflab as pl
from perflab.analysis import history
from perflab.records import new_run

CONFIGS = pd.DataFrame({"server_mode": ["sync", "async", "async", None], "server_backend": ["lsm", "lsm", "rocksdb", None],
                        "server_workers": [2.0, 1.0, float("nan"), float("nan")], "server_queue": [1024.0, 128.0, 16.0, None]})


def test_one_label_per_server_configuration():
    # workers and queue belong to the async mode's executor: the other modes record their defaults, unused
    assert list(history.configuration(CONFIGS)) == ["sync / lsm", "async / lsm / 1 worker / queue 128",
                                                     "async / rocksdb / queue 16", "your server"]


SEARCHES = pd.DataFrame({
    "run_id": ["b1", "b2", "b3", "b4"], "workload": ["get-random", "get-random", "get-random", "put"],
    "connections": [4, 4, 4, 4], "server_mode": ["sync", "sync", "async", "sync"], "server_backend": ["lsm"] * 4,
    "breakpoint_rate": [1000.0, 1200.0, 3000.0, float("nan")], "lo": [900.0, 1100.0, 2800.0, float("nan")],
    "hi": [1100.0, float("nan"), 3200.0, 100.0], "verdict": ["resolved", "unresolved", "resolved", "none-passed"],
    "validity": ["valid", None, "suspect", "valid"], "git_commit": ["c1", "c1", "c1", "c1"],
    "created_at": ["2026-11-20T10:00:00", "2026-11-21T10:00:00", "2026-11-20T11:00:00", "2026-11-20T12:00:00"]})


def test_recorded_searches_as_breakpoint_rows_and_the_latest_of_each():
    rows = history.breakpoint_rows(SEARCHES)
    assert [r["run_id"] for r in rows] == ["b1", "b3", "b4", "b2"]                      # oldest first
    assert rows[3] == {"workload": "get-random", "connections": 4, "mode": "sync / lsm", "rate": 1200.0,
                       "interval": [1100.0, None], "verdict": "unresolved", "validity": None, "run_id": "b2",
                       "created_at": "2026-11-21T10:00:00", "git_commit": "c1"}
    assert rows[2]["rate"] is None and rows[2]["interval"] == [None, 100.0]
    latest = history.latest(rows)
    assert [r["run_id"] for r in latest] == ["b2", "b3", "b4"]
    assert history.searched_again(rows) and not history.searched_again(latest)
    assert history.searched_again([dict(latest[0], git_commit="c0")] + latest[1:])       # two commits
    frame = history.breakpoint_frame(latest)
    assert list(frame["configuration"]) == ["sync / lsm", "async / lsm", "sync / lsm"]
    assert list(frame["interval, req/s"]) == ["[1,100, open)", "[2,800, 3,200]", "< 100"]
    assert list(frame["validity"]) == ["not assessed", "suspect", "valid"]
    assert history.breakpoint_rows(pd.DataFrame()) == []


RUNS = pd.DataFrame({"run_id": ["r1", "r2", "r3"], "kind": ["experiment", "breakpoint", "experiment"],
                     "name": ["a", "b", "c"], "status": ["ok"] * 3, "validity": ["valid", None, "valid"],
                     "created_at": ["2026-11-20T10:00:00", "2026-11-22T10:00:00", "2026-11-21T10:00:00"],
                     "git_commit": ["c1", "c2", "c2"], "server_mode": ["sync"] * 3, "server_backend": ["lsm"] * 3})


def test_runs_counted_by_kind_and_listed_newest_first():
    counts = history.runs_by_kind(RUNS)
    assert counts.to_dict("records") == [{"kind": "breakpoint", "validity": "not assessed", "runs": 1},
                                         {"kind": "experiment", "validity": "valid", "runs": 2}]
    newest = history.newest_runs(RUNS, 2)
    assert list(newest["run_id"]) == ["r2", "r3"] and list(newest["validity"]) == ["not assessed", "valid"]
    assert list(newest.columns) == ["run_id", "kind", "name", "status", "validity", "created_at", "git_commit",
                                    "configuration"]


def test_fixed_rate_runs_leave_probes_out():
    loads = pd.DataFrame({"kind": ["experiment", "breakpoint", "experiment"], "script": ["/x/put.lua", "get.lua", None],
                          "server_mode": ["sync", "sync", "async"], "server_backend": ["lsm", "lsm", "rocksdb"],
                          "validity": ["valid", "valid", None], "p99_ms": [1.0, 2.0, 3.0]})
    out = history.fixed_rate_runs(loads)
    assert list(out["script"]) == ["put.lua", "no script"] and list(out["configuration"]) == ["sync / lsm", "async / rocksdb"]
    assert list(out["validity"]) == ["valid", "not assessed"]
    assert history.fixed_rate_runs(pd.DataFrame()).empty and history.fixed_rate_runs(loads[loads.kind == "breakpoint"]).empty


def test_mean_categories_per_configuration():
    cats = pd.DataFrame({"run_id": ["a", "a", "b", "b", "c"], "event": ["cpu", "cpu", "cpu", "cpu", "alloc"],
                         "category": ["network read", "GC", "network read", "JIT", "GC"],
                         "share": [0.6, 0.4, 0.8, 0.2, 1.0], "server_mode": ["sync"] * 5, "server_backend": ["lsm"] * 5})
    means = history.mean_categories(cats)
    assert list(means) == ["sync / lsm"]
    m = means["sync / lsm"]
    assert dict(zip(m["category"], m["share"])) == {"network read": 0.7, "GC": 0.4, "JIT": 0.2}
    assert set(m["profiles"]) == {2}
    assert history.mean_categories(cats, "lock") == {} and history.mean_categories(pd.DataFrame()) == {}


def test_rebuild_index_says_what_it_holds(data_root):
    run = new_run("experiment", "x", {"server": {"mode": "sync"}}, environment={})
    run.add_rows("loads", [{"p99_ms": 1.0}])
    run.finish("ok")
    assert history.rebuild_index() == f"data root: {data_root}; index tables: index_info, loads, runs"
    assert list(pl.recorded("loads", rebuild=False)["p99_ms"]) == [1.0]
