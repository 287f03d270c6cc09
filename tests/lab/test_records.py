"""Run directories, meta.json, failure marking and the DuckDB index, read back through SQL."""

import json
import os

import pytest

import perflab as pl
from perflab import records
from perflab.errors import RunInterrupted
from perflab.records import new_run


def test_new_run_layout_and_meta(data_root):
    r = records.new_run(
        "experiment", "get async/64", params={"server": {"mode": "async", "workers": 2}, "load": {"rate": 1000.0}}
    )
    assert r.dir.parent == data_root / "runs"
    assert r.id.endswith(r.id.rsplit("-", 1)[1]) and "get-async-64" in r.id
    m = json.loads((r.dir / "meta.json").read_text())
    assert m["status"] == "running" and m["params"]["server"]["workers"] == 2
    env = m["environment"]
    assert env["machine"]["cores"] == os.cpu_count() and env["machine"]["memory_bytes"] > 0
    assert env["machine"]["kernel"] and "commit" in env["git"] and "dirty" in env["git"]
    assert env["python"]["packages"]["duckdb"]


def test_runs_are_never_overwritten(data_root):
    ids = {records.new_run("experiment", "same").id for _ in range(20)}
    assert len(ids) == 20
    assert len(list((data_root / "runs").iterdir())) == 20


def test_context_marks_status(data_root):
    with records.new_run("experiment", "ok") as ok:
        ok.set_result(p99_ms=1.5)
    with pytest.raises(ZeroDivisionError):
        with records.new_run("experiment", "bad") as bad:
            1 / 0  # noqa: B018 - the error is the point
    with pytest.raises(KeyboardInterrupt):
        with records.new_run("experiment", "ctrl-c") as intr:
            raise KeyboardInterrupt
    with pytest.raises(RunInterrupted):
        with records.new_run("experiment", "sigterm") as term:
            raise RunInterrupted("received signal SIGTERM")
    assert records.open_run(ok.id).status == "ok"
    b = records.open_run(bad.id)
    assert b.status == "failed" and b.meta["error"]["type"] == "ZeroDivisionError"
    assert "1 / 0" in b.meta["error"]["traceback"]
    assert records.open_run(intr.dir).status == "interrupted"
    assert records.open_run(term.id).status == "interrupted"


def test_index_query_breakpoints_by_mode(data_root):
    for mode, workers, rate in (("async", 1, 900), ("async", 4, 3000), ("sync", None, 2500)):
        with records.new_run("breakpoint", f"get-{mode}", params={"server": {"mode": mode, "workers": workers}}) as r:
            r.add_rows("breakpoints", [{"workload": "GET", "breakpoint_rate": rate, "connections": 64}])
            r.add_rows("loads", [{"rate": rate, "p99_ms": 2.0, "passed": True, "reason": "ok"}])
    with records.new_run("breakpoint", "put") as r:
        r.add_rows("breakpoints", [{"workload": "PUT", "breakpoint_rate": 111.0}])
    df = records.query(
        "SELECT server_workers, breakpoint_rate FROM breakpoints "
        "WHERE workload = 'GET' AND server_mode = 'async' ORDER BY server_workers"
    )
    assert df.to_dict("list") == {"server_workers": [1, 4], "breakpoint_rate": [900, 3000]}
    assert (data_root / "index.duckdb").is_file()
    assert set(records.tables()) >= {"runs", "loads", "breakpoints", "index_info"}
    assert records.query("SELECT count(*) AS n FROM runs")["n"].item() == 4


def test_index_rebuilds_from_run_dirs(data_root):
    with records.new_run("experiment", "a") as r:
        r.add_rows("loads", [{"p99_ms": 1.0}])
    records.update_index()
    (data_root / "index.duckdb").unlink()
    # the index is a cache: deleting it loses nothing
    assert records.query("SELECT p99_ms FROM loads")["p99_ms"].tolist() == [1.0]
    # a torn line at the end of a crashed run's table is skipped
    with (r.dir / "tables" / "loads.jsonl").open("a") as f:
        f.write('{"p99_ms": 2.')
    assert records.query("SELECT count(*) AS n FROM loads")["n"].item() == 1


def test_bad_arguments(data_root):
    with pytest.raises(ValueError, match="kind must be a lowercase word"):
        records.new_run("My Kind")
    with pytest.raises(ValueError, match="params must be a dict"):
        records.new_run("experiment", params=[1, 2])
    with pytest.raises(ValueError, match="run: no run nope"):
        records.open_run("nope")
    r = records.new_run("experiment")
    with pytest.raises(ValueError, match="status must be one of"):
        r.finish("done")
    with pytest.raises(ValueError, match="name must be a relative path"):
        r.path("../escape")
    with pytest.raises(ValueError, match="table must be a lowercase identifier"):
        r.add_rows("Bad-Table", [])
    with pytest.raises(ValueError, match="sql must be a non-empty"):
        records.query("  ")


def test_data_root_parameter_overrides_env(tmp_path, data_root):
    other = tmp_path / "elsewhere"
    r = records.new_run("experiment", data_root=other)
    assert r.dir.parent == other / "runs"
    assert records.list_runs(other)["run_id"].tolist() == [r.id]
    assert records.list_runs().empty


def test_index_survives_parameters_of_mixed_types(data_root):
    # the same parameter as a number in one run, a string in another, a list in a third
    for v in (256, "256m", [1, 2], None):
        with records.new_run("experiment", params={"server": {"heap": v}}) as r:
            r.add_rows("loads", [{"note": v, "p99_ms": 1.0}])
    df = records.query("SELECT server_heap, note FROM loads ORDER BY run_id")
    assert len(df) == 4 and set(df["server_heap"].dropna()) == {"256", "256m", "[1, 2]"}


def test_a_coordinator_killed_with_sigkill_leaves_its_run_abandoned(data_root):
    """A coordinator killed with SIGKILL cannot mark its run: the run reads as abandoned (its pid is gone),
    in the index and ``perflab runs`` too, and its meta.json is left as it was."""
    import subprocess
    import sys

    from perflab.cli import main

    code = (
        "import time; from perflab.records import new_run; r = new_run('experiment', 'killed'); "
        "print(r.id, flush=True); time.sleep(120)"
    )
    p = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PERFLAB_DATA": str(data_root)},
    )
    try:
        rid = p.stdout.readline().strip()
        assert records.open_run(rid).status == "running"  # its coordinator is alive
    finally:
        p.kill()
        p.wait(timeout=10)
    run = records.open_run(rid)
    assert run.status == "abandoned" and run.meta["status"] == "running"
    assert records.list_runs().set_index("run_id").loc[rid, "status"] == "abandoned"
    assert main(["runs"]) == 0


def test_a_run_is_abandoned_only_when_its_coordinator_is_certainly_gone():
    from perflab import children

    me = children.identity()
    assert not children.gone(me)
    assert children.gone({**me, "start_ticks": me["start_ticks"] - 1})  # the pid now names another process
    assert children.gone({**me, "boot_id": "rebooted"})  # this machine, booted again since
    assert not children.gone({**me, "boot_id": "elsewhere", "hostname": "another-machine"})  # cannot tell
    assert not children.gone(None)  # a run recorded before identities


def test_a_server_of_yours_never_has_perflabs_commit(tmp_path, monkeypatch):
    """A server of yours run from a directory that is in no git work tree of its own has no commit, even where that
    directory lies in perflab's clone: a student's folder (not in git) measured with ``make -C perflab report
    PROJECT=...`` recorded perflab's commit as the server's. Only the built-in server has perflab's commit."""
    from perflab import paths
    from perflab.commits.git import checkout
    from perflab.config import ClusterConfig, ForeignServer, ServerConfig
    from perflab.regress.synthetic import git
    from perflab.targets import target_of

    mine = checkout()["commit"]
    assert target_of(ServerConfig()).version_commit() == mine  # the built-in server
    monkeypatch.chdir(paths.repo_root())  # make -C perflab: a course server's command runs in its clone
    assert target_of(ForeignServer(command="x {port}")).version_commit() is None
    assert target_of(ClusterConfig(nodes=2, command="x {port} {cluster}")).version_commit() is None
    clone = tmp_path / "perflab"  # a clone of perflab holding a student's folders, one in git
    (clone / "students" / "alice").mkdir(parents=True)
    git(clone, "init", "-q", "-b", "main")
    git(clone, "commit", "-q", "--allow-empty", "-m", "perflab")
    bob = clone / "students" / "bob"
    bob.mkdir()
    git(bob, "init", "-q", "-b", "main")
    git(bob, "commit", "-q", "--allow-empty", "-m", "stage 1")
    monkeypatch.setenv("PERFLAB_ROOT", str(clone))
    assert checkout()["commit"] != mine  # perflab is that clone
    assert (
        target_of(ForeignServer(command="x {port}", workdir=str(clone / "students" / "alice"))).version_commit() is None
    )
    assert (
        target_of(ForeignServer(command="x {port}", workdir=str(bob))).version_commit()
        == git(bob, "rev-parse", "HEAD").strip()
    )
    assert (
        target_of(ClusterConfig(nodes=2, command="x {port} {cluster}", workdir=str(bob))).version_commit()
        == git(bob, "rev-parse", "HEAD").strip()
    )


def test_each_run_is_keyed_by_the_version_of_the_server_it_measured(data_root, tmp_path, capsys):
    """The index's ``version_commit`` / ``version_label`` are the measured server's (found, or given), apart from
    perflab's own commit (``perflab_commit``); ``recorded`` and ``perflab runs`` filter by them."""
    from perflab.cli import main
    from perflab.commits.git import checkout, commit_at
    from perflab.config import ClusterConfig, ForeignServer, LoadParams, ServerConfig
    from perflab.config.version import Version
    from perflab.core.session import Session, SessionOptions
    from perflab.measure.generator import LoadTool
    from perflab.targets import target_of

    def version(server, given=None):
        return Session("experiment", "x", server, LoadTool.of(LoadParams()), SessionOptions(version=given)).version()

    mine = checkout()["commit"]
    assert version(ServerConfig()) == {"commit": mine, "label": None}  # this checkout's server
    install = tmp_path / "build"
    install.mkdir()
    (install / "lib").mkdir()
    (install / "lib" / "server.jar").write_text("")
    (install / ".built").write_text("a" * 40 + "\n")  # a commit's build
    assert version(ServerConfig(install_dir=str(install)), "stage 6") == {"commit": "a" * 40, "label": "stage 6"}
    assert target_of(ForeignServer(command="x {port}", workdir=str(tmp_path))).version_commit() is None  # not in git
    assert target_of(ForeignServer(url="http://127.0.0.1:1")).version_commit() is None
    assert version(ForeignServer(url="http://127.0.0.1:1"), Version(commit="B" * 12))["commit"] == "b" * 12
    assert target_of(ClusterConfig(nodes=2)).version_commit() == mine  # built-in nodes
    assert (
        target_of(ClusterConfig(nodes=2, command="x {port} {cluster}", workdir=str(tmp_path))).version_commit() is None
    )
    assert commit_at(tmp_path) is None
    with pytest.raises(ValueError, match="commit: a hex commit hash"):
        Version(commit="HEAD")
    with pytest.raises(ValueError, match="version must be a dict"):
        new_run("experiment", "x", {}, version={"sha": "a"})
    for commit, label in (("a" * 40, "v1"), ("b" * 40, "v2"), ("b" * 40, None)):
        with new_run("experiment", "x", {"server": {"mode": "sync"}}, version={"commit": commit, "label": label}):
            pass
    with new_run("ab", "two-servers", {}):
        pass
    runs = pl.recorded("runs")
    assert set(runs.columns) >= {"version_commit", "version_label", "perflab_commit", "perflab_dirty"}
    assert "git_commit" not in runs.columns and set(runs["perflab_commit"]) == {mine}
    assert len(pl.recorded("runs", commit="bbbbbbb")) == 2 and len(pl.recorded("runs", label="v1")) == 1
    assert len(pl.recorded("runs", commit="b" * 40, label="v2")) == 1
    assert main(["runs", "--data", str(data_root), "--label", "v2"]) == 0
    out = capsys.readouterr().out
    assert "v2" in out and "v1" not in out and "b" * 10 in out
    assert main(["runs", "--data", str(data_root), "--commit", "not-hex"]) == 2


def test_an_empty_data_root_reads_as_no_runs(tmp_path):
    # notebook 06 on a fresh data root sorted the empty index by a column it did not have
    from perflab.records.index import recorded

    assert recorded("runs", tmp_path / "data").empty


def test_a_result_recorded_again_replaces_its_rows(data_root):
    # a breakpoint that real wrk2 held lower is recorded again (perflab.lab.second_opinion): one row, the new one
    run = records.new_run("breakpoint", "again", environment={})
    run.add_rows("breakpoints", [{"breakpoint_rate": 2000.0}])
    run.set_rows("breakpoints", [{"breakpoint_rate": 1800.0}])
    lines = (run.dir / "tables" / "breakpoints.jsonl").read_text().splitlines()
    assert [json.loads(line)["breakpoint_rate"] for line in lines] == [1800.0]
