"""Start and stop the Java server as a separate JVM process.

The lab launches ``$JAVA_HOME/bin/java <jvm flags> -cp '<install>/lib/*' perflab.server.Main <flags>``
(never the launcher script, so any JDK and any JVM flags work) in its own process group, reads the
server's stdout protocol (one JSON object per line: ``config``, ``ready``, ``stopped``), waits for
``ready`` and ``GET /v0/status``, and stops it with SIGTERM (graceful: memtables are flushed), then
SIGKILL after a grace period. stderr goes to ``server.log``; every failure carries its tail.

Typical use::

    with start_server(ServerConfig(mode="async", workers=2)) as srv:
        run_load(srv.url, LoadParams(rate=2000, duration=10, script="get.lua"))
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from .. import children, jdk, paths
from ..config import ServerConfig
from ..errors import ServerStartError
from .counters import fetch_stats
from .http import http_get

MAIN_CLASS = "perflab.server.Main"
#: seconds a started server may take to report ready (by default)
READY_S = 90.0


class Server:
    """One server process. Use :func:`start_server` or ``with Server(cfg) as srv:``.

    ``data_dir``: the storage directory (created if missing); ``None`` makes a fresh temporary one
    (deleted on :meth:`stop` unless ``keep_data``). ``log_dir``: where ``server.log`` (stderr) and
    ``server-events.jsonl`` (the stdout protocol) go; ``None`` uses the data directory's parent temp.
    ``cpu_prefix``: a command prefix that pins the JVM to CPUs (``taskset -c 0``).
    """

    def __init__(
        self,
        config: ServerConfig | None = None,
        data_dir: str | os.PathLike | None = None,
        log_dir: str | os.PathLike | None = None,
        keep_data: bool = False,
        cpu_prefix: list[str] | None = None,
    ):
        if config is None:
            config = ServerConfig()
        if not isinstance(config, ServerConfig):
            raise ValueError(f"config must be a ServerConfig, got {type(config).__name__}")
        self.config = config
        self._given_data_dir = Path(data_dir) if data_dir is not None else None
        self._tmp: Path | None = None
        self.keep_data = keep_data
        self.cpu_prefix = list(cpu_prefix or [])  # e.g. ["taskset", "-c", "0"] (see perflab.server.placement)
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.proc: subprocess.Popen | None = None
        self.events: list[dict] = []
        self.stdout_noise: list[str] = []
        self.ready: dict | None = None
        self.effective_config: dict | None = None
        self.stopped_event: dict | None = None
        self.exit_code: int | None = None
        self.command: list[str] = []
        self.data_dir: Path | None = None
        self._reader: threading.Thread | None = None
        self._ev = threading.Condition()

    # ---- properties -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        self._require_ready()
        return int(self.ready["port"])

    @property
    def host(self) -> str:
        self._require_ready()
        return self.ready.get("host") or self.config.host

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        return f"http://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        """PID of the server JVM (the attach target for the profiler)."""
        self._require_ready()
        return int(self.ready.get("pid") or self.proc.pid)

    @property
    def java_version(self) -> str | None:
        return (self.ready or {}).get("java_version")

    @property
    def log_path(self) -> Path | None:
        return self.log_dir / "server.log" if self.log_dir else None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _require_ready(self):
        if not self.ready:
            raise RuntimeError("the server is not running: call start() first")

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's stderr (plus any non-JSON stdout lines)."""
        if self.log_dir is None and getattr(self, "_final_tail", None):
            return self._final_tail
        t = children.tail(self.log_path, lines)
        if self.stdout_noise:
            t += "\n" + "\n".join(self.stdout_noise[-lines:])
        return t

    # ---- lifecycle --------------------------------------------------------------------------
    def start(self, timeout: float | None = None) -> Server:
        """Launch the JVM and wait until it is ready. Raises :class:`ServerStartError` with the cause
        (exit status, the server's error line) and the log tail."""
        timeout = READY_S if timeout is None else timeout
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        if self.proc is not None:
            raise RuntimeError("this Server was already started; make a new one")
        cfg = self.config
        jh = jdk.home(cfg.java_home)
        if cfg.install_dir is not None:  # another build (ServerConfig checked it has jars)
            classpath = Path(cfg.install_dir) / "lib" / "*"
        else:
            classpath = paths.server_install_dir() / "lib" / "*"
            paths.server_classpath()  # fails early with "run make setup" when the build is missing
        major, _ = jdk.version(str(jh))
        if self.log_dir is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="perflab-server-"))
            self.log_dir = self._tmp
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if cfg.needs_data_dir:
            if self._given_data_dir is not None:
                self.data_dir = self._given_data_dir
            else:
                self._tmp = self._tmp or Path(tempfile.mkdtemp(prefix="perflab-server-"))
                self.data_dir = self._tmp / "db"
        elif self._given_data_dir is not None:
            self.data_dir = self._given_data_dir
        if cfg.mode == "virtual" and major < jdk.VIRTUAL_THREADS:
            raise ServerStartError(
                f"mode=virtual needs JDK {jdk.VIRTUAL_THREADS}+, but {jh} is JDK {major}: set java_home"
            )
        jvm = cfg.jvm_args()
        # A JVM crash report belongs with the run's logs, not in whatever directory Python runs in.
        jvm.insert(0, f"-XX:ErrorFile={self.log_dir.resolve()}/hs_err_pid%p.log")
        if major >= 21:
            # JDK 21+ warns about (and later versions refuse) agents loaded into a running JVM unless allowed.
            jvm.insert(0, "-XX:+EnableDynamicAgentLoading")
        self.command = [
            *self.cpu_prefix,
            str(jh / "bin" / "java"),
            *jvm,
            "-cp",
            str(classpath),
            MAIN_CLASS,
            *cfg.server_args(self.data_dir),
        ]
        self.proc = children.launch(
            self.command, self.log_path, env=dict(os.environ, JAVA_HOME=str(jh)), stdout_pipe=True, what="the server"
        )
        self._reader = threading.Thread(target=self._read_stdout, name=f"server-{self.proc.pid}-stdout", daemon=True)
        self._reader.start()
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop(grace_s=2)
            raise
        return self

    def _read_stdout(self):
        events_path = self.log_dir / "server-events.jsonl"
        with open(events_path, "a") as out:
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                out.write(line + "\n")
                out.flush()
                try:
                    ev = json.loads(line)
                    if not isinstance(ev, dict):
                        raise ValueError
                except ValueError:
                    # Something else printed to stdout (e.g. a JVM warning); keep it for the log tail.
                    self.stdout_noise.append(line)
                    continue
                with self._ev:
                    self.events.append(ev)
                    kind = ev.get("event")
                    if kind == "config":
                        self.effective_config = ev
                    elif kind == "ready":
                        self.ready = ev
                    elif kind == "stopped":
                        self.stopped_event = ev
                    self._ev.notify_all()
        with self._ev:
            self._ev.notify_all()

    def _fail(self, cause: str):
        raise ServerStartError(cause, self.log_tail())

    def _wait_ready(self, timeout: float):
        deadline = time.monotonic() + timeout
        with self._ev:
            while self.ready is None:
                rc = self.proc.poll()
                if rc is not None:
                    self._reader.join(timeout=2)
                    self.exit_code = rc
                    self._fail(self._exit_cause(rc))
                left = deadline - time.monotonic()
                if left <= 0:
                    self._fail(f"server did not report ready within {timeout:g} s")
                self._ev.wait(timeout=min(left, 0.1))
        # The ready line means listening; /v0/status is the contract's readiness probe.
        while True:
            try:
                status, _ = http_get(self.url + "/v0/status", timeout=2)
                if status == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                self._fail(self._exit_cause(self.proc.returncode))
            if time.monotonic() > deadline:
                self._fail(f"GET /v0/status did not answer 200 within {timeout:g} s")
            time.sleep(0.05)

    def _exit_cause(self, rc: int) -> str:
        errors = [ln for ln in children.tail(self.log_path, 200).splitlines() if ln.lower().startswith("error")]
        what = {2: "bad configuration", 1: "start-up failure"}.get(rc, "exited")
        msg = f"server exited with status {rc} ({what})"
        if errors:
            msg += ": " + errors[-1]
        return msg

    def stop(self, grace_s: float = 30.0) -> int | None:
        """SIGTERM (graceful, flushes), then SIGKILL after ``grace_s``. Idempotent. Returns the exit status."""
        if self.proc is None:
            return None
        self.exit_code = children.kill_group(self.proc, grace_s)
        if self._reader is not None:
            self._reader.join(timeout=5)
        if self.proc.stdout is not None and not self._reader.is_alive():
            self.proc.stdout.close()
        if self._tmp is not None and not self.keep_data:
            # Temp logs go with the temp dir; keep their tail for callers that ask after stop().
            self._final_tail = self.log_tail()
            shutil.rmtree(self._tmp, ignore_errors=True)
            if self.log_dir == self._tmp:
                self.log_dir = None
        return self.exit_code

    def stats(self) -> dict:
        """One ``GET /v0/stats`` sample."""
        return fetch_stats(self.url)

    @property
    def crash_log(self) -> Path | None:
        """The JVM's ``hs_err_pid<pid>.log`` if it crashed."""
        if self.proc is None or self.log_dir is None:
            return None
        p = self.log_dir / f"hs_err_pid{self.proc.pid}.log"
        return p if p.exists() else None

    def info(self) -> dict:
        """What to record about this server: command, effective config, ready line, exit status."""
        return {
            "command": self.command,
            "config": self.config.to_dict(),
            "effective_config": self.effective_config,
            "ready": self.ready,
            "stopped": self.stopped_event,
            "exit_code": self.exit_code,
            "data_dir": str(self.data_dir) if self.data_dir else None,
            "crash_log": self.crash_log.name if self.crash_log else None,
        }

    def __enter__(self) -> Server:
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        state = "running" if self.running else "stopped" if self.proc else "new"
        where = f" {self.url}" if self.ready else ""
        return f"<Server {self.config.mode}/{self.config.backend}{where} {state}>"


def start_server(
    config: ServerConfig | None = None,
    data_dir=None,
    log_dir=None,
    keep_data: bool = False,
    timeout: float = READY_S,
    cpu_prefix: list[str] | None = None,
) -> Server:
    """Start a server and return it (usable as a context manager that stops it)."""
    return Server(config, data_dir=data_dir, log_dir=log_dir, keep_data=keep_data, cpu_prefix=cpu_prefix).start(
        timeout=timeout
    )
