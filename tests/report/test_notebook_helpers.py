"""The helpers the notebooks call: parameter checks, script arguments, JDK lookup, flame graph embedding."""

import html
import re

import pytest
from IPython.core.interactiveshell import InteractiveShell  # noqa: F401  (display() needs IPython)

from perflab import paths
from perflab.report import notebook as nb


def test_checks_return_messages_and_check_raises_all_of_them():
    assert nb.positive("rate", 5) is None
    assert nb.positive("rate", 0) == "rate must be a number > 0, got 0"
    assert nb.positive("rate", True) == "rate must be a number > 0, got True"
    assert nb.positive("rate", float("nan")).startswith("rate must be a number > 0")
    assert nb.integer("threads", 2.5) == "threads must be an integer >= 1, got 2.5"
    assert nb.fraction("precision", 1) == "precision must be a number in (0, 1), got 1"
    assert nb.choice("mode", "fast", ("sync", "async")) == "mode must be one of 'sync', 'async', got 'fast'"
    assert nb.choices("modes", "sync", ("sync",)).startswith("modes must be a non-empty list")
    assert nb.positive_list("workers", [1, -2]) == "workers: every element must be an integer > 0, got -2"
    assert nb.duration("d", 5, warmup_s=2) is None
    assert nb.duration("d", 0.5) == "d=0.5 s is too short to measure anything (minimum 1 s)"
    assert "shorter than the warm-up" in nb.duration("d", 2, warmup_s=3)
    assert nb.size("m", "4m") is None and nb.size("m", "4q").startswith("m:")
    assert nb.script("s", "get.lua") is None and nb.script("s", "ycsb-a") is None
    assert "not found" in nb.script("s", "nope.lua")
    nb.check(None, None)
    with pytest.raises(nb.ParameterError, match=r"^bad parameters: rate must be a number > 0, got 0; mode must"):
        nb.check(nb.positive("rate", 0), None, nb.choice("mode", "x", ("sync",)))


def test_script_arguments_match_the_headers_and_filter_values():
    assert nb.script_arguments("put.lua") == ["start", "count", "threads", "value", "seed"]
    assert nb.script_arguments("status.lua") == []
    assert nb.workload_args("get.lua", threads=2, keys=100, value=10, seed=3) == ("threads=2", "count=100")
    assert nb.workload_args("get-random.lua", threads=2, keys=100, seed=3, scramble=False, dist=None) == (
        "keys=100", "seed=3", "scramble=0")


def test_every_script_header_lists_what_its_usage_accepts():
    """The same header parsing the notebooks rely on, across all scripts (usage itself: tests/scripts)."""
    for script in sorted((paths.repo_root() / "wrk-scripts").glob("*.lua")):
        names = nb.script_arguments(script.name)
        body = script.read_text()
        for n in names:
            assert re.search(rf"^--\s+{n}=", body, re.M), (script.name, n)


def test_find_jdk():
    major = nb.jdk_major(None)
    assert major >= 17
    assert nb.find_jdk(major) is not None
    assert nb.find_jdk(999) is None


def test_flamegraph_is_embedded_as_srcdoc(tmp_path, capsys):
    page = tmp_path / "flame.html"
    page.write_text('<html><script>var s = "a & b";</script><body>frames</body></html>')
    shown = []
    import IPython.display as d

    orig = d.display
    d.display = lambda obj: shown.append(obj)
    try:
        nb.show_flamegraph(page, title="cpu <1>")
    finally:
        d.display = orig
    out = shown[0].data
    assert "cpu &lt;1&gt;" in out
    srcdoc = re.search(r'srcdoc="([^"]*)"', out).group(1)
    assert html.unescape(srcdoc) == page.read_text()
    with pytest.raises(FileNotFoundError):
        nb.show_flamegraph(tmp_path / "missing.html")


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
