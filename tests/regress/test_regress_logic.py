"""The logic of ``perflab bisect`` and ``perflab gate`` on synthetic verdicts (pure Python, no server): how a
verdict row reads as a regression check, where the search goes and how it ends, what the gate's exit status
is, and the words and files they leave (from recorded runs made here by hand)."""

from __future__ import annotations

import json
import math
from xml.etree import ElementTree as ET

import pytest

from perflab.analysis import regress as words
from perflab.config.regress import BisectParams, GateParams, RepoParams
from perflab.errors import BuildError
from perflab.records import new_run
from perflab.regress import bisect as bisect_mod
from perflab.regress.bisect import Found, max_comparisons, search
from perflab.regress.gate import EXIT
from perflab.regress.verdict import Check, Outcome, judge
from perflab.report.regress import bisect_page, write_gate_files


def _row(conclusion, ratio, lo, hi, direction="no difference detectable", metric="cpu", margin=0.05):
    return {
        "metric": metric,
        "rate": 2000.0,
        "conclusion": conclusion,
        "direction": direction,
        "ratio": ratio,
        "ci_lo": lo,
        "ci_hi": hi,
        "n": 16,
        "p_value": 1e-4,
        "level": 1e-4,
        "margin": margin,
        "method": "interleaved pairs",
    }


def test_a_verdict_reads_as_a_regression_check_in_the_worse_direction_only():
    assert judge(_row("different", 1.2, 1.15, 1.25, "higher")).outcome is Outcome.REGRESSION
    assert judge(_row("different", 0.8, 0.75, 0.85, "lower")).outcome is Outcome.IMPROVEMENT
    assert judge(_row("equivalent", 1.0, 0.97, 1.03)).outcome is Outcome.NOT_WORSE
    assert judge(_row("undecided", 0.97, 0.9, 1.04)).outcome is Outcome.NOT_WORSE  # worse end within +5%
    assert judge(_row("undecided", 1.03, 0.98, 1.09)).outcome is Outcome.UNDECIDED
    assert judge(_row("undecided", 0.5, 0.4, 0.6)).outcome is Outcome.IMPROVEMENT  # all of it beyond -5%
    # a lower breakpoint is the slower server; an open upper end is no evidence against it
    bp = dict(metric="breakpoint", margin=0.05)
    assert judge({**_row("different", 0.8, 0.72, 0.87, "lower", **bp), "n": None}).outcome is Outcome.REGRESSION
    assert judge({**_row("undecided", 1.0, 0.96, None, **bp), "n": None}).outcome is Outcome.NOT_WORSE
    assert judge({**_row("undecided", 1.0, 0.9, 1.1, **bp), "n": None}).outcome is Outcome.UNDECIDED
    # nothing to read: too few pairs, or a comparison whose probes were mostly invalid
    assert judge(_row("too few pairs", 1.0, math.nan, math.nan)).outcome is Outcome.UNMEASURED
    bad = judge(_row("different", 1.2, 1.15, 1.25, "higher", metric="p50"), validity="invalid")
    assert bad.outcome is Outcome.UNMEASURED and "generator" in bad.why
    # the server's CPU time is its own, whatever held the generator back
    assert judge(_row("different", 1.2, 1.15, 1.25, "higher"), validity="invalid").outcome is Outcome.REGRESSION
    assert [
        EXIT[o]
        for o in (Outcome.NOT_WORSE, Outcome.IMPROVEMENT, Outcome.REGRESSION, Outcome.UNDECIDED, Outcome.UNMEASURED)
    ] == [0, 0, 1, 2, 3]


def _check(outcome: Outcome, ratio: float = 1.0) -> Check:
    lo, hi = ratio * 0.97, ratio * 1.03
    return Check(outcome, "cpu", 2000.0, ratio, (lo, hi), 16, 1e-4, 1e-4, 0.05, "x", "interleaved pairs")


class History:
    """A history of ``n`` commits after GOOD whose commit ``first`` (and every later one) is slower; commits in
    ``broken`` do not build; commits in ``foggy`` stay undecided for their first ``fog`` attempts."""

    def __init__(self, n, first=None, broken=(), foggy=(), fog=99, good_slower=False):
        self.n, self.first, self.broken, self.foggy, self.fog = n, first, set(broken), set(foggy), fog
        self.good_slower = good_slower
        self.calls = []

    def __call__(self, i, attempt):
        self.calls.append((i, attempt))
        if i in self.broken:
            raise BuildError(f"commit {i} cannot be built: exit 1")
        if i in self.foggy and attempt < self.fog:
            return _check(Outcome.UNDECIDED, 1.03)
        if self.good_slower:
            return _check(Outcome.IMPROVEMENT, 0.8)
        slower = self.first is not None and i >= self.first
        return _check(Outcome.REGRESSION, 1.25) if slower else _check(Outcome.NOT_WORSE, 1.0)


@pytest.mark.parametrize("first", range(1, 17))
def test_the_search_names_the_first_slower_commit_wherever_it_is(first):
    h = History(16, first)
    s = search(16, h)
    assert s.found is Found.FIRST_SLOWER and s.first == first and s.candidates == [first]
    assert h.calls[0] == (16, 0)  # BAD against GOOD first
    assert s.comparisons <= max_comparisons(16, 0) and s.comparisons == len(h.calls)
    assert s.check_of(first).outcome is Outcome.REGRESSION


def test_a_history_without_a_regression_and_a_good_that_is_slower_say_so_after_one_comparison():
    s = search(16, History(16))
    assert s.found is Found.NO_REGRESSION and s.first is None and s.comparisons == 1
    s = search(16, History(16, good_slower=True))
    assert s.found is Found.GOOD_SLOWER and s.comparisons == 1


def test_a_commit_that_does_not_build_is_skipped_and_named():
    h = History(16, first=9, broken={12})
    s = search(16, h)
    assert s.found is Found.FIRST_SLOWER and s.first == 9 and s.skipped == [12]
    # the commit just before it, or the slower commit itself, does not build: the answer is the range, not a guess
    s = search(16, History(16, first=9, broken={8}))
    assert s.found is Found.FIRST_SLOWER and s.first is None and s.candidates == [8, 9] and s.skipped == [8]
    h = History(16, first=9, broken={9})
    s = search(16, h)
    assert s.found is Found.FIRST_SLOWER and s.first is None and s.candidates == [9, 10] and s.skipped == [9]
    with pytest.raises(BuildError, match="BAD cannot be built"):
        search(16, History(16, first=3, broken={16}))


def test_an_undecided_step_spends_more_pairs_then_says_it_cannot_tell():
    h = History(16, first=9, foggy={8}, fog=1)  # decided at its retry
    s = search(16, h, retries=1)
    assert s.first == 9 and (8, 1) in h.calls
    h = History(16, first=9, foggy={8})  # never decided: stop there, naming the range
    s = search(16, h, retries=1)
    assert s.found is Found.CANNOT_TELL and s.first is None and s.undecided == 8 and (8, 1) in h.calls
    assert s.lo < 8 < s.hi or s.lo < 9 <= s.hi
    s = search(16, History(16, first=1, foggy={16}), retries=2)
    assert s.found is Found.CANNOT_TELL and (s.lo, s.hi, s.undecided) == (0, 16, 16) and s.comparisons == 3


def test_the_bound_counts_the_comparisons():
    assert max_comparisons(16, 1) == 10 and max_comparisons(1, 0) == 1 and max_comparisons(2, 1) == 4


def test_the_commands_defaults_and_bad_parameters():
    g, b = GateParams(), BisectParams()
    assert (g.metric, g.alpha, g.stop_at, g.idle_pairs) == ("cpu", 1e-3, "not-worse", 0)
    assert (b.metric, b.alpha, b.retries) == ("cpu", 1e-3, 1) and GateParams(margin="5%").margin == 0.05
    with pytest.raises(ValueError, match="build: only with repo"):
        RepoParams(build="make")
    with pytest.raises(ValueError, match="retries"):
        BisectParams(retries=9)


# --- the words and files, from runs recorded by hand ----------------------------------------------


def _gate_run(root, outcome: Outcome, error=None):
    c = _check(outcome, 1.25 if outcome is Outcome.REGRESSION else 1.0)
    run = new_run(
        "gate",
        "gate-test",
        {
            "base": {"sha": "a" * 40, "subject": "base"},
            "head": {"sha": "b" * 40, "subject": "head"},
            "repo": {"repo": "/r", "yours": False, "project": None},
        },
        root,
    )
    with run:
        run.set_result(
            outcome=str(outcome),
            exit_code=EXIT[outcome],
            metric="cpu",
            rate=2000.0,
            check=None if error else c.to_dict(),
            alpha=1e-3,
            bound=1e-3,
            seconds=61.0,
            ab_run="x",
            error=error,
        )
    return run


def test_the_gates_summary_junit_and_json(tmp_path):
    run = _gate_run(tmp_path, Outcome.REGRESSION)
    lines = words.gate_lines(run)
    assert lines[1].startswith("HEAD's CPU per request at 2,000 req/s is 1.25x BASE's (95% CI")
    assert "a regression" in lines[2] and lines[2].endswith("(exit 1)") and "at most 0.001" in lines[3]
    files = write_gate_files(run, tmp_path / "out")
    assert [f.name for f in files] == ["gate.md", "gate.xml", "gate.json"] and all(f.is_file() for f in files)
    md = files[0].read_text()
    assert md.startswith("### perflab gate: failed: a regression") and "| CPU per request at 2,000 req/s | 1.25x" in md
    case = ET.parse(files[1]).getroot().find("testcase")
    assert case.find("failure").get("type") == "regression" and case.get("name") == "CPU per request at 2,000 req/s"
    doc = json.loads(files[2].read_text())
    assert doc["exit_code"] == 1 and doc["false_alarm_bound"] == 1e-3 and doc["check"]["ratio"] == 1.25
    ok = _gate_run(tmp_path, Outcome.NOT_WORSE)
    assert ET.parse(write_gate_files(ok)[1]).getroot().find("testcase").find("failure") is None
    broken = _gate_run(tmp_path, Outcome.UNMEASURED, error="commit bbbb cannot be built")
    assert "could not measure: commit bbbb cannot be built (exit 3)" in words.gate_lines(broken)[1]
    assert (
        ET.parse(write_gate_files(broken)[1]).getroot().find("testcase").find("error").get("type")
        == "could-not-measure"
    )


def test_the_gates_table_names_the_confidence_its_interval_was_computed_at(tmp_path, monkeypatch):
    """The table's header read '95% interval' as text, whatever confidence the comparison's intervals have."""
    from perflab.stats.paired import CONFIDENCE

    run = _gate_run(tmp_path, Outcome.REGRESSION)
    assert f"| metric | HEAD / BASE | {100 * CONFIDENCE:g}% interval |" in words.gate_markdown(run)
    monkeypatch.setattr(words, "CONFIDENCE", 0.9)
    assert "| metric | HEAD / BASE | 90% interval | pairs |" in words.gate_markdown(run)


def test_a_bisections_chain_of_verdicts_in_words_and_on_its_page(tmp_path):
    commits = [bisect_mod.Revision(f"{i:040x}", f"commit {i}") for i in range(9)]
    h = History(8, first=6, broken={4})
    s = search(8, h)
    run = new_run(
        "bisect",
        "bisect-test",
        {
            "commits": [c.to_dict() for c in commits],
            "repo": {"repo": "/r", "yours": False},
            "metric": "cpu",
            "rate": 2000.0,
            "bisect": BisectParams().to_dict(),
        },
        tmp_path,
    )
    with run:
        res = bisect_mod.BisectResult(run, commits, s, BisectParams(), "cpu", 300.0, ["dirty tree"])
        bisect_mod._record(res)
    lines = words.bisect_lines(run)
    assert lines[0].startswith(f"bisect GOOD {commits[0].sha[:10]} (commit 0) .. BAD {commits[8].sha[:10]}")
    assert any("skipped, commit 4 cannot be built" in x for x in lines)
    assert any(x.strip().startswith(f"BAD {commits[8].sha[:10]}") and x.endswith("regression") for x in lines)
    assert words.answer(run).startswith(f"first slower commit: {commits[6].sha[:10]} (commit 6): CPU per request")
    assert f"at most {res.bound:.2g}" in words.bisect_bound(run) and lines[-1] == "note: dirty tree"
    page = bisect_page(run)
    text = page.read_text()
    assert (page.parent / "assets" / "plotly.min.js").is_file() and "first slower commit" in text
    assert text.count("<tr>") == len(s.steps) + 1 and "Plotly.newPlot" in text
    fig = words.bisect_figure(run)
    assert fig.layout.yaxis.type == "log" and {t.name for t in fig.data} >= {"regression", "not worse"}


def test_the_likely_culprit_is_compared_first():
    """A prior that puts nearly all the code lines changed on one commit: it is compared first. Where it is the
    culprit, the commit before it settles the search (two comparisons, BAD never compared); where it is not,
    the search goes on from it and still names the first slower commit."""
    lines = [0, 0, 0, 0, 0, 2, 0, 0, 0]  # commit 5 changed code, the others notes only
    prior = bisect_mod.prior_of(lines)
    assert bisect_mod.likely(prior, 8) == 5 and sum(prior) == pytest.approx(2)
    h = History(8, first=5)
    s = search(8, h, prior=prior)
    assert s.found is Found.FIRST_SLOWER and s.first == 5 and h.calls == [(5, 0), (4, 0)]
    for first in (2, 6, 8):  # the prior misleads: the search still finds the culprit
        h = History(8, first=first)
        s = search(8, h, prior=prior)
        assert s.first == first and h.calls[0] == (5, 0), (first, h.calls)
        assert s.comparisons <= max_comparisons(8, 0) + 1
    s = search(8, History(8), prior=prior)  # no regression at all: said after BAD too
    assert s.found is Found.NO_REGRESSION and s.comparisons == 2


def test_an_even_prior_bisects_as_without_one():
    for lines in ([0] * 17, [0] + [3] * 16):
        prior = bisect_mod.prior_of(lines)
        assert bisect_mod.likely(prior, 16) is None
        for first in range(1, 17):
            plain, weighted = History(16, first), History(16, first)
            search(16, plain)
            search(16, weighted, prior=prior)
            assert weighted.calls == plain.calls, first
    with pytest.raises(ValueError, match="prior"):
        search(4, History(4, first=2), prior=[0, 1, 1])


def test_a_commits_code_lines_leave_out_documentation(tmp_path):
    from perflab.commits.git import Revision, between, code_changes, resolve
    from perflab.regress import synthetic

    repo = synthetic.declared(tmp_path, [10, 10, 10, 50, 50])  # each commit rewrites notes.txt; 3 raises work-ns
    head = resolve(repo, "HEAD")
    commits = between(repo, resolve(repo, "HEAD~4"), head)
    assert code_changes(repo, commits) == [0, 0, 0, 2, 0]
    assert code_changes(repo, commits, under="nowhere") == [0, 0, 0, 0, 0]
    assert isinstance(commits[0], Revision)
