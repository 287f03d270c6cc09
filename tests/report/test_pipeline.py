"""`python -m perflab report` end to end on a tiny plan: every notebook through real papermill, the real
server and the real load generator (seconds per load), plus one notebook that fails on a bad parameter.
Then the report folder is checked as a reader would use it: index, pages, links, offline, chromium."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from perflab import paths
from perflab.report import commentary, export

TINY = {
    "name": "tiny",
    "description": "seconds per notebook (the test suite)",
    "notebooks": [
        {"notebook": "01-stable-load", "parameters": {
            "duration_s": 1, "warmup_s": 1, "put_rate": 500, "get_rate": 500, "many_connections": 4,
            "prefill_keys": 5000, "profile_events": ["cpu"]}},
        {"notebook": "02-breakpoint", "parameters": {
            "probe_duration_s": 1, "warmup_s": 1, "connections": [4], "start_rate": 500, "max_probes": 2,
            "prefill_keys": 5000, "include_ceiling": False}},
        {"notebook": "03-sync-vs-async", "parameters": {
            "modes": ["sync", "async"], "probe_duration_s": 1, "warmup_s": 1, "connections": 4, "start_rate": 500,
            "max_probes": 2, "prefill_keys": 5000, "profile_duration_s": 1, "profile_events": ["cpu"]}},
        {"notebook": "04-executor-tuning", "parameters": {
            "workers": [1, 2], "queues": [4], "probe_duration_s": 1, "warmup_s": 1, "connections": 4,
            "start_rate": 500, "max_probes": 2, "prefill_keys": 5000, "overload_duration_s": 1}},
        {"notebook": "05-storage", "parameters": {
            "backends": ["lsm", "memory"], "duration_s": 1, "warmup_s": 1, "rate": 500, "connections": 4,
            "prefill_keys": 5000, "memtable_sizes": ["256k"], "flush_threads": [1], "compaction_memtable": "64k"}},
        {"notebook": "06-summary", "parameters": {}},
        {"notebook": "01-stable-load", "output": "01-bad-rate", "parameters": {"put_rate": -5}},
    ],
}
OK = ["01-stable-load", "02-breakpoint", "03-sync-vs-async", "04-executor-tuning", "05-storage", "06-summary"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    base = tmp_path_factory.mktemp("report-e2e")
    plan = base / "tiny.json"
    plan.write_text(json.dumps(TINY))
    env = {**os.environ, "PERFLAB_DATA": str(base / "data"), "PERFLAB_REPORT": str(base / "report")}
    proc = subprocess.run([sys.executable, "-m", "perflab", "report", "--plan", str(plan), "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=900, cwd=str(paths.repo_root()))
    index = Path(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None
    print(proc.stderr[-3000:])
    return {"proc": proc, "base": base, "index": index, "folder": index.parent if index else None,
            "json": json.loads((index.parent / "report.json").read_text()) if index else None}


def test_failed_notebook_fails_the_command_but_not_the_report(report):
    proc = report["proc"]
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "1 of 7 notebooks failed: 01-bad-rate (ParameterError: bad parameter: put_rate must be a number > 0, got -5)" in proc.stderr
    assert report["index"].name == "index.html" and report["index"].is_file()
    data = report["json"]
    assert data["failed"] == ["01-bad-rate"]
    status = {n["notebook"]: n["status"] for n in data["notebooks"]}
    assert status == {**{n: "ok" for n in OK}, "01-bad-rate": "failed"}
    bad = next(n for n in data["notebooks"] if n["notebook"] == "01-bad-rate")
    assert bad["error"] == "ParameterError: bad parameter: put_rate must be a number > 0, got -5"
    assert bad["html"] == "01-bad-rate.html" and (report["folder"] / bad["html"]).is_file(), "exported up to its error"
    assert bad["runs"] == []


def test_progress_is_shown(report):
    err = report["proc"].stderr
    for i, name in enumerate(OK, 1):
        assert re.search(rf"\[{i}/7\] {name}: ok in \d+ s, \d+ runs recorded", err), name
    assert "[7/7] 01-bad-rate: FAILED" in err


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
    for tool in ("papermill", "nbconvert", "plotly", "perflab-load", "java"):
        assert tool in data["versions"], tool
    assert "put_rate=-5" in page and "<b>duration_s=1</b>" in page      # parameters, overrides in bold
    assert 'mode=&#34;sync&#34;' in page                                    # and the notebook's defaults
    hrefs = re.findall(r'href="([^"#]+)"', page)
    assert hrefs, "the index links its pages"
    for h in hrefs:
        assert not h.startswith(("http:", "https:", "/")), f"links must be relative: {h}"
        assert (folder / h).exists(), f"broken link {h}"
    runs = [r for n in data["notebooks"] for r in n["runs"]]
    assert len(runs) >= 15
    for r in runs:
        assert f'href="{r["path"]}/"' in page
        assert (folder / r["path"] / "meta.json").is_file()
        assert r["path"].startswith("../../data/runs/")
    for name in OK[:5]:
        n = next(x for x in data["notebooks"] if x["notebook"] == name)
        assert n["runs"] and all(r["status"] == "ok" for r in n["runs"]), (name, n["runs"])


def test_pages_are_offline_with_plotly_embedded_once(report):
    folder = report["folder"]
    for name in OK + ["01-bad-rate"]:
        html = (folder / f"{name}.html").read_text()
        assert export.external_loads(html) == [], name
        assert export.plotly_js_copies(html) == (0 if name == "01-bad-rate" else 1), name
    assert export.external_loads(report["index"].read_text()) == []


def test_executed_notebooks_have_no_errors_and_show_their_results(report):
    folder = report["folder"]
    for name in OK:
        nb = nbformat.read(str(folder / "notebooks" / f"{name}.ipynb"), as_version=4)
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.output_type == "error"], name
        plots = [o for o in outputs if "application/vnd.plotly.v1+json" in o.get("data", {})]
        assert plots and all("text/html" in o["data"] for o in plots), f"{name}: plots for Lab and for the export"
    flames = (folder / "01-stable-load.html").read_text().count("<iframe srcdoc=")
    assert flames == 4, "one embedded async-profiler flame graph per profiled run"


def test_commentary_numbers_come_from_the_recorded_runs(report):
    """The p99 the generated text gives for each run equals the p99 of that run's recorded spectrum."""
    folder, data = report["folder"], report["json"]
    nb = nbformat.read(str(folder / "notebooks" / "01-stable-load.ipynb"), as_version=4)
    text = "\n".join("".join(o["data"]["text/markdown"]) for c in nb.cells if c.cell_type == "code"
                     for o in c.outputs if "text/markdown" in o.get("data", {}))
    runs = next(n for n in data["notebooks"] if n["notebook"] == "01-stable-load")["runs"]
    checked = 0
    for r in runs:
        m = re.search(r"nb01-(put|get)-(\d+)c-", r["id"])
        op, conns = m.group(1).upper(), int(m.group(2))
        label = f"{op}, {conns} connection{'s' if conns > 1 else ''}"
        spectrum = pd.read_csv(folder / r["path"] / "spectrum.csv")
        p99 = commentary.fmt_ms(commentary.value_at(spectrum, 99))
        assert f"**{label}**: p50 " in text and f"p99 {p99}" in text, (label, p99)
        checked += 1
    assert checked == 4


@pytest.mark.browser
def test_every_page_renders_in_chromium(report):
    folder, data = report["folder"], report["json"]
    assert data["index_browser"]["ok"], data["index_browser"]
    for n in data["notebooks"]:
        b = n["browser"]
        assert b["ok"], (n["notebook"], b)
        if n["notebook"] in OK[:5]:
            assert b["plots"] > 0 and b["drawn"] == b["plots"], (n["notebook"], b)
        shot = folder / b["screenshot"]
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "rendered in headless chromium" in data["browser_check"]
    print(f"screenshots: {folder / 'screenshots'}")


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
        return [[sorted(o.get("data", {})) or o.output_type for o in c.outputs] for c in nb.cells if c.cell_type == "code"]

    assert kinds(src) == kinds(batch)
    assert sum("application/vnd.plotly.v1+json" in k for cell in kinds(src) for k in cell) >= 2


def test_cli_rejects_bad_arguments(tmp_path):
    env = {**os.environ, "PERFLAB_REPORT": str(tmp_path / "r"), "PERFLAB_DATA": str(tmp_path / "d")}
    for args, msg in ((["--plan", "nope"], "neither a built-in plan"),
                      (["--only", "99"], "--only: no notebook named 99"),
                      (["--cell-timeout", "0"], "--cell-timeout must be > 0")):
        p = subprocess.run([sys.executable, "-m", "perflab", "report", *args], capture_output=True, text=True, env=env,
                           cwd=str(paths.repo_root()), timeout=120)
        assert p.returncode == 2 and msg in p.stderr, (args, p.stderr)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir()), "nothing written for bad arguments"
