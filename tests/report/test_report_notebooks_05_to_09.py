"""`python -m perflab report` end to end on notebooks 05, 07, 08 and 09 (a tiny plan's: seconds per load), a report
of its own so that its minutes run beside test_pipeline.py's (which checks the report folder as a reader uses it, on
notebooks 01-04 and 06). Here: each of these notebooks runs, shows its results, renders in chromium, and says
what its known truth allows: 07 compares ramp estimates and claims no interval, 08 between identical sides claims
no difference in latency, 09 never names a wrong commit of its synthetic history."""

from __future__ import annotations

import html
import json

import nbformat
import pytest
import tiny_report
from tiny_report import CAVEAT, PAIRS, SLA

from perflab import open_run

#: notebook 08 as an A/A comparison (the same configuration on both sides). What its test asserts cannot fail by
#: chance on a busy machine: a claim needs, at a look, an exact Wilcoxon p at most the comparison's level (1.7e-4:
#: from 14 pairs, nearly all agreeing in sign), an interval that excludes 1 and a median ratio outside ±5 %;
#: between identical sides the pairs' latencies are exchangeable, so every latency claim together has probability
#: at most alpha = 1e-3 (perflab.stats.paired; simulated in tests/stats/test_paired.py), however slow or uneven
#: the machine. Not their CPU per request: two JVMs of one configuration compile differently, and that difference
#: is real (the run's note says so).
#: Nothing depends on time: no budget, so the rule stops only when the p50 interval lies within ±5 % or after
#: max_pairs pairs. How often A/A comparisons claim a difference here is the benchmark's (scripts/ab_benchmark.py).
SIDE = {"mode": "async", "workers": 8, "debug_delay": "4ms"}
AA = {
    "a": SIDE,
    "b": SIDE,
    "common": {"backend": "memory"},
    "script": "status.lua",
    "prefill_keys": 0,
    "rates": [500],
    "metric": "p50",
    "probe_duration": "400ms",
    "warmup": "200ms",
    "max_pairs": 16,
    "alpha": 1e-3,
    "budget": None,
    "idle_pairs": 2,
    "server_warmup": "1s",
}
#: notebook 09 on a synthetic history of 4 commits, the third adding 300 us of CPU per request (some ten times the
#: server's own): two short probes per commit, a check of 8 pairs at alpha 0.05 (8 that agree can claim it)
HISTORY = {
    "commits": 4,
    "planted": 2,
    "planted_us": 300,
    "rate": 400,
    "repeats": 2,
    "probe_duration": "200ms",
    "warmup": "100ms",
    "server_warmup": "500ms",
    "max_pairs": 8,
    "alpha": 0.05,
    "margin": 0.5,
    "budget": None,
}
TINY = tiny_report.plan(
    "tiny-05-09",
    [
        {
            "notebook": "05-storage",
            "parameters": {
                "backends": ["lsm", "memory"],
                "duration": 1,
                "warmup": 0.5,
                "rate": 500,
                "connections": 4,
                "prefill_keys": 5000,
                "memtable_sizes": ["256k"],
                "flush_threads": [1],
                "compaction_memtable": "64k",
                "pairs": PAIRS,
            },
        },
        # two nodes are enough to go through every section (the matrix is every ack of from = 2)
        {
            "notebook": "07-cluster",
            "parameters": {
                "nodes": 2,
                "ack": 1,
                "from_": 2,
                "rate": 100,
                "duration": 1,
                "warmup": 0.5,
                "threads": 2,
                "connections": 2,
                "keys": 200,
                "fill_keys": 50,
                "cluster_warmup": 1,
                "search": "ramp",
                "search_start_rate": 100,
                "search_max_rate": 2000,
                "ramp_duration": 2,
                "fault_node": 1,
                "fault_at": 0.5,
                "fault_down": 0.5,
                "fault_duration": 2,
                "check_rate": 50,
                "sla_p99": SLA,
            },
        },
        {"notebook": "08-ab", "parameters": AA},
        {"notebook": "09-history", "parameters": HISTORY},
    ],
)
OK = ["05-storage", "07-cluster", "08-ab", "09-history"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return tiny_report.run(tmp_path_factory, TINY)


def test_every_notebook_runs_and_shows_its_results(report):
    proc, folder = report["proc"], report["folder"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {n["notebook"]: n["status"] for n in report["json"]["notebooks"]} == {n: "ok" for n in OK}
    for name in OK:
        nb = nbformat.read(str(folder / "notebooks" / f"{name}.ipynb"), as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.output_type == "error"], name
        assert [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})], f"{name}: plots"
        page = (folder / f"{name}.html").read_text()
        assert f'<div class="perflab-caveat">{CAVEAT}</div>' in html.unescape(page), name


@pytest.mark.browser
def test_every_page_renders_in_chromium(report):
    data = report["json"]
    for n in data["notebooks"]:
        b = n["browser"]
        assert b["ok"] and b["network"] == [] and b["errors"] == [], (n["notebook"], b)
        assert b["plots"] > 0 and b["drawn"] == b["plots"], (n["notebook"], b)
    assert data["index_browser"]["ok"], data["index_browser"]


def test_the_index_leads_with_their_findings_and_keeps_ramp_estimates_apart(report):
    folder, data, page = report["folder"], report["json"], report["index"].read_text()
    for n in data["notebooks"]:
        assert n["finding"] and n["finding"]["answer"], n["notebook"]
    bps = data["breakpoints"]
    assert len(bps) == 2 and {b["notebook"] for b in bps} == {"07-cluster"}
    assert all(b["verdict"] == "ramp estimate" and b["interval"] is None for b in bps), (
        "07's tiny plan compares the ramps' estimates: no interval is claimed"
    )
    # the page lists the ramps' estimates under their own name, not as breakpoints
    estimates = page[page.index('id="ramp-estimates"') : page.index('id="record"')]
    assert estimates.count("07-cluster</a>") == 2 and "not a breakpoint" in estimates
    # 05 compares the backends interleaved, 08 is one comparison, and 09 checks each change point its history
    # found with one comparison: as many as its record says (the tiny plan's history may find none on a loaded
    # machine: test_notebook_09_...)
    ab = {n["notebook"]: [r for r in n["runs"] if open_run(folder / r["path"]).kind == "ab"] for n in data["notebooks"]}
    (history,) = [
        open_run(folder / r["path"])
        for n in data["notebooks"]
        if n["notebook"] == "09-history"
        for r in n["runs"]
        if open_run(folder / r["path"]).kind == "history"
    ]
    checks = {"09-history": history.results["checks"]} if history.results["checks"] else {}
    assert {k: len(v) for k, v in ab.items() if v} == {"05-storage": 1, "08-ab": 1, **checks}
    answer = next(n for n in data["notebooks"] if n["notebook"] == "05-storage")["finding"]["answer"]
    assert "interleaved pairs" in answer, answer


def test_notebook_08_as_an_aa_comparison_claims_nothing_and_ends_with_its_finding(report):
    """Notebook 08 between identical sides (AA above): it says so, claims no difference in latency, stops only on
    a verdict or max_pairs (no budget), and its comparison is one recorded ``ab`` run."""
    folder = report["folder"]
    nb = nbformat.read(str(folder / "notebooks" / "08-ab.ipynb"), as_version=4)
    text = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "A and B are the same configuration: this is an A/A comparison" in text
    assert "compared by *interleaved pairs*" in text
    (entry,) = [n for n in report["json"]["notebooks"] if n["notebook"] == "08-ab"]
    (rec,) = entry["runs"]
    run = open_run(folder / rec["path"])
    assert run.kind == "ab" and run.status == "ok"
    verdicts = run.results["verdicts"]
    assert {v["metric"] for v in verdicts} == {"p50", "p99", "p99.9", "cpu", "pass"}
    assert all(v["method"] == "interleaved pairs" for v in verdicts) and run.results["identical"]
    # no latency claim between identical sides; CPU per request is the two processes' own (one CI run saw B's JVM
    # take 11% less in all 16 pairs, whichever went first: their JIT, not chance), so it may differ
    assert all(v["conclusion"] != "different" for v in verdicts if v["metric"] != "cpu"), verdicts
    p50 = next(v for v in verdicts if v["metric"] == "p50")
    assert p50["stop"] in ("equivalent", "max-pairs") and p50["n"] >= 8, p50  # no budget: never too few pairs
    f = entry["finding"]
    assert f["answer"].startswith("No difference") and "A = " in f["answer"]
    assert f["key_number"]["label"] == "B/A p50 at 500 req/s" and f["validity"] == run.validity


def test_notebook_09_measures_its_synthetic_history_and_never_names_a_wrong_commit(report):
    # The tiny plan's history: 4 commits, two 200 ms probes each, a check of 8 pairs. On a loaded machine a
    # starved generator makes a short probe's CPU per request anything (probes marked invalid: 0.1x its true
    # value was seen), so whether these few probes find the planted commit is the machine's: what must hold
    # is that the answer is never a wrong commit and says whether the planted one was found. Finding it is
    # proven end to end with longer probes in tests/regress/test_history_server.py (make test-all).
    (entry,) = [n for n in report["json"]["notebooks"] if n["notebook"] == "09-history"]
    answer = entry["finding"]["answer"]
    run = next(
        open_run(report["folder"] / r["path"])
        for r in entry["runs"]
        if open_run(report["folder"] / r["path"]).kind == "history"
    )
    planted = run.params["commits"][HISTORY["planted"]]["sha"]
    assert len(run.params["commits"]) == HISTORY["commits"] and run.results["measured"] == HISTORY["commits"]
    assert set(run.results["regressions"]) <= {planted}, answer
    if run.results["regressions"]:
        assert answer.startswith("regression at ") and "The lab found the planted commit" in answer, answer
    else:
        assert f"The lab did not find the planted commit ({planted[:10]})" in answer, answer
