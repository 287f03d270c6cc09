"""``perflab bisect`` and ``perflab gate`` against real servers, on throwaway histories with a planted CPU cost
per request (perflab/regress/synthetic.py: nothing to compile, so a history of 16 commits costs seconds).

What is asserted cannot fail by chance on a busy machine: the planted cost is 300 us of CPU per request on a
server that uses a few tens (each request spins on its thread's CPU clock, so a slow machine does not shrink
it), so every pair puts the slower commit far beyond the 50% margin; a claim between identical servers has
probability at most the comparison's alpha (1e-2 here, so the A/A gate below fails on a chance claim at most
once in a hundred runs... and only when it also lies beyond 50%, which no pair of these servers does); no
budget, so nothing depends on how fast the machine is. Detection of a 10% change, false alarms over many
gates and the time to a verdict are the benchmark's (scripts/regress_benchmark.py, docs/benchmarks.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from perflab import LoadParams, SessionOptions, open_run, query
from perflab.analysis import regress as words
from perflab.cli import main
from perflab.commits.git import code_changes
from perflab.config.regress import BisectParams, GateParams, RepoParams
from perflab.errors import BuildError
from perflab.records import list_runs
from perflab.regress import Found, Outcome, run_bisect, run_gate, synthetic
from perflab.regress import bisect as bisect_mod

LOAD = LoadParams(script="status.lua", connections=4, threads=1, rate=400)
#: short probes, no budget: the comparisons stop on their verdicts, or at 16 pairs
FAST = dict(
    probe_duration=0.2, warmup=0.1, cooldown=0, server_warmup=1, max_pairs=16, budget=None, margin=0.5, alpha=0.01
)
PLANTED = 11
COST = 300


@pytest.fixture(scope="module")
def planted(tmp_path_factory, server_build, loadgen_binary):
    """17 commits (GOOD and 16 after it); commit 11 adds 300 us of CPU per request; commit 8 does not build."""
    root = tmp_path_factory.mktemp("planted")
    costs = [0] * PLANTED + [COST] * (17 - PLANTED)
    return synthetic.declared(root, costs, broken=(8,)), root


@pytest.mark.slow
def test_bisect_names_the_commit_that_made_the_server_slower(planted):
    repo, root = planted
    (repo / "notes.txt").write_text("uncommitted\n")  # a dirty working tree: never touched
    data = root / "data"
    res = run_bisect(
        "HEAD~16",
        "HEAD",
        LOAD,
        BisectParams(**FAST, retries=0),
        RepoParams(repo=str(repo)),
        session=SessionOptions(data_root=data),
        progress=False,
    )
    commits = synthetic.git(repo, "log", "--reverse", "--format=%H").split()
    assert res.found is Found.FIRST_SLOWER and res.first.sha == commits[PLANTED], words.bisect_lines(res)
    check = res.first_check
    assert check.outcome is Outcome.REGRESSION and check.ratio > 1.5 and check.ci[0] > 1.5
    # the chain: BAD first (no commit changed most of the code), then halving by the commits' weights, exactly as
    # the search itself goes on this history (commits 8 and 9 remove and restore work-ns, 11 raises it); a commit
    # that did not build where it was tried is named as skipped
    steps = res.search.steps
    assert steps[0].index == 16 and steps[0].check.outcome is Outcome.REGRESSION
    prior = bisect_mod.prior_of(code_changes(repo, res.commits))
    assert prior == bisect_mod.prior_of([0] * 8 + [1, 1, 0, 2] + [0] * 5)

    def truth(i, attempt):
        if i == 8:
            raise BuildError("commit 8 cannot be built")
        return steps[0].check if i >= PLANTED else next(s.check for s in steps if s.check and s.index < PLANTED)

    assert [s.index for s in steps] == [s.index for s in bisect_mod.search(16, truth, 0, prior).steps]
    assert all("cannot be built" in s.skipped for s in steps if s.skipped)
    assert all(s.check.outcome is Outcome.NOT_WORSE for s in steps if s.check and s.index < PLANTED)
    assert res.search.comparisons <= 6 and res.bound == pytest.approx(res.search.comparisons * 0.01)
    lines = words.bisect_lines(res)
    assert words.answer(res).startswith(f"first slower commit: {commits[PLANTED][:10]} (step 11: 300 us")
    assert "uncommitted" in lines[-1]
    # the working tree is as it was: the change is there, nothing else moved
    assert (repo / "notes.txt").read_text() == "uncommitted\n" and synthetic.git(
        repo, "status", "--porcelain"
    ).strip() == "M notes.txt"
    # one bisect run in the index with its steps, each comparison an ab run of its own
    run = open_run(res.run.dir)
    assert run.kind == "bisect" and run.status == "ok" and run.results["first"] == commits[PLANTED]
    rows = query("SELECT position, outcome, ab_run FROM bisect_steps ORDER BY position", data_root=data)
    assert (rows.loc[rows.position == PLANTED, "outcome"] == "regression").all()
    kinds = list_runs(data)["kind"].value_counts()
    assert kinds["bisect"] == 1 and kinds["ab"] == res.search.comparisons
    from perflab.report.regress import bisect_page

    page = bisect_page(res)
    assert page.is_file() and commits[PLANTED][:10] in page.read_text()


@pytest.mark.slow  # make test-all: `make test` walks a history in notebook 09 (the report test) and gates one here
def test_a_history_without_a_regression_says_so(tmp_path, server_build, loadgen_binary, monkeypatch):
    # the built-in server's own history: java-server/ at each commit, "built" by linking this checkout's build
    repo, build = synthetic.builtin(tmp_path, 4)
    monkeypatch.setenv("PERFLAB_AB_BUILD", build)
    res = run_bisect(
        "HEAD~3",
        "HEAD",
        LOAD,
        BisectParams(**FAST),
        RepoParams(repo=str(repo)),
        session=SessionOptions(data_root=tmp_path / "data"),
        progress=False,
    )
    assert res.found is Found.NO_REGRESSION and res.first is None, words.bisect_lines(res)
    assert res.search.comparisons == 1 and words.answer(res).startswith("no regression: BAD is no worse than GOOD")
    assert not res.search.steps[0].check.outcome.slower


def test_bad_input_is_named_and_nothing_is_recorded(planted, tmp_path):
    repo, _ = planted
    data = tmp_path / "data"
    cases = [
        (("HEAD", "HEAD~3"), "not an ancestor of BAD"),
        (("nope", "HEAD"), "'nope' is not a commit"),
        (("HEAD~1", "HEAD~1"), "the same commit"),
    ]
    for (good, bad), message in cases:
        with pytest.raises(ValueError, match=message):
            run_bisect(
                good,
                bad,
                LOAD,
                BisectParams(**FAST),
                RepoParams(repo=str(repo)),
                session=SessionOptions(data_root=data),
                progress=False,
            )
    with pytest.raises(ValueError, match="not a git repository"):
        run_gate(
            "HEAD~1",
            "HEAD",
            LOAD,
            GateParams(**FAST),
            RepoParams(repo=str(tmp_path)),
            session=SessionOptions(data_root=data),
        )
    assert list_runs(data).empty


@pytest.mark.slow  # make test-all: `make test` walks a history in notebook 09 (the report test) and gates one here
def test_good_slower_than_bad_says_so(tmp_path, server_build, loadgen_binary):
    repo = synthetic.declared(tmp_path, [COST, 0])
    res = run_bisect(
        "HEAD~1",
        "HEAD",
        LOAD,
        BisectParams(**FAST),
        RepoParams(repo=str(repo)),
        session=SessionOptions(data_root=tmp_path / "data"),
        progress=False,
    )
    assert res.found is Found.GOOD_SLOWER, words.bisect_lines(res)
    assert words.answer(res).startswith("GOOD is slower than BAD, nothing to bisect: BAD's CPU per request")


def _gate(repo: Path, data: Path, base: str, head: str, out: Path, capsys) -> tuple[int, str]:
    code = main(
        [
            "gate",
            base,
            head,
            "--repo",
            str(repo),
            "--data",
            str(data),
            "--out",
            str(out),
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
            "1s",
            "--pairs",
            "16",
            "--margin",
            "50%",
            "--alpha",
            "0.01",
        ]
    )
    return code, capsys.readouterr().out


def test_the_gate_never_fails_a_change_that_costs_nothing_and_fails_a_planted_regression(planted, tmp_path, capsys):
    # the command line's budget (240 s) is some ten times what these comparisons take on this machine
    repo, _ = planted
    data, out = tmp_path / "data", tmp_path / "ci"
    code, text = _gate(repo, data, "HEAD~16", "HEAD~15", out, capsys)  # 0 us against 0 us
    # an A/A gate must never fail (a false alarm has probability at most alpha and needs a pair beyond the 50%
    # margin); whether 16 pairs prove it "no worse" within that margin is the machine's noise: on a loaded one
    # the interval may still reach past 1.5x (undecided, exit 2), and says so
    doc = json.loads((out / "gate.json").read_text())
    assert code in (0, 2) and doc["exit_code"] == code and doc["false_alarm_bound"] == 0.01, text
    assert (out / "gate.md").is_file() and "<failure" not in (out / "gate.xml").read_text()
    hi = doc["check"]["ci"][1]
    if code == 0:
        assert "gate: no regression" in text and "(exit 0)" in text and hi < 1.5, text
    else:
        assert "undecided" in text and "(exit 2)" in text and hi >= 1.5, text
    code, text = _gate(repo, data, f"HEAD~{16 - PLANTED + 1}", f"HEAD~{16 - PLANTED}", out, capsys)  # 0 -> 300 us
    assert code == 1 and "gate: a regression" in text, text
    doc = json.loads((out / "gate.json").read_text())
    assert doc["check"]["outcome"] == "regression" and doc["check"]["ratio"] > 1.5
    assert "<failure" in (out / "gate.xml").read_text()
    runs = list_runs(data)
    assert sorted(runs["kind"]) == ["ab", "ab", "gate", "gate"]


def test_the_gates_exit_status_when_it_cannot_measure(planted, tmp_path, capsys):
    repo, _ = planted
    data = tmp_path / "data"
    assert _gate(repo, data, "HEAD~16", "no-such-commit", tmp_path / "ci", capsys)[0] == 3  # bad input
    assert main(["gate", "HEAD~1", "HEAD", "--pairs", "many"]) == 3  # a bad flag too
    code, text = _gate(repo, data, "HEAD~16", "HEAD~8", tmp_path / "ci", capsys)  # 8 does not build
    assert code == 3 and "could not measure" in text and "cannot be built" in text, text
    run = open_run(json.loads((tmp_path / "ci" / "gate.json").read_text())["run"], data_root=data)
    assert run.status == "failed" and run.results["exit_code"] == 3
