"""The lab notebooks as committed: clean, parameterised, validating their parameters in the first cell,
and independent of papermill (the same code runs in JupyterLab). Their full runs with tiny parameters
are in tests/report/test_pipeline.py (through the batch, as `make report` runs them)."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys

import nbformat
import papermill
import pytest
from papermill.exceptions import PapermillExecutionError

from perflab import paths

NB_DIR = paths.repo_root() / "notebooks"
NOTEBOOKS = sorted(p.name for p in NB_DIR.glob("*.ipynb"))


def test_the_ten_notebooks_exist():
    assert [n[:2] for n in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_clean(name):
    """No outputs, no execution counts, no papermill or widget state: the repository holds the source."""
    raw = json.loads((NB_DIR / name).read_text())
    for i, cell in enumerate(raw["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{name} cell {i} has outputs"
            assert cell.get("execution_count") is None, f"{name} cell {i} has an execution count"
        assert "papermill" not in cell.get("metadata", {}), f"{name} cell {i} has papermill metadata"
        assert "execution" not in cell.get("metadata", {}), f"{name} cell {i} has execution timing"
    assert set(raw["metadata"]) <= {"kernelspec", "language_info", "perflab"}, raw["metadata"].keys()
    nbformat.validate(nbformat.reads(json.dumps(raw), as_version=4))


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_structure_title_question_parameters_then_validation(name):
    nb = nbformat.read(str(NB_DIR / name), as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    assert "**Question:**" in first.source, "the first cell states the question the notebook answers"
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    params_cell = nb.cells[tagged[0]]
    assert params_cell.cell_type == "code"
    assert "import" not in params_cell.source, "the parameters cell holds plain assignments only"
    after = next(c for c in nb.cells[tagged[0] + 1 :] if c.cell_type == "code")
    # one validation layer: the first code cell builds the configs from the parameters (they check every
    # field) and checks the rest with the same layer (nb.param); no notebook-side checks of its own
    assert "nb.setup()" in after.source and "nb.check(" not in after.source
    assert "nb.param(" in after.source or "pl.ServerConfig(" in after.source or "nb.measured(" in after.source
    assert papermill.inspect_notebook(str(NB_DIR / name)), "papermill sees the parameters"
    text = "\n".join(c.source for c in nb.cells)
    assert "papermill" not in text, "notebooks must not depend on papermill-only state"
    assert "Findings" in text or name.startswith("06"), "notebooks 1-5 end with generated findings"


#: the most non-blank code lines outside the parameters cell each notebook may hold: issue #21 halved them
#: (111-140 before), the logic living in tested functions of perflab.analysis; issue #30 cut them again, each
#: section one story-level call of its subject. The parameters cell is the notebook's documented interface
#: (a parameter per line with its comment) and is not counted: the tour's plan added four to three notebooks, your
#: repository's API one to 09 (issue #37); issue #38 one to each, the import of perflab.lab (what measures) beside
#: perflab.analysis (what tells); issue #35 one to 02, the sustain windows beside the searches; the stable rate below
#: the breakpoint seven to 01 (perflab.lab.stable imported, the searches' settings and the profiled count checked, and
#: in each operation's section the rate chosen and the runs judged against it).
CODE_LINES = {"01": 38, "02": 34, "03": 32, "04": 27, "05": 37, "06": 13, "07": 32, "08": 25, "09": 13, "10": 18}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_thin_no_functions_only_public_imports_within_the_line_budget(name):
    """The story in markdown, the logic in library calls: no function or class is defined in a notebook,
    it imports ``perflab`` (as ``pl``) and modules of ``perflab.analysis`` and ``perflab.lab`` only, and keeps to
    its budget."""
    nb = nbformat.read(str(NB_DIR / name), as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    lines = sum(
        1
        for c in nb.cells
        if c.cell_type == "code" and "parameters" not in c.metadata.get("tags", [])
        for line in c.source.splitlines()
        if line.strip()
    )
    assert lines <= CODE_LINES[name[:2]], f"{name}: {lines} code lines, the budget is {CODE_LINES[name[:2]]}"
    imported = []
    for src in code:
        for node in ast.walk(ast.parse(src)):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)), (
                f"{name}: defines {type(node).__name__} at line {node.lineno}: move it into perflab.analysis or perflab.lab"
            )
            if isinstance(node, ast.Import):
                assert [(a.name, a.asname) for a in node.names] == [("perflab", "pl")], (
                    f"{name}: import {node.names[0].name}"
                )
                imported.append("perflab")
            elif isinstance(node, ast.ImportFrom):
                assert node.module in ("perflab.analysis", "perflab.lab") and node.level == 0, (
                    f"{name}: from {node.module} import ..."
                )
                for a in node.names:
                    importlib.import_module(f"{node.module}.{a.name}")  # a module, not a function of one
                    imported.append(f"{node.module}.{a.name}")
    assert imported[0] == "perflab" and "perflab.lab.notebook" in imported, imported


BAD = [
    ("01-stable-load.ipynb", {"mode": "fast"}, "mode: --mode: expected one of sync, async, virtual, got 'fast'"),
    ("01-stable-load.ipynb", {"get_script": "no-such-script.lua"}, "script: no-such-script.lua not found"),
    (
        "01-stable-load.ipynb",
        {"duration": "2s", "warmup": 5},
        "warmup: must not be longer than the measured window (2 s), got 5 s",
    ),
    ("01-stable-load.ipynb", {"sla_p99": "soon"}, "sla_p99: must be a duration like 500ms, 10s, 1m, got 'soon'"),
    ("01-stable-load.ipynb", {"memtable_size": "1k"}, "--memtable-size: must be between 64k and 1g, got '1k'"),
    # a share of the breakpoint is strictly between 0 and 1: nothing is searched or run with a bad one
    ("01-stable-load.ipynb", {"stable_fraction": 0}, "stable_fraction: must be > 0 and < 1"),
    ("01-stable-load.ipynb", {"stable_fraction": 1.2}, "stable_fraction: must be > 0 and < 1"),
    ("01-stable-load.ipynb", {"stable_fraction": "x"}, "stable_fraction: expected a number, got 'x'"),
    ("01-stable-load.ipynb", {"search": {"probe_durration": 1}}, "search: 'probe_durration' is no BreakpointParams"),
    ("01-stable-load.ipynb", {"search": {"probe_duration": 0.1}}, "search: probe_duration: must be >= 500ms, got 0.1"),
    ("01-stable-load.ipynb", {"connections": []}, "connections: must name at least one connection count"),
    ("02-breakpoint.ipynb", {"probe_duration": 0.1}, "probe_duration: must be >= 500ms, got 0.1"),
    ("02-breakpoint.ipynb", {"placements": ["shared", "spread"]}, "placement: expected one of shared, split"),
    (
        "03-sync-vs-async.ipynb",
        {"modes": ["sync", "turbo"]},
        "mode: --mode: expected one of sync, async, virtual, got 'turbo'",
    ),
    ("04-executor-tuning.ipynb", {"workers": [0, 2]}, "workers[0]: must be >= 1, got 0"),
    ("05-storage.ipynb", {"rate": 0}, "rate: must be > 0, got 0"),
    (
        "05-storage.ipynb",
        {"memtable_sizes": ["1q"]},
        "--memtable-size: expected a size like 4m, 512k or 1048576, got '1q'",
    ),
    ("05-storage.ipynb", {"pairs": {"max_pairz": 8}}, "pairs: 'max_pairz' is no ABParams field"),
    ("06-summary.ipynb", {"max_rows": 0}, "max_rows: must be >= 1, got 0"),
    ("06-summary.ipynb", {"since": "yesterday"}, "since: must be a duration like 500ms, 10s, 1m, got 'yesterday'"),
    ("07-cluster.ipynb", {"ack": 4}, "cluster: ack: must not exceed from (3), got 4"),
    ("07-cluster.ipynb", {"fault_node": 3}, "node 3 is out of range: the cluster has nodes 0..2"),
    (
        "07-cluster.ipynb",
        {"fault_at": "later"},
        "faults: fault_at: must be a duration like 500ms, 10s, 1m, got 'later'",
    ),
    ("07-cluster.ipynb", {"search": "guess"}, "capacity: search: expected one of probes, ramp"),
    ("07-cluster.ipynb", {"cluster_cmd": "python3 kv.py {port}"}, "command: must contain {cluster}"),
    ("08-ab.ipynb", {"b": {"mode": "turbo"}}, "b: mode: --mode: expected one of sync, async, virtual, got 'turbo'"),
    ("08-ab.ipynb", {"rates": [3000, 0]}, "rates[1]: must be >= 1, got 0"),
    ("08-ab.ipynb", {"budget": "a while"}, "budget: must be a duration like 500ms, 10s, 1m, got 'a while'"),
    ("09-history.ipynb", {"commits": 3}, "commits: must be between 4 and 40, got 3"),
    ("09-history.ipynb", {"planted": 6}, "planted: must be between 1 and 5, got 6"),
    ("09-history.ipynb", {"metric": "p99.9"}, "metric: a history follows cpu, p50 or p99, got 'p99.9'"),
    ("10-range.ipynb", {"value_size": "4x"}, "scan: value_size: must be a size like 4m, 512k, 1g or bytes, got '4x'"),
    ("10-range.ipynb", {"fill_factor": 0}, "scan: fill_factor: must be between 0.01 and 20, got 0"),
]


#: one case per notebook runs through papermill in a kernel of its own (what a report does); the others run
#: the same cells (parameters, the injected ones, the first code cell) in one Python process: a kernel per
#: case cost some 2.5 s each, for the same check of the same code. 01's kernel case is the report's own:
#: tests/report/test_pipeline.py runs 01 with a bad rate in its batch and checks the same (the first code cell
#: after the parameters fails, nothing ran)
KERNEL_ELSEWHERE = {"01-stable-load.ipynb"}
IN_A_KERNEL = [
    BAD[i]
    for name, i in {name: i for i, (name, _, _) in reversed(list(enumerate(BAD)))}.items()
    if name not in KERNEL_ELSEWHERE
]
IN_ONE_PROCESS = [c for c in BAD if c not in IN_A_KERNEL]


def _ids(cases):
    """Each case's id: its notebook and parameters with their values (one parameter may have several bad ones)."""
    return [f"{n[:2]}-{'-'.join(f'{k}={v}' for k, v in p.items())}" for n, p, _ in cases]


@pytest.mark.parametrize("name,params,message", IN_A_KERNEL, ids=_ids(IN_A_KERNEL))
def test_bad_parameter_fails_in_the_first_cell_with_a_message(tmp_path, monkeypatch, name, params, message):
    monkeypatch.setenv("PERFLAB_DATA", str(tmp_path / "data"))
    out = tmp_path / "out.ipynb"
    with pytest.raises(PapermillExecutionError) as e:
        papermill.execute_notebook(
            str(NB_DIR / name), str(out), parameters=params, cwd=str(NB_DIR), progress_bar=False, kernel_name="python3"
        )
    assert e.value.ename == "ValueError"
    assert message in e.value.evalue
    executed = nbformat.read(str(out), as_version=4)
    code = [i for i, c in enumerate(executed.cells) if c.cell_type == "code"]
    # parameters, papermill's injected parameters, then the validation cell: the first cell that runs code
    failing = next(i for i in code if any(o.get("output_type") == "error" for o in executed.cells[i].outputs))
    assert failing == code[2], "the error is raised by the first code cell after the parameters"
    assert not (tmp_path / "data" / "runs").exists() or not any((tmp_path / "data" / "runs").iterdir()), (
        "nothing may run before the parameters are validated"
    )


#: runs each case's cells in a fresh namespace of one process and prints what each raised
_FIRST_CELLS = """
import json, sys, nbformat
out = []
for path, params in json.loads(sys.argv[1]):
    code = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    ns = {}
    exec(code[0], ns)          # the parameters cell
    ns.update(params)          # what papermill injects
    try:
        exec(code[1], ns)      # the first code cell
        out.append(None)
    except Exception as e:
        out.append([type(e).__name__, str(e)])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def first_cells(tmp_path_factory):
    rest = IN_ONE_PROCESS
    data = tmp_path_factory.mktemp("first-cells")
    proc = subprocess.run(
        [sys.executable, "-c", _FIRST_CELLS, json.dumps([[str(NB_DIR / n), p] for n, p, _ in rest])],
        capture_output=True,
        text=True,
        cwd=str(NB_DIR),
        timeout=300,
        env={**os.environ, "PERFLAB_DATA": str(data / "data")},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(zip(_ids(rest), json.loads(proc.stdout.splitlines()[-1]))), data


@pytest.mark.parametrize("name,params,message", IN_ONE_PROCESS, ids=_ids(IN_ONE_PROCESS))
def test_bad_parameter_is_named_by_the_first_code_cell(first_cells, name, params, message):
    raised, data = first_cells
    got = raised[_ids([(name, params, message)])[0]]
    assert got is not None and got[0] == "ValueError" and message in got[1], got
    assert not (data / "data" / "runs").exists() or not any((data / "data" / "runs").iterdir()), (
        "nothing may run before the parameters are validated"
    )
