"""perflab.toml: your server declared once; every command, notebook and report plan reads it."""

import pytest

from support import REPO
from perflab.lab import notebook as nb
from perflab.cli import main
from perflab.config import ForeignServer, ServerConfig
from perflab.config.project import PROJECT_ENV, Project, find
from perflab.records import list_runs, open_run
from perflab.report import plans

TINY = REPO / "tests" / "servers" / "tiny_kv.py"


def _write(tmp_path, text: str, name: str = "perflab.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _tiny(tmp_path, extra: str = ""):
    """tiny_kv declared; with a ``[cluster]`` in ``extra`` its command is a node's (one command serves both:
    alone, a server is a cluster of one)."""
    node = " --cluster {cluster} --index {index}" if "[cluster]" in extra else ""
    return _write(tmp_path, f'label = "tiny"\n[server]\ncommand = "python3 {TINY} {{port}}{node}"\n'
                            f'ready_path = "/health"\n[api]\npath = "/kv"\nparam = "key"\n' + extra)


def test_a_project_file_declares_the_server_its_api_cluster_and_categories(tmp_path):
    p = _tiny(tmp_path, 'status = "/health"\n[cluster]\nnodes = 3\nack = 2\n[categories]\nstorage = "tiny_kv/STORE"\n')
    proj = Project.load(tmp_path)                      # a directory means its perflab.toml
    assert proj.path == p and proj.name == "tiny" and proj.server.label == "tiny"
    assert isinstance(proj.server, ForeignServer) and proj.server.workdir == str(tmp_path)  # paths: the file's dir
    assert proj.script_args == ("path=/kv", "param=key") and proj.status_path == "/health"
    assert proj.categories == ("storage=tiny_kv/STORE",)
    c = proj.cluster_config()
    assert (c.nodes, c.replicas_ack, c.replicas_from) == (3, 2, 3) and c.server_cmd == proj.server.command
    assert proj.cluster_config(nodes=5).nodes == 5      # what is given on top wins
    # the course API by default, and no status endpoint: no ceiling
    bare = Project.load(_write(tmp_path, f'[server]\ncommand = "python3 {TINY} {{port}}"\n', "bare.toml"))
    assert bare.script_args == ("path=/v0/entity", "param=id") and bare.status_path is None and bare.name == "tiny_kv.py"
    with pytest.raises(ValueError, match="no \\[cluster\\] table"):
        bare.cluster_config()


@pytest.mark.parametrize("text, message", [
    ('[server]\ncomand = "x {port}"\n', r"unknown key server\.comand \(known in \[server\]: command, "),
    ('lable = "x"\n[server]\ncommand = "x {port}"\n', r"unknown key lable \(known: label, server"),
    ('label = "x"\n', r"\[server\]: give command .* or course"),
    ('[server]\ncommand = "x {port}"\ncourse = "build"\n', "give command or course, not both"),
    ('[server]\ncommand = "x {port}"\nstage = 6\n', r"server\.stage: only with server\.course"),
    ('[server]\ncommand = "x 8080"\n', r"must contain \{port\}"),
    ('[server]\ncommand = "x {port} {data}"\n', r"\{data\}"),
    ('[server]\ncommand = "x {port}"\n[api]\npath = "kv"\n', r"api\.path: a path starting with '/'"),
    ('[server]\ncommand = "x {port}"\n[categories]\nstorage = "dao("\n', r"categories\.storage: not a regular expression"),
    ('[server]\ncommand = "x {port}"\n[cluster]\nnodes = 0\n', "nodes"),
    ('[server\n', "is not valid TOML"),
])
def test_a_mistake_in_the_file_is_an_error_naming_the_file_and_the_key(tmp_path, text, message):
    p = _write(tmp_path, text)
    with pytest.raises(ValueError, match=message) as e:
        Project.load(p)
    assert str(p) in str(e.value)


def test_the_project_is_found_given_then_in_the_environment_then_here(tmp_path, monkeypatch):
    monkeypatch.delenv(PROJECT_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert find() is None
    with pytest.raises(ValueError, match="no perflab.toml at"):
        find(tmp_path / "elsewhere")
    here = _tiny(tmp_path)
    assert find().path == here
    other = tmp_path / "other"
    other.mkdir()
    _tiny(other)
    monkeypatch.setenv(PROJECT_ENV, str(other))
    assert find().path == other / "perflab.toml"
    assert find(here).path == here                     # given beats the environment


def test_notebooks_take_the_projects_server_api_profile_and_ceiling(tmp_path, capsys):
    p = _tiny(tmp_path, '[categories]\nstorage = "tiny_kv/STORE"\n')
    server = nb.server(project=str(p))
    assert isinstance(server, ForeignServer) and "tiny" in capsys.readouterr().out
    assert nb.api_args(str(p), ["rate=1"]) == ("path=/kv", "param=key", "rate=1")
    assert nb.profile("cpu", str(p)).category == ("storage=tiny_kv/STORE",)
    assert nb.data_for(server, keys=50) == {"fill": 50}
    # no status endpoint declared: no ceiling, and the notebook says why instead of searching over errors
    path, why = nb.ceiling(server, project=str(p))
    assert path is None and why.startswith("No ceiling measured: your server declares no no-op endpoint")
    assert nb.ceiling(server, status_path="/health") == ("/health", "")
    assert nb.ceiling(ServerConfig()) == ("/v0/status", "")


def test_a_report_plan_aimed_at_a_project_runs_what_applies_and_says_why_not_the_rest(tmp_path):
    single = Project.load(_tiny(tmp_path))
    plan = plans.QUICK.for_project(single)
    by = {s.notebook: s for s in plan.notebooks}
    for name in ("01-stable-load", "02-breakpoint"):
        assert by[name].not_applicable is None and by[name].parameters["project"] == str(single.path)
    assert by["05-storage"].not_applicable.startswith("not applicable: it ")
    assert by["07-cluster"].not_applicable.startswith("needs a cluster")   # the file has no [cluster]
    assert plan.target == f"tiny ({single.path})"
    (tmp_path / "c").mkdir()
    clustered = Project.load(_tiny(tmp_path / "c", "[cluster]\nnodes = 3\n"))
    by = {s.notebook: s for s in plans.QUICK.for_project(clustered).notebooks}
    assert by["07-cluster"].not_applicable is None and by["07-cluster"].parameters["project"] == str(clustered.path)


def test_the_cli_measures_the_project_server_filled_through_its_api(loadgen_binary, data_root, tmp_path, monkeypatch):
    p = _tiny(tmp_path)
    assert main(["run", "--project", str(p), "-R", "100", "-d", "1s", "-c", "2", "--fill", "200",
                 "--script", "get.lua", "--name", "project-get"]) == 0
    row = list_runs().iloc[-1]
    assert row["server_label"] == "tiny" and row["fill"] == 200
    assert row["load_script_args"] == '["path=/kv", "param=key"]'            # the project's API
    hits = open_run(row["dir"]).meta["validity"]["checks"]["hits"]
    assert hits["status"] == "ok" and hits["value"] == 1.0, hits             # it read the keys it wrote
    # the built-in server's options make no sense for it: refused before anything starts
    n = len(list_runs())
    assert main(["run", "--project", str(p), "--backend", "memory", "-R", "10"]) == 2
    assert len(list_runs()) == n
    # --no-project ignores ./perflab.toml: the built-in server's flags are accepted again
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["run", "--no-project", "--backend", "memory", "--help"])
