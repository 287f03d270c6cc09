"""perflab.analysis.ab on recorded A/B runs (no server): what notebooks show of a comparison."""

from __future__ import annotations

import pandas as pd
import pytest

from perflab import Commit, ServerConfig
from perflab.analysis import ab as abx
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
