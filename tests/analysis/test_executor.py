"""Worker threads × queue capacity: the grid's breakpoints in words, the heatmap, the overload table, and the
stories notebook 04 shows."""

import math

import pandas as pd
import pytest
import synthetic as syn
from synthetic import events, experiment, load

from perflab.analysis import executor


def _search(rate, iv, outcome="resolved"):
    return syn.search(rate, iv, [(rate or 100, rate is not None, 2.0)], outcome)


GRID = {
    (1, 16): _search(1000, (950, 1050)),
    (4, 16): _search(3000, (2900, 3100)),
    (1, 1024): _search(None, (None, 100), "none-passed"),
    (4, 1024): _search(2900, (2800, 3200)),
}


def test_executor_grid_best_worst_comparisons_and_overload():
    text = executor.describe_executor_grid(GRID)
    assert text.startswith(
        "The best configuration is **4 workers, queue 16**: 3,000 req/s (interval [2,900, 3,100], "
        "resolved); the worst is 1 worker, queue 16: 1,000 req/s"
    )
    assert (
        "Breakpoint with queue 16 (sequential intervals): 4 workers 3,000 req/s" in text
        and "1 worker 1,000 req/s ([950, 1,050]), lower" in text
    )
    assert text.endswith("No rate passed for: 1 worker, queue 1024.")
    none = {(1, 16): GRID[(1, 1024)]}
    assert executor.describe_executor_grid(none).startswith("No configuration passed even the lowest probe")
    table = pd.DataFrame(
        {"workers": [1, 4], "queue": [16, 16], "rejected share": [0.41, 0.0], "p99, ms": [180.0, 2.1]}
    ).set_index(["workers", "queue"])
    assert executor.describe_overload(table, 4500) == (
        "Under overload (4,500 req/s), the share rejected with 503 ranges from 0% "
        "(4 workers, queue 16) to 41% (1 worker, queue 16); p99 from 2.10 ms to "
        "180.0 ms."
    )


TABLE = pd.DataFrame(
    {
        "workers": [1, 1, 4, 4],
        "queue": [16, 1024, 16, 1024],
        "breakpoint, req/s": [1000.0, 1200.0, float("nan"), 2500.0],
        "rejected share": [0.5, 0.1, 0.4, 0.0],
    }
).set_index(["workers", "queue"])


def test_executor_heatmap_puts_workers_down_and_queues_across():
    fig = executor.executor_heatmap(TABLE, "breakpoint, req/s", "Breakpoint by workers and queue")
    hm = fig.data[0]
    assert list(hm.y) == ["1", "4"] and list(hm.x) == ["16", "1024"]
    assert hm.z[0] == pytest.approx([1000.0, 1200.0]) and math.isnan(hm.z[1][0]) and hm.z[1][1] == 2500.0
    assert hm.texttemplate == "%{z:,.0f}" and fig.layout.title.text == "Breakpoint by workers and queue"
    assert fig.layout.xaxis.title.text == "queue capacity" and fig.layout.yaxis.title.text == "worker threads"
    assert fig.layout.yaxis.autorange == "reversed"  # 1 worker on top
    share = executor.executor_heatmap(TABLE, "rejected share", "503s", ".1%", "Magma").data[0]
    assert share.texttemplate == "%{z:.1%}" and share.z[0] == pytest.approx([0.5, 0.1])
    with pytest.raises(ValueError, match="value: 'p99' is not a column"):
        executor.executor_heatmap(TABLE, "p99", "x")
    with pytest.raises(ValueError, match=r"table must be indexed by workers, queue, got \[None\]"):
        executor.executor_heatmap(TABLE.reset_index(), "rejected share", "x")


def test_overload_table_by_workers_and_queue():
    over = {
        (1, 16): experiment(
            load(50.0, status={"200": 600, "503": 400}), ev=events(("queue_full", 0.2, 5), ("queue_full", 0.6, 3))
        ),
        (4, 16): experiment(load(9.0, status={"200": 1000})),
    }
    t = executor.overload_table(over, index=("workers", "queue"))
    assert t.index.names == ["workers", "queue"] and list(t.index) == [(1, 16), (4, 16)]
    assert t.loc[(1, 16), "rejected (503)"] == 400 and t.loc[(1, 16), "rejected share"] == pytest.approx(0.4)
    assert t.loc[(1, 16), "queue_full episodes"] == 2 and t.loc[(4, 16), "queue_full episodes"] == 0
    assert t.loc[(4, 16), "rejected share"] == 0 and t.loc[(4, 16), "p99, ms"] == 9.0
    with pytest.raises(ValueError, match=r"index \('workers', 'queue'\) does not fit the key 'x'"):
        executor.overload_table({"x": over[(1, 16)]}, index=("workers", "queue"))


def test_the_stories_of_notebook_04(tmp_path):
    over = {(1, 16): experiment(load(50.0, status={"200": 600, "503": 400})), (4, 16): experiment(load(9.0))}
    o = executor.overload(over, 4500)
    assert o.parts[0] == "Overload at 4,500 req/s." and o.table.equals(
        executor.overload_table(over, index=("workers", "queue"))
    )
    assert [p.layout.title.text for p in o.parts[2:]] == [
        "Share of requests rejected with 503 under overload",
        "p99 (ms) under overload",
    ]


def test_a_grid_where_nothing_passed_gets_a_sentence_not_an_empty_heatmap():
    """Seen in the report test's tiny plan (queue 4): two searches that passed no probe drew a heatmap of two
    empty cells, which the chromium check rightly failed as a figure with no data."""
    table = TABLE.assign(**{"breakpoint, req/s": float("nan")})
    assert executor.breakpoint_heatmap(table).startswith("No configuration kept up with any rate")
    assert executor.breakpoint_heatmap(TABLE).layout.title.text.startswith("Breakpoint (requests/s)")
