"""Notebook 08 run for real, as an A/A comparison (the same configuration on both sides): it says so, claims
no difference, and ends with its finding; its comparison is one recorded ``ab`` run.

A false claim between identical sides has probability at most alpha = 1e-6 (any metric, any look:
perflab.measure.paired), so this test cannot fail by chance; a claim would be a defect of the method, or a
persistent difference between two JVMs of one configuration beyond the ±5% margin, which the margin is
there to cover."""

from __future__ import annotations

import json

import nbformat
import papermill

from perflab import open_run, paths
from perflab.analysis import findings
from perflab.records import list_runs

NB = paths.repo_root() / "notebooks" / "08-ab.ipynb"
SIDE = {"mode": "async", "workers": 8, "debug_delay": "4ms"}
TINY = {"a": SIDE, "b": SIDE, "common": {"backend": "memory"}, "script": "status.lua", "prefill_keys": 0,
        "rates": [500], "metric": "p50", "probe_s": 0.4, "probe_warmup_s": 0.2, "max_pairs": 24, "budget_s": 60,
        "idle_pairs": 2}


def test_notebook_08_as_an_aa_comparison_claims_nothing_and_ends_with_its_finding(server_build, loadgen_binary,
                                                                                  data_root, tmp_path):
    out = tmp_path / "08.ipynb"
    papermill.execute_notebook(str(NB), str(out), parameters=TINY, cwd=str(NB.parent), progress_bar=False,
                               kernel_name="python3")
    nb = nbformat.read(str(out), as_version=4)
    text = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "A and B are the same configuration: this is an A/A comparison" in text
    assert "compared by *interleaved pairs*" in text
    runs = list_runs(data_root)
    assert list(runs["kind"]) == ["ab"] and list(runs["status"]) == ["ok"]
    run = open_run(runs["run_id"].iloc[0])
    verdicts = run.results["verdicts"]
    assert {v["metric"] for v in verdicts} == {"p50", "p99", "p99.9", "pass"}
    assert all(v["conclusion"] != "different" for v in verdicts), run.results["lines"]
    assert all(v["method"] == "interleaved pairs" for v in verdicts) and run.results["identical"]
    p50 = next(v for v in verdicts if v["metric"] == "p50")
    if p50["conclusion"] == "equivalent":   # the interval said "within ±5%" before any claim was possible
        assert 1 / 1.05 <= p50["ci_lo"] and p50["ci_hi"] <= 1.05
    f = findings.read(nb)
    assert f["answer"].startswith(("No difference", "no difference")) and "A = " in f["answer"]
    assert f["key_number"]["label"] == "B/A p50 at 500 req/s" and f["validity"] == run.validity
