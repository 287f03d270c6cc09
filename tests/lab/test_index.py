"""The run index kept up to date run by run: new, changed and removed runs, runs written while it is read, two
processes updating it at once, and the same tables, types and values as a build from every run at once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import duckdb
import pytest

from perflab import records
from perflab.records import new_run, query, recorded, update_index
from perflab.records.index import INDEX_FILE


def _snapshot(root) -> dict:
    """Every table of the index at ``root``: its columns with their SQL types, and its rows (``dir`` left out:
    it names the data root), sorted."""
    out = {}
    for t in records.tables(root):
        if t == "index_info":
            continue
        types = query(f'DESCRIBE "{t}"', root, update=False)
        cols = [c for c in types["column_name"] if c != "dir"]
        df = query(f'SELECT * FROM "{t}"', root, update=False)[cols].astype(object)
        rows = sorted(repr(r) for r in df.where(df.notna(), None).itertuples(index=False))
        out[t] = (dict(zip(types["column_name"], types["column_type"])), rows)
    return out


def _built_at_once(root, tmp_path) -> dict:
    """The snapshot of an index built from every run of ``root`` at once, in a copy of it."""
    copy = tmp_path / "at-once"
    shutil.copytree(root / "runs", copy / "runs")
    update_index(copy, full=True)
    return _snapshot(copy)


def _run(name, params=None, rows=None, status="ok"):
    run = new_run("experiment", name, params or {}, environment={})
    for table, rs in (rows or {}).items():
        run.add_rows(table, rs)
    if status != "running":
        run.finish(status)
    return run


#: a parameter and a table column whose values change kind from run to run: number, text, list, none, bool...
MIXED = [256, "256m", [1, 2], None, 2.5, True, {"x": 1}, 3, False]


def test_runs_added_one_at_a_time_index_as_all_at_once(data_root, tmp_path):
    for i, v in enumerate(MIXED):
        _run(
            f"r{i}",
            {"server": {"heap": v, "workers": i if i % 3 else None, "flag": bool(i % 2)}, "load": {"rate": 1000 + i}},
            {
                "loads": [{"note": v, "p99_ms": 1.0 + i, "count": i, **({"late": i} if i > 5 else {})}],
                **({"odd": [{"z": None}]} if i in (3, 4) else {}),
                **({"odd": [{"z": 1}, {"y": "q"}]} if i == 7 else {}),
            },
        )
        update_index()
    assert _snapshot(data_root) == _built_at_once(data_root, tmp_path)
    types, _ = _snapshot(data_root)["runs"]
    # ints with a gap are doubles, mixed kinds text (as a build from every run at once types them)
    assert (types["server_workers"], types["server_heap"], types["server_flag"]) == ("DOUBLE", "VARCHAR", "BOOLEAN")
    heap = query("SELECT server_heap FROM runs ORDER BY created_at", update=False)["server_heap"].tolist()
    assert heap[:3] == ["256", "256m", "[1, 2]"] and heap[5] == "True"


def test_changed_and_removed_runs(data_root, tmp_path):
    a = _run("a", {"server": {"mode": "sync"}}, {"loads": [{"p99_ms": 1.0}], "events": [{"event": "gc"}]})
    b = _run("b", {"server": {"mode": "async"}}, {"loads": [{"p99_ms": 2.0}]})
    assert sorted(query("SELECT p99_ms FROM loads")["p99_ms"]) == [1.0, 2.0]
    # changed: more rows and a result; its rows are replaced, not added twice
    b.add_rows("loads", [{"p99_ms": 3.0}])
    b.set_result(p99_ms=3.0)
    assert sorted(query("SELECT p99_ms FROM loads")["p99_ms"]) == [1.0, 2.0, 3.0]
    assert query("SELECT result_p99_ms FROM runs WHERE run_id = ?", params=[b.id])["result_p99_ms"].tolist() == [3.0]
    # removed: its rows go, and a table left without rows goes too (as from a build without it)
    shutil.rmtree(a.dir)
    assert query("SELECT run_id FROM runs")["run_id"].tolist() == [b.id]
    assert sorted(query("SELECT p99_ms FROM loads")["p99_ms"]) == [2.0, 3.0]
    assert "events" not in records.tables()
    assert _snapshot(data_root) == _built_at_once(data_root, tmp_path)
    assert query("SELECT runs FROM index_info")["runs"].item() == 1


def test_a_finished_run_is_read_once(data_root):
    """An update reads a finished run again only when its meta.json changed: rows written beside it later are
    not seen until then (every run writes its rows before its meta.json's last save), nor by the next query."""
    r = _run("once", rows={"loads": [{"p99_ms": 1.0}]})
    assert query("SELECT count(*) AS n FROM loads")["n"].item() == 1
    with (r.dir / "tables" / "loads.jsonl").open("a") as f:
        f.write(json.dumps({"run_id": r.id, "p99_ms": 9.0}) + "\n")
    assert query("SELECT count(*) AS n FROM loads")["n"].item() == 1
    r.update(note="saved again")
    assert query("SELECT count(*) AS n FROM loads")["n"].item() == 2
    update_index(full=True)
    assert query("SELECT count(*) AS n FROM loads")["n"].item() == 2


def test_a_running_run_is_read_again_until_it_finishes(data_root):
    r = _run("live", rows={"loads": [{"p99_ms": 1.0}]}, status="running")
    assert recorded("runs", include_failed=True)["status"].tolist() == ["running"]
    r.add_rows("loads", [{"p99_ms": 2.0}])  # meta.json untouched: still read again
    with (r.dir / "tables" / "loads.jsonl").open("a") as f:
        f.write('{"run_id": "x", "p99_ms": 3.')  # a line being written now
    assert sorted(query("SELECT p99_ms FROM loads")["p99_ms"]) == [1.0, 2.0]
    with (r.dir / "tables" / "loads.jsonl").open("a") as f:
        f.write("0}\n")
    r.finish("ok")
    assert sorted(query("SELECT p99_ms FROM loads")["p99_ms"]) == [1.0, 2.0, 3.0]
    assert recorded("runs")["status"].tolist() == ["ok"]


#: a process that records runs while the test reads the index: each run writes rows one at a time, then finishes
WRITER = textwrap.dedent("""
    import sys, time
    from perflab.records import new_run
    for i in range(int(sys.argv[1])):
        run = new_run("experiment", f"w{i}", {"load": {"rate": i}}, environment={})
        for j in range(5):
            run.add_rows("loads", [{"p99_ms": float(j), "step": j}])
            time.sleep(0.002)
        run.finish("ok")
""")

#: a process that brings the index up to date and reads it, over and over
READER = textwrap.dedent("""
    import sys
    from perflab.records import query, recorded
    for _ in range(int(sys.argv[1])):
        recorded("loads", include_invalid=True)
        query("SELECT count(*) FROM runs")
""")


def test_runs_written_and_indexed_by_several_processes_at_once(data_root, tmp_path):
    """Two reports at once share a data root: writers record runs while two other processes update and read
    the index; nobody fails, and the index ends as a build from every run at once."""
    env = {**os.environ, "PERFLAB_DATA": str(data_root)}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, "12"], env=env, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([sys.executable, "-c", READER, "15"], env=env, stderr=subprocess.PIPE, text=True),
        subprocess.Popen([sys.executable, "-c", READER, "15"], env=env, stderr=subprocess.PIPE, text=True),
    ]
    seen = []
    while procs[0].poll() is None:
        seen.append(len(recorded("loads", include_failed=True)))
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], errors
    assert seen == sorted(seen)  # rows only arrive
    assert query("SELECT count(*) AS n FROM loads")["n"].item() == 12 * 5
    assert recorded("runs")["status"].tolist() == ["ok"] * 12
    assert _snapshot(data_root) == _built_at_once(data_root, tmp_path)


def test_an_index_it_cannot_use_is_built_afresh(data_root, tmp_path):
    _run("a", rows={"loads": [{"p99_ms": 1.0}]})
    (data_root / INDEX_FILE).write_text("not a database")
    assert query("SELECT p99_ms FROM loads")["p99_ms"].tolist() == [1.0]
    con = duckdb.connect(str(data_root / INDEX_FILE))  # an index of the layout before (plain tables)
    con.execute("DROP SCHEMA index_state CASCADE")
    con.close()
    assert query("SELECT p99_ms FROM loads")["p99_ms"].tolist() == [1.0]
    moved = tmp_path / "moved"  # a data root moved: its runs' dirs are new
    shutil.move(data_root, moved)
    assert query("SELECT dir FROM runs", moved)["dir"].tolist() == [str(moved / "runs" / os.listdir(moved / "runs")[0])]


@pytest.mark.parametrize("name", ["runs", "index_info"])
def test_a_run_table_cannot_take_the_index_names(data_root, name):
    run = _run("x", rows={name: [{"a": 1}], "loads": [{"p99_ms": 1.0}]})
    assert query("SELECT count(*) AS n FROM runs")["n"].item() == 1
    assert query("SELECT run_id FROM loads")["run_id"].tolist() == [run.id]
