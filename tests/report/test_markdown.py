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
    assert markdown._code("a ``` b") == "````text\na ``` b\n````"                 # a fence the text cannot close
    assert markdown._sentence("Which commit changed the server?") == "Which commit changed the server?"
    assert markdown._sentence("1. Stable load") == "1. Stable load."
