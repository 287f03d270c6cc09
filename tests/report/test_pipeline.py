"""`python -m perflab report` end to end on a tiny plan: notebooks 01-04 and 06 through real papermill, the real
server and the real load generator (seconds per load), plus one notebook that fails on a bad parameter.
Then the report folder is checked as a reader would use it: index, pages, links, offline, chromium. Notebooks
05, 07, 08 and 09 run in a report of their own (test_report_notebooks_05_to_09.py), beside this one."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
import tiny_report
from markupsafe import escape
from nbclient import NotebookClient
from tiny_report import CAVEAT, PAIRS, SEARCH, SLA

from perflab import fmt, open_run, paths
from perflab.report import export
from perflab.report.compare import compare

TINY = tiny_report.plan(
    "tiny",
    [
        {
            "notebook": "01-stable-load",
            "parameters": {
                "duration": 1,
                "warmup": 0.5,
                "put_rate": 500,
                "get_rate": 500,
                "connections": [1, 4],
                "prefill_keys": 5000,
                "profile_events": "cpu",
            },
        },
        {
            "notebook": "02-breakpoint",
            "parameters": {
                **SEARCH,
                "connections": [4],
                "start_rate": 500,
                "repeats": 1,
                "max_probes": 2,
                "prefill_keys": 5000,
                "include_ceiling": False,
                "sla_p99": SLA,
                "server_warmup": 0.5,
                "cooldown": 0,
                "sustain": 0.5,
                "hold_windows": 1,
                "sustain_tries": 2,
                "quiet_wait": 1,
            },
        },
        {
            "notebook": "03-sync-vs-async",
            "parameters": {
                "modes": ["sync", "async"],
                **SEARCH,
                "connections": 4,
                "start_rate": 500,
                "repeats": 1,
                "max_probes": 2,
                "prefill_keys": 5000,
                "profile_duration": 1,
                "profile_fraction": 0.1,
                "profile_events": "cpu",
                "sla_p99": SLA,
                "server_warmup": 0.5,
                "cooldown": 0,
                "pairs": PAIRS,
            },
        },
        {
            "notebook": "04-executor-tuning",
            "parameters": {
                "workers": [1, 2],
                "queues": [4],
                **SEARCH,
                "connections": 4,
                "start_rate": 500,
                "repeats": 1,
                "max_probes": 2,
                "prefill_keys": 5000,
                "overload_duration": 1,
                "sla_p99": SLA,
                "server_warmup": 0.5,
                "cooldown": 0,
            },
        },
        {"notebook": "06-summary", "parameters": {}},
        {"notebook": "01-stable-load", "output": "01-bad-rate", "parameters": {"put_rate": -5}},
    ],
)
OK = ["01-stable-load", "02-breakpoint", "03-sync-vs-async", "04-executor-tuning", "06-summary"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return tiny_report.run(tmp_path_factory, TINY)


def test_failed_notebook_fails_the_command_but_not_the_report(report):
    proc = report["proc"]
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "1 of 6 notebooks failed: 01-bad-rate (ValueError: PUT load: rate: must be > 0, got -5)" in proc.stderr
    # the kernels talk to the batch over IPC: no warning about TCP without encryption, once per notebook
    assert "Kernel is running over TCP" not in proc.stderr
    assert report["index"].name == "index.html" and report["index"].is_file()
    data = report["json"]
    assert data["failed"] == ["01-bad-rate"]
    status = {n["notebook"]: n["status"] for n in data["notebooks"]}
    assert status == {**{n: "ok" for n in OK}, "01-bad-rate": "failed"}
    bad = next(n for n in data["notebooks"] if n["notebook"] == "01-bad-rate")
    assert bad["error"] == "ValueError: PUT load: rate: must be > 0, got -5"
    assert bad["html"] == "01-bad-rate.html" and (report["folder"] / bad["html"]).is_file(), "exported up to its error"
    assert bad["runs"] == []
    # in its kernel, as tests/notebooks/test_notebooks.py checks the other notebooks': the first code cell after the
    # parameters and papermill's injected ones raised, before anything ran (no runs, above)
    executed = nbformat.read(str(report["folder"] / bad["ipynb"]), as_version=4)
    code = [i for i, c in enumerate(executed.cells) if c.cell_type == "code"]
    assert "injected-parameters" in executed.cells[code[1]].metadata.get("tags", [])
    failing = next(i for i in code if any(o.get("output_type") == "error" for o in executed.cells[i].outputs))
    assert failing == code[2], "the error is raised by the first code cell after the parameters"


def test_progress_is_shown(report):
    err = report["proc"].stderr
    for i, name in enumerate(OK, 1):
        assert re.search(rf"\[{i}/6\] {name}: ok in \d+ s, \d+ runs recorded", err), name
    assert "[6/6] 01-bad-rate: FAILED" in err


def test_latest_points_at_the_report(report):
    latest = report["base"] / "report" / "latest"
    assert latest.is_symlink() and os.readlink(latest) == report["folder"].name
    assert (latest / "index.html").read_text() == report["index"].read_text()


def test_index_records_what_was_run_and_links_everything(report):
    folder, page = report["folder"], report["index"].read_text()
    data = report["json"]
    assert data["plan"] == "tiny"
    assert data["git"]["commit"] in page
    assert f"{os.cpu_count()} cores" in page
    versions = {**data["python"]["packages"], **data["tools"]}
    for tool in ("papermill", "nbconvert", "plotly", "perflab-load", "java"):
        assert versions.get(tool), tool
    assert "put_rate=-5" in page and "<b>duration=1</b>" in page  # parameters, overrides in bold
    assert "mode=&#34;sync&#34;" in page  # and the notebook's defaults
    hrefs = re.findall(r'href="([^"#]+)"', page)
    assert hrefs, "the index links its pages"
    for h in hrefs:
        assert not h.startswith(("http:", "https:", "/")), f"links must be relative: {h}"
        assert (folder / h).exists(), f"broken link {h}"
    runs = [r for n in data["notebooks"] for r in n["runs"]]
    assert len(runs) >= 10
    for r in runs:
        assert f'href="{r["path"]}/"' in page
        assert (folder / r["path"] / "meta.json").is_file()
        assert r["path"].startswith("../../data/runs/")
    for name in OK[:4]:
        n = next(x for x in data["notebooks"] if x["notebook"] == name)
        assert n["runs"] and all(r["status"] == "ok" for r in n["runs"]), (name, n["runs"])


def test_pages_are_offline_small_and_share_one_plotly(report):
    folder = report["folder"]
    assert (folder / "assets" / "plotly.min.js").read_bytes() == export.plotly_js_source().read_bytes()
    for name in OK + ["01-bad-rate"]:
        html = (folder / f"{name}.html").read_text()
        assert export.external_loads(html) == [], name
        assert export.plotly_js_copies(html) == 0, name
        assert '<script src="assets/plotly.min.js"></script>' in html, name
        assert len(html.encode()) <= 1_000_000, name
        assert "Kernel is running over TCP" not in html and "probe/s]" not in html, name
    for nb in (folder / "notebooks").glob("*.ipynb"):
        assert export.plotly_js_copies(nb.read_text()) == 0, nb.name
    assert export.external_loads(report["index"].read_text()) == []
    # the Markdown twin (report.md, its PNG figures and flame graph previews) is counted apart from the pages
    twin = [
        f
        for f in folder.rglob("*")
        if f.is_file()
        and (
            f.name == "report.md"
            or f.parent.name == "figures"
            or (f.parent.name == "flamegraphs" and f.suffix == ".svg")
        )
    ]
    total = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and f not in twin)
    assert total <= 15 * 2**20, f"report folder {total / 2**20:.1f} MB"
    markdown = sum(f.stat().st_size for f in twin)
    assert 0 < markdown <= 8 * 2**20, f"the Markdown report and its files {markdown / 2**20:.1f} MB"


def test_executed_notebooks_have_no_errors_and_show_their_results(report):
    folder = report["folder"]
    for name in OK:
        nb = nbformat.read(str(folder / "notebooks" / f"{name}.ipynb"), as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.output_type == "error"], name
        plots = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
        assert plots, f"{name}: plots, as JSON for Lab and for the export"
        assert not [o for o in outputs if o.output_type == "stream" and "%|" in o.get("text", "")], (
            f"{name}: no progress bars in a batch"
        )
    page = (folder / "01-stable-load.html").read_text()
    data = next(n for n in report["json"]["notebooks"] if n["notebook"] == "01-stable-load")
    assert "<iframe" not in page
    # per profiled run (PUT and GET, 4 connections): its flame graph and heatmap, and the spikes against
    # the rest of the window when the run had spikes
    kinds = sorted(re.sub(r"^.*-profile-", "", h) for h in data["flamegraphs"])
    assert kinds.count("cpu.html") == 2 and kinds.count("cpu-heatmap.html") == 2, kinds
    assert set(kinds) <= {"cpu.html", "cpu-heatmap.html", "cpu-cpu-spikes-diff.html"}, kinds
    for href in data["flamegraphs"]:
        assert f'href="{href}"' in page and (folder / href).read_text().lstrip().lower().startswith("<!doctype html")
    assert page.count('class="perflab-flame-preview"') == len(data["flamegraphs"])
    assert page.count('<details class="perflab-console">') == 4  # every console output, folded


def test_index_leads_with_each_notebook_s_finding(report):
    folder, data, page = report["folder"], report["json"], report["index"].read_text()
    assert page.index('id="findings"') < page.index('id="breakpoints"') < page.index('id="record"')
    runs = {r["id"]: r for n in data["notebooks"] for r in n["runs"]}
    for n in data["notebooks"]:
        if n["notebook"] == "01-bad-rate":
            assert n["finding"] is None
            continue
        f = n["finding"]
        assert f and f["answer"], n["notebook"]
        assert str(escape(f["answer"])) in page, n["notebook"]
        assert n["validity"] is None or n["validity"] in ("valid", "suspect", "invalid")
    bps = data["breakpoints"]
    assert {b["notebook"] for b in bps} == {"02-breakpoint", "03-sync-vs-async", "04-executor-tuning"}
    assert "02-breakpoint" in page[page.index('id="breakpoints"') : page.index('id="record"')]
    for b in bps:  # the search its run recorded: its own, or a side of an A/B run
        meta = json.loads((folder / runs[b["run_id"]]["path"] / "meta.json").read_text())
        if meta["kind"] == "ab":
            (v,) = [v for v in meta["results"]["verdicts"] if v["metric"] == "breakpoint"]
            assert b["rate"] in (v["a_value"], v["b_value"]) and v["method"] == "interleaved searches"
        else:
            assert b["rate"] == meta["results"]["breakpoint_rate"]
            assert b["interval"][1] == meta["results"].get("hi") or b["interval"] == meta["results"].get("interval")
        assert f'href="{runs[b["run_id"]]["path"]}/"' in page
    # 03 and 04 compare two configurations interleaved, each comparison an ab run whose verdicts name it
    ab = {n["notebook"]: [r for r in n["runs"] if open_run(folder / r["path"]).kind == "ab"] for n in data["notebooks"]}
    assert {k: len(v) for k, v in ab.items() if v} == {"03-sync-vs-async": 2, "04-executor-tuning": 1}
    for name in ("03-sync-vs-async", "04-executor-tuning"):
        answer = next(n for n in data["notebooks"] if n["notebook"] == name)["finding"]["answer"]
        assert "interleaved searches" in answer or "interleaved pairs" in answer, (name, answer)
    assert page.count('id="preview-') == len(OK) and 'id="breakpoint-overview"' in page


def test_commentary_numbers_come_from_the_recorded_runs(report):
    """The p99 the generated text gives for each run equals the p99 of that run's recorded spectrum."""
    folder, data = report["folder"], report["json"]
    nb = nbformat.read(str(folder / "notebooks" / "01-stable-load.ipynb"), as_version=4)
    text = "\n".join(
        "".join(o["data"]["text/markdown"])
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "text/markdown" in o.get("data", {})
    )
    runs = next(n for n in data["notebooks"] if n["notebook"] == "01-stable-load")["runs"]
    checked = 0
    for r in runs:
        m = re.search(r"nb01-(put|get)-(\d+)c-", r["id"])
        op, conns = m.group(1).upper(), int(m.group(2))
        label = f"{op}, {conns} connection{'s' if conns > 1 else ''}"
        p99 = fmt.ms(open_run(folder / r["path"]).load().p99_ms)  # the run's own p99, read back
        assert f"**{label}**: p50 " in text and f"p99 {p99}" in text, (label, p99)
        checked += 1
    assert checked == 4


@pytest.mark.browser
def test_every_page_renders_in_chromium(report):
    """Plots drawn, titled and labelled; code hidden and its toggles working; consoles folded; no
    request leaves file://; a screenshot of every page."""
    folder, data = report["folder"], report["json"]
    idx = data["index_browser"]
    assert idx["ok"] and idx["plots"] == idx["drawn"] == len(OK) + 1, idx  # the previews and the breakpoint overview
    assert idx["network"] == [] and idx["untitled_plots"] == [] and idx["unlabelled_axes"] == []
    for n in data["notebooks"]:
        b = n["browser"]
        assert b["ok"], (n["notebook"], b)
        assert b["network"] == [] and b["errors"] == [], (n["notebook"], b)
        if n["notebook"] in OK:
            assert b["plots"] > 0 and b["drawn"] == b["plots"], (n["notebook"], b)
            assert b["untitled_plots"] == [] and b["unlabelled_axes"] == [], (n["notebook"], b)
            code = b["code"]
            assert code["cells"] >= 5 and code["works"] and code["hidden_at_load"], (n["notebook"], code)
        shot = folder / b["screenshot"]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert data["notebooks"][0]["browser"]["consoles"] == {
        "count": 4,
        "open": 0,
        "text_chars": data["notebooks"][0]["browser"]["consoles"]["text_chars"],
    }
    assert (folder / "screenshots" / "index.png").is_file()
    assert "rendered in headless chromium" in data["browser_check"]
    print(f"screenshots: {folder / 'screenshots'}")


def test_compare_two_runs_of_the_report(report, tmp_path):
    """Two profiled runs of notebook 1 (PUT and GET): the page, the differential flame graph, honest verdicts."""
    folder = report["folder"]
    runs = next(n for n in report["json"]["notebooks"] if n["notebook"] == "01-stable-load")["runs"]
    one = next(folder / r["path"] for r in runs if "put-4c" in r["id"])
    many = next(folder / r["path"] for r in runs if "get-4c" in r["id"])
    c = compare(one, many, output=tmp_path / "cmp.html")
    rows = {r.metric: r for r in c.rows}
    # 1 s runs at the default 100 ms resolution: about ten intervals each, every one of them compared
    m = re.match(r"n = (\d+) vs (\d+)\b", rows["p99 per interval"].evidence)
    assert m and min(int(m.group(1)), int(m.group(2))) >= 8, rows["p99 per interval"].evidence
    assert rows["p99 per interval"].direction in ("higher", "lower", "no difference detectable")
    (flame,) = c.pairs[0].flamegraphs
    assert flame["event"] == "cpu" and "error" not in flame, flame
    diff = (tmp_path / flame["href"]).read_text()
    assert diff.lstrip().lower().startswith("<!doctype html")
    assert f'href="{flame["href"]}"' in (tmp_path / "cmp.html").read_text()


def test_compare_a_report_with_a_copy_of_itself(report):
    """Same data on both sides: every run paired by name, and no test may call anything different."""
    copy = report["folder"].parent / (report["folder"].name + "-copy")
    shutil.copytree(report["folder"], copy, symlinks=True)
    c = compare(report["folder"], copy, output=report["base"] / "self.html")
    names = {r["label"] for n in report["json"]["notebooks"] for r in n["runs"]}
    assert {p.name for p in c.pairs} == names and c.only_a == c.only_b == []
    verdicts = {r.direction for r in c.rows}
    assert verdicts <= {"no difference detectable", "too few samples", "not tested"}, verdicts
    assert [f["a"] for f in c.findings] == [f["b"] for f in c.findings]
    assert any(r.metric == "breakpoint" for r in c.rows)
    # an A/B run of one report against the same one of the other: their ratios, by intervals (two reports were
    # measured one after the other), the method named
    ab_rows = [r for r in c.rows if r.metric.startswith("B/A ratio of")]
    assert ab_rows and {r.method for r in ab_rows} == {"sequential intervals"}, [r.metric for r in c.rows]


def test_interactive_run_gives_the_same_outputs_as_the_batch(report, monkeypatch):
    """06 run in a plain kernel (what JupyterLab does: no papermill, no injected cell) on the same data
    produces the same kinds of output in every cell, plots included, as the batch's papermill run."""
    monkeypatch.setenv("PERFLAB_DATA", str(report["base"] / "data"))
    nb_dir = paths.repo_root() / "notebooks"
    src = nbformat.read(str(nb_dir / "06-summary.ipynb"), as_version=4)
    NotebookClient(src, kernel_name="python3", resources={"metadata": {"path": str(nb_dir)}}, timeout=300).execute()
    batch = nbformat.read(str(report["folder"] / "notebooks" / "06-summary.ipynb"), as_version=4)
    batch.cells = [c for c in batch.cells if "injected-parameters" not in c.metadata.get("tags", [])]

    def kinds(nb):
        return [
            [sorted(o.get("data", {})) or o.output_type for o in c.outputs] for c in nb.cells if c.cell_type == "code"
        ]

    assert kinds(src) == kinds(batch)
    assert sum("application/vnd.plotly.v1+json" in k for cell in kinds(src) for k in cell) >= 2


def test_cli_rejects_bad_arguments(tmp_path):
    env = {**os.environ, "PERFLAB_REPORT": str(tmp_path / "r"), "PERFLAB_DATA": str(tmp_path / "d")}
    for args, msg in (
        (["--plan", "nope"], "neither a built-in plan"),
        (["--only", "99"], "--only: no notebook named 99"),
        (["--cell-timeout", "0"], "--cell-timeout must be > 0"),
    ):
        p = subprocess.run(
            [sys.executable, "-m", "perflab", "report", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=str(paths.repo_root()),
            timeout=120,
        )
        assert p.returncode == 2 and msg in p.stderr, (args, p.stderr)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir()), "nothing written for bad arguments"


def test_the_plans_caveat_is_on_every_page(report):
    """A plan's line on what its numbers are not (the quick plan's: a tour) heads the index and every page."""
    folder = report["folder"]
    assert report["json"]["caveat"] == CAVEAT
    assert f'<p class="caveat">{escape(CAVEAT)}</p>' in report["index"].read_text()
    for name in OK + ["01-bad-rate"]:  # (nbconvert's writer leaves an apostrophe unescaped in text)
        page = html.unescape((folder / f"{name}.html").read_text())
        assert f'<div class="perflab-caveat">{CAVEAT}</div>' in page, name
