"""The storage engine's cost: what each run's storage did, the effect of its flushes, and the stories notebook 05
shows."""

import math

import plotly.graph_objects as go
from synthetic import events, experiment, load

from perflab.analysis import storage


def test_storage_table_counts_the_events_of_each_run():
    ev = events(
        ("flush", 0.1, 30),
        ("flush", 0.5, 20),
        ("compaction", 0.3, 80),
        ("write_stall", 0.4, 12.5),
        ("write_stall", 0.7, 2.5),
        ("gc", 0.2, 1),
    )
    runs = {
        "PUT lsm": experiment(load(2.0, p99s=[1, 1, 1, 9, 1, 1, 1, 1]), ev=ev),
        "PUT memory": experiment(load(1.0), validity=None),
    }
    t = storage.storage_table(runs)
    assert list(t.columns)[-6:] == ["flushes", "compactions", "GC pauses", "write stalls, ms", "spikes", "validity"]
    lsm, memory = t.loc["PUT lsm"], t.loc["PUT memory"]
    assert (lsm["flushes"], lsm["compactions"], lsm["GC pauses"], lsm["write stalls, ms"]) == (2, 1, 1, 15.0)
    assert lsm["spikes"] == 1 and lsm["validity"] == "valid"
    assert (memory["flushes"], memory["write stalls, ms"]) == (0, 0.0) and memory["validity"] == "not assessed"
    assert math.isnan(memory["spikes"])  # no interval log, no attribution


def test_the_effect_of_an_event_kind_in_each_run():
    p99s = [1.0] * 20
    p99s[5] = p99s[12] = 9.0
    r = experiment(load(1.0, p99s=p99s), ev=events(("flush", 0.5, 60), ("compaction", 1.8, 20)))
    effects = storage.describe_event_effects({"A": r}, "compaction")
    assert len(effects) == 1 and effects[0].startswith("A: ") and "compaction" in effects[0]


def test_the_stories_of_notebook_05():
    ev = events(("flush", 0.5, 60), ("compaction", 1.2, 20))
    runs = {"PUT lsm": experiment(load(2.0, p99s=[1.0] * 20), ev=ev), "PUT memory": experiment(load(1.0))}
    fig, table, text = storage.backends(runs, {}).parts
    assert fig.layout.title.text == "Latency by percentile, by backend, at 500 req/s"
    assert list(table.index) == list(runs) and text == ""
    flush = storage.flushes({"memtable 1m, 1 flush thread": runs["PUT lsm"]})
    assert isinstance(flush.parts[-1], go.Figure)
    assert (
        flush.parts[-1].layout.title.text == "PUT, memtable 1m, 1 flush thread: latency per 100 ms and storage events"
    )
    assert flush.text.startswith("**memtable 1m, 1 flush thread**: ")
    comp = storage.compaction("ycsb-b.lua on a 1m memtable", runs["PUT lsm"])
    assert comp.figure.layout.title.text.startswith("ycsb-b.lua on a 1m memtable: ")
    assert list(comp.table.index) == ["ycsb-b.lua on a 1m memtable"]
    lines = storage.findings({}, {"a": runs["PUT lsm"]}, "ycsb-b.lua", runs["PUT lsm"])
    assert lines[0] == "" and lines[1].startswith("a: ") and lines[-1].startswith("ycsb-b.lua: ")
