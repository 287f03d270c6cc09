"""perflab.analysis.ab on recorded A/B runs (no server): a comparison's verdicts in words, what notebooks show of one
or of several against one baseline."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import synthetic as syn

from perflab import ABParams, Commit, LoadParams, ServerConfig
from perflab.ab.result import ABResult, record
from perflab.ab.sides import Side
from perflab.analysis import ab
from perflab.analysis.ab import baseline, figures, reading, verdicts
from perflab.lab import notebook as nb
from perflab.records import new_run
from perflab.stats import paired
from perflab.stats.methods import Method
from perflab.stats.paired import interval_ratio

#: what a recorded comparison's verdict rows hold besides the verdict (perflab.ab.result.verdict_rows)
ROW = {
    "a": "mode=sync",
    "b": "mode=async",
    "method": "interleaved pairs",
    "rate": 1000.0,
    "level": 1.2e-7,
    "margin": 0.05,
    "stop": "different",
    "measured": 24,
    "budget_s": 300.0,
    "max_pairs": 64,
    "confidence": 0.95,
    "min_pairs": 8,
}


def _run(root, name, ratio, ci, conclusion="different", metric="p99"):
    run = new_run(
        "ab",
        name,
        {"a": {"label": "mode=sync"}, "b": {"label": "mode=async"}, "criteria": {"sla_p99": 0.01}},
        data_root=root,
        environment={},
    )
    # as the comparison records it (Validity.of_probes): 3 of its 51 probes were invalid
    run.meta["validity"] = {"verdict": "valid", "checks": {"probes": {"value": {"valid": 48, "invalid": 3}}}}
    rows = [
        {
            **ROW,
            "metric": metric,
            "stop_rule": True,
            "ratio": ratio,
            "ci_lo": ci[0],
            "ci_hi": ci[1],
            "n": 24,
            "p_value": 1e-7,
            "conclusion": conclusion,
            "direction": "lower",
        },
        {
            **ROW,
            "metric": "p50",
            "stop_rule": False,
            "ratio": 1.0,
            "ci_lo": 0.98,
            "ci_hi": 1.02,
            "n": 24,
            "p_value": 0.5,
            "conclusion": "equivalent",
            "direction": "no difference beyond the margin",
        },
        {
            **ROW,
            "metric": "pass",
            "stop_rule": False,
            "ratio": None,
            "ci_lo": None,
            "ci_hi": None,
            "n": 24,
            "p_value": 1.0,
            "conclusion": "undecided",
            "direction": "no difference detectable",
            "a_value": 24,
            "b_value": 24,
        },
    ]
    run.set_result(method="interleaved pairs", metric=metric, verdicts=rows)
    run.finish("ok")
    return run


def test_answer_key_number_commentary_and_tables_of_recorded_runs(tmp_path):
    x = _run(tmp_path, "ab-x", 0.72, (0.65, 0.80))
    y = _run(tmp_path, "ab-y", 1.01, (0.90, 1.10), conclusion="undecided")
    assert reading.answer_comparison(x) == (
        "B's p99 at 1,000 req/s is 0.72x A's (95% CI 0.65x-0.80x, n = 24 pairs; "
        "interleaved pairs, Wilcoxon p = 1e-7) (A = mode=sync, B = mode=async)."
    )
    assert reading.key_number(x) == {
        "label": "B/A p99 at 1,000 req/s",
        "value": 0.72,
        "unit": "x",
        "interval": [0.65, 0.80],
    }
    md = reading.commentary(x)
    assert md.startswith("**A** = `mode=sync`, **B** = `mode=async`, compared by *interleaved pairs*: interleaved A/B")
    assert md.splitlines()[1:] == [
        "- Validity: valid; 3 of 51 probes invalid (the generator, not the server, set them)",
        "- B's p99 at 1,000 req/s is 0.72x A's (95% CI 0.65x-0.80x, n = 24 pairs; interleaved pairs, Wilcoxon p = 1e-7)",
        "- No difference beyond ±5% in p50 at 1,000 req/s: B/A 1.00x (95% CI 0.98x-1.02x, n = 24 pairs; interleaved "
        "pairs, Wilcoxon p = 0.5)",
        "- Pass at the SLA (p99 <= 10.0 ms) at 1,000 req/s: A passed 24 of 24 probes, B 24; no difference detectable "
        "(exact McNemar p = 1; interleaved pairs)",
        "- Stopped at 1,000 req/s after 24 pairs: the test claims a difference in p99 at n = 24 (p = 1e-7 <= 1.2e-7) "
        "and the interval excludes 1",
    ]
    t = reading.table({"async": x, "virtual": y})
    assert list(t.columns[:3]) == ["comparison", "rate", "metric"] and len(t) == 6
    assert set(t["comparison"]) == {"async", "virtual"} and (t["method"] == "interleaved pairs").all()
    ov = baseline.verdict_lines({"async": x, "virtual": y}, "GET")
    assert ov[0].startswith("**GET, async**: B's p99") and ov[1].startswith(
        "**GET, virtual**: No difference detectable"
    )
    fig = ab.pairs_figure(x)  # a run without pairs.csv still draws, and says so
    assert fig.layout.title.text and fig.layout.annotations
    assert isinstance(reading.table(x), pd.DataFrame)
    section = ab.comparison(x)
    assert section.text == md and section.figure is not None and section.table is not None
    f = ab.answer(x)
    assert f.answer == reading.answer_comparison(x) and f.key_number == reading.key_number(x) and f.breakpoints == []


def test_a_notebook_side_is_checked_and_named():
    assert nb.side({"backend": "memory"}, {"mode": "async"}) == ServerConfig(backend="memory", mode="async")
    assert nb.side(None, {"mode": "sync"}, "HEAD~1") == Commit("HEAD~1", ServerConfig(mode="sync"))
    with pytest.raises(ValueError, match="b: mode: --mode: expected one of sync, async, virtual, got 'turbo'"):
        nb.side({}, {"mode": "turbo"}, what="b")
    with pytest.raises(ValueError, match="a: 'moode' is no ServerConfig field"):
        nb.side({}, {"moode": "async"}, what="a")
    with pytest.raises(ValueError, match="common: expected a dict"):
        nb.side(["mode"], {})


def _bp_comparison(root, key, a_rate, b_rate):
    """A finished breakpoint comparison (no server): two searches and the ratio of their breakpoints."""
    run = new_run(
        "ab",
        f"nb04-{key}",
        {"a": {"label": "workers=1"}, "b": {"label": f"workers={key}"}},
        data_root=root,
        environment={},
    )
    sa = syn.search(a_rate, (0.95 * a_rate, 1.05 * a_rate), [(a_rate, True, 2.0), (1.05 * a_rate, False, 20.0)])
    sb = syn.search(b_rate, (0.95 * b_rate, 1.05 * b_rate), [(b_rate, True, 2.0), (1.05 * b_rate, False, 20.0)])
    sides = (
        Side("A", ServerConfig(workers=1), label="workers=1"),
        Side("B", ServerConfig(workers=key), label=f"workers={key}"),
    )
    res = ABResult(
        run,
        sides,
        "breakpoint",
        Method.INTERLEAVED_SEARCHES,
        breakpoint=interval_ratio(a_rate, sa.interval, b_rate, sb.interval),
        searches={"A": sa, "B": sb},
        metric="breakpoint",
        sla_ms=10.0,
    )
    with run:
        record(res)
        run.meta["validity"] = {"verdict": "valid", "reasons": [], "checks": {}}
    return res


def test_several_configurations_against_one_baseline(tmp_path):
    found = ab.Comparisons(1, {1: "1 worker", 2: "2 workers", 4: "4 workers"})
    found[2] = _bp_comparison(tmp_path, 2, 1000, 1050)  # inside each other's intervals: no claim
    found[4] = _bp_comparison(tmp_path, 4, 1000, 1900)  # disjoint: a claim
    bps = ab.searches(found)
    assert list(bps) == [1, 2, 4] and bps[1] is found[2].searches["A"] and bps[4].rate == 1900
    rows = baseline.search_rows(found, "get-random", 16)
    assert [(r["mode"], r["rate"], r["run_id"]) for r in rows] == [
        ("1 worker", 1000, found[2].run_id),
        ("2 workers", 1050, found[2].run_id),
        ("4 workers", 1900, found[4].run_id),
    ]
    assert baseline.best(found) == 4
    answer = baseline.answer_against(found)
    assert answer.startswith("Against 1 worker, 1 of 2 configurations differs (each compared with it interleaved")
    assert "the best, 4 workers: B's breakpoint is 1.90x A's" in answer and "interleaved searches" in answer
    assert baseline.key_against(found)["label"] == "B/A breakpoint (4 workers)"
    assert ab.findings(found)[1].startswith("**4 workers**: B's breakpoint is 1.90x A's")
    assert found.validity == "valid" and reading.validity({}) is None
    fig = ab.figure(found)
    assert len(fig.data) >= 3 and "side by side with 1 worker's" in fig.layout.title.text
    one = ab.Comparisons(1, {1: "1 worker", 4: "4 workers"})
    one[4] = found[4]
    assert (
        baseline.answer_against(one, "GET") == "GET: " + reading.answer_comparison(found[4])
        and baseline.key_against(one)["label"] == "B/A breakpoint"
    )
    assert (
        baseline.answer_against(ab.Comparisons("lsm", {}), "GET")
        == "GET: Only lsm was measured, so nothing was compared."
    )


def test_a_notebooks_pairs_and_baseline_are_checked_before_anything_runs():
    assert ab.pairs({"max_pairs": 16, "idle_pairs": 0}) == ABParams(max_pairs=16, idle_pairs=0)
    with pytest.raises(ValueError, match="pairs: 'max_pairz' is no ABParams field"):
        ab.pairs({"max_pairz": 16})
    with pytest.raises(ValueError, match="max_pairs: must be"):
        ab.pairs({"max_pairs": 1})
    with pytest.raises(ValueError, match="baseline: 'zfs' is not among the configurations"):
        nb.against({"lsm": ServerConfig()}, LoadParams(rate=100), "nb05", baseline="zfs")


# --- every verdict in words (the rows perflab.ab.result.verdict_rows makes of one) --------------------------


def _pairs(seed, n, ratio=1.0, sigma=0.05, heavy=False):
    """``n`` pairs: A's values log-normal around 2 ms, B's = A's x ratio x noise (Student t when ``heavy``)."""
    rng = np.random.default_rng(seed)
    a = 2.0 * np.exp(rng.normal(0, 0.3, n))
    return a, a * ratio * np.exp(rng.standard_t(2, n) * sigma if heavy else rng.normal(0, sigma, n))


def _row(r, rate=None, **extra) -> dict:
    """A paired verdict as its row, as verdict_rows writes it."""
    d = r.to_dict()
    return {**d, "rate": rate, "ci_lo": d["ci"][0], "ci_hi": d["ci"][1], "min_pairs": r.min_pairs, **extra}


def test_a_paired_verdict_in_words_names_its_method_n_interval_and_p():
    level = paired.Family().level
    r = _row(paired.paired_ratio(*_pairs(1, 25, ratio=0.8), "p99", level=level), 1000.0)
    s = verdicts.sentence(r)
    assert s.startswith("B's p99 at 1,000 req/s is 0.") and "x A's (95% CI" in s
    assert "n = 25 pairs" in s and "interleaved pairs" in s and "Wilcoxon p = 5.96e-8" in s
    cpu = _row(paired.paired_ratio(*_pairs(1, 25, ratio=1.25), "cpu", level=level), 1000.0)
    assert verdicts.sentence(cpu).startswith("B's CPU per request at 1,000 req/s is 1.2")
    short = _row(paired.paired_ratio(*_pairs(1, 22, ratio=0.8), level=level))  # 22 pairs cannot reach the level
    assert "does not reach the comparison's level" in verdicts.sentence(short)
    same = _row(paired.paired_ratio(*_pairs(2, 8, sigma=0.01), "p50", level=level))
    assert verdicts.sentence(same).startswith("no difference beyond ±5% in p50: B/A 1.0")
    noise = _row(paired.paired_ratio(*_pairs(4, 24, sigma=0.6, heavy=True), level=level), 3000.0)
    assert verdicts.sentence(noise).startswith("no difference detectable in p99 at 3,000 req/s with n = 24 pairs")
    few = _row(paired.paired_ratio([1, 2, 3], [1, 2, 3]))
    assert verdicts.sentence(few) == "too few pairs to compare p99: n = 3 (at least 8; interleaved pairs)"


def test_pass_fail_stop_reasons_and_the_idle_sides_cost_in_words():
    p = paired.pass_fail([True] * 25, [False] * 25, paired.Family().level)
    row = {
        "metric": "pass",
        "rate": 500.0,
        "n": p.n,
        "a_value": p.a_passed,
        "b_value": p.b_passed,
        "p_value": p.p_value,
        "conclusion": str(p.conclusion),
        "direction": str(p.direction),
    }
    assert verdicts.sentence(row, "the SLA (p99 <= 10.0 ms)").startswith(
        "B passes the SLA (p99 <= 10.0 ms) at 500 req/s in fewer probes than A: A passed 25 of 25 probes, B 0"
    )
    r = _row(paired.paired_ratio(*_pairs(6, 8, sigma=0.01), "p50", level=1e-3), stop="equivalent")
    assert verdicts.stop_reason(r) == "the 95% interval of p50 lies within ±5%"
    assert (
        verdicts.stop_reason({**r, "stop": "max-pairs", "max_pairs": 32}) == "max_pairs (32) measured without a verdict"
    )
    assert (
        verdicts.stop_reason({**r, "stop": "budget", "budget_s": 90.0})
        == "the time budget (90 s) ended without a verdict"
    )
    # four pairs cannot reach a level of 0.05 (all agreeing gives p = 2/16): measured, and no claim
    idle = {
        "rate": 500.0,
        "busy": "A",
        "idle": "B",
        "ratios": {"p50": {**_row(paired.paired_ratio(*_pairs(9, 4), "p50", 0.05, min_pairs=2)), "ci": [0.98, 1.05]}},
    }
    few_pairs = verdicts.idle_sentence(idle, "p50")
    assert few_pairs.startswith(
        "A's p50 at 500 req/s with B idle but running against A's with B frozen: "
        "not measurable with n = 4 pairs: a claim at level 0.05 needs 6"
    ), few_pairs
    assert "no claim" in few_pairs and "costs" not in few_pairs
    # with enough pairs a real 30% cost is claimed, with its p-value and level
    slow = paired.paired_ratio(*_pairs(9, 12, ratio=1.3, sigma=0.01), "p50", 0.05, min_pairs=2)
    costs = verdicts.idle_sentence({**idle, "ratios": {"p50": _row(slow)}}, "p50")
    assert "1.30x" in costs and costs.endswith("the idle side costs this"), costs
    assert (
        verdicts.idle_sentence({**idle, "ratios": {"p50": {"n": 1, "conclusion": "too few pairs"}}}, "p50")
        == "the idle side's cost was not measured: 1 usable pairs"
    )


def test_two_breakpoints_of_interleaved_searches_in_words():
    def row(r):
        d = r.to_dict()
        return {**d, "rate": None, "ci_lo": d["ci"][0], "ci_hi": d["ci"][1], "a_value": d["a"], "b_value": d["b"]}

    s = verdicts.sentence(row(interval_ratio(1990, (1900, 2070), 1600, (1500, 1660))))
    assert s.startswith("B's breakpoint is 0.80x A's (interval 0.72x-0.87x") and "interleaved searches" in s
    assert "no difference detectable" in verdicts.sentence(row(interval_ratio(2000, (1800, 2200), 1900, (1700, 2100))))
    assert "a search found none" in verdicts.sentence(row(interval_ratio(2000, (1900, 2100), None, (None, 100))))
    recorded = row(interval_ratio(1000, (950, 1050), 2000, (1900, None)))
    assert verdicts.sentence({**recorded, "ci_hi": None}) == verdicts.sentence(
        recorded
    )  # an open end, recorded as null


def test_a_profiled_comparisons_categories_in_words_and_in_a_figure(monkeypatch):
    rng = np.random.default_rng(5)
    a = rng.normal(2, 0.2, 24)
    base = {"rate": 1000.0, "metric": "category", "method": "interleaved pairs", "stop_rule": False}
    rows = [
        {
            **base,
            "category": c,
            "difference": d.difference,
            "ci_lo": d.ci[0],
            "ci_hi": d.ci[1],
            "n": d.n,
            "p_value": d.p_value,
            "conclusion": str(d.conclusion),
            "confidence": d.confidence,
        }
        for c, d in (
            ("storage", paired.paired_difference(a, a + 12, "storage", 1e-6)),
            ("GC", paired.paired_difference(a, a + rng.normal(0, 0.2, 24), "GC", 1e-6)),
        )
    ]
    s = verdicts.sentence(rows[0])
    assert s.startswith(
        "B spends 12 us more per request in storage than A at 1,000 req/s (95% CI 12 us to 12 us, "
        "n = 24 pairs; interleaved pairs, Wilcoxon p = 1.19e-7)"
    ), s
    assert verdicts.sentence(rows[1]).startswith("no difference detectable in the CPU per request in GC at 1,000 req/s")

    class Res:  # a recorded comparison's rows are enough for the figure
        params = {"a": {"label": "A"}, "b": {"label": "B"}}

    monkeypatch.setattr(figures, "rows_of", lambda res: rows)
    fig = figures.categories_figure(Res())
    assert list(fig.data[0].y) == ["storage", "GC"] and fig.layout.xaxis.title.text.startswith("B - A")
