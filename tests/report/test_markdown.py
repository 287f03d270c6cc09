"""The Markdown report's pieces (perflab.report.markdown); the whole of it, rendered and loaded in chromium, is
tests/report/test_report_course.py's."""

from __future__ import annotations

import pytest

from perflab.cli import main
from perflab.report import markdown


def test_a_folder_without_a_report_is_named_before_anything_is_written(tmp_path, capsys):
    with pytest.raises(ValueError, match=r"no report.json \(give a report folder that `perflab report` wrote\)"):
        markdown.write(tmp_path)
    assert main(["markdown", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no report.json" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_a_notebooks_headings_go_one_level_down_and_code_stays_as_written():
    text = "# 1. Title\n\n## Part\n\n```text\n# not a heading\n```\n### Sub"
    assert markdown._shift(text) == "## 1. Title\n\n### Part\n\n```text\n# not a heading\n```\n#### Sub"
    assert markdown._code("a ``` b") == "````text\na ``` b\n````"  # a fence the text cannot close
    assert markdown._sentence("Which commit changed the server?") == "Which commit changed the server?"
    assert markdown._sentence("1. Stable load") == "1. Stable load."


def test_the_tools_line_gives_the_jdk_the_server_ran_on_not_perflabs(tmp_path):
    """A course server ran on Temurin 25 while perflab's own java is 17: report.md said 'Tools: ..., java
    17.0.15'. The Tools line gives the JDK each run recorded for its server (meta.json's server.java_version)."""
    import json

    def report(*jdks):
        runs = []
        for i, v in enumerate(jdks):
            (tmp_path / "data" / "runs" / f"r{i}").mkdir(parents=True, exist_ok=True)
            (tmp_path / "data" / "runs" / f"r{i}" / "meta.json").write_text(
                json.dumps({"server": {"java_version": v, "command": ["java"]}})
            )
            runs.append({"id": f"r{i}", "path": f"../data/runs/r{i}", "status": "ok", "validity": "suspect"})
        folder = tmp_path / "report"
        folder.mkdir(exist_ok=True)
        (folder / "report.json").write_text(
            json.dumps(
                {
                    "plan": "tour",
                    "started": "2026-01-01T00:00:00",
                    "seconds": 1,
                    "command": "make report",
                    "machine": {"cores": 2},
                    "git": {"commit": "a" * 40},
                    "data_root": str(tmp_path / "data"),
                    "tools": {"perflab-load": "0.4.0", "java": "17.0.15", "chromium": None},
                    "notebooks": [
                        {"notebook": "01-stable-load", "title": "1. Stable load", "status": "ok", "runs": runs}
                    ],
                }
            )
        )
        text = markdown.write(folder, chromium="/no/chromium/needed/without/figures").path.read_text()
        return next(line for line in text.splitlines() if line.startswith("- Tools:"))

    assert (
        report("25.0.1", "25.0.1") == "- Tools: the server's JDK 25.0.1 (as its runs recorded it), perflab-load 0.4.0"
    )
    assert report("25.0.1", "17.0.15") == (
        "- Tools: the servers' JDKs 25.0.1, 17.0.15 (as their runs recorded them), perflab-load 0.4.0"
    )
    assert report() == "- Tools: perflab-load 0.4.0"  # no run, no JDK it ran on: perflab's own is not said
    assert markdown.server_jdks({"notebooks": [{"runs": [{"id": "gone", "path": "nowhere"}]}]}, tmp_path) == []
