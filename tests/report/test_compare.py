"""`perflab compare`: bad inputs named, and two real runs of known difference judged by the test.

The server's --debug-delay gives a server of known latency: B's requests park 3 ms in the handler, so
B's per-interval p50 must come out higher than A's, with the evidence (n, p, ratio interval) shown."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from markupsafe import escape

from perflab import LoadParams, ServerConfig, paths, run_experiment
from perflab.records import new_run
from perflab.report.browser import check as browser
from perflab.report.compare import CompareError, compare


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "perflab", "compare", *map(str, args)], capture_output=True,
                          text=True, timeout=300, cwd=str(paths.repo_root()), env=env)


def test_bad_inputs_are_named(tmp_path, data_root):
    run = new_run("experiment", "a-run", data_root=data_root, environment={})
    other = new_run("experiment", "b-run", data_root=data_root, environment={})
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "notes.txt").write_text("x")
    broken = tmp_path / "broken-report"
    broken.mkdir()
    (broken / "report.json").write_text("{not json")
    report = tmp_path / "report"
    report.mkdir()
    (report / "report.json").write_text(json.dumps({"plan": "p", "notebooks": []}))
    cases = [
        ((tmp_path / "nope", run.dir), "A: " + str(tmp_path / "nope") + " does not exist (and is not the id of a run"),
        ((run.dir, empty), f"B: {empty} is neither a run directory (no meta.json) nor a report folder (no report.json)"),
        ((tmp_path / "notes.txt", run.dir), "is a file; give a run directory (with meta.json) or a report folder"),
        ((broken, report), f"A: {broken / 'report.json'} is not valid JSON"),
        ((report, run.dir), "compare two runs or two report folders: A ("),
        ((run.dir, run.dir), "A and B are the same run"),
    ]
    for (a, b), message in cases:
        with pytest.raises(CompareError) as e:
            compare(a, b, output=tmp_path / "out.html")
        assert message in str(e.value), (a, b, str(e.value))
    with pytest.raises(CompareError, match="-o: the page must end with .html"):
        compare(run.dir, other.dir, output=tmp_path / "out.png")
    # the CLI: exit status 2 and the same message, nothing written
    p = cli(run.dir, empty, "-o", tmp_path / "cli.html")
    assert p.returncode == 2 and f"error: B: {empty} is neither a run directory" in p.stderr, p.stderr
    assert not (tmp_path / "cli.html").exists()


def test_run_ids_are_found_under_the_data_root(tmp_path, data_root):
    a = new_run("experiment", "a-run", data_root=data_root, environment={})
    b = new_run("experiment", "b-run", data_root=data_root, environment={})
    c = compare(a.id, b.id, output=tmp_path / "ids.html", data_root=data_root)
    assert c.a.path == a.dir.resolve() and c.b.path == b.dir.resolve()
    assert "recorded no load" in " ".join(c.pairs[0].notes)       # said, not hidden


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """A plain server and one whose handler parks 3 ms per request, same load: 4 s in 0.25 s intervals
    (about 16 per run)."""
    root = tmp_path_factory.mktemp("compare-data")
    load = LoadParams(rate=300, duration=4, warmup=1, threads=1, connections=2, script="status.lua",
                      hdr_interval=0.25)
    a = run_experiment(ServerConfig(backend="memory"), load, name="cmp-plain", data_root=root)
    b = run_experiment(ServerConfig(backend="memory", debug_delay="3ms"), load, name="cmp-delayed", data_root=root)
    return a, b, root


def test_compare_two_runs_judges_the_known_difference(two_runs, tmp_path):
    a, b, root = two_runs
    out = tmp_path / "page" / "cmp.html"
    p = cli(a.run_dir, b.run_dir, "-o", out, "--data", root)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(out.resolve())
    c = compare(a.run_dir, b.run_dir, output=out)
    rows = {r.metric: r for r in c.rows}
    p50 = rows["p50 per interval"]
    assert p50.direction == "higher", p50
    m = re.match(r"n = (\d+) vs (\d+), Mann-Whitney p [<=] ", p50.evidence)
    assert m and "95% CI" in p50.evidence, p50.evidence
    assert (int(m.group(1)), int(m.group(2))) == (len(a.load.intervals), len(b.load.intervals))   # every interval
    assert int(m.group(1)) >= 12
    assert p50.b > p50.a + 2.0                              # at least the 3 ms park, in ms
    assert rows["p99 of the whole run"].direction == "not tested"
    html = out.read_text()
    assert "B higher" in html and escape(p50.evidence) in html
    assert (out.parent / "assets" / "plotly.min.js").is_file()
    assert "<Comparison" in repr(c) and "href=" in c._repr_html_()


@pytest.mark.browser
def test_compare_page_renders_offline(two_runs, tmp_path):
    a, b, _ = two_runs
    out = tmp_path / "cmp.html"
    compare(a.run_dir, b.run_dir, output=out)
    chk = browser.check_page(out, tmp_path / "cmp.png", toggles=False)
    assert chk.errors == [] and chk.network == [], chk.errors
    assert chk.plot_divs == 2 and chk.drawn_plots == 2        # spectra and latency over time
    assert chk.untitled_plots == [] and chk.unlabelled_axes == []
    assert all(u.startswith("file://") for u in chk.requests)
