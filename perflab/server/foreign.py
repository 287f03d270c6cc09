"""A server perflab did not build: started from the user's command, or already running at a URL.

Both stand in for :class:`perflab.server.builtin.Server` in a session (``url``, ``pid``, ``stop``,
``info``, ``log_tail``). A started command runs in its own process group with stdout and stderr in
``server.log``; perflab waits until its port answers HTTP (any status), and for perflab's course launcher
until it has printed its ready line too (the service may answer while its ``start()`` still runs, before the
launcher says what it found: the Dao classes and packages of the profile's code map), and stops the whole group
afterwards (SIGTERM, then SIGKILL), so no orphan survives a run. The pid that matters (for CPU and
for the profiler) is the one listening on the port, which may be a child of the command (a shell, a
launcher script).
"""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import time
from pathlib import Path

import psutil

from .. import children
from ..config.course import LAUNCHER
from ..config.target import ForeignServer
from ..errors import ServerStartError
from .http import http_get


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def listening_pid(port: int) -> int | None:
    """The pid of the process listening on TCP ``port`` (any address), ``None`` if none is found."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return None
    for c in conns:
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
            return c.pid
    return None


def jvm_of(pid: int) -> dict | None:
    """``{"java_home": ..., "java_version": ...}`` when ``pid`` is a HotSpot JVM (it maps libjvm.so), else
    ``None``."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            lib = next((line.split()[-1] for line in f if line.rstrip().endswith("/libjvm.so")), None)
    except OSError:
        return None
    if lib is None:
        return None
    home = Path(lib).parent.parent.parent  # <home>/lib/server/libjvm.so
    version = None
    release = home / "release"
    if release.is_file():
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("JAVA_VERSION="):
                version = line.split("=", 1)[1].strip().strip('"')
    return {"java_home": str(home), "java_version": version}


def ready_line(log: Path) -> dict | None:
    """The first ``{"event": "ready", ...}`` JSON line in a server's log (what perflab's course launcher
    prints: its factory, stage, Dao classes and packages), ``None`` when there is none."""
    try:
        with open(log, errors="replace") as f:
            for line in f:
                if line.startswith('{"event":"ready"') or line.startswith('{"event": "ready"'):
                    try:
                        got = json.loads(line)
                    except ValueError:
                        return None
                    return got if isinstance(got, dict) else None
    except OSError:
        return None
    return None


def _answers(url: str, path: str) -> bool:
    try:
        http_get(url + path, timeout=1.0)  # any status: the server is listening and speaks HTTP
        return True
    except OSError:
        return False


class _Target:
    """What the lab asks of a server it did not build: its pid (the process listening on the port) and
    the JVM behind it, if any."""

    _pid: int | None = None
    jvm: dict | None = None

    @property
    def pid(self) -> int | None:
        return self._pid

    @property
    def java_version(self) -> str | None:
        return (self.jvm or {}).get("java_version")


class ForeignProcess(_Target):
    """A server started from ``ForeignServer.command`` (see the module docstring)."""

    def __init__(
        self,
        config: ForeignServer,
        log_dir: Path,
        cpu_prefix: list[str] | None = None,
        host: str = "127.0.0.1",
        data_dir: Path | None = None,
    ):
        self.config = config
        self.data_dir = data_dir
        self.log_dir = Path(log_dir)
        self.cpu_prefix = list(cpu_prefix or [])
        self.host = host
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.command: list[str] = []
        self.exit_code: int | None = None
        self._pid: int | None = None
        self.jvm: dict | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / "server.log"

    def log_tail(self, lines: int = 40) -> str:
        return children.tail(self.log_path, lines)

    def start(self) -> ForeignProcess:
        self.port = free_port(self.host)
        url = f"http://{self.host}:{self.port}"
        text = (
            self.config.command.replace("{port}", str(self.port))
            .replace("{host}", self.host)
            .replace("{cluster}", url)
            .replace("{self}", url)
            .replace("{index}", "0")
        )  # a cluster of one
        if self.data_dir is not None:
            text = text.replace("{dir}", str(self.data_dir))
        try:
            argv = shlex.split(text)
        except ValueError as e:
            raise ValueError(f"command: cannot split {text!r} into arguments: {e}") from None
        self.command = [*self.cpu_prefix, *argv]
        self.proc = children.launch(self.command, self.log_path, cwd=self.config.workdir)
        try:
            children.await_ready(
                self.proc,
                lambda: _answers(self.url, self.config.ready_path),
                self.config.startup_timeout,
                "the server command",
                f"on port {self.port}",
                self.log_tail,
            )
        except BaseException:
            self.exit_code = self.proc.poll()
            self.stop(grace_s=2)
            raise
        if LAUNCHER in argv:
            self._await_ready_line()
        self._pid = listening_pid(self.port) or self.proc.pid
        self.jvm = jvm_of(self._pid)
        return self

    def _await_ready_line(self, timeout_s: float = 10.0) -> None:
        """perflab's course launcher prints its ready line once the service's ``start()`` returned and its port
        accepts; the port may answer first. Waits for the line (at most ``timeout_s``; the run goes on without
        it, its code map then found automatically)."""
        deadline = time.monotonic() + timeout_s
        while ready_line(self.log_path) is None and self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self, grace_s: float = 10.0) -> int | None:
        if self.proc is None:
            return None
        self.exit_code = children.kill_group(self.proc, grace_s)
        return self.exit_code

    @property
    def ready(self) -> dict | None:
        """What the server said when it was ready, if it says it as perflab's course launcher does."""
        return ready_line(self.log_path)

    def info(self) -> dict:
        return {
            "kind": "command",
            "command": self.command,
            "port": self.port,
            "pid": self._pid,
            "jvm": self.jvm,
            "exit_code": self.exit_code,
        }


class AttachedServer(_Target):
    """A server that is already running at ``ForeignServer.url``: measured, never started or stopped."""

    def __init__(self, config: ForeignServer):
        self.config = config
        self.url = config.url
        self.command: list[str] = []
        if not _answers(self.url, config.ready_path):
            raise ServerStartError(f"nothing answers HTTP at {self.url}{config.ready_path}: is the server running?")
        port = int(self.url.rsplit(":", 1)[1])
        self._pid = config.pid if config.pid is not None else listening_pid(port)
        if config.pid is not None and not psutil.pid_exists(config.pid):
            raise ValueError(f"pid: no process {config.pid}")
        self.jvm = jvm_of(self._pid) if self._pid else None

    def log_tail(self, lines: int = 40) -> str:
        return ""

    def stop(self, grace_s: float = 0) -> None:
        return None

    def info(self) -> dict:
        return {"kind": "url", "url": self.url, "pid": self._pid, "jvm": self.jvm}


def answer_to(config: ForeignServer, path: str, scratch: Path) -> int | None:
    """The status your server answers ``GET path`` with: a server at a URL is asked as it is, a command is
    started for the question (its data and log under ``scratch``) and stopped again; ``None`` when it does not
    start or does not answer."""
    if config.url is not None:
        try:
            return http_get(config.url + path, timeout=2.0)[0]
        except OSError:
            return None
    (Path(scratch) / "data").mkdir(parents=True, exist_ok=True)
    proc = ForeignProcess(config, Path(scratch), data_dir=Path(scratch) / "data")
    try:
        proc.start()
        return http_get(proc.url + path, timeout=2.0)[0]
    except (OSError, ServerStartError):
        return None
    finally:
        proc.stop(grace_s=5)


def stats_available(url: str) -> str | None:
    """``None`` when ``url`` answers ``GET /v0/stats`` with a JSON object, else why not."""
    try:
        status, body = http_get(url + "/v0/stats", timeout=2.0)
    except OSError as e:
        return f"GET /v0/stats failed: {e}"
    if status != 200:
        return f"GET /v0/stats answered {status}"
    try:
        ok = isinstance(json.loads(body), dict)
    except ValueError:
        ok = False
    return None if ok else "GET /v0/stats is not a JSON object"
