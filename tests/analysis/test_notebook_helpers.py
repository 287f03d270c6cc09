"""The helpers the notebooks call: parameter checks, console outputs and flame graphs folded and linked."""

import html

import pytest
from IPython.core.interactiveshell import InteractiveShell  # noqa: F401  (display() needs IPython)

from perflab.analysis import notebook as nb


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


COLLAPSED = ("[selector-1 tid=1];one/nio/net/SelectorThread.run;one/nio/net/NativeSocket.read 75\n"
             "[selector-1 tid=1];one/nio/net/SelectorThread.run;perflab/storage/lsm/MemTable.get 25\n")


def test_flamegraph_is_linked_with_a_preview_not_embedded(tmp_path, monkeypatch):
    shown = capture_display(monkeypatch)
    page = tmp_path / "profile-cpu.html"
    page.write_text("<html><script>var s = 1;</script><body>async-profiler page body</body></html>")
    (tmp_path / "profile-cpu.collapsed").write_text(COLLAPSED)
    monkeypatch.chdir(tmp_path)
    assert nb.show_flamegraph(page, title="cpu <1>") is None
    bundle, kw = shown[0]
    assert kw == {"raw": True}
    info = bundle[nb.FLAMEGRAPH_MIME]
    assert info["path"] == str(page.resolve()) and info["event"] == "cpu" and info["title"] == "cpu <1>"
    out = bundle["text/html"]
    assert "cpu &lt;1&gt;" in out and "href='profile-cpu.html'" in out    # relative to the kernel's directory
    assert "srcdoc" not in out and "async-profiler page body" not in out  # the page is not embedded
    assert "<svg class='perflab-flame-preview'" in out and "NativeSocket.read" in out and "75.0%" in out
    with pytest.raises(FileNotFoundError):
        nb.show_flamegraph(tmp_path / "missing.html")


def test_console_is_folded_with_a_one_line_summary(shared_dir, monkeypatch):
    shown = capture_display(monkeypatch)
    text = (shared_dir / "fixtures" / "wrk2" / "put-t1-c1-R2000-L.txt").read_text()
    nb.show_console(text, title="PUT <1>")
    out = shown[0][0].data
    assert out.startswith("<details class='perflab-console'><summary><b>PUT &lt;1&gt;</b>: ")
    assert "<details class='perflab-console' open" not in out
    summary = nb.console_summary(text)
    assert summary.startswith("23,997 requests in 12.00 s, 1,999.8 req/s, p50 0.920 ms, p99 1.900 ms")
    assert summary.endswith("0 errors")
    assert html.escape(text.rstrip("\n")) in out                          # every line kept
    assert nb.console_summary("not a wrk output") == ""


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
