"""``perflab history`` against real servers, on a synthetic declared history (perflab.regress.synthetic: each
commit runs this checkout's server with a fixed CPU cost per request, nothing to compile).

What is asserted cannot fail by chance on a busy machine: the planted cost is 300 us of CPU per request on a
server that uses a few tens (each request spins on its thread's CPU clock, so a slow machine does not shrink it):
the series steps some tenfold where the noise between commits is tens of percent, and every pair of the check
puts the planted commit beyond the 50% margin (8 pairs all agreeing reach the level of alpha 0.05 at 8 pairs);
no budget, so nothing depends on how fast the machine is."""

from __future__ import annotations

import pytest

from perflab import open_run, query
from perflab.cli import main
from perflab.records import list_runs
from perflab.regress import synthetic

PLANTED = 3


@pytest.mark.slow
def test_history_names_the_planted_commit_and_records_every_point(tmp_path, server_build, loadgen_binary, capsys):
    repo = synthetic.declared(tmp_path, [0] * PLANTED + [300] * 2)  # 5 commits: GOOD and 4 after it
    (repo / "notes.txt").write_text("uncommitted\n")  # a dirty tree, never touched
    data = tmp_path / "data"
    code = main(
        [
            "history",
            "HEAD~4",
            "HEAD",
            "--repo",
            str(repo),
            "--data",
            str(data),
            "--quiet",
            "-s",
            "status.lua",
            "-c",
            "4",
            "-t",
            "1",
            "-R",
            "400",
            "--probe-duration",
            "200ms",
            "--warmup",
            "100ms",
            "--cooldown",
            "0",
            "--server-warmup",
            "500ms",
            "--repeats",
            "3",
            "--pairs",
            "8",
            "--margin",
            "50%",
            "--alpha",
            "0.05",
            "--budget",
            "600s",
        ]
    )
    out = capsys.readouterr().out
    commits = synthetic.git(repo, "log", "--reverse", "--format=%H").split()
    assert code == 0 and f"regression at {commits[PLANTED][:10]}" in out, out
    runs = list_runs(data)
    run = open_run(runs[runs.kind == "history"].iloc[0]["dir"])
    r = run.results
    assert r["found"] == "regression" and r["regressions"] == [commits[PLANTED]] and r["checks"] == 1
    (c,) = r["candidates"]
    assert c["position"] == PLANTED and c["before"] == commits[PLANTED - 1] and c["check"]["ratio"] > 1.5
    # every commit measured is a run keyed by its commit; the history's points are in the index
    points = runs[runs.kind == "history-point"]
    assert sorted(points["version_commit"]) == sorted(commits)
    rows = query(
        "SELECT position, metric, value, lo, hi FROM history_points WHERE metric = 'cpu' ORDER BY position",
        data_root=data,
    )
    assert list(rows["position"]) == list(range(5)) and (rows["lo"] <= rows["value"]).all()
    assert query("SELECT outcome FROM history_changes", data_root=data, update=False)["outcome"].tolist() == [
        "regression"
    ]
    assert (repo / "notes.txt").read_text() == "uncommitted\n"


def test_bad_input_is_named_and_nothing_is_recorded(tmp_path, capsys):
    repo = synthetic.declared(tmp_path, [0, 0, 0, 0, 0])
    data = tmp_path / "data"
    base = ["--repo", str(repo), "--data", str(data), "--quiet", "-R", "400"]
    for good, bad, message in (
        ("HEAD", "HEAD~3", "not an ancestor of BAD"),
        ("nope", "HEAD", "'nope' is not a commit"),
        ("HEAD~2", "HEAD", "GOOD..BAD holds 3 commits (GOOD included); change points need at least 4"),
    ):
        assert main(["history", good, bad, *base]) == 2
        assert message in capsys.readouterr().err
    assert list_runs(data).empty
