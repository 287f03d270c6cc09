"""What is measured: the command line, a notebook and the report resolve the same target from the same inputs, in
one precedence (given over the project file over the defaults: perflab.config.measured.resolve), and say the same
when two inputs cannot merge. Each side is driven as its user drives it: the real parser, the notebook helper, the
report's flags and the parameters its plan hands the notebooks."""

import pytest
from support import REPO

from perflab.cli import build_parser, options, parse
from perflab.config import ForeignServer, ServerConfig
from perflab.config.project import PROJECT_ENV
from perflab.lab import notebook as nb
from perflab.report import plans

TINY = REPO / "tests" / "servers" / "tiny_kv.py"
CMD = f"python3 {TINY} {{port}}"
#: the notebook parameters that say what is measured (those of nb.measured)
WHAT = ("server_cmd", "ready_path", "server_dir", "project", "script_args", "status_path")


def _project(where):
    where.mkdir(parents=True, exist_ok=True)
    p = where / "perflab.toml"
    p.write_text(
        f'label = "tiny"\n[server]\ncommand = "{CMD}"\nready_path = "/health"\n[api]\npath = "/kv"\nparam = "key"\n'
        '[categories]\nstorage = "tiny_kv/STORE"\n'
    )
    return p


def cli(*argv):
    return options.measured(parse(build_parser(), ["run", *argv]))


def report(*argv):
    """The report's resolution, and what notebook 01 of its plan resolves from the parameters the plan hands it."""
    what = options.report_measured(parse(build_parser(), ["report", *argv]))
    spec = next(s for s in plans.QUICK.aimed(what).notebooks if s.notebook == "01-stable-load")
    return what, nb.measured(**{k: v for k, v in spec.parameters.items() if k in WHAT})


@pytest.fixture
def here(tmp_path, monkeypatch):
    """An empty working directory and no $PERFLAB_PROJECT: nothing found unless a test puts it there."""
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "work"


def test_a_project_file_given_is_the_same_target_for_the_cli_a_notebook_and_the_report(tmp_path, here):
    p = _project(tmp_path / "alice")
    by_cli = cli("--project", str(p))
    by_report, by_its_notebook = report("--project", str(p))
    by_notebook = nb.measured(project=str(p))
    assert by_cli == by_report == by_notebook == by_its_notebook
    assert isinstance(by_cli.target, ForeignServer) and by_cli.target.ready_path == "/health"
    assert by_cli.project.path == p and by_cli.script_args == ("path=/kv", "param=key")
    assert by_cli.categories == ("storage=tiny_kv/STORE",)


def test_the_environments_project_file_is_found_by_all_three_and_what_is_given_wins_over_it(
    tmp_path, here, monkeypatch
):
    p = _project(tmp_path / "alice")
    monkeypatch.setenv(PROJECT_ENV, str(p))
    by_report, by_its_notebook = report()
    assert cli() == by_report == nb.measured() == by_its_notebook and cli().project.path == p
    # a flag or a parameter on top of the file merges onto its server: the same in the CLI and a notebook
    on_top = cli("--ready-path", "/other", "--", "rate=1")
    assert on_top == nb.measured(ready_path="/other", script_args=["rate=1"])
    assert on_top.target.ready_path == "/other" and on_top.target.command == CMD
    assert on_top.script_args == ("path=/kv", "param=key", "rate=1")  # the file's API first, then what was given
    # your own server given is another server: the file is not used at all
    yours = cli("--server-cmd", CMD, "--server-dir", str(here), "--", "path=/kv")
    by_report, by_its_notebook = report("--server-cmd", CMD, "--script-args", "path=/kv")
    assert yours == by_report == by_its_notebook
    assert yours == nb.measured(CMD, server_dir=str(here), script_args=["path=/kv"])
    assert yours.project is None and yours.target.ready_path == "/" and yours.script_args == ("path=/kv",)


def test_nothing_given_and_no_file_is_the_built_in_server_for_all_three(here):
    by_report, by_its_notebook = report()
    assert cli() == by_report == nb.measured() == by_its_notebook
    assert cli().target == ServerConfig() and cli().project is None and cli().script_args == ()
    # a notebook's built-in settings are its defaults: they configure the built-in server, like the flags
    assert cli("--memtable-size", "8m").target == nb.measured(memtable_size="8m").target


def test_what_cannot_merge_is_an_error_naming_both_in_the_words_of_each(tmp_path, here, monkeypatch):
    p = _project(tmp_path / "alice")
    with pytest.raises(ValueError, match=f"^--project {p} and --server-cmd: give one"):
        cli("--project", str(p), "--server-cmd", CMD)
    with pytest.raises(ValueError, match=f"^--project {p} and --server-cmd: give one"):
        report("--project", str(p), "--server-cmd", CMD)
    with pytest.raises(ValueError, match=f"^project {p} and server_cmd: give one"):
        nb.measured(CMD, project=str(p))
    # the built-in server's options with the file found in the environment: named, with the file
    monkeypatch.setenv(PROJECT_ENV, str(p))
    with pytest.raises(ValueError, match=f"^--memtable-size: option of the built-in server; with {p} your server"):
        cli("--memtable-size", "8m")
    monkeypatch.delenv(PROJECT_ENV)
    # your server's settings without a server of yours or a file
    with pytest.raises(ValueError, match="^--ready-path: only with --server-cmd or --url"):
        cli("--ready-path", "/health")
    with pytest.raises(ValueError, match="^ready_path: only with server_cmd or url"):
        nb.measured(ready_path="/health")
