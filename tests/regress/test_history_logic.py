"""The history's logic on a fake measure function (pure Python, no server): change point -> check -> verdict; a
history without a change says "no change point"; a candidate the check does not confirm is never a regression;
a commit that does not build is skipped and named; too few measured commits say how many are needed."""

from __future__ import annotations

import pytest

from perflab.errors import BuildError
from perflab.regress.history import Found, trace
from perflab.regress.verdict import Check, Outcome
from perflab.stats.changepoints import MIN_POINTS

NOISE = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99]


def _measure(levels: list[float], broken: tuple[int, ...] = ()):
    def measure(i):
        if i in broken:
            raise BuildError(f"commit {i} cannot be built")
        base = levels[i]
        return {m: [base * NOISE[(i + r) % len(NOISE)] for r in range(3)] for m in ("cpu", "p50", "p99")}, f"run{i}"

    return measure


def _compare(outcome: Outcome, calls: list):
    def compare(a, b):
        calls.append((a, b))
        return Check(outcome, "cpu", 400.0, 1.8, (1.6, 2.0), 8, 0.004, 0.008, 0.05, "x", "interleaved pairs")

    return compare


def test_a_change_point_is_checked_and_a_proven_slower_one_is_a_regression():
    calls = []
    t = trace(6, _measure([20, 20, 20, 40, 40, 40]), _compare(Outcome.REGRESSION, calls))
    assert t.found is Found.REGRESSION and calls == [(2, 3)]
    (c,) = t.candidates
    assert c.index == 3 and c.before == 2 and c.step == pytest.approx(2, rel=0.05) and c.outcome == "regression"
    assert t.points[3].interval("cpu")[0] <= t.points[3].median("cpu") <= t.points[3].interval("cpu")[1]


def test_a_history_without_a_change_has_no_change_point_and_no_check():
    calls = []
    t = trace(6, _measure([20] * 6), _compare(Outcome.REGRESSION, calls))
    assert t.found is Found.NO_CHANGE_POINT and t.candidates == [] and calls == []


@pytest.mark.parametrize(
    "outcome,words",
    [(Outcome.NOT_WORSE, "not confirmed"), (Outcome.UNDECIDED, "undecided"), (Outcome.UNMEASURED, "unmeasured")],
)
def test_a_candidate_the_check_does_not_confirm_is_no_regression(outcome, words):
    t = trace(6, _measure([20, 20, 20, 40, 40, 40]), _compare(outcome, []))
    assert t.found is Found.NONE_CONFIRMED and t.candidates[0].outcome == words and not t.candidates[0].regression


def test_an_improvement_is_named_as_one_and_without_checks_nothing_is_a_regression():
    t = trace(6, _measure([40, 40, 40, 20, 20, 20]), _compare(Outcome.IMPROVEMENT, []))
    assert t.found is Found.NONE_CONFIRMED and t.candidates[0].outcome == "improvement" and t.candidates[0].step < 0.6
    t = trace(6, _measure([20, 20, 20, 40, 40, 40]), None)
    assert t.found is Found.NONE_CONFIRMED and t.candidates[0].outcome == "not checked" and t.checks == 0


def test_a_commit_that_does_not_build_is_skipped_and_the_check_compares_its_neighbours():
    calls = []
    t = trace(7, _measure([20, 20, 20, 0, 40, 40, 40], broken=(3,)), _compare(Outcome.REGRESSION, calls))
    assert [p.index for p in t.skipped] == [3] and "cannot be built" in t.skipped[0].skipped
    assert t.found is Found.REGRESSION and calls == [(2, 4)]


def test_too_few_measured_commits():
    t = trace(MIN_POINTS, _measure([20] * MIN_POINTS, broken=(1,)), _compare(Outcome.REGRESSION, []))
    assert t.found is Found.TOO_FEW and t.changes is None and len(t.measured) == MIN_POINTS - 1
