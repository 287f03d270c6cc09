"""A notebook aimed at what it measures (perflab.report.aim): the other target's cells and parameters left out,
the question stating what was run; and every notebook's metadata fits its parameters for both targets."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from perflab.report import aim, batch
from perflab.report.plans import notebooks_dir

NOTEBOOKS = sorted(notebooks_dir().glob("*.ipynb"))


def _notebook():
    nb = new_notebook(
        cells=[
            new_markdown_cell("# 2. Breakpoint\n\n**Question:** as written\n\nMore."),
            new_markdown_cell("The memtable flushes.", metadata={"perflab": {"target": "builtin"}}),
            new_markdown_cell("Your server is filled through its API.", metadata={"perflab": {"target": "yours"}}),
            new_code_cell("x = 1"),
        ]
    )
    nb.metadata["perflab"] = {
        "question": "with {connections} connections at {rate} req/s?",
        "title": {"yours": "2. Your breakpoint"},
    }
    return nb


def test_a_page_keeps_its_targets_cells_and_states_what_ran():
    nb = _notebook()
    ran = {"connections": "[1, 64]", "rate": "2000.0"}
    yours = aim.aimed(nb, aim.YOURS, ran)
    assert [c.source for c in yours.cells[1:]] == ["Your server is filled through its API.", "x = 1"]
    assert yours.cells[0].source.splitlines()[0] == "# 2. Your breakpoint"
    assert "**Question:** with 1 and 64 connections at 2,000 req/s?" in yours.cells[0].source
    builtin = aim.aimed(nb, aim.BUILTIN, {"connections": "[32]", "rate": "500"})
    assert [c.source for c in builtin.cells[1:]] == ["The memtable flushes.", "x = 1"]
    assert (
        "# 2. Breakpoint" in builtin.cells[0].source and "with 32 connections at 500 req/s?" in builtin.cells[0].source
    )
    assert len(nb.cells) == 4  # the notebook itself is untouched
    with pytest.raises(ValueError, match=r"the question names \{rate\}, which is no parameter"):
        aim.aimed(nb, aim.BUILTIN, {"connections": "[32]"})


def test_a_parameter_is_one_targets_by_its_comment():
    assert aim.scope("(built-in) the server's -Xmx") == aim.BUILTIN
    assert aim.scope("(your server) a path that answers") == aim.YOURS
    assert aim.scope("generator threads") is None and aim.scope(None) is None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebooks_question_fits_its_parameters_for_both_targets(path):
    """A question names only parameters its notebook has, for either target; the effective parameters of a
    target never list the other's."""
    nb = nbformat.read(str(path), as_version=4)
    for target in (aim.BUILTIN, aim.YOURS):
        effective = batch._effective(path, {}, target)
        page = aim.aimed(nb, target, effective)
        first = next(c for c in page.cells if c.cell_type == "markdown")
        assert aim.QUESTION in first.source, path.name
        theirs = aim.foreign(aim.parameters(path), target)
        assert not theirs & set(effective), (path.name, target, theirs & set(effective))
