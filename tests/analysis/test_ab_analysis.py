"""perflab.analysis.ab on recorded A/B runs (no server): what notebooks show of a comparison."""

from __future__ import annotations

import pandas as pd
import pytest
import synthetic as syn

from perflab import ABParams, Commit, LoadParams, ServerConfig
from perflab.ab.result import ABResult, record
from perflab.ab.sides import Side
from perflab.analysis import ab as abx
from perflab.measure.methods import Method
from perflab.measure.paired import interval_ratio
from perflab.records import new_run


def _run(root, name, ratio, ci, conclusion="different", metric="p99"):
    run = new_run("ab", name, {"a": {"label": "mode=sync"}, "b": {"label": "mode=async"}}, data_root=root,
                  environment={})
    word = "B's p99 at 1,000 req/s is" if conclusion == "different" else "no difference detectable in p99 at 1,000 req/s"
    rows = [{"a": "mode=sync", "b": "mode=async", "method": "interleaved pairs", "rate": 1000.0, "metric": metric,
             "stop_rule": True, "ratio": ratio, "ci_lo": ci[0], "ci_hi": ci[1], "n": 24, "p_value": 1e-7,
             "conclusion": conclusion, "direction": "lower", "margin": 0.05, "stop": "different",
             "sentence": f"{word} {ratio:.2f}x A's (95% CI ...)"},
            {"a": "mode=sync", "b": "mode=async", "method": "interleaved pairs", "rate": 1000.0, "metric": "p50",
             "stop_rule": False, "ratio": 1.0, "ci_lo": 0.98, "ci_hi": 1.02, "n": 24, "p_value": 0.5,
             "conclusion": "equivalent", "direction": "no difference beyond the margin", "stop": "different",
             "sentence": "no difference beyond ±5% in p50 at 1,000 req/s"}]
    run.set_result(method="interleaved pairs", metric=metric, verdicts=rows, lines=["A = mode=sync, B = mode=async"]
                   + [r["sentence"] for r in rows])
    run.finish("ok")
    return run


def test_answer_key_number_commentary_and_tables_of_recorded_runs(tmp_path):
    x = _run(tmp_path, "ab-x", 0.72, (0.65, 0.80))
    y = _run(tmp_path, "ab-y", 1.01, (0.90, 1.10), conclusion="undecided")
    assert abx.answer(x) == "B's p99 at 1,000 req/s is 0.72x A's (95% CI ...) (A = mode=sync, B = mode=async)."
    assert abx.key_number(x) == {"label": "B/A p99 at 1,000 req/s", "value": 0.72, "unit": "x", "interval": [0.65, 0.80]}
    md = abx.commentary(x)
    assert md.startswith("**A** = `mode=sync`, **B** = `mode=async`, compared by *interleaved pairs*: interleaved A/B")
    assert "- No difference beyond ±5% in p50" in md
    t = abx.table({"async": x, "virtual": y})
    assert list(t.columns[:3]) == ["comparison", "rate", "metric"] and len(t) == 4
    assert set(t["comparison"]) == {"async", "virtual"} and (t["method"] == "interleaved pairs").all()
    ov = abx.overview({"async": x, "virtual": y})
    assert ov.splitlines()[0].startswith("- **async**: B's p99") and "- **virtual**: No difference detectable" in ov
    fig = abx.pairs_figure(x)   # a run without pairs.csv still draws, and says so
    assert fig.layout.title.text and fig.layout.annotations
    assert isinstance(abx.table(x), pd.DataFrame)


def test_a_notebook_side_is_checked_and_named():
    assert abx.side({"backend": "memory"}, {"mode": "async"}) == ServerConfig(backend="memory", mode="async")
    assert abx.side(None, {"mode": "sync"}, "HEAD~1") == Commit("HEAD~1", ServerConfig(mode="sync"))
    with pytest.raises(ValueError, match="b: mode: --mode: expected one of sync, async, virtual, got 'turbo'"):
        abx.side({}, {"mode": "turbo"}, what="b")
    with pytest.raises(ValueError, match="a: 'moode' is no ServerConfig field"):
        abx.side({}, {"moode": "async"}, what="a")
    with pytest.raises(ValueError, match="common: expected a dict"):
        abx.side(["mode"], {})


def _bp_comparison(root, key, a_rate, b_rate):
    """A finished breakpoint comparison (no server): two searches and the ratio of their breakpoints."""
    run = new_run("ab", f"nb04-{key}", {"a": {"label": "workers=1"}, "b": {"label": f"workers={key}"}}, data_root=root,
                  environment={})
    sa = syn.search(a_rate, (0.95 * a_rate, 1.05 * a_rate), [(a_rate, True, 2.0), (1.05 * a_rate, False, 20.0)])
    sb = syn.search(b_rate, (0.95 * b_rate, 1.05 * b_rate), [(b_rate, True, 2.0), (1.05 * b_rate, False, 20.0)])
    sides = (Side("A", ServerConfig(workers=1), label="workers=1"), Side("B", ServerConfig(workers=key),
                                                                         label=f"workers={key}"))
    res = ABResult(run, sides, "breakpoint", Method.INTERLEAVED_SEARCHES,
                   breakpoint=interval_ratio(a_rate, sa.interval, b_rate, sb.interval), searches={"A": sa, "B": sb},
                   metric="breakpoint", sla_ms=10.0)
    with run:
        record(res)
        run.meta["validity"] = {"verdict": "valid", "reasons": [], "checks": {}}
    return res


def test_several_configurations_against_one_baseline(tmp_path):
    found = abx.Comparisons(1, {1: "1 worker", 2: "2 workers", 4: "4 workers"})
    found[2] = _bp_comparison(tmp_path, 2, 1000, 1050)    # inside each other's intervals: no claim
    found[4] = _bp_comparison(tmp_path, 4, 1000, 1900)    # disjoint: a claim
    bps = abx.searches(found)
    assert list(bps) == [1, 2, 4] and bps[1] is found[2].searches["A"] and bps[4].rate == 1900
    rows = abx.search_rows(found, "get-random", 16)
    assert [(r["mode"], r["rate"], r["run_id"]) for r in rows] == [
        ("1 worker", 1000, found[2].run_id), ("2 workers", 1050, found[2].run_id), ("4 workers", 1900, found[4].run_id)]
    assert abx.best(found) == 4
    answer = abx.answer_against(found)
    assert answer.startswith("Against 1 worker, 1 of 2 configurations differs (each compared with it interleaved")
    assert "the best, 4 workers: B's breakpoint is 1.90x A's" in answer and "interleaved searches" in answer
    assert abx.key_against(found)["label"] == "B/A breakpoint (4 workers)"
    assert abx.overview(found).splitlines()[1].startswith("- **4 workers**: B's breakpoint is 1.90x A's")
    assert found.validity == "valid" and abx.validity({}) is None
    fig = abx.figure(found)
    assert len(fig.data) >= 3 and "side by side with 1 worker's" in fig.layout.title.text
    one = abx.Comparisons(1, {1: "1 worker", 4: "4 workers"})
    one[4] = found[4]
    assert abx.answer_against(one, "GET") == "GET: " + abx.answer(found[4]) and abx.key_against(one)["label"] == "B/A breakpoint"
    assert abx.answer_against(abx.Comparisons("lsm", {}), "GET") == "GET: Only lsm was measured, so nothing was compared."


def test_a_notebooks_pairs_and_baseline_are_checked_before_anything_runs():
    assert abx.pairs({"max_pairs": 16, "idle_pairs": 0}) == ABParams(max_pairs=16, idle_pairs=0)
    with pytest.raises(ValueError, match="pairs: 'max_pairz' is no ABParams field"):
        abx.pairs({"max_pairz": 16})
    with pytest.raises(ValueError, match="max_pairs: must be"):
        abx.pairs({"max_pairs": 1})
    with pytest.raises(ValueError, match="baseline: 'zfs' is not among the configurations"):
        abx.against({"lsm": ServerConfig()}, LoadParams(rate=100), "nb05", baseline="zfs")
