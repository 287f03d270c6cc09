"""A real ``python -m perflab`` process, as a user starts it: Ctrl-C ends it within seconds at any phase
(exit 130, nothing left running), it listens on nothing but loopback while it measures, and it leaves
nothing in ``$TMPDIR`` (after a run, an interrupted one, or any of the measuring commands)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from perflab.hosts.tls import is_loopback
from support import REPO, processes_mentioning

#: how long a Ctrl-C may take to end a command (the issue's bound; it takes about 1 s here)
INTERRUPT_S = 10.0


def _env(tmp_path: Path) -> dict:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFLAB_", "DASK_"))}
    env.update(TMPDIR=str(tmp_path / "tmp"), PERFLAB_DATA=str(tmp_path / "data"),
               PYTHONPATH=str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""))
    return env


def _start(tmp_path: Path, *args: str) -> subprocess.Popen:
    # SIGINT as in a terminal: a child of a background job (CI under nohup or `&`) starts with it ignored
    return subprocess.Popen([sys.executable, "-m", "perflab", *args], cwd=tmp_path, env=_env(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _tree(p: subprocess.Popen) -> list[psutil.Process]:
    try:
        root = psutil.Process(p.pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _listening(procs) -> dict[int, list[str]]:
    """pid -> the addresses each of ``procs`` listens on."""
    out = {}
    for pr in procs:
        try:
            out[pr.pid] = [c.laddr.ip for c in pr.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def _wait_for(p: subprocess.Popen, what: str, cond, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if p.poll() is not None:
            pytest.fail(f"perflab ended before {what}: {p.stdout.read().decode()[-3000:]}")
        if time.monotonic() > deadline:
            for q in reversed(_tree(p)):
                q.kill()
            pytest.fail(f"no {what} within {timeout:g} s: {p.communicate()[0].decode()[-3000:]}")
        time.sleep(0.02)


def _named(marker: str, name: str, coordinator: subprocess.Popen):
    """Whether a process ``coordinator`` started (not the coordinator, whose command line names its server's
    command too) mentions ``marker`` and ``name``."""
    return lambda: any(name in " ".join(q.cmdline()) for q in processes_mentioning(marker) if q.pid != coordinator.pid)


LOAD = ["-R", "200", "-d", "60s", "-c", "2", "-t", "1", "--path", "/v0/status", "--no-project"]


@pytest.mark.parametrize("phase", ["importing", "server starting", "filling", "measuring"])
def test_ctrl_c_ends_a_run_within_seconds_at_any_phase(server_build, loadgen_binary, tmp_path, phase):
    data = str(tmp_path / "data")
    if phase == "server starting":
        # a server that never gets ready: perflab waits for it (60 s by default) when Ctrl-C comes; the wait
        # holds the server host's agent, and its stop behind it, until it is aborted
        never = f"{sys.executable} -c 'import time; time.sleep(600)' {{port}} {data}"
        p = _start(tmp_path, "run", *LOAD, "--server-cmd", never, "--ready-path", "/")
        _wait_for(p, "the server's process", _named(data, "time.sleep(600)", p))
        time.sleep(1.0)
    elif phase == "filling":
        # two million keys through the API: minutes of writes when Ctrl-C comes
        p = _start(tmp_path, "run", *LOAD, "--backend", "memory", "--fill", "2000000")
        _wait_for(p, "the server's process", _named(data, "perflab.server.Main", p))
        time.sleep(1.5)
    elif phase == "measuring":
        p = _start(tmp_path, "run", *LOAD, "--backend", "memory")
        _wait_for(p, "perflab-load sending", _named(data, "perflab-load", p))
        time.sleep(1.0)
        # what the coordinator and everything it started listen on, while it measures: loopback only (the
        # in-process hosts talk over inproc://, the server is reached on 127.0.0.1)
        listening = _listening(_tree(p))
        assert listening.get(p.pid) == [], listening          # the coordinator itself: no port at all
        addrs = [a for v in listening.values() for a in v]
        assert addrs and all(is_loopback(a) for a in addrs), listening
    else:
        p = _start(tmp_path, "run", *LOAD, "--backend", "memory")
        time.sleep(1.0)
    started = [q.pid for q in _tree(p)[1:]] + [q.pid for q in processes_mentioning(data)]
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    took = time.monotonic() - t0
    text = out.decode()[-3000:]
    # 130: main() caught the interrupt; -SIGINT: it came while Python was still importing (the shell says
    # 130 for both); 1: it landed inside Python's own class creation during an import, which wraps it
    # ("RuntimeError: Error calling __set_name__", caused by the KeyboardInterrupt) before any of perflab runs
    wrapped = p.returncode == 1 and phase == "importing" and "KeyboardInterrupt" in text
    assert p.returncode in (130, -signal.SIGINT) or wrapped, text
    assert took < INTERRUPT_S, f"{took:.1f} s after SIGINT: {text}"
    time.sleep(0.5)
    left = [q for q in processes_mentioning(data) if q.pid != p.pid]
    left += [psutil.Process(pid) for pid in started if psutil.pid_exists(pid)
             and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert not left, [q.cmdline() for q in left]
    assert os.listdir(tmp_path / "tmp") == []
    runs = list((tmp_path / "data" / "runs").glob("*/meta.json")) if phase != "importing" else []
    for m in runs:
        assert '"status": "interrupted"' in m.read_text()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_report_stopped_mid_notebook_ends_within_seconds_and_leaves_nothing(server_build, loadgen_binary, tmp_path,
                                                                             sig):
    # the report's kernel has started notebook 01 and its server when the signal comes
    data = str(tmp_path / "data")
    p = _start(tmp_path, "report", "--plan", "quick", "--only", "01", "--no-browser", "--no-progress",
               "--report-dir", str(tmp_path / "report"))
    _wait_for(p, "the notebook's server", _named(data, "perflab.server.Main", p), timeout=180)
    started = [q.pid for q in _tree(p)[1:]] + [q.pid for q in processes_mentioning(data)]
    t0 = time.monotonic()
    p.send_signal(sig)
    try:
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    took = time.monotonic() - t0
    assert p.returncode == 128 + sig and took < INTERRUPT_S, (p.returncode, took, out.decode()[-3000:])
    time.sleep(1.0)
    left = [psutil.Process(pid) for pid in started if psutil.pid_exists(pid)
            and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert not left and not processes_mentioning(data), [q.cmdline() for q in left]
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.slow
def test_the_measuring_commands_leave_nothing_in_tmpdir(server_build, loadgen_binary, tmp_path):
    # make test-all: seven commands, a process each (a minute or more here); `make test` checks TMPDIR after each
    # run of the interrupt test above
    env = _env(tmp_path)
    small = ["-c", "2", "-t", "1", "--path", "/v0/status", "--backend", "memory", "--no-project"]
    commands = [["run", "-R", "300", "-d", "1s", *small],
                ["profile", "-R", "300", "-d", "1s", *small],
                ["breakpoint", *small, "--start-rate", "500", "--max-probes", "2", "--probe-duration", "1s",
                 "--warmup", "0", "--repeats", "1", "--server-warmup", "0", "--sustain", "1s", "--quiet-wait", "1s",
                 "--quiet"],
                ["ab", *small, "-R", "300", "--a-workers", "1", "--b-workers", "2", "--probe-duration", "0.5s",
                 "--min-pairs", "2", "--pairs", "2", "--warmup", "0", "--idle-pairs", "0", "--quiet"],
                ["runs"], ["index"], ["hosts"]]
    for cmd in commands:
        r = subprocess.run([sys.executable, "-m", "perflab", *cmd], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=300)
        # a search may end with no breakpoint (exit 1); anything else must run to its end
        assert r.returncode == 0 or (cmd[0] == "breakpoint" and r.returncode == 1), (cmd, r.stdout[-2000:],
                                                                                        r.stderr[-3000:])
        assert os.listdir(tmp_path / "tmp") == [], (cmd, os.listdir(tmp_path / "tmp"))
