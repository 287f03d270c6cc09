"""Offline HTML export and the headless-chromium check, on a small notebook executed by real papermill:
plotly figures, a console output, a flame graph, a finding."""

import struct

import nbformat
import papermill
import pytest

from perflab.analysis import findings
from perflab.report import export
from perflab.report.browser import check as browser

COLLAPSED = (
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 60\n"
    "[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/http/HttpSession.processRead;"
    "perflab/server/ApiHandler.handle;perflab/storage/lsm/MemTable.get 40\n"
)

PLOT_CELLS = [
    "from perflab.analysis import consoles, findings, profiles\nfrom perflab.lab import notebook as nb\n"
    "from perflab.analysis.section import Section\nnb.setup()\nimport plotly.graph_objects as go",
    "go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)], name='squares'),\n"
    "          layout=dict(title='Squares', xaxis_title='n, items', yaxis_title='n squared, items')).show()",
    "go.Figure(go.Bar(x=['a', 'b', 'c'], y=[3, 1, 2]),\n"
    "          layout=dict(title='Bars', xaxis_title='letter', yaxis_title='count, items')).show()",
    "Section([consoles.console(console_text, title='PUT, 1 connection')]).show()",
    "import sys\nprint('a warning the reader should be able to find', file=sys.stderr)",
    "Section([profiles.flamegraph(flame_html, title='cpu flame graph')]).show()",
    "findings.Finding('Squares grow fast.', key_number={'label': 'largest square', 'value': (n - 1) ** 2, "
    "'unit': 'items'}, preview=go.Figure(go.Scatter(x=[1, 2], y=[1, 4]), layout=dict(title='preview'))).show()",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory, shared_dir):
    d = tmp_path_factory.mktemp("export")
    run = d / "20260101T000000-nb01-put-1c-cpu-abcdef"  # shaped like a run directory
    run.mkdir()
    (run / "profile-cpu.collapsed").write_text(COLLAPSED)
    (run / "profile-cpu.html").write_text("<!DOCTYPE html><html><body><h1>flame graph</h1></body></html>")
    console = (shared_dir / "fixtures" / "wrk2" / "put-t1-c1-R2000-L.txt").read_text()
    nbk = nbformat.v4.new_notebook()
    nbk.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbk.cells = [
        nbformat.v4.new_markdown_cell("# Export test\n\nA **plot** below."),
        nbformat.v4.new_code_cell("n = 5\nconsole_text = ''\nflame_html = ''", metadata={"tags": ["parameters"]}),
    ]
    nbk.cells += [nbformat.v4.new_code_cell(src) for src in PLOT_CELLS]
    src = d / "plots.ipynb"
    nbformat.write(nbk, str(src))
    out = d / "plots-out.ipynb"
    papermill.execute_notebook(
        str(src),
        str(out),
        parameters={"n": 12, "console_text": console, "flame_html": str(run / "profile-cpu.html")},
        progress_bar=False,
        kernel_name="python3",
        cwd=str(d),
    )
    return out


def test_executed_notebook_carries_figure_json_but_no_plotly_bundle(executed):
    """The renderer writes each figure's JSON for JupyterLab, no 4.8 MB plotly.js and no CDN tag."""
    raw = executed.read_text()
    assert "application/vnd.plotly.v1+json" in raw
    assert export.plotly_js_copies(raw) == 0
    assert "cdnjs" not in raw


def test_export_loads_one_shared_plotly_and_draws_every_figure(executed, tmp_path):
    page = tmp_path / "plots.html"
    info = export.export_notebook(executed, page, nav_html='<a href="index.html">index</a>')
    html = page.read_text()
    assert export.external_loads(html) == []
    assert info["plotly_js_copies"] == 0 == export.plotly_js_copies(html)
    assert '<script src="assets/plotly.min.js"></script>' in html
    assert (tmp_path / "assets" / "plotly.min.js").read_bytes() == export.plotly_js_source().read_bytes()
    assert "require.js" not in html and "mermaid.esm" not in html and "mathjax/2.7" not in html
    assert html.count('class="plotly-graph-div"') == 2  # the preview lives on the index page
    assert '<a href="index.html">index</a>' in html and 'class="perflab-code-all"' in html
    assert info["bytes"] == len(html.encode()) and info["bytes"] < 1_000_000


def test_code_is_folded_not_dropped(executed, tmp_path):
    page = tmp_path / "plots.html"
    export.export_notebook(executed, page)
    html = page.read_text()
    nb = nbformat.read(str(executed), as_version=4)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert html.count('<details class="perflab-code">') == len(code_cells)
    assert '<details class="perflab-code" open' not in html
    assert "parameters set by the plan" in html and "parameters (the notebook's defaults)" in html
    for fragment in ("squares", "consoles.console", "findings.Finding"):  # the code itself is all there
        assert fragment in html, fragment


def test_console_and_stderr_are_collapsed_with_a_summary(executed, tmp_path):
    page = tmp_path / "plots.html"
    export.export_notebook(executed, page)
    html = page.read_text()
    assert '<details class="perflab-console"><summary><b>PUT, 1 connection</b>: ' in html
    assert "req/s, p50 " in html and "errors" in html
    assert "Detailed Percentile spectrum" in html  # the full output, folded
    assert '<details class="perflab-stderr"><summary>stderr: a warning the reader should be able to find' in html


def test_flame_graph_is_copied_linked_and_previewed(executed, tmp_path):
    page = tmp_path / "plots.html"
    info = export.export_notebook(executed, page)
    html = page.read_text()
    name = "20260101T000000-nb01-put-1c-cpu-abcdef-profile-cpu.html"
    assert info["flamegraphs"] == [f"flamegraphs/{name}"] and info["missing"] == []
    assert (tmp_path / "flamegraphs" / name).read_text().startswith("<!DOCTYPE html>")
    assert f'href="flamegraphs/{name}"' in html
    assert "<iframe" not in html
    assert 'class="perflab-flame-preview"' in html and "MemTable.get" in html  # static preview and top frames


def test_finding_leads_the_page_and_is_read_back(executed, tmp_path):
    f = findings.read(executed)
    assert f["answer"] == "Squares grow fast."
    assert f["key_number"] == {"label": "largest square", "value": 121.0, "unit": "items", "interval": None}
    assert f["validity"] is None and f["breakpoints"] == [] and f["preview"]["data"]
    page = tmp_path / "plots.html"
    info = export.export_notebook(executed, page)
    html = page.read_text()
    assert info["finding"]["answer"] == "Squares grow fast."
    top, box = html.index("perflab-finding-summary"), html.index('class="perflab-finding" id="finding"')
    assert top < html.index('<details class="perflab-code">') < box


def stream(text, name="stderr"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_kernel_warnings_and_progress_bars_leave_the_page(tmp_path):
    """Real tqdm redraws (one message each) and ipykernel's start-up warning; other stderr is kept."""
    nbk = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        stream(
            "[IPKernelApp] WARNING | Kernel is running over TCP without encryption. All communication "
            "(including code and outputs) is sent in plain text and is susceptible to eavesdropping.\n"
        ),
        stream("\rbreakpoint put:   0%|          | 0/2 [00:00<?, ?probe/s]"),
        stream("\rbreakpoint put:  50%|█████     | 1/2 [00:02<00:02,  2.45s/probe]"),
        stream("\rbreakpoint put: 100%|██████████| 2/2 [00:05<00:00,  2.82s/probe, 1000/s pass]"),
        stream("\n"),
        stream("result printed\n", "stdout"),
        stream("WARNING: async-profiler could not use perf events\n"),
    ]
    nbk.cells = [cell]
    src = tmp_path / "bars.ipynb"
    nbformat.write(nbk, str(src))
    export.export_notebook(src, tmp_path / "bars.html")
    html = (tmp_path / "bars.html").read_text()
    assert "Kernel is running over TCP" not in html
    assert "probe/s" not in html and "100%|" not in html
    assert "result printed" in html
    assert '<details class="perflab-stderr"><summary>stderr: WARNING: async-profiler could not use perf events' in html


def test_old_renderer_outputs_export_the_same_way(tmp_path):
    """A notebook run with plotly's `notebook` renderer (bundle in an output, MathJax CDN tag next to each
    figure) exports without the bundle and without the CDN tag."""
    import plotly.graph_objects as go
    import plotly.io as pio

    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout=dict(title="t"))
    bundle = pio.renderers["notebook"].to_mimebundle(fig)
    nbk = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("fig.show()")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"text/html": "<script>/**\n* plotly.js v9.9.9\n*/</script>"}),
        nbformat.v4.new_output(
            "display_data",
            data={
                "text/html": '<script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.5/MathJax.js"></script>'
                + bundle["text/html"],
                "application/vnd.plotly.v1+json": fig.to_plotly_json(),
            },
        ),
    ]
    nbk.cells = [cell]
    src = tmp_path / "old.ipynb"
    nbformat.write(nbk, str(src))
    info = export.export_notebook(src, tmp_path / "old.html")
    html = (tmp_path / "old.html").read_text()
    assert info["plotly_js_copies"] == 0 and export.external_loads(html) == []
    assert html.count('class="plotly-graph-div"') == 1


def test_external_loads_finds_every_kind_of_load():
    page = """<script src="https://cdn.example/x.js"></script><link rel="stylesheet" href="//fonts.example/f.css">
    <img src='http://img.example/a.png'><style>@import url(https://css.example/a.css); .x{background:url("https://bg.example/b.png")}</style>
    <script type="module">await import("https://esm.example/m.mjs")</script>
    <a href="https://docs.example/page">a link is not a load</a><script src="local.js"></script><img src="data:image/png;base64,AAAA">"""
    assert export.external_loads(page) == sorted(
        [
            "https://cdn.example/x.js",
            "//fonts.example/f.css",
            "http://img.example/a.png",
            "https://css.example/a.css",
            "https://bg.example/b.png",
            "https://esm.example/m.mjs",
        ]
    )


def test_export_refuses_a_page_that_would_load_from_the_network(tmp_path):
    nbk = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell('<img src="https://example.org/logo.png">')
    nbk.cells = [cell]
    src = tmp_path / "ext.ipynb"
    nbformat.write(nbk, str(src))
    with pytest.raises(export.OfflineExportError, match="example.org/logo.png"):
        export.export_notebook(src, tmp_path / "ext.html")
    assert not (tmp_path / "ext.html").exists()


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.browser
def test_chromium_draws_the_page_and_the_code_toggles_work(executed, tmp_path):
    page = tmp_path / "plots.html"
    export.export_notebook(executed, page)
    shot = tmp_path / "screenshots" / "plots.png"
    chk = browser.check_page(page, shot, full_screenshot=tmp_path / "screenshots" / "plots-full.png")
    assert chk.errors == [], chk.errors
    assert chk.plot_divs == 2 and chk.drawn_plots == 2
    assert chk.main_svg >= 2 and chk.modebars == 2  # drawn as SVG, with the zoom/hover toolbar
    assert chk.untitled_plots == [] and chk.unlabelled_axes == []
    assert chk.network == []
    assert [u.rsplit("/", 1)[-1] for u in chk.requests] == ["plots.html", "plotly.min.js"]
    code = chk.code
    assert code["cells"] == 9 and code["hidden_at_load"] and code["button"] == "show all code"
    assert code["all_shown_by_button"] and code["button_after_click"] == "hide all code"
    assert code["all_hidden_again"] and code["one_cell_opens_alone"] and code["one_cell_closes"]
    assert chk.consoles["count"] == 1 and chk.consoles["open"] == 0
    assert chk.consoles["summaries"][0].startswith("PUT, 1 connection: ")
    assert chk.ok
    assert png_size(shot) == (1280, 1600)
    w, h = png_size(tmp_path / "screenshots" / "plots-full.png")
    assert w == 1280 and h > 1600
    print(f"screenshot: {shot}")


@pytest.mark.browser
def test_chromium_check_catches_script_errors_missing_files_and_network_loads(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<html><body><div class="plotly-graph-div"></div>'
        '<script src="https://cdn.example.invalid/plotly.js"></script>'
        '<script src="assets/missing.js"></script>'
        "<script>notDefinedAnywhere();</script></body></html>"
    )
    chk = browser.check_page(bad, timeout=5)
    assert not chk.ok
    assert any("notDefinedAnywhere" in e for e in chk.errors)
    assert any("missing.js" in e for e in chk.errors)
    assert chk.network == ["https://cdn.example.invalid/plotly.js"]
    assert chk.plot_divs == 1 and chk.drawn_plots == 0
    assert any("plots not drawn" in e for e in chk.errors)


@pytest.mark.browser
def test_pages_checked_in_one_browser_each_see_only_their_own(executed, tmp_path):
    """A report checks its pages one after another in one chromium (a start costs more than a page): a bad page
    checked between two good ones is caught, and its errors and requests do not follow the next page."""
    from perflab.report.browser.cdp import Chromium

    page = tmp_path / "plots.html"
    export.export_notebook(executed, page)
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><script src="assets/missing.js"></script><script>nowhere();</script></body></html>')
    with Chromium() as shared:
        first = browser.check_page(page, tmp_path / "1.png", browser=shared)
        wrong = browser.check_page(bad, toggles=False, browser=shared)
        again = browser.check_page(page, tmp_path / "2.png", browser=shared)
        # each tab closed with its events (what is left of them: the notice that a closed tab went)
        assert {e["method"] for e in shared.events if "sessionId" in e} <= {"Inspector.detached"}
    assert first.ok and again.ok and not wrong.ok, (first.errors, again.errors)
    assert any("nowhere" in e for e in wrong.errors) and any("missing.js" in e for e in wrong.errors)
    assert first.errors == again.errors == [] and first.code["works"] and again.code["works"]
    assert [u.rsplit("/", 1)[-1] for u in again.requests] == ["plots.html", "plotly.min.js"]
    assert again.drawn_plots == again.plot_divs == 2 and png_size(tmp_path / "2.png") == (1280, 1600)


@pytest.mark.browser
def test_chromium_check_catches_a_broken_toggle(executed, tmp_path):
    """The toggle check can fail: a page whose button script is gone is caught."""
    page = tmp_path / "plots.html"
    export.export_notebook(executed, page)
    html = page.read_text()
    start = html.index('/* "show all code"')
    page.write_text(html[:start] + "/* removed */" + html[html.index("</script>", start) :])
    chk = browser.check_page(page, toggles=True)
    assert chk.code["hidden_at_load"] and not chk.code["all_shown_by_button"]
    assert not chk.ok


@pytest.mark.browser
def test_chromium_check_catches_an_absurd_axis_and_an_empty_figure(tmp_path):
    """A log axis running to 10^270 (a ramp plotted over its unset rates, notebook 07 once) and a figure with
    no data are what a reader cannot use: the page check names them and fails."""
    import plotly.graph_objects as go
    from plotly.offline import get_plotlyjs

    from perflab.analysis.marks import rate_line

    absurd = go.Figure(
        go.Scatter(x=[1, 1e270], y=[1, 2]),
        layout={"title": "ramp", "xaxis": {"type": "log", "title": "rate"}, "yaxis": {"title": "p99"}},
    )
    empty = go.Figure(layout={"title": "nothing", "xaxis": {"title": "x"}, "yaxis": {"title": "y"}})
    fine = go.Figure(
        go.Scatter(x=[100, 1e5], y=[1, 2]),
        layout={"title": "fine", "xaxis": {"type": "log", "title": "rate"}, "yaxis": {"title": "p99"}},
    )
    # a ramp's estimate marked on a log axis the way the lab's figures mark it: its label once sat at 10^210
    marked = go.Figure(
        go.Scatter(x=[100, 1e4], y=[1, 2]),
        layout={"title": "ramp", "xaxis": {"type": "log", "title": "rate"}, "yaxis": {"title": "p99"}},
    )
    rate_line(marked, 210.0, "~210 req/s", True, "#1f77b4")
    page = tmp_path / "axes.html"
    divs = "".join(
        f.to_html(full_html=False, include_plotlyjs=False, div_id=n)
        for n, f in (("absurd", absurd), ("empty", empty), ("fine", fine), ("marked", marked))
    )
    page.write_text(f"<html><head><script>{get_plotlyjs()}</script></head><body>{divs}</body></html>")
    chk = browser.check_page(page, toggles=False)
    assert chk.drawn_plots == 4 and not chk.ok
    assert [a.split(" ")[0] for a in chk.absurd_axes] == ["absurd"] and "(log)" in chk.absurd_axes[0]
    assert chk.empty_plots == ["empty"]
    assert "absurd axes: absurd xaxis" in chk.summary() and "empty figures: empty" in chk.summary()
