"""Child process housekeeping: own process groups, group kill, and a registry for emergency cleanup.

Every child perflab starts (server JVM, load generator) runs in its own session/process group so a
single ``killpg`` reaches anything it forked, and so Ctrl-C in a terminal or a Jupyter interrupt
does not hit the children before perflab has decided how to stop them. The registry lets
``atexit`` and signal handlers stop whatever is still running when Python exits unexpectedly.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path

from .errors import RunInterrupted, ServerStartError

_live: dict[int, subprocess.Popen] = {}
_order: dict[int, int] = {}  # pid -> when it was registered (mark())
_count = itertools.count()
_lock = threading.Lock()


def pdeathsig_prefix() -> list[str]:
    """A command prefix that kills the process when the thread that started it ends (its worker, its
    Python process killed, even by SIGKILL: util-linux setpriv); nothing where setpriv is missing."""

    exe = shutil.which("setpriv")
    return [exe, "--pdeathsig", "KILL", "--"] if exe else []


def register(proc: subprocess.Popen) -> None:
    with _lock:
        _live[proc.pid] = proc
        _order[proc.pid] = next(_count)


def unregister(proc: subprocess.Popen) -> None:
    with _lock:
        _live.pop(proc.pid, None)
        _order.pop(proc.pid, None)


def mark() -> int:
    """A point in the registrations: :func:`started_since` gives the children registered after it."""
    with _lock:
        return next(_count)


def started_since(point: int) -> list[subprocess.Popen]:
    """The live children registered after ``point`` (:func:`mark`), by any thread."""
    with _lock:
        return [p for pid, p in _live.items() if _order.get(pid, -1) > point and p.poll() is None]


def kill_now(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s process group without waiting (whoever waits on it sees it end)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def live_children() -> list[subprocess.Popen]:
    with _lock:
        return [p for p in _live.values() if p.poll() is None]


def kill_group(proc: subprocess.Popen, grace_s: float = 10.0, sig: int = signal.SIGTERM) -> int | None:
    """Send ``sig`` to the process group of ``proc``, wait ``grace_s``, then SIGKILL the group.

    Returns the exit status (``None`` if it could not be reaped)."""
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        pgid = None
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if pgid is not None and pgid == proc.pid:
                os.killpg(pgid, sig)
            else:
                proc.send_signal(sig)
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    # The leader may be gone while others in its group (forked helpers) still live.
    if pgid is not None and pgid == proc.pid:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        # a killed process lingers until the kernel has run it once more: return when the group is gone
        wait_for(lambda: not group_members(pgid), 5.0, 0.01)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
    unregister(proc)
    return proc.poll()


def kill_all(grace_s: float = 2.0) -> None:
    """Stop every registered child (used at interpreter exit)."""
    for p in live_children():
        kill_group(p, grace_s)


atexit.register(kill_all)


def tail(path: str | os.PathLike | None, lines: int = 40) -> str:
    """The last ``lines`` lines of a text file ('' if it does not exist)."""
    if not path:
        return ""
    p = Path(path)
    if not p.exists():
        return ""
    with p.open("rb") as f:
        try:
            f.seek(-256 * 1024, os.SEEK_END)
        except OSError:
            f.seek(0)
        data = f.read().decode("utf-8", "replace")
    return "\n".join(deque(data.splitlines(), maxlen=lines))


@contextlib.contextmanager
def sigterm_as_exception():
    """Within the block, SIGTERM raises :class:`RunInterrupted` (like Ctrl-C raises KeyboardInterrupt),
    so ``finally`` clauses stop the children and mark the run. No-op outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise RunInterrupted(f"received signal {signal.Signals(signum).name}")

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not in the main interpreter thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def launch(
    command: list[str],
    log_path: Path,
    cwd: str | None = None,
    env: dict | None = None,
    stdout_pipe: bool = False,
    what: str = "the server command",
) -> subprocess.Popen:
    """Start ``command`` in a session of its own, its output appended to ``log_path`` (after a ``# command``
    line; stdout to a pipe instead with ``stdout_pipe``), registered for cleanup. A command that cannot be
    started is a :class:`~perflab.errors.ServerStartError` naming ``what``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        log.write(("# " + " ".join(command) + "\n").encode())
        log.flush()
        try:
            proc = subprocess.Popen(
                command,
                stdout=subprocess.PIPE if stdout_pipe else log,
                stderr=log if stdout_pipe else subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            raise ServerStartError(f"cannot start {what} {command[0]!r}: {e.strerror}") from None
    register(proc)
    return proc


def await_ready(proc: subprocess.Popen, ready, timeout_s: float, what: str, where: str, log_tail) -> None:
    """Poll ``ready()`` until true; a :class:`~perflab.errors.ServerStartError` (with ``log_tail()``) when
    ``proc`` exits first or ``timeout_s`` passes (then its group is killed). The message names ``what``
    and ``where``: "the server command exited with status 3 before answering on port 8080"."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        rc = proc.poll()
        if rc is not None:
            raise ServerStartError(f"{what} exited with status {rc} before answering {where}", log_tail())
        if time.monotonic() > deadline:
            kill_group(proc, 1)
            raise ServerStartError(f"{what} did not answer HTTP {where} within {timeout_s:g} s", log_tail())
        time.sleep(0.05)


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``, from ``/proc``."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(d))
    return out


def _state(pid: int) -> str | None:
    """The process's state letter from ``/proc`` (``T``: stopped), ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def pause_group(proc: subprocess.Popen, paused: bool) -> None:
    """SIGSTOP (``paused``) or SIGCONT the process group of ``proc`` (a child started in a session of its
    own); a stop returns once the leader is stopped (SIGSTOP takes effect asynchronously). A process that
    has exited is left alone."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGSTOP if paused else signal.SIGCONT)
    if paused:
        wait_for(lambda: _state(proc.pid) in ("T", "t", None), 2.0, 0.005)


def wait_for(predicate, timeout_s: float, interval_s: float = 0.05) -> bool:
    """Poll ``predicate`` until true or ``timeout_s`` elapsed."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval_s)
    return bool(predicate())


# --- who is running a run: a coordinator known by its pid, its start and its machine's boot ----------------


def boot_id() -> str | None:
    """This machine's boot id (a new one at every boot)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _start_ticks(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), ``None`` when it is gone: with the pid, names
    one process even after the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def identity() -> dict:
    """This process as a run records its coordinator: pid, start, boot id and host name."""
    return {
        "pid": os.getpid(),
        "start_ticks": _start_ticks(os.getpid()),
        "boot_id": boot_id(),
        "hostname": os.uname().nodename,
    }


def gone(who: dict | None) -> bool:
    """Whether the process ``who`` (:func:`identity`) has certainly ended: on this machine, since this boot,
    its pid is gone or belongs to another process; or its machine was rebooted since. ``False`` when it
    cannot be told (another machine, or no identity recorded)."""
    if not who or who.get("pid") is None:
        return False
    if who.get("boot_id") != boot_id():
        return who.get("hostname") == os.uname().nodename  # this machine, rebooted since
    return _start_ticks(int(who["pid"])) != who.get("start_ticks")
