"""The documentation stays readable and whole: README.md is read in five minutes (at most 15,000 characters),
every page under docs/ in one sitting (at most 25,000), and every relative link of README.md, docs/**/*.md, the
other READMEs and the notebooks' Markdown cells leads to a file that exists and, with ``#anchor``, to a heading
of that file (GitHub's anchors)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from support import REPO

README_LIMIT = 15_000
PAGE_LIMIT = 25_000
#: folders of build outputs and environments (and any hidden one): their Markdown is not the project's
_NOT_DOCS = {"build", "target", "node_modules", "__pycache__"}
#: folders whose own README is the only documentation in them (the rest: runs, builds, exported reports)
_RESULTS = ("data", "report")


def _markdown_files() -> list[Path]:
    """README.md, docs/**/*.md and every other Markdown file of the repository (READMEs, bench write-ups)."""
    found = []
    for root, dirs, files in os.walk(REPO):
        rel = Path(root).relative_to(REPO)
        if rel.parts[:1] in [(r,) for r in _RESULTS]:
            dirs[:] = []
        dirs[:] = sorted(d for d in dirs if d not in _NOT_DOCS and not d.startswith("."))
        found += [Path(root) / f for f in sorted(files) if f.endswith(".md")]
    return found


DOCS = _markdown_files()
PAGES = sorted((REPO / "docs").rglob("*.md"))
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` outside fenced code blocks."""
    out, fenced = [], False
    for i, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((i, line))
    return out


def anchor_of(heading: str) -> str:
    """GitHub's anchor for a heading's text: the text as rendered (code spans and links to their text, emphasis
    marks dropped), lower case, every character but letters, digits, '-', '_' and spaces dropped, spaces to '-'."""
    text = _CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("*", "")
    text = "".join(c for c in text.lower() if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a Markdown file, the repeats numbered as GitHub numbers them (-1, -2, ...)."""
    seen: dict[str, int] = {}
    out = set()
    for _, line in _prose(path.read_text()):
        m = _HEADING.match(line)
        if not m:
            continue
        a = anchor_of(m.group(2))
        n = seen.get(a, 0)
        out.add(a if n == 0 else f"{a}-{n}")
        seen[a] = n + 1
    return out


def links(text: str) -> list[tuple[int, str]]:
    """``(line, target)`` of every Markdown link in prose (not in code blocks or code spans; a link's text may run
    over several lines)."""
    lines = text.splitlines()
    kept = dict(_prose(text))
    prose = "\n".join(kept.get(i, "") for i in range(1, len(lines) + 1))
    prose = _CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prose)  # same offsets, no code
    return [(prose.count("\n", 0, m.start()) + 1, m.group(1)) for m in _LINK.finditer(prose)]


def _shown(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def _broken(source: Path, line: int, target: str, where: str) -> str | None:
    """Why a link is broken, or None. External links (a scheme, //) are not followed."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("//"):
        return None
    path, _, anchor = target.partition("#")
    dest = (source.parent / unquote(path)).resolve() if path else source
    if not dest.exists():
        return f"{where}:{line}: {target}: no such file {_shown(dest)}"
    if anchor and not (dest.is_file() and dest.suffix == ".md"):
        return f"{where}:{line}: {target}: an anchor into something that is not a Markdown page"
    if anchor and anchor not in anchors(dest):
        return f"{where}:{line}: {target}: {_shown(dest)} has no heading with anchor #{anchor}"
    return None


def test_the_anchor_rules_are_githubs():
    assert anchor_of("Did my change help?") == "did-my-change-help"
    assert anchor_of("5. Load generator (`perflab-load`)") == "5-load-generator-perflab-load"
    assert anchor_of("perflab.toml: your server declared once") == "perflabtoml-your-server-declared-once"
    assert anchor_of("The machine's own speed (2026-11-23)") == "the-machines-own-speed-2026-11-23"
    assert anchor_of("7. Cluster protocol (`--cluster`)") == "7-cluster-protocol---cluster"
    assert anchor_of("6. Run records (`data/runs/<run-id>/`)") == "6-run-records-datarunsrun-id"
    assert anchor_of("9. Cluster runs (`perflab.cluster_run`)") == "9-cluster-runs-perflabcluster_run"
    assert anchor_of("The index at 3,000 and 30,000 runs") == "the-index-at-3000-and-30000-runs"


def test_links_and_anchors_are_found_outside_code(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "# A page\n\n## Once\n\n## Once\n\nsee [there](#once-1) and `[not](nowhere.md)`\n"
        "```bash\n# not a heading\n[nor](this.md)\n```\n![img](p.md#a-page)\n"
    )
    assert anchors(page) == {"a-page", "once", "once-1"}
    assert links(page.read_text()) == [(7, "#once-1"), (12, "p.md#a-page")]
    # the check can fail: a missing file, a missing heading, an anchor into what is not a page
    assert _broken(page, 1, "#once-1", "p") is None and _broken(page, 1, "https://example.org/x#y", "p") is None
    assert "no such file" in _broken(page, 1, "nowhere.md", "p")
    assert "no heading with anchor #twice" in _broken(page, 1, "p.md#twice", "p")
    assert "not a Markdown page" in _broken(page, 1, ".#a-page", "p")


def test_the_readme_is_read_in_five_minutes():
    size = len((REPO / "README.md").read_text())
    assert size <= README_LIMIT, (
        f"README.md has {size:,} characters (at most {README_LIMIT:,}: move a section to docs/)"
    )


def test_every_docs_page_is_read_in_one_sitting():
    assert len(PAGES) >= 10, [str(p) for p in PAGES]  # the pages are there to be measured
    long = {str(p.relative_to(REPO)): n for p in PAGES if (n := len(p.read_text())) > PAGE_LIMIT}
    assert not long, f"pages over {PAGE_LIMIT:,} characters (split them): {long}"


def test_the_documentation_is_found():
    names = {str(p.relative_to(REPO)) for p in DOCS}
    assert {
        "README.md",
        "docs/architecture.md",
        "java-server/README.md",
        "loadgen/README.md",
        "data/README.md",
        "notebooks/README.md",
        "report/README.md",
        "wrk-scripts/README.md",
    } <= names, sorted(names)
    assert sum(len(links(p.read_text())) for p in DOCS) >= 100


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_leads_to_a_file_and_heading(doc):
    where = str(doc.relative_to(REPO))
    broken = [why for line, target in links(doc.read_text()) if (why := _broken(doc, line, target, where))]
    assert not broken, "\n".join(broken)


def test_every_link_of_the_notebooks_markdown_leads_to_a_file_and_heading():
    assert NOTEBOOKS
    broken = []
    for nb in NOTEBOOKS:
        cells = json.loads(nb.read_text())["cells"]
        for i, cell in enumerate(cells):
            if cell["cell_type"] != "markdown":
                continue
            for _, target in links("".join(cell["source"])):
                if why := _broken(nb, i, target, f"{nb.relative_to(REPO)} cell"):
                    broken.append(why)
    assert not broken, "\n".join(broken)
