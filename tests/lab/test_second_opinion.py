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


def _run(rate, passed, p99, reason="ok"):
    return {
        "rate": rate,
        "run_id": "r",
        "passed": passed,
        "reason": reason,
        "p99_ms": p99,
        "achieved_ratio": 1.0,
        "console": "second-opinion/00-console.txt",
    }


def _verdict(rate, up, down):
    from perflab.breakpoint.hold import RateHeld

    r = RateHeld(rate, up, down, up > down)
    return {**vars(r), "words": r.words}


def test_wrk2_agrees_when_it_holds_the_rate_and_its_number_is_said_when_it_does_not():
    over = "p99 14.00 ms > SLA 10 ms"
    agree = so.SecondOpinion(
        "wrk2",
        20000.0,
        [
            _run(20000.0, True, 2.1),
            _run(20000.0, False, 12.0, over),
            _run(20000.0, True, 3.4),
            _run(26000.0, False, 40.0, over),
            _run(26000.0, False, 50.0, over),
        ],
        held=20000.0,
        interval=(20000.0, 26000.0),
        rates=[_verdict(20000.0, 2, 1), _verdict(26000.0, 0, 2)],
    )
    assert agree.agrees
    assert agree.words() == (
        "real wrk2 agrees: it kept up in 2 of 3 runs at 20,000 req/s (p99 2.10 ms to 12.0 ms), each on a freshly "
        "started server; it fell behind at 26,000 req/s"
    )
    # the lab's 22,003 was perflab-load's alone (a course server, 2026-12-07): wrk2 held 19,803 from fresh starts
    lower = so.SecondOpinion(
        "wrk2",
        22003.0,
        [
            _run(22003.0, False, 13.8, "p99 13.78 ms > SLA 10 ms"),
            _run(22003.0, False, 15.9, over),
            _run(19803.0, True, 4.0),
            _run(19803.0, True, 6.0),
        ],
        held=19803.0,
        interval=(19803.0, 22003.0),
        rates=[_verdict(22003.0, 0, 2), _verdict(19803.0, 2, 0)],
    )
    assert not lower.agrees
    assert lower.words() == (
        "real wrk2 does not confirm 22,003 req/s: it fell behind in 2 of 2 runs at 22,003 req/s (p99 13.8 ms to "
        "15.9 ms; p99 13.78 ms > SLA 10 ms), each on a freshly started server; it kept up with 19,803 req/s (p99 "
        "4.00 ms to 6.00 ms): the breakpoint both tools hold is 19,803 req/s"
    )
    none = so.SecondOpinion(
        "wrk2", 1000.0, [_run(1000.0, False, 50.0, over)] * 2, None, (None, 729.0), [_verdict(1000.0, 0, 2)]
    )
    assert not none.agrees and none.words().endswith("it kept up with no rate down to 729 req/s")
    assert none.to_dict()["agrees"] is False and lower.to_dict()["held"] == 19803.0
