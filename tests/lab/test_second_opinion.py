"""The second opinion: which wrk2 is asked, and what its runs say in words (the runs themselves need a real wrk2,
which the tests do not: docs/breakpoints.md has them measured)."""

import pytest

from perflab.lab import second_opinion as so


def _executable(path):
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_the_wrk2_asked_is_the_one_given_else_the_environments_else_the_paths(tmp_path, monkeypatch):
    monkeypatch.delenv(so.ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert so.find_wrk2() is None and so.choose("auto") is None and so.choose(None) is None
    on_path = tmp_path / "bin"
    on_path.mkdir()
    _executable(on_path / "wrk2")
    monkeypatch.setenv("PATH", str(on_path))
    assert so.find_wrk2() == on_path / "wrk2" and so.choose("auto") == on_path / "wrk2"
    assert so.choose("none") is None
    env = _executable(tmp_path / "wrk")
    monkeypatch.setenv(so.ENV, str(env))
    assert so.find_wrk2() == env.resolve()
    given = _executable(tmp_path / "my-wrk")
    assert so.choose(str(given)) == given.resolve()
    # a binary named that is not there, or not executable, is an error naming it, before any load
    (tmp_path / "plain").write_text("")
    for bad, what in ((tmp_path / "missing", "second opinion"), (tmp_path / "plain", "second opinion")):
        with pytest.raises(ValueError, match=f"^{what}: {bad} is not an executable file"):
            so.choose(str(bad))
    monkeypatch.setenv(so.ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=r"^\$WRK2: .*missing is not an executable file"):
        so.find_wrk2()


def _run(passed, p99, reason="ok"):
    return {
        "run_id": "r",
        "passed": passed,
        "reason": reason,
        "p99_ms": p99,
        "achieved_ratio": 1.0,
        "console": "second-opinion/00-console.txt",
    }


def test_wrk2_agrees_when_most_of_its_runs_keep_up_and_says_so_when_they_do_not():
    agree = so.SecondOpinion(
        "wrk2", 20000.0, [_run(True, 2.1), _run(False, 12.0, "p99 12.00 ms > SLA 10 ms"), _run(True, 3.4)]
    )
    assert agree.agrees is True and (agree.kept_up, agree.fell_behind) == (2, 1)
    assert agree.words() == (
        "real wrk2 agrees: it kept up with 20,000 req/s in 2 of 3 runs, each on a freshly "
        "started server (p99 2.10 ms to 12.0 ms)"
    )
    disagree = so.SecondOpinion(
        "wrk2",
        19711.0,
        [
            _run(False, 2350.0, "achieved 92.6% of target < 99%"),
            _run(False, 143.0, "p99 143.00 ms > SLA 10 ms"),
            _run(True, 3.0),
        ],
    )
    assert disagree.agrees is False
    assert disagree.words().startswith("real wrk2 does not confirm 19,711 req/s: it fell behind in 2 of 3 runs")
    assert disagree.words().endswith("achieved 92.6% of target < 99%): the number is perflab-load's alone")
    unsure = so.SecondOpinion(
        "wrk2", 1000.0, [_run(True, 1.0), _run(None, 50.0, "inconclusive"), _run(None, 60.0, "inconclusive")]
    )
    assert unsure.agrees is None and "2 of 3 runs were inconclusive" in unsure.words()
    assert so.SecondOpinion("wrk2", 1000.0, [_run(True, 1.0)]).to_dict()["agrees"] is True
