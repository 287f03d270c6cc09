"""The plumbing the notebooks call: parameter checks, measuring with one printed line, console outputs folded, and
a section shown in order."""

import html

import pandas as pd
import plotly.graph_objects as go
import pytest
from IPython.core.interactiveshell import InteractiveShell  # noqa: F401  (display() needs IPython)
from synthetic import experiment, load, search

import perflab as pl
from perflab import jdk
from perflab.analysis import consoles
from perflab.analysis.section import Section
from perflab.lab import notebook as nb


def test_param_checks_a_notebook_parameter_with_the_config_layers_words():
    assert nb.param("max_rows", "12", "int", min=1) == 12
    assert nb.param("workers", [1, 4], "ints", min=1) == (1, 4)
    with pytest.raises(ValueError, match=r"^max_rows: must be >= 1, got 0"):
        nb.param("max_rows", 0, "int", min=1)
    with pytest.raises(ValueError, match=r"^workers\[1\]: expected an integer, got 'x'"):
        nb.param("workers", [1, "x"], "ints", min=1)


def capture_display(monkeypatch) -> list:
    """What the helpers pass to IPython's display(), in order."""
    import IPython.display as d

    shown = []
    monkeypatch.setattr(d, "display", lambda obj, **kw: shown.append((obj, kw)))
    return shown


def test_console_is_folded_with_a_one_line_summary(shared_dir):
    text = (shared_dir / "fixtures" / "wrk2" / "put-t1-c1-R2000-L.txt").read_text()
    out = consoles.console(text, title="PUT <1>")["text/html"]
    assert out.startswith("<details class='perflab-console'><summary><b>PUT &lt;1&gt;</b>: ")
    assert "<details class='perflab-console' open" not in out
    summary = consoles.console_summary(text)
    assert summary.startswith("23,997 requests in 12.00 s, 1,999.8 req/s, p50 0.920 ms, p99 1.900 ms")
    assert summary.endswith("0 errors")
    assert html.escape(text.rstrip("\n")) in out  # every line kept
    assert consoles.console_summary("not a wrk output") == ""


def test_retry_once_retries_only_the_named_errors_and_only_once(capsys):
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) == 1:
            raise TimeoutError("attach timed out\nlog tail")
        return "ok"

    assert nb.retry_once(flaky, (TimeoutError,), "cpu run") == "ok" and len(calls) == 2
    assert "cpu run failed (TimeoutError: attach timed out); retrying once" in capsys.readouterr().out

    def always():
        calls.append(1)
        raise TimeoutError("again")

    calls.clear()
    with pytest.raises(TimeoutError):
        nb.retry_once(always, (TimeoutError,))
    assert len(calls) == 2

    def other():
        raise ValueError("not retried")

    with pytest.raises(ValueError):
        nb.retry_once(other, (TimeoutError,))


def test_placements_are_checked_and_kept_as_written():
    assert nb.placements(["shared", "server=0;load=0"]) == ("shared", "server=0;load=0")
    with pytest.raises(ValueError, match="placement: expected one of shared, split"):
        nb.placements(["shared", "spread"])
    with pytest.raises(ValueError, match="placements: must name at least one placement"):
        nb.placements([])


def test_build_names_the_part_a_bad_parameter_configures():
    assert nb.build("PUT load", pl.workload, "put.lua", 4, rate=100).connections == 4
    with pytest.raises(ValueError, match=r"^PUT load: rate: must be > 0, got -5"):
        nb.build("PUT load", pl.workload, "put.lua", 4, rate=-5)


def test_the_target_is_printed_and_prefill_is_for_the_built_in_server_only(capsys):
    built = nb.measured(None, mode="async").target
    assert isinstance(built, pl.ServerConfig) and "mode='async'" in capsys.readouterr().out
    yours = nb.measured("python3 kv.py {port}", "/health").target
    assert isinstance(yours, pl.ForeignServer) and "python3 kv.py {port}" in capsys.readouterr().out
    assert nb.data_for(built, keys=100)["prefill"].keys == 100 and nb.data_for(yours, keys=100) == {"fill": 100}
    with pytest.raises(ValueError, match="keys"):
        nb.data_for(yours, keys=0)  # checked for any server


def test_servers_for_modes_find_a_jdk_for_virtual_threads_or_skip_them(monkeypatch, capsys, tmp_path):
    newer = tmp_path / "jdk-25"
    (newer / "bin").mkdir(parents=True)
    (newer / "bin" / "java").write_text("")
    monkeypatch.setattr(jdk, "find", lambda major, preferred: str(newer) if major == jdk.VIRTUAL_THREADS else None)
    monkeypatch.setattr(jdk, "version", lambda home: (25, "25.0.1"))
    servers = nb.servers_for_modes(["sync", "virtual"], None, backend="memory")
    assert list(servers) == ["sync", "virtual"] and servers["virtual"].java_home == str(newer)
    assert servers["sync"].java_home is None and servers["sync"].backend == "memory"
    out = capsys.readouterr().out
    assert out.startswith(f"virtual threads run on {newer} (JDK 25)\nsync ServerConfig(")
    monkeypatch.setattr(jdk, "find", lambda major, preferred: None)
    assert list(nb.servers_for_modes(["virtual", "async"])) == ["async"]
    assert capsys.readouterr().out.startswith(
        "No JDK 21+ found: virtual threads are skipped (install one or set java_home)."
    )
    with pytest.raises(ValueError, match="mode: --mode: expected one of sync, async, virtual, got 'turbo'"):
        nb.servers_for_modes(["sync", "turbo"])


def test_measure_retries_a_failed_profiler_once_and_says_how_the_run_went(monkeypatch, capsys):
    calls = []

    def run_experiment(server, load_params, name=None, **options):
        calls.append((name, options))
        if len(calls) == 1:
            raise pl.ProfilerError("could not attach")
        return experiment(load(2.5), "suspect", ("rate short",), run_id="run-7")

    monkeypatch.setattr(nb, "run_experiment", run_experiment)
    shared = pl.SessionOptions(placement="shared")
    r = nb.measure(
        "PUT, 4 connections", pl.ServerConfig(), pl.workload("put.lua", 4, rate=100), "nb01-put-4c", session=shared
    )
    given = {"profile": None, "prefill": None, "fill": None, "session": shared}
    assert r.run_id == "run-7" and calls == [("nb01-put-4c", given)] * 2
    assert capsys.readouterr().out.splitlines() == [
        "PUT, 4 connections failed (ProfilerError: could not attach); retrying once",
        "PUT, 4 connections: p99 2.50 ms; suspect: rate short; run run-7",
    ]


def test_search_breakpoint_says_where_the_search_ended(monkeypatch, capsys):
    found = search(2000, (1900, 2100), [(1000, True, 2.0), (2000, True, 3.0), (2100, False, 30.0)], seconds=41.2)
    monkeypatch.setattr(nb, "find_breakpoint", lambda server, load, name=None, **o: found)
    assert (
        nb.search_breakpoint("GET, 64 connections", pl.ServerConfig(), pl.workload("get-random.lua", 64), "x") is found
    )
    assert capsys.readouterr().out == (
        "GET, 64 connections: 2,000 req/s (interval [1,900, 2,100], resolved); probes' validity valid; 41 s; run None\n"
    )


def test_a_rate_scaled_from_the_breakpoints():
    found = [search(2000, (1900, 2100)), search(None, (None, 100), outcome="none-passed"), search(5000, (4800, 5200))]
    assert nb.scaled_breakpoint(found, 0.7, min, default=500) == 1400
    assert nb.scaled_breakpoint(found, 1.5, max, default=500) == 7500
    assert nb.scaled_breakpoint(found[1:2], 0.7, min, default=500) == 500
    with pytest.raises(ValueError, match="no search found a breakpoint, and no default rate was given"):
        nb.scaled_breakpoint([], 0.7)
    with pytest.raises(ValueError, match="pick must be min or max, got 'lowest'"):
        nb.scaled_breakpoint(found, 0.7, "lowest")


def test_markdown_paragraphs_and_a_section_shown_in_order(monkeypatch):
    shown = capture_display(monkeypatch)
    figures = []
    monkeypatch.setattr(go.Figure, "show", lambda fig, *a, **kw: figures.append(fig))
    nb.show_markdown("one", "", "two")
    nb.show_markdown("", "")
    assert [s[0].data for s in shown] == ["one\n\ntwo"]
    shown.clear()
    fig, table, bundle = go.Figure(), pd.DataFrame({"a": [1]}), {"text/html": "<b>console</b>"}
    s = Section([table, "one", "", "two", fig, bundle, None, "three"])
    assert s.figure is fig and s.table is table and s.text == "one\n\ntwo\n\nthree"
    assert s.show() is None and figures == [fig]
    assert [(type(o).__name__, kw) for o, kw in shown] == [
        ("dict", {"raw": True}),
        ("Markdown", {}),
        ("dict", {"raw": True}),
        ("Markdown", {}),
    ]
    assert shown[1][0].data == "one\n\ntwo" and shown[3][0].data == "three"  # adjacent paragraphs: one output
    # a table: the page shows its HTML, a Markdown report its Markdown table
    assert shown[0][0]["text/markdown"] == "| a |\n| ---: |\n| 1 |" and "<table" in shown[0][0]["text/html"]
    assert Section().figure is None and Section().table is None and Section().text == ""
