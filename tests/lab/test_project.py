"""perflab.toml: your server declared once; every command, notebook and report plan reads it."""

import re

import pytest
from support import REPO

from perflab.cli import main
from perflab.config import ForeignServer
from perflab.config.project import PROJECT_ENV, Project, find
from perflab.lab import notebook as nb
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
    return _write(
        tmp_path,
        f'label = "tiny"\n[server]\ncommand = "python3 {TINY} {{port}}{node}"\n'
        f'ready_path = "/health"\n[api]\npath = "/kv"\nparam = "key"\n' + extra,
    )


def test_a_project_file_declares_the_server_its_api_cluster_and_categories(tmp_path):
    p = _tiny(tmp_path, 'status = "/health"\n[cluster]\nnodes = 3\nack = 2\n[categories]\nstorage = "tiny_kv/STORE"\n')
    proj = Project.load(tmp_path)  # a directory means its perflab.toml
    assert proj.path == p and proj.name == "tiny" and proj.server.label == "tiny"
    assert isinstance(proj.server, ForeignServer) and proj.server.workdir == str(tmp_path)  # paths: the file's dir
    assert proj.script_args == ("path=/kv", "param=key") and proj.status_path == "/health"
    assert proj.categories == ("storage=tiny_kv/STORE",)
    c = proj.cluster_config()
    assert (c.nodes, c.replicas_ack, c.replicas_from) == (3, 2, 3) and c.command == proj.server.command
    assert proj.cluster_config(nodes=5).nodes == 5  # what is given on top wins
    # the course API by default, and no status endpoint: no ceiling
    bare = Project.load(_write(tmp_path, f'[server]\ncommand = "python3 {TINY} {{port}}"\n', "bare.toml"))
    assert (
        bare.script_args == ("path=/v0/entity", "param=id") and bare.status_path is None and bare.name == "tiny_kv.py"
    )
    with pytest.raises(ValueError, match="no \\[cluster\\] table"):
        bare.cluster_config()


@pytest.mark.parametrize(
    "text, message",
    [
        ('[server]\ncomand = "x {port}"\n', r"unknown key server\.comand \(known in \[server\]: command, "),
        ('lable = "x"\n[server]\ncommand = "x {port}"\n', r"unknown key lable \(known: label, server"),
        ('label = "x"\n', r"\[server\]: give command .* or course"),
        ('[server]\ncommand = "x {port}"\ncourse = "build"\n', "give command or course, not both"),
        ('[server]\ncommand = "x {port}"\nstage = 6\n', r"server\.stage: only with server\.course"),
        ('[server]\ncommand = "x 8080"\n', r"must contain \{port\}"),
        ('[server]\ncommand = "x {port} {data}"\n', r"\{data\}"),
        ('[server]\ncommand = "x {port}"\n[api]\npath = "kv"\n', r"api\.path: a path starting with '/'"),
        (
            '[server]\ncommand = "x {port}"\n[categories]\nstorage = "dao("\n',
            r"categories\.storage: not a regular expression",
        ),
        ('[server]\ncommand = "x {port}"\n[cluster]\nnodes = 0\n', "nodes"),
        ("[server\n", "is not valid TOML"),
        ('language = "fr"\n[server]\ncommand = "x {port}"\n', r"language 'fr': there are catalogs for en, ru"),
    ],
)
def test_a_mistake_in_the_file_is_an_error_naming_the_file_and_the_key(tmp_path, text, message):
    p = _write(tmp_path, text)
    with pytest.raises(ValueError, match=message) as e:
        Project.load(p)
    assert str(p) in str(e.value)


def test_the_report_language_is_the_files_else_english_for_a_server_command(tmp_path):
    """``language`` in the file picks the report's language (a course server's default is Russian: the course
    report test renders one); a server command's report is English unless the file says otherwise."""
    assert Project.load(_tiny(tmp_path)).report_language == "en"
    ru = Project.load(_write(tmp_path, f'language = "ru"\n[server]\ncommand = "python3 {TINY} {{port}}"\n', "ru.toml"))
    assert ru.language == ru.report_language == "ru"


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
    assert find(here).path == here  # given beats the environment


def test_notebooks_take_the_projects_server_api_profile_and_ceiling(tmp_path, capsys):
    p = _tiny(tmp_path, '[categories]\nstorage = "tiny_kv/STORE"\n')
    measured = nb.measured(project=str(p), script_args=["rate=1"])
    server = measured.target
    assert isinstance(server, ForeignServer) and "tiny" in capsys.readouterr().out
    assert measured.script_args == ("path=/kv", "param=key", "rate=1")
    assert nb.api_args(str(p), ["rate=1"]) == ("path=/kv", "param=key", "rate=1")  # 08, 09: a file alone
    assert nb.profile("cpu", measured).category == ("storage=tiny_kv/STORE",)
    assert nb.data_for(server, keys=50) == {"fill": 50}
    # no status endpoint declared, and the course API's /v0/status answers 400: no ceiling, and the notebook says
    # why instead of searching over errors
    path, why = nb.ceiling(measured)
    assert path is None and why.startswith("No ceiling measured: your server declares no no-op endpoint")
    assert "`GET /v0/status` answered 400" in why
    assert nb.ceiling(measured, include=False) == (None, "")  # nothing asked when none is searched
    assert nb.ceiling(nb.measured(project=str(p), status_path="/health")) == ("/health", "")
    assert nb.ceiling(nb.measured(project=None, mode="sync")) == ("/v0/status", "")


#: a server that answers 200 to every GET (the course API's /v0/status among them)
ANSWERS_200 = (
    "python3 -c \"import http.server as h, sys; H = type('H', (h.BaseHTTPRequestHandler,), {'do_GET': "
    "lambda s: (s.send_response(200), s.end_headers())}); h.HTTPServer(('127.0.0.1', int(sys.argv[1])), H)"
    '.serve_forever()" {port}'
)


def test_a_server_that_answers_the_course_status_gets_its_ceiling_and_the_page_says_why(
    tmp_path, capsys, own_processes
):
    """A course server whose /v0/status answers 200 needs no [api] status: it is asked (started once for the
    question) and used, and the note the findings show says it was found, not declared."""
    path, note = nb.ceiling(nb.measured(ANSWERS_200))
    assert path == "/v0/status"
    assert note.startswith("Ceiling: your server declares no no-op endpoint, and it answered `GET /v0/status` with 200")
    assert "answered `GET /v0/status` with 200" in capsys.readouterr().out
    assert not own_processes()  # started for the question, stopped


def test_the_previous_stage_is_declared_once_and_checked(tmp_path):
    course = tmp_path / "classes"
    course.mkdir()
    (tmp_path / "five").mkdir()
    other = _write(tmp_path / "five", 'label = "alice, stage 5"\n[server]\ncommand = "x {port}"\n')
    p = _write(tmp_path, '[server]\ncommand = "x {port}"\n[previous]\nproject = "five"\nlabel = "stage 5"\n')
    assert Project.load(p).previous == {"project": str(other), "label": "stage 5"}
    for bad, says in (
        ("[previous]\nstage = 4\n", "previous.stage: only for a course server"),
        ('[previous]\ncommit = "HEAD~1"\nstage = 4\n', "give one of stage"),
        ('[previous]\nproject = "nowhere"\n', "previous.project: no perflab.toml at"),
        ('[previous]\nbranch = "x"\n', "unknown key previous.branch"),
    ):
        (tmp_path / "bad").mkdir(exist_ok=True)
        with pytest.raises(ValueError, match=re.escape(says)):
            Project.load(_write(tmp_path / "bad", '[server]\ncommand = "x {port}"\n' + bad))


def test_a_report_plan_aimed_at_a_project_runs_what_applies_and_says_why_not_the_rest(tmp_path):
    single = Project.load(_tiny(tmp_path))
    plan = plans.QUICK.for_project(single)
    by = {s.notebook: s for s in plan.notebooks}
    for name in ("01-stable-load", "02-breakpoint"):
        assert by[name].not_applicable is None and by[name].parameters["project"] == str(single.path)
    assert by["05-storage"].not_applicable.startswith("not applicable: it ")
    assert by["07-cluster"].not_applicable.startswith("needs a cluster")  # the file has no [cluster]
    assert plan.target == f"tiny ({single.path})"
    (tmp_path / "c").mkdir()
    clustered = Project.load(_tiny(tmp_path / "c", "[cluster]\nnodes = 3\n"))
    by = {s.notebook: s for s in plans.QUICK.for_project(clustered).notebooks}
    assert by["07-cluster"].not_applicable is None and by["07-cluster"].parameters["project"] == str(clustered.path)


def test_the_cli_measures_the_project_server_filled_through_its_api(loadgen_binary, data_root, tmp_path, monkeypatch):
    p = _tiny(tmp_path)
    assert (
        main(
            [
                "run",
                "--project",
                str(p),
                "-R",
                "100",
                "-d",
                "1s",
                "-c",
                "2",
                "--fill",
                "200",
                "--script",
                "get.lua",
                "--name",
                "project-get",
            ]
        )
        == 0
    )
    row = list_runs().iloc[-1]
    assert row["server_label"] == "tiny" and row["fill"] == 200
    # the project's API, and the filled keys for a sequential script to wrap within
    assert row["load_script_args"] == '["count=200", "path=/kv", "param=key"]'
    hits = open_run(row["dir"]).meta["validity"]["checks"]["hits"]
    assert hits["status"] == "ok" and hits["value"] == 1.0, hits  # it read the keys it wrote
    # the built-in server's options make no sense for it: refused before anything starts
    n = len(list_runs())
    assert main(["run", "--project", str(p), "--backend", "memory", "-R", "10"]) == 2
    assert len(list_runs()) == n
    # --no-project ignores ./perflab.toml: the built-in server's flags are accepted again
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["run", "--no-project", "--backend", "memory", "--help"])


def test_ab_takes_a_project_file_per_side_named_by_their_labels(tmp_path):
    """Two students, or two stages: a perflab.toml per side, each named by its label, the API the files declare
    in the load (one load to both, so the two must agree)."""
    from perflab.cli import build_parser, commands

    for who in ("alice", "bob"):
        (tmp_path / who).mkdir()
        _write(
            tmp_path / who,
            f'label = "{who}, stage 5"\n[server]\ncommand = "python3 {TINY} {{port}}"\n'
            f'ready_path = "/health"\n[api]\npath = "/kv"\nparam = "key"\n',
        )
    a = build_parser().parse_args(
        ["ab", "--a-project", str(tmp_path / "alice"), "--b-project", str(tmp_path / "bob" / "perflab.toml"), "-c", "2"]
    )
    (sa, pa), (sb, pb) = commands._ab_side(a, "a"), commands._ab_side(a, "b")
    assert (sa.name, sb.name) == ("alice, stage 5", "bob, stage 5")
    assert commands._ab_load(a, [pa, pb]).script_args == ("path=/kv", "param=key")
    both = build_parser().parse_args(["ab", "--a-project", str(tmp_path / "alice"), "--a-commit", "HEAD"])
    with pytest.raises(ValueError, match="--a-project and --a-commit"):
        commands._ab_side(both, "a")
    builtin_flag = build_parser().parse_args(["ab", "--a-project", str(tmp_path / "alice"), "--a-memtable-size", "1m"])
    with pytest.raises(ValueError, match="--memtable-size: option of the built-in server; side A is your server"):
        commands._ab_side(builtin_flag, "a")
    (tmp_path / "other").mkdir()
    _write(tmp_path / "other", f'[server]\ncommand = "python3 {TINY} {{port}}"\n')  # the course API
    differ = build_parser().parse_args(
        ["ab", "--a-project", str(tmp_path / "alice"), "--b-project", str(tmp_path / "other")]
    )
    with pytest.raises(ValueError, match="the two files declare different APIs"):
        commands._ab_load(differ, [commands._ab_side(differ, s)[1] for s in ("a", "b")])


def test_gate_and_bisect_take_a_project_file_in_its_repository(tmp_path):
    import subprocess

    from perflab.cli import build_parser, commands

    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    _write(repo / "sub", '[server]\ncommand = "x {port}"\n')
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    a = build_parser().parse_args(["gate", "HEAD~1", "HEAD", "--project", str(repo / "sub" / "perflab.toml")])
    got = commands._repo(a)
    assert (got.repo, got.project) == (str(repo.resolve()), "sub/perflab.toml")
    outside = _write(tmp_path, '[server]\ncommand = "x {port}"\n')
    a = build_parser().parse_args(["bisect", "HEAD~1", "HEAD", "--project", str(outside)])
    with pytest.raises(ValueError, match="is in no git repository"):
        commands._repo(a)


def _commits(repo, n: int) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for i in range(n):
        (repo / "stage.txt").write_text(f"stage {i + 1}\n")
        subprocess.run(
            ["git", "-c", "user.name=s", "-c", "user.email=s@example.org", "-C", str(repo), "add", "-A"], check=True
        )
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=s",
                "-c",
                "user.email=s@example.org",
                "-C",
                str(repo),
                "commit",
                "-q",
                "-m",
                f"stage {i + 1}",
            ],
            check=True,
        )


def test_a_projects_stages_and_history_run_where_it_has_them_and_say_why_not_elsewhere(tmp_path):
    """08 needs a previous stage, 09 a repository of 4 commits at least with a build command: a report on a plain
    folder, a one-commit repository or one without a build says so on its index instead of failing (and 09 asks
    for no more commits than there are, so its question states what it measured)."""

    def planned(p):
        return {s.notebook: s for s in plans.QUICK.for_project(Project.load(p)).notebooks}

    plain = planned(_tiny(tmp_path))
    assert plain["08-ab"].not_applicable.startswith("not applicable: tiny has no previous stage to compare with")
    assert "[previous]" in plain["08-ab"].not_applicable
    assert plain["09-history"].not_applicable.startswith(f"not applicable: {tmp_path} is in no git repository")
    one = tmp_path / "one"
    one.mkdir()
    _tiny(one)
    _commits(one, 1)
    assert planned(one / "perflab.toml")["09-history"].not_applicable.endswith(
        "has 1 commit; a history needs 4 at least"
    )
    five = tmp_path / "five"
    five.mkdir()
    (five / "prev").mkdir()
    _tiny(five / "prev")
    _tiny(five, '[previous]\nproject = "prev"\nlabel = "stage 4"\n')
    _commits(five, 5)
    unbuilt = planned(five / "perflab.toml")
    assert "no [server] build" in unbuilt["09-history"].not_applicable
    assert unbuilt["08-ab"].not_applicable is None  # [previous] names the stage before
    text = (five / "perflab.toml").read_text().replace("ready_path", 'build = "true"\nready_path')
    (five / "perflab.toml").write_text(text)
    plan = plans.QUICK.for_project(Project.load(five / "perflab.toml"))
    by = {s.notebook: s for s in plan.notebooks}
    assert by["09-history"].not_applicable is None and by["09-history"].parameters["commits"] == 5  # of 6 asked
    assert by["09-history"].parameters["script"] == "put.lua" and "planted" not in by["09-history"].parameters
    assert plan.lead == "08-ab" and by["08-ab"].parameters["script"] == "get-random.lua"
    assert "a" not in by["08-ab"].parameters and "common" not in by["08-ab"].parameters  # the built-in server's


def test_a_project_files_cluster_is_what_run_profile_and_breakpoint_measure_without_nodes(tmp_path, monkeypatch):
    from perflab.cli import build_parser, options, parse
    from perflab.config.cluster import ClusterConfig

    p = _tiny(tmp_path, "[cluster]\nnodes = 3\nack = 2\n")
    for cmd in ("run", "profile", "breakpoint"):
        a = parse(build_parser(), [cmd, "--project", str(p)])
        assert options.is_cluster(a), cmd
        t = options.target(a)
        assert isinstance(t, ClusterConfig) and (t.nodes, t.replicas_ack) == (3, 2), cmd
        # --nodes on top of the file's wins; your own server on the command line is one server, and the file is
        # then not looked for ($PERFLAB_PROJECT); named too, the two are an error naming both
        assert options.target(parse(build_parser(), [cmd, "--project", str(p), "--nodes", "2"])).nodes == 2
        monkeypatch.setenv(PROJECT_ENV, str(p))
        one = parse(build_parser(), [cmd, "--server-cmd", f"python3 {TINY} {{port}}"])
        assert not options.is_cluster(one) and isinstance(options.target(one), ForeignServer)
        monkeypatch.delenv(PROJECT_ENV)
        both = parse(build_parser(), [cmd, "--project", str(p), "--server-cmd", f"python3 {TINY} {{port}}"])
        with pytest.raises(ValueError, match=f"--project {p} and --server-cmd: give one"):
            options.target(both)
    # a file without [cluster]: one server, as before
    (tmp_path / "s").mkdir()
    single = parse(build_parser(), ["run", "--project", str(_tiny(tmp_path / "s"))])
    assert not options.is_cluster(single) and isinstance(options.target(single), ForeignServer)
