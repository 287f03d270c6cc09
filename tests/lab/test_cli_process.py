"""A real ``python -m perflab`` process, as a user starts it: Ctrl-C ends it within seconds at any phase
(exit 130, nothing left running), even one that Python itself loses on its way (:mod:`perflab.interrupt`), and
a Ctrl-C pressed again and again does not cut short what stops the children; it listens on nothing but loopback
while it measures, and it leaves nothing in ``$TMPDIR`` (after a run, an interrupted one, or any of the
measuring commands)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import REPO, processes_mentioning

from perflab.hosts.tls import is_loopback

#: how long a Ctrl-C may take to end a command (the issue's bound; it takes about 1 s here)
INTERRUPT_S = 10.0


def _env(tmp_path: Path) -> dict:
    (tmp_path / "tmp").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFLAB_", "DASK_"))}
    env.update(
        TMPDIR=str(tmp_path / "tmp"),
        PERFLAB_DATA=str(tmp_path / "data"),
        PYTHONPATH=str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""),
    )
    return env


def _start(tmp_path: Path, *args: str, env: dict | None = None, command=("-m", "perflab")) -> subprocess.Popen:
    # SIGINT as in a terminal: a child of a background job (CI under nohup or `&`) starts with it ignored
    (tmp_path / "tmp").mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, *command, *args],
        cwd=tmp_path,
        env=env or _env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


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

#: each phase's tries: how long after it begins each try's Ctrl-C comes (the last try's again every 0.2 s until
#: the process ends: a user pressing it repeatedly). The imports' tries cover their first 2 s (they take 2-4 s
#: here); a Ctrl-C they lost went unnoticed once in about 84 tries (issue 46), so `make test` sends 21 in all
#: and scripts/ctrl_c_stress.py some hundreds beside a spinning core.
TRIES = {
    "importing": (0.15, 0.45, 0.75, 1.05, 1.4, 1.8),
    "server starting": (1.0, 0.3, 2.0),
    "filling": (1.5, 0.5, 2.5),
    "measuring": (1.0, 0.3, 2.0),
}


def _ctrl_c(p: subprocess.Popen, again: bool) -> tuple[int, float, str]:
    """Ctrl-C (again and again every 0.2 s with ``again``, for up to INTERRUPT_S): exit status, seconds taken,
    output."""
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        while again and p.poll() is None and time.monotonic() - t0 < INTERRUPT_S:
            time.sleep(0.2)
            p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, time.monotonic() - t0, out.decode()[-3000:]


def _interrupted_at(tmp_path: Path, phase: str, after_s: float, again: bool) -> None:
    data = str(tmp_path / "data")
    if phase == "server starting":
        # a server that never gets ready: perflab waits for it (60 s by default) when Ctrl-C comes; the wait
        # holds the server host's agent, and its stop behind it, until it is aborted
        never = f"{sys.executable} -c 'import time; time.sleep(600)' {{port}} {data}"
        p = _start(tmp_path, "run", *LOAD, "--server-cmd", never, "--ready-path", "/")
        _wait_for(p, "the server's process", _named(data, "time.sleep(600)", p))
    elif phase == "filling":
        # two million keys through the API: minutes of writes when Ctrl-C comes
        p = _start(tmp_path, "run", *LOAD, "--backend", "memory", "--fill", "2000000")
        _wait_for(p, "the server's process", _named(data, "perflab.server.Main", p))
    elif phase == "measuring":
        p = _start(tmp_path, "run", *LOAD, "--backend", "memory")
        _wait_for(p, "perflab-load sending", _named(data, "perflab-load", p))
    else:
        p = _start(tmp_path, "run", *LOAD, "--backend", "memory")
    time.sleep(after_s)
    if phase == "measuring" and after_s >= 1.0:
        # what the coordinator and everything it started listen on, while it measures: loopback only (the
        # in-process hosts talk over inproc://, the server is reached on 127.0.0.1)
        listening = _listening(_tree(p))
        assert listening.get(p.pid) == [], listening  # the coordinator itself: no port at all
        addrs = [a for v in listening.values() for a in v]
        assert addrs and all(is_loopback(a) for a in addrs), listening
    started = [q.pid for q in _tree(p)[1:]] + [q.pid for q in processes_mentioning(data)]
    code, took, text = _ctrl_c(p, again)
    what = f"{phase}, Ctrl-C {after_s:g} s in{' and again' if again else ''}: exit {code} after {took:.1f} s"
    # 130: perflab caught the interrupt (main() or, during its imports, its excepthook); -SIGINT or 1 (Python's
    # own class creation wrapping it: "RuntimeError: Error calling __set_name__") only before perflab's first
    # import installs its handler, in Python's own start-up
    early = phase == "importing" and (code == -signal.SIGINT or (code == 1 and "KeyboardInterrupt" in text))
    assert code == 130 or early, f"{what}: {text}"
    assert took < INTERRUPT_S, f"{what}: {text}"
    time.sleep(0.5)
    left = [q for q in processes_mentioning(data) if q.pid != p.pid]
    left += [
        psutil.Process(pid)
        for pid in started
        if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]
    assert not left, (what, [q.cmdline() for q in left])
    assert os.listdir(tmp_path / "tmp") == [], what
    runs = list((tmp_path / "data" / "runs").glob("*/meta.json")) if phase != "importing" else []
    for m in runs:
        assert '"status": "interrupted"' in m.read_text(), what


@pytest.mark.parametrize("phase", list(TRIES))
def test_ctrl_c_ends_a_run_within_seconds_at_any_phase(server_build, loadgen_binary, tmp_path, phase):
    for i, after_s in enumerate(TRIES[phase]):
        _interrupted_at(tmp_path / f"try-{i}", phase, after_s, again=i == len(TRIES[phase]) - 1)


#: loses the first Ctrl-C as CPython can: it arrives while a weakref callback runs (importlib's module locks
#: have one, run at every import), and Python reports the KeyboardInterrupt raised there as ignored
LOSE_CTRL_C = """
import os, signal, sys, weakref

_at = [os.environ.get("LOSE_CTRL_C_AT")]


def _lose(_ref):
    signal.raise_signal(signal.SIGINT)
    for _ in range(3):          # its handler runs at the next check: here, inside the callback
        pass


def _audit(event, args):
    if _at[0] and event == "import" and args[0] == _at[0]:
        _at[0] = None

        class Lock:
            pass
        lock = Lock()
        ref = weakref.ref(lock, _lose)
        del lock


sys.addaudithook(_audit)
"""


def test_a_ctrl_c_that_python_loses_during_the_imports_still_ends_the_run(server_build, loadgen_binary, tmp_path):
    # pandas is imported in the middle of perflab's imports, after its handler is installed; before it was,
    # the run went on for its 60 s
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(LOSE_CTRL_C)
    env = _env(tmp_path)
    env.update(PYTHONPATH=env["PYTHONPATH"] + os.pathsep + str(tmp_path / "site"), LOSE_CTRL_C_AT="pandas")
    t0 = time.monotonic()
    p = _start(tmp_path, "run", *LOAD, "--backend", "memory", env=env)
    try:
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    text = out.decode()[-3000:]
    assert "Exception ignored in: <function _lose" in text, text  # it was lost...
    assert "the Ctrl-C was lost on its way" in text and p.returncode == 130, text  # ...and raised again
    assert time.monotonic() - t0 < 30, text
    assert not (tmp_path / "data" / "runs").exists() and not processes_mentioning(str(tmp_path / "data")), text
    assert os.listdir(tmp_path / "tmp") == []


#: a process whose first Ctrl-C is lost, then waits; its cleanup takes 2 s (argv[1] = "hang": for ever),
#: with a child of perflab's
LOST_THEN_CLEANUP = """
import signal, sys, time, weakref
from pathlib import Path
from perflab import children, interrupt
assert interrupt.install()
interrupt.FORCE_S = 1.0 if sys.argv[1] == "hang" else 60.0
child = children.launch(["sleep", "600"], Path("child.log"))


class Obj:
    pass


def lose(_ref):
    signal.raise_signal(signal.SIGINT)
    for _ in range(3):
        pass


obj = Obj()
ref = weakref.ref(obj, lose)
print("child", child.pid, flush=True)
del obj
print("went on", flush=True)
try:
    time.sleep(60)
finally:
    print("cleanup", flush=True)
    time.sleep(600 if sys.argv[1] == "hang" else 2)
    children.kill_group(child, 1)
    print("cleaned up", flush=True)
"""


@pytest.mark.parametrize("cleanup", ["2 s", "hang"])
def test_ctrl_c_again_and_again_leaves_the_cleanup_alone_until_it_hangs(tmp_path, cleanup):
    # the lost Ctrl-C is raised again within seconds while the process waits; Ctrl-C pressed every 0.1 s
    # meanwhile does not cut the 2 s cleanup short; a cleanup that hangs ends 1 s (FORCE_S) after the first
    # Ctrl-C on the next one: the children killed, exit 130
    p = _start(tmp_path, "hang" if cleanup == "hang" else "2", command=("-c", LOST_THEN_CLEANUP))
    lines = []
    _wait_for(p, "the child", lambda: lines.append(p.stdout.readline().decode()) or "went on" in lines[-1], timeout=60)
    child = int(next(x for x in lines if x.startswith("child")).split()[1])
    assert "Exception ignored in: <function lose" in "".join(lines), lines
    _wait_for(
        p,
        "the cleanup",
        lambda: lines.append(p.stdout.readline().decode()) or "cleanup" in lines[-1],
        timeout=INTERRUPT_S,
    )
    code, took, text = _ctrl_c(p, again=True)
    text = "".join(lines) + text
    assert took < INTERRUPT_S and code == 130, (code, took, text)
    if cleanup == "hang":
        assert "interrupted again: 1 children killed" in text, text
    else:
        assert "cleaned up" in text and "interrupted again" not in text, text
    time.sleep(0.5)
    assert not psutil.pid_exists(child) or psutil.Process(child).status() == psutil.STATUS_ZOMBIE, text


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_report_stopped_mid_notebook_ends_within_seconds_and_leaves_nothing(
    server_build, loadgen_binary, tmp_path, sig
):
    # the report's kernel has started notebook 01 and its server when the signal comes
    data = str(tmp_path / "data")
    p = _start(
        tmp_path,
        "report",
        "--plan",
        "quick",
        "--only",
        "01",
        "--no-browser",
        "--no-progress",
        "--report-dir",
        str(tmp_path / "report"),
    )
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

    def left():
        return [
            psutil.Process(pid)
            for pid in started
            if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
        ]

    # the kernel's last steps (its hosts' scratch removed) may end a moment after the command: beside a spinning
    # core once more than 1 s; what is still there after 15 s was left behind
    deadline = time.monotonic() + 15
    while (left() or processes_mentioning(data) or os.listdir(tmp_path / "tmp")) and time.monotonic() < deadline:
        time.sleep(0.25)
    assert not left() and not processes_mentioning(data), [q.cmdline() for q in left()]
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.slow
def test_the_measuring_commands_leave_nothing_in_tmpdir(server_build, loadgen_binary, tmp_path):
    # make test-all: seven commands, a process each (a minute or more here); `make test` checks TMPDIR after each
    # run of the interrupt test above
    env = _env(tmp_path)
    small = ["-c", "2", "-t", "1", "--path", "/v0/status", "--backend", "memory", "--no-project"]
    commands = [
        ["run", "-R", "300", "-d", "1s", *small],
        ["profile", "-R", "300", "-d", "1s", *small],
        [
            "breakpoint",
            *small,
            "--start-rate",
            "500",
            "--max-probes",
            "2",
            "--probe-duration",
            "1s",
            "--warmup",
            "0",
            "--repeats",
            "1",
            "--server-warmup",
            "0",
            "--sustain",
            "1s",
            "--hold-windows",
            "1",
            "--sustain-tries",
            "2",
            "--quiet-wait",
            "1s",
            "--quiet",
        ],
        [
            "ab",
            *small,
            "-R",
            "300",
            "--a-workers",
            "1",
            "--b-workers",
            "2",
            "--probe-duration",
            "0.5s",
            "--min-pairs",
            "2",
            "--pairs",
            "2",
            "--warmup",
            "0",
            "--idle-pairs",
            "0",
            "--quiet",
        ],
        ["runs"],
        ["index"],
        ["hosts"],
    ]
    for cmd in commands:
        r = subprocess.run(
            [sys.executable, "-m", "perflab", *cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        # a search may end with no breakpoint (exit 1); anything else must run to its end
        assert r.returncode == 0 or (cmd[0] == "breakpoint" and r.returncode == 1), (
            cmd,
            r.stdout[-2000:],
            r.stderr[-3000:],
        )
        assert os.listdir(tmp_path / "tmp") == [], (cmd, os.listdir(tmp_path / "tmp"))
