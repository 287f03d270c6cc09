"""Offline HTML export and the headless-chromium check, on a small executed notebook with plotly figures."""

import struct

import nbformat
import papermill
import pytest

from perflab.report import browser, export

PLOT_CELLS = [
    "from perflab.report import notebook as nb\nnb.setup()\nimport plotly.graph_objects as go",
    "go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)], name='squares')).show()",
    "go.Figure(go.Bar(x=['a', 'b', 'c'], y=[3, 1, 2])).show()",
    "nb.show_console('Running 1s test @ http://127.0.0.1:1\\n  1 threads and 1 connections', title='console')",
]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    nbk = nbformat.v4.new_notebook()
    nbk.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbk.cells = [nbformat.v4.new_markdown_cell("# Export test\n\nA **plot** below."),
                 nbformat.v4.new_code_cell("n = 5", metadata={"tags": ["parameters"]})]
    nbk.cells += [nbformat.v4.new_code_cell(src) for src in PLOT_CELLS]
    src = d / "plots.ipynb"
    nbformat.write(nbk, str(src))
    out = d / "plots-out.ipynb"
    papermill.execute_notebook(str(src), str(out), parameters={"n": 12}, progress_bar=False, kernel_name="python3")
    return out


def test_renderer_output_needs_sanitizing(executed):
    """The premise: plotly's notebook renderer writes a MathJax CDN <script src> next to each figure."""
    raw = executed.read_text()
    assert "cdnjs.cloudflare.com/ajax/libs/mathjax" in raw
    assert "application/vnd.plotly.v1+json" in raw          # JupyterLab's interactive mimetype is kept


def test_export_is_offline_with_plotly_embedded_once(executed, tmp_path):
    page = tmp_path / "plots.html"
    info = export.export_notebook(executed, page, nav_html='<a href="index.html">index</a>')
    html = page.read_text()
    assert export.external_loads(html) == []
    assert info["plotly_js_copies"] == 1 == export.plotly_js_copies(html)
    assert "require.js" not in html and "mermaid.esm" not in html and "mathjax/2.7" not in html
    assert html.count('class="plotly-graph-div"') == 2
    assert '<nav class="perflab-nav"><a href="index.html">index</a></nav>' in html
    assert info["bytes"] == len(html.encode())


def test_progress_bars_are_shown_in_their_final_state(tmp_path):
    nbk = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="bar  0%|\rbar 50%|#####\rbar 100%|##########\nnext line\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="\rsearch 1/3"),      # one message per redraw,
                    nbformat.v4.new_output("stream", name="stderr", text="\rsearch 2/3"),      # as tqdm sends them
                    nbformat.v4.new_output("stream", name="stderr", text="\rsearch 3/3\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="result printed\n")]
    nbk.cells = [cell]
    src = tmp_path / "bars.ipynb"
    nbformat.write(nbk, str(src))
    export.export_notebook(src, tmp_path / "bars.html")
    html = (tmp_path / "bars.html").read_text()
    assert "bar 100%|##########" in html and "next line" in html
    assert "bar 50%" not in html and "bar  0%" not in html
    assert "search 3/3" in html and "search 1/3" not in html and "search 2/3" not in html
    assert "result printed" in html


def test_external_loads_finds_every_kind_of_load():
    page = """<script src="https://cdn.example/x.js"></script><link rel="stylesheet" href="//fonts.example/f.css">
    <img src='http://img.example/a.png'><style>@import url(https://css.example/a.css); .x{background:url("https://bg.example/b.png")}</style>
    <script type="module">await import("https://esm.example/m.mjs")</script>
    <a href="https://docs.example/page">a link is not a load</a><script src="local.js"></script><img src="data:image/png;base64,AAAA">"""
    assert export.external_loads(page) == sorted([
        "https://cdn.example/x.js", "//fonts.example/f.css", "http://img.example/a.png",
        "https://css.example/a.css", "https://bg.example/b.png", "https://esm.example/m.mjs"])


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
def test_chromium_draws_the_exported_plots(executed, tmp_path):
    page = tmp_path / "plots.html"
    export.export_notebook(executed, page)
    shot = tmp_path / "screenshots" / "plots.png"
    chk = browser.check_page(page, shot)
    assert chk.errors == [], chk.errors
    assert chk.plot_divs == 2 and chk.drawn_plots == 2
    assert chk.main_svg >= 2 and chk.modebars == 2       # drawn as SVG, with the zoom/hover toolbar
    assert chk.network == []
    assert chk.ok
    assert png_size(shot) == (1280, 2400)
    print(f"screenshot: {shot}")


@pytest.mark.browser
def test_chromium_check_catches_script_errors_and_network_loads(tmp_path):
    bad = tmp_path / "bad.html"
    bad.write_text('<html><body><div class="plotly-graph-div"></div>'
                   '<script src="https://cdn.example.invalid/plotly.js"></script>'
                   '<script>notDefinedAnywhere();</script></body></html>')
    chk = browser.check_page(bad)
    assert not chk.ok
    assert any("notDefinedAnywhere" in e for e in chk.errors)
    assert chk.network == ["https://cdn.example.invalid/plotly.js"]
    assert chk.plot_divs == 1 and chk.drawn_plots == 0
