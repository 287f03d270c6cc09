"""The summary tables: one row per run or search, the numbers of the results and their validity."""

import math

import pytest
from synthetic import events, experiment, load, search

from perflab.analysis import tables


def test_load_table_gives_rates_percentiles_errors_and_validity():
    runs = {"PUT, 1 connection": experiment(load(2.0, rate=500, achieved=499.5)),
            "PUT, 4 connections": experiment(load(4.0, status={"200": 90, "503": 10}), "suspect", ("rate short",))}
    t = tables.load_table(runs)
    assert list(t.index) == ["PUT, 1 connection", "PUT, 4 connections"] and t.index.name == "run"
    assert list(t.columns) == ["offered, req/s", "achieved, req/s", "p50, ms", "p99, ms", "p99.9, ms", "max, ms",
                               "errors", "validity"]
    first = t.loc["PUT, 1 connection"]
    assert (first["offered, req/s"], first["achieved, req/s"]) == (500, 499.5)
    assert (first["p50, ms"], first["p99, ms"], first["p99.9, ms"], first["max, ms"]) == (0.5, 2.0, 4.0, 6.0)
    assert t.loc["PUT, 4 connections", "errors"] == 10                       # the 503s are server errors
    assert list(t["validity"]) == ["valid", "suspect: rate short"]


def test_storage_table_counts_the_events_of_each_run():
    ev = events(("flush", 0.1, 30), ("flush", 0.5, 20), ("compaction", 0.3, 80), ("write_stall", 0.4, 12.5),
                ("write_stall", 0.7, 2.5), ("gc", 0.2, 1))
    runs = {"PUT lsm": experiment(load(2.0, p99s=[1, 1, 1, 9, 1, 1, 1, 1]), ev=ev),
            "PUT memory": experiment(load(1.0), validity=None)}
    t = tables.storage_table(runs)
    assert list(t.columns)[-6:] == ["flushes", "compactions", "GC pauses", "write stalls, ms", "spikes", "validity"]
    lsm, memory = t.loc["PUT lsm"], t.loc["PUT memory"]
    assert (lsm["flushes"], lsm["compactions"], lsm["GC pauses"], lsm["write stalls, ms"]) == (2, 1, 1, 15.0)
    assert lsm["spikes"] == 1 and lsm["validity"] == "valid"
    assert (memory["flushes"], memory["write stalls, ms"]) == (0, 0.0) and memory["validity"] == "not assessed"
    assert math.isnan(memory["spikes"])                                      # no interval log, no attribution


def test_overload_table_by_workers_and_queue():
    over = {(1, 16): experiment(load(50.0, status={"200": 600, "503": 400}), ev=events(("queue_full", 0.2, 5),
                                                                                        ("queue_full", 0.6, 3))),
            (4, 16): experiment(load(9.0, status={"200": 1000}))}
    t = tables.overload_table(over, index=("workers", "queue"))
    assert t.index.names == ["workers", "queue"] and list(t.index) == [(1, 16), (4, 16)]
    assert t.loc[(1, 16), "rejected (503)"] == 400 and t.loc[(1, 16), "rejected share"] == pytest.approx(0.4)
    assert t.loc[(1, 16), "queue_full episodes"] == 2 and t.loc[(4, 16), "queue_full episodes"] == 0
    assert t.loc[(4, 16), "rejected share"] == 0 and t.loc[(4, 16), "p99, ms"] == 9.0
    with pytest.raises(ValueError, match=r"index \('workers', 'queue'\) does not fit the key 'x'"):
        tables.overload_table({"x": over[(1, 16)]}, index=("workers", "queue"))


def test_breakpoint_table_and_the_loads_at_each_breakpoint():
    found = search(2000, (2000, 2400), [(1000, True, 2.0), (2000, True, 3.0), (2400, False, 40.0)])
    none = search(None, (None, 500), [(500, False, 30.0)], outcome="none-passed")
    t = tables.breakpoint_table({"GET, 64 connections": found, "PUT, 64 connections": none})
    assert t.index.name == "search"
    row = t.loc["GET, 64 connections"]
    assert row["breakpoint, req/s"] == 2000 and row["interval, req/s"] == "[2,000, 2,400]"
    assert (row["outcome"], row["probes' validity"], row["probes"], row["search, s"]) == ("resolved", "valid", 3, 30.0)
    assert math.isnan(t.loc["PUT, 64 connections", "breakpoint, req/s"])
    assert t.loc["PUT, 64 connections", "interval, req/s"] == "< 500"
    at = tables.at_breakpoints({"GET, 64 connections": found, "PUT, 64 connections": none})
    assert list(at) == ["GET, 64 connections @ 2,000/s"] and at["GET, 64 connections @ 2,000/s"].p99_ms == 3.0
