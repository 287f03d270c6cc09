"""Bring your own server: the lab against servers it did not build.

Two servers the lab does not build: ``tests/servers/tiny_kv.py`` (Python, not a JVM: the load-only
path) and ``tests/servers/TinyKv.java`` (a JVM started from source as a foreign command: the profiling
path). Both speak ``/kv?key=`` instead of the course API, so the workload scripts are pointed at them.
"""

import subprocess
import sys
import time

import psutil
import pytest
from support import REPO, free_port, processes_mentioning

from perflab import ForeignServer, LoadParams, ProfileParams, SessionOptions, run_experiment
from perflab.cli import main
from perflab.errors import ServerStartError
from perflab.measure.generator import run_load
from perflab.profiling import codemap
from perflab.profiling.codemap import CodeMap

PY_SERVER = f"{sys.executable} {REPO}/tests/servers/tiny_kv.py {{port}}"
JAVA_SERVER = f"java {REPO}/tests/servers/TinyKv.java {{port}}"
KV_ARGS = ("path=/kv", "param=key", "keys=1000")


def test_a_non_jvm_server_is_measured_without_profile_or_stats(
    server_build, loadgen_binary, data_root, tmp_path, own_processes
):
    log = tmp_path / "requests.log"
    server = ForeignServer(command=PY_SERVER + f" {log}", ready_path="/health")
    load = LoadParams(rate=200, duration=2, connections=2, script="put-random.lua", script_args=KV_ARGS)
    with pytest.warns(RuntimeWarning, match="profiling unavailable: pid .* is not a JVM"):
        res = run_experiment(server, load, profile=ProfileParams("cpu"), name="tiny-py")
    assert res.load.status_counts == {"201": res.load.requests} and res.load.requests == 400
    sent = [line for line in log.read_text().splitlines() if line.startswith("PUT ")]
    assert sent and all(line.startswith("PUT /kv?key=key") for line in sent)
    assert res.profile is None and "not a JVM" in res.run.meta["profile_unavailable"]
    assert res.run.meta["stats_unavailable"] == "GET /v0/stats answered 400"
    assert res.stats.empty
    # /proc still tells the server's CPU, so the validity record is complete
    v = res.validity
    assert v.checks["server_cpu"].status == "ok" and v.checks["server_cpu"].value > 0
    info = res.run.meta["server"]["foreign"]
    assert info["kind"] == "command" and info["jvm"] is None and info["pid"] > 0
    assert res.run.status == "ok" and (res.run.dir / "server.log").is_file()
    assert own_processes() == []  # stopped with its process group


def test_a_jvm_server_started_as_a_command_is_profiled(
    server_build, loadgen_binary, profiler_lib, data_root, own_processes
):
    server = ForeignServer(command=JAVA_SERVER, ready_path="/health")
    load = LoadParams(rate=1000, duration=3, warmup=2, connections=4, script="put-random.lua", script_args=KV_ARGS)
    # sampled every 0.5 ms: hundreds of samples, so the handler cannot be missed by chance
    res = run_experiment(server, load, profile=ProfileParams("cpu", interval="500us"), name="tiny-java")
    assert res.load.status_counts == {"201": res.load.requests}
    assert res.run.meta["server"]["foreign"]["jvm"]["java_version"]
    assert res.profile is not None and res.profile.samples >= 100, res.profile
    assert "TinyKv.kv" in res.profile.collapsed  # the user's own handler shows in the flame graph
    # and in the categories: found automatically (a frame outside the JDK and the libraries), by class's package
    assert res.profile.code_map == CodeMap() == codemap.read(res.run.dir)
    assert res.category_shares["your code"] > 0 and "storage: memtable" not in res.category_shares
    assert "(default package)" in set(res.profile.code_packages()["package"])
    # judged like any run (how valid depends on how busy the machine was: not asserted)
    assert res.validity.checks["server_cpu"].value > 0 and res.run.meta["validity"]["verdict"] == res.validity.level
    assert own_processes() == []


def test_a_running_server_is_measured_and_left_running(loadgen_binary, data_root):
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(REPO / "tests/servers/tiny_kv.py"), str(port)])
    try:
        deadline = time.monotonic() + 20
        while not any(c.laddr.port == port for c in psutil.net_connections("tcp") if c.status == "LISTEN"):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        res = run_experiment(f"http://127.0.0.1:{port}", LoadParams(rate=100, duration=1, path="/health"))
        assert res.load.status_counts == {"200": 100}
        assert res.run.meta["server"]["foreign"]["pid"] == proc.pid  # found from the listening socket
        assert proc.poll() is None  # measured, never stopped
        with pytest.raises(ValueError, match="placement: a server that is already running"):
            run_experiment(
                f"http://127.0.0.1:{port}", LoadParams(rate=10, duration=1), session=SessionOptions(placement="split")
            )
    finally:
        proc.terminate()
        proc.wait(5)


def test_start_failures_name_the_cause_and_leave_no_orphans(tmp_path, data_root):
    with pytest.raises(ServerStartError, match="exited with status 3 before answering") as e:
        run_experiment(
            ForeignServer(command=f"{sys.executable} -c 'import sys; print(\"boom\"); sys.exit(3)' {{port}}"),
            LoadParams(rate=10, duration=1),
        )
    assert "boom" in str(e.value)  # the command's output tail
    marker = tmp_path / "never-answers"
    with pytest.raises(ServerStartError, match="did not answer HTTP on port"):
        run_experiment(
            ForeignServer(
                command=f"{sys.executable} -c 'import time; time.sleep(60)' {marker} {{port}}", startup_timeout=1
            ),
            LoadParams(rate=10, duration=1),
        )
    assert processes_mentioning(str(marker)) == []


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(), "command/url: give exactly one"),
        (dict(command="x", url="http://127.0.0.1:1"), "command/url: give exactly one"),
        (dict(command="myserver --port 8080"), "command: must contain {port}"),
        (dict(url="127.0.0.1:8080"), "url: expected http://HOST:PORT"),
        (dict(command="x {port}", pid=5), "pid: only with url"),
    ],
)
def test_foreign_server_rejects(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("{", r"\{").replace("}", r"\}")):
        ForeignServer(**kwargs)


def test_built_in_options_are_refused_for_a_foreign_server(data_root, capsys):
    assert main(["run", "--server-cmd", PY_SERVER, "--memtable-size", "8m", "--heap", "1g", "-R", "10"]) == 2
    err = capsys.readouterr().err
    assert "--memtable-size, --heap: options of the built-in server" in err and "--server-cmd" in err
    assert main(["run", "--url", "http://127.0.0.1:9", "--prefill", "100", "-R", "10"]) == 2
    assert "--prefill: option of the built-in server" in capsys.readouterr().err
    assert main(["run", "--pid", "12", "-R", "10"]) == 2
    assert "--pid: only with --server-cmd or --url" in capsys.readouterr().err


def test_without_a_script_a_run_gets_the_urls_path(loadgen_binary, data_root, tmp_path):
    log = tmp_path / "requests.log"
    server = ForeignServer(command=PY_SERVER + f" {log}", ready_path="/health")
    res = run_experiment(server, LoadParams(rate=50, duration=1, path="/health"))
    assert res.load.status_counts == {"200": 50}
    sent = set(log.read_text().splitlines()) - {"GET /v0/stats"}  # the lab asks once whether it has stats
    assert sent == {"GET /health"}  # wrk's rule: no script, GET the URL's path
    r = run_load("http://127.0.0.1:9", LoadParams(rate=10, duration=1))  # nothing there: connect errors, no crash
    assert r.errors["connect"] > 0


def test_your_server_is_filled_through_its_api_and_its_gets_read_data(loadgen_binary, data_root):
    """GETs against your server read what a fill wrote through its API: every GET found its key. The same GETs
    on an empty store are 404s: a miss is never 'served', the run is invalid and says why."""
    server = ForeignServer(command=PY_SERVER, ready_path="/health")
    get = LoadParams(rate=300, duration=1, connections=2, script="get-random.lua", script_args=KV_ARGS)
    res = run_experiment(server, get, fill=1000, name="filled")
    assert res.run.meta["fill"]["keys"] == 1000 and res.run.meta["params"]["fill"] == 1000
    assert res.load.hit_ratio == 1.0 and res.validity.checks["hits"].status == "ok"
    empty = run_experiment(server, get, name="empty")
    assert empty.load.hit_ratio == 0.0 and empty.validity.level == "invalid"
    assert "0.0% of 300 reads found their key (300 answered 404)" in empty.validity.checks["hits"].note
    assert empty.run.meta["validity"]["verdict"] == "invalid"
    asked = run_experiment(server, get.replace(allow_misses=True), name="misses-wanted")
    assert asked.validity.checks["hits"].status == "n/a"


def test_a_search_over_answers_that_are_not_successes_finds_no_breakpoint(loadgen_binary, data_root):
    """tiny_kv answers 400 to the course API it does not speak: every probe fails (no rate is 'kept up with' by
    400s), and the search says none passed, never a breakpoint."""
    from perflab import BreakpointParams, find_breakpoint

    server = ForeignServer(command=PY_SERVER, ready_path="/health")
    load = LoadParams(connections=2, script="put-random.lua", script_args=("keys=1000",))
    res = find_breakpoint(
        server,
        load,
        params=BreakpointParams(
            bracket="growth",
            start_rate=200,
            min_rate=100,
            max_probes=4,
            probe_duration=0.5,
            warmup=0.2,
            sustain=0,
            quiet_wait=1,
            server_warmup=0,
        ),
        progress=False,
    )
    # a probe may also be inconclusive when the machine is busy (the generator set its numbers): never a pass
    assert res.rate is None and not any(p.judgement.passed for p in res.probes), res.describe()
    failed = [p for p in res.probes if p.judgement.passed is False]
    assert all(any(r.startswith("not served") for r in p.judgement.reasons) for p in failed)
