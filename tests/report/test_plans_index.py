"""Plans (built-in and JSON), the index page's rendering, and report/latest."""

import json
import os
import re

import pytest

from perflab import ABParams, ForeignServer
from perflab.report import batch, index_page, plans
from perflab.stats.paired import Family
from perflab.units import parse_duration


def test_builtin_plans_cover_every_notebook_with_their_real_parameters():
    import papermill

    for plan in plans.BUILTIN.values():
        # the summary last: it reads what every other notebook recorded
        assert [s.notebook for s in plan.notebooks] == [
            "01-stable-load",
            "02-breakpoint",
            "03-sync-vs-async",
            "04-executor-tuning",
            "05-storage",
            "07-cluster",
            "08-ab",
            "09-history",
            "10-range",
            "06-summary",
        ]
        assert [s.notebook for s in plan.notebooks if s.after] == ["06-summary"]
        for spec in plan.notebooks:
            declared = papermill.inspect_notebook(str(spec.path(plans.notebooks_dir())))
            unknown = set(spec.parameters) - set(declared)
            assert not unknown, f"{plan.name}/{spec.notebook}: the plan sets parameters the notebook lacks: {unknown}"


def _claim_possible(pairs: dict) -> bool:
    """An interleaved comparison with these ABParams fields can claim a difference before it stops."""
    ab = ABParams(**pairs)
    return Family(ab.alpha, ab.max_pairs).first_claim <= ab.max_pairs


def test_the_tour_says_what_its_numbers_are_and_every_comparison_can_still_claim():
    """The quick plan is a tour: it says so on every page (with the plan to run for numbers worth quoting);
    its windows are short, but no comparison is set up so that it could never claim a difference."""
    assert "PLAN=standard" in plans.QUICK.caveat and not plans.STANDARD.caveat and not plans.FULL.caveat
    for spec in plans.QUICK.notebooks:
        p = spec.parameters
        if "pairs" in p:
            assert _claim_possible(p["pairs"]), (spec.notebook, p["pairs"])
        if spec.notebook == "08-ab":
            assert _claim_possible({k: p[k] for k in ("max_pairs", "alpha")}), p
    assert plans.QUICK.only(["01"]).caveat == plans.QUICK.caveat  # a selection keeps it


def test_standard_windows_are_worth_quoting_and_full_is_longer():
    """Standard keeps every fixed-rate window >= 8 s after >= 3 s of warm-up, every breakpoint probe >= 3 s
    with two unanimous probes at each edge, and comparisons that can claim at the default alpha; full is
    course-length and longer than standard, standard longer than quick."""
    for spec in plans.STANDARD.notebooks:
        p = spec.parameters
        if spec.notebook in ("08-ab", "09-history"):
            # A/B probes (and a history's, each commit's repeats and its checks' pairs) are short by design:
            # the verdicts rest on n probes, never on one window
            assert _claim_possible({k: p[k] for k in ("max_pairs",)}) and parse_duration(p["probe_duration"]) >= 1, p
            continue
        if "pairs" in p:
            assert _claim_possible(p["pairs"]) and ABParams(**p["pairs"]).alpha == ABParams().alpha, spec.notebook
        for k in ("duration", "profile_duration"):
            if k in p:
                assert parse_duration(p[k]) >= 8, (spec.notebook, k)
        if "probe_duration" in p:
            assert parse_duration(p["probe_duration"]) >= 3 and p.get("repeats", 2) >= 2, spec.notebook
        if "warmup" in p and "duration" in p:
            assert parse_duration(p["warmup"]) >= 3, spec.notebook
    shorter = {s.notebook: s.parameters for s in plans.QUICK.notebooks}
    for longer in (plans.STANDARD, plans.FULL):
        for spec in longer.notebooks:
            if spec.notebook == "08-ab":
                continue
            for k in ("duration", "probe_duration"):
                if k in spec.parameters and k in shorter[spec.notebook]:
                    assert parse_duration(spec.parameters[k]) > parse_duration(shorter[spec.notebook][k]), (
                        longer.name,
                        spec.notebook,
                        k,
                    )
        shorter = {s.notebook: s.parameters for s in longer.notebooks}


def test_plan_file_and_its_errors(tmp_path):
    f = tmp_path / "p.json"
    f.write_text(
        json.dumps(
            {
                "name": "mine",
                "notebooks": [
                    {"notebook": "06-summary"},
                    {"notebook": "06-summary", "output": "06-again", "parameters": {"max_rows": 3}},
                ],
            }
        )
    )
    plan = plans.load_plan(str(f))
    assert plan.name == "mine" and [s.name for s in plan.notebooks] == ["06-summary", "06-again"]
    assert plan.notebooks[1].parameters == {"max_rows": 3}
    f.write_text(json.dumps({"notebooks": [{"notebook": "06-summary"}, {"notebook": "06-summary"}]}))
    with pytest.raises(ValueError, match="06-summary appear more than once"):
        plans.load_plan(str(f))
    f.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        plans.load_plan(str(f))
    f.write_text(json.dumps({"notebooks": []}))
    with pytest.raises(ValueError, match="non-empty 'notebooks'"):
        plans.load_plan(str(f))
    with pytest.raises(ValueError, match="neither a built-in plan"):
        plans.load_plan("fastest")


def test_only_selects_by_name_or_prefix():
    assert [s.notebook for s in plans.QUICK.only(["01", "06-summary"]).notebooks] == ["01-stable-load", "06-summary"]
    with pytest.raises(ValueError, match="no notebook named 7"):
        plans.QUICK.only(["7"])


def test_missing_notebook_is_reported_before_running():
    with pytest.raises(ValueError, match="does not exist"):
        plans.NotebookSpec("99-nothing").path(plans.notebooks_dir())


def test_index_escapes_what_it_shows_and_marks_failures(tmp_path):
    nbres = batch.NotebookResult(
        notebook="01-x",
        title="T <script>",
        question="why `async`?",
        status="failed",
        error="ValueError: <b>bad</b>",
        parameters={"rate": -1},
        effective_parameters={"rate": "-1", "mode": "'sync'"},
    )
    rep = batch.Report(
        plan="p",
        plan_description="",
        folder=str(tmp_path),
        started="now",
        machine={"cores": 2},
        tools={"perflab-load": "perflab-load 0.2"},
        python={"python": "3.11", "packages": {"plotly": "7"}},
        git={"commit": "abc"},
        notebooks=[nbres],
    )
    page = index_page.write(rep, tmp_path).read_text()
    assert "T &lt;script&gt;" in page and "<script>" not in page
    assert "ValueError: &lt;b&gt;bad&lt;/b&gt;" in page
    assert "why <code>async</code>?" in page
    assert "<b>rate=-1</b>" in page and "mode=&#39;sync&#39;" in page
    assert "1 of 1 notebooks failed" in page
    assert json.loads((tmp_path / "report.json").read_text())["failed"] == ["01-x"]


def test_latest_is_a_relative_symlink_replaced_atomically(tmp_path):
    a, b = tmp_path / "20260101-000000", tmp_path / "20260102-000000"
    a.mkdir(), b.mkdir()
    batch.point_latest(tmp_path, a)
    batch.point_latest(tmp_path, b)
    assert os.readlink(tmp_path / "latest") == b.name
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".latest")] == []


def test_index_leads_with_findings_validity_and_breakpoints(tmp_path):
    import plotly.graph_objects as go

    from perflab.analysis import findings

    rows = [
        {
            "workload": "GET",
            "connections": 64,
            "mode": "async",
            "rate": 50000,
            "interval": [48000, 52000],
            "verdict": "resolved",
            "validity": "valid",
            "run_id": "run-1",
        },
        {
            "workload": "GET",
            "connections": 1,
            "mode": "sync",
            "rate": None,
            "interval": [None, 1250],
            "verdict": "none-passed",
            "validity": None,
            "run_id": "run-2",
        },
    ]
    f = findings.make_finding(
        "GET <fast> keeps up to 50,000 req/s.",
        {"label": "GET breakpoint, 64 connections", "value": 50000, "unit": "req/s", "interval": [48000, 52000]},
        breakpoints=rows,
        preview=go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(title="p")),
    )
    ok = batch.NotebookResult(
        notebook="02-x",
        title="Breakpoint",
        question="q",
        status="ok",
        html="02-x.html",
        finding=f,
        runs=[
            {
                "id": "run-1",
                "path": "../../data/runs/run-1",
                "status": "ok",
                "validity": "suspect",
                "validity_reasons": ["generator lagged"],
            },
            {
                "id": "run-2",
                "path": "../../data/runs/run-2",
                "status": "ok",
                "validity": "valid",
                "validity_reasons": [],
            },
        ],
    )
    bad = batch.NotebookResult(notebook="03-y", title="Other", question="q", status="failed", error="ValueError: x")
    rep = batch.Report(
        plan="p",
        plan_description="",
        folder=str(tmp_path),
        started="now",
        machine={"cores": 2},
        git={"commit": "abc"},
        notebooks=[ok, bad],
        load_start=[1.5, 1.0, 0.5],
    )
    page = index_page.write(rep, tmp_path).read_text()
    assert (
        page.index('id="findings"')
        < page.index('id="breakpoints"')
        < page.index('id="previews"')
        < page.index('id="record"')
    )
    assert "GET &lt;fast&gt; keeps up to 50,000 req/s." in page
    assert "50,000 req/s (interval [48,000, 52,000])" in page
    assert ok.validity == "suspect"  # no verdict in the finding: the runs' worst
    assert "title='run-1: generator lagged'" in page and "runs: 1 suspect, 1 valid" in page
    assert "none passed" in page and "&lt; 1,250" in page and 'href="../../data/runs/run-2/"' in page
    assert page.count('id="preview-') == 1 and 'id="breakpoint-overview"' in page
    assert "failed</span>\n before its finding" in page and "load average 1.5 at the start" in page
    assert (tmp_path / "assets" / "plotly.min.js").is_file() and '<script src="assets/plotly.min.js">' in page
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["breakpoints"][0]["notebook"] == "02-x" and "preview" not in data["notebooks"][0]["finding"]
    assert data["notebooks"][0]["validity"] == "suspect"


def test_a_plan_for_your_server_runs_the_notebooks_that_take_one_and_says_why_not_the_others():
    cmd = "python3 tests/servers/tiny_kv.py {port}"
    plan = plans.QUICK.for_server(ForeignServer(command=cmd, ready_path="/health"))
    by = {s.notebook: s for s in plan.notebooks}
    for name in ("01-stable-load", "02-breakpoint"):
        assert by[name].not_applicable is None
        assert by[name].parameters["server_cmd"] == cmd and by[name].parameters["ready_path"] == "/health"
        assert by[name].parameters["duration" if name == "01-stable-load" else "max_probes"]  # plan's own kept
    for name in ("03-sync-vs-async", "04-executor-tuning", "05-storage"):
        assert by[name].not_applicable.startswith("not applicable: it ")
        assert "perflab ab --a-project" in by[name].not_applicable  # what to vary instead
    for name in ("06-summary", "08-ab", "09-history"):  # a command has no name, stages, commits
        assert by[name].not_applicable.startswith("not applicable to a server command: ")
    for name in ("03-sync-vs-async", "04-executor-tuning", "05-storage", "06-summary", "08-ab", "09-history"):
        assert "server_cmd" not in by[name].parameters
    assert by["07-cluster"].not_applicable.startswith("needs a cluster: give cluster_cmd")
    assert plan.target == f"your server ({cmd})"
    with pytest.raises(ValueError, match=r"give its command, not a URL"):
        plans.QUICK.for_server(ForeignServer(url="http://127.0.0.1:8080"))


def test_index_marks_not_applicable_notebooks_without_calling_them_failures(tmp_path):
    ok = batch.NotebookResult(notebook="01-stable-load", title="Stable load", question="q", status="ok")
    na = batch.NotebookResult(
        notebook="05-storage",
        title="Storage",
        question="q",
        status="not applicable",
        error="not applicable: it compares the built-in server's storage backends",
    )
    rep = batch.Report(
        plan="quick",
        plan_description="",
        folder=str(tmp_path),
        started="now",
        target="your server (x {port})",
        machine={"cores": 2},
        git={},
        notebooks=[ok, na],
    )
    page = index_page.write(rep, tmp_path).read_text()
    assert rep.failed == []
    assert "1 of 2 notebooks do not apply to your server (x {port})" in page
    assert "compares the built-in server&#39;s storage backends" in page
    assert "failed" not in re.sub(r"\.failed|class=\"[^\"]*failed[^\"]*\"", "", page)
    assert json.loads((tmp_path / "report.json").read_text())["failed"] == []
