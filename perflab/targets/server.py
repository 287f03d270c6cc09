"""One server as a target: the built-in one (:class:`BuiltinTarget`) or yours (:class:`ForeignTarget`: your
command, or a server already running at a URL), on its host (:class:`ServerHost`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..children import pause_group
from ..commits.builds import BuildCache, Commit, built_commit
from ..commits.git import checkout, resolve, server_commit
from ..config import ServerConfig
from ..config.target import ForeignServer
from ..hosts.actors import answer
from ..profiling.codemap import BUILTIN, CodeMap
from ..server import Server
from ..server.counters import StatsSampler
from ..server.cpu import ProcessCpu
from ..server.fill import write_keys
from ..server.foreign import AttachedServer, ForeignProcess, stats_available
from .base import CALL_S, Target, TargetHandle, TargetHost


class ServerHost(TargetHost):
    """One server on the server host, with its ``/v0/stats`` and ``/proc`` CPU samplers; it can be frozen
    (:meth:`pause`)."""

    def __init__(self, name: str, *args):
        super().__init__(name, *args)
        self.server = self.stats = None
        self.paused = False

    def _start(self) -> dict:
        cfg = self.target.config
        if isinstance(cfg, ForeignServer):
            self.server = (
                ForeignProcess(
                    cfg, self.log_dir, self.cpu_prefix, host=self.listen or "127.0.0.1", data_dir=self.data_dir
                ).start()
                if cfg.command is not None
                else AttachedServer(cfg)
            )
        else:
            if self.listen is not None and cfg.host == "127.0.0.1":
                cfg = cfg.replace(host=self.listen)  # the generator hosts must reach it: its host's own address
            self.server = Server(
                cfg, data_dir=self.data_dir, log_dir=self.log_dir, keep_data=True, cpu_prefix=self.cpu_prefix
            ).start()
        why_no_stats = stats_available(self.server.url)
        self.stats = StatsSampler(self.server.url, self.stats_interval).start() if why_no_stats is None else None
        pid = self.server.pid
        self.cpu = ProcessCpu(lambda: {None: pid}).start() if pid else None
        s = self.server
        return {
            "kind": "server",
            "url": s.url,
            "pid": s.pid,
            "java_version": s.java_version,
            "command": list(s.command),
            "info": s.info(),
            "effective_config": getattr(s, "effective_config", None),
            "ready": getattr(s, "ready", None),
            "jvm": getattr(s, "jvm", None),
            "profiling_unavailable": profiling_unavailable(s),
            "stats_unavailable": why_no_stats,
            "started_at": time.time(),
        }

    def fill(self, keys: int, value_size: int, seed: int, prefix: str, path: str, param: str) -> dict:
        """``<prefix>0 .. <prefix><keys-1>`` written once each through the server's API, every answer checked
        (:func:`perflab.server.fill.write_keys` with one URL)."""
        self.heard()
        with self.abortable() as stop:
            row = write_keys([self.server.url], keys, value_size, seed, prefix, "", path, param, stop=stop)
        self.heard()
        return row

    def pause(self, paused: bool) -> None:
        """Freeze (SIGSTOP: no CPU at all) or thaw every process of the server perflab started: what an idle
        server costs a busy one beside it is measured against a frozen one (:mod:`perflab.ab`)."""
        self.heard()
        proc = getattr(self.server, "proc", None)
        if proc is None:
            raise ValueError("pause: only a server process perflab started can be frozen")
        pause_group(proc, paused)
        self.paused = paused

    def stop(self) -> dict | None:
        """Stop the samplers and the server (thawed first, if frozen); its final record (``None`` if none
        ran)."""
        for s in (self.stats, self.cpu):
            if s is not None:
                s.stop()
        if self.server is None:
            return None
        if self.paused:
            self.pause(False)
        self.server.stop()
        return self.server.info()

    def samples(self) -> list[dict]:
        return list(self.stats.samples) if self.stats is not None else []

    def cpu_window(self, start: float, end: float):
        return self.cpu.window(start, end) if self.cpu is not None else None

    def cpu_frame(self, t0: float | None):
        return self.cpu.frame(t0) if self.cpu is not None else None

    def cpu_at(self, times: list[float], ours: list[int]) -> None:
        self.heard()
        if self.cpu is not None:
            self.cpu.at(times, ours)

    def files(self) -> dict[str, str]:
        """The server's log and event lines so far, by their name in the run directory."""
        out = {}
        for f in ("server.log", "server-events.jsonl"):
            p = self.log_dir / f
            if p.is_file():
                out[f] = p.read_text(errors="replace")
        return out

    def pid_of(self, node: int | None = None) -> int | None:
        if node is not None:
            raise ValueError(f"node: a single server has no node {node}")
        return self.server.pid if self.server is not None else None


def profiling_unavailable(server) -> str | None:
    """``None`` when async-profiler can attach to ``server`` (a HotSpot JVM whose pid is known), else why not."""
    pid = server.pid
    if not pid:
        return "the server's pid is unknown (give --pid with --url)"
    if isinstance(server, (ForeignProcess, AttachedServer)) and server.jvm is None:
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = "?"
        return f"pid {pid} ({exe}) is not a JVM; async-profiler profiles HotSpot JVMs"
    return None


class ServerHandle(TargetHandle):
    """The coordinator's handle on one server: what every target has, the fill through its API, and freezing
    it."""

    def fill(self, keys: int, value_size: int, seed: int, prefix: str, path: str, param: str) -> dict:
        return answer(
            self._host.fill(keys, value_size, seed, prefix, path, param), CALL_S + keys / 10, self._on("fill")
        )

    def pause(self, paused: bool) -> None:
        answer(self._host.pause(paused), CALL_S, self._on("pause"))


class _OneServer(Target):
    host_class = ServerHost

    def handle(self, hosts, desc: dict) -> ServerHandle:
        return ServerHandle(hosts, self, desc)


class BuiltinTarget(_OneServer):
    """The built-in server started with a :class:`~perflab.config.ServerConfig`."""

    kind = "built-in"
    prefills = True
    status_path = "/v0/status"

    def version_commit(self) -> str | None:
        """This checkout's commit, or the commit its ``install_dir`` was built from (a commit's build says so)."""
        if self.config.install_dir is None:
            return checkout()["commit"]
        return built_commit(self.config.install_dir)

    @property
    def needs_data_dir(self) -> bool:
        return self.config.needs_data_dir

    @property
    def backend(self) -> str:
        return self.config.backend

    def why_not(self, feature: str) -> str | None:
        if feature == "prefill" and self.config.backend == "memory":
            return "needs a persistent backend (lsm or rocksdb); backend='memory' starts empty"
        return super().why_not(feature)

    def code_map(self, ready: dict | None) -> CodeMap:
        return BUILTIN

    def record(self, handle: TargetHandle) -> tuple[dict, dict]:
        return (
            {
                "server": {
                    "java_version": handle.java_version,
                    "command": handle.command,
                    "jvm_flags": self.config.jvm_args(),
                    "effective_config": handle.effective_config,
                    "ready": handle.ready,
                }
            },
            {"server_log": "server.log", "server_events": "server-events.jsonl"},
        )


class ForeignTarget(_OneServer):
    """Your server: a :class:`~perflab.config.ForeignServer` command perflab starts, or one already running
    at its URL."""

    kind = "foreign"

    @property
    def running(self) -> bool:
        return self.config.url is not None

    @property
    def mode(self) -> str:
        return self.config.label or "foreign"

    @property
    def needs_data_dir(self) -> bool:
        """A command that names ``{dir}`` gets a fresh directory under the run for its data."""
        return self.config.command is not None and "{dir}" in self.config.command

    def version_commit(self) -> str | None:
        """The commit of the directory its command runs in, when that is in a git work tree of its own (not
        perflab's: :func:`~perflab.commits.git.server_commit`); none for a server at a URL."""
        if self.config.command is None:
            return None
        return server_commit(self.config.workdir or os.getcwd())

    def why_not(self, feature: str) -> str | None:
        if feature == "prefill":
            return "it writes the built-in server's storage files; fill writes keys through your server's API (fill=N, --fill N)"
        if feature == "pause" and self.running:
            return "only a server process perflab started can be frozen"
        return super().why_not(feature)

    def record(self, handle: TargetHandle) -> tuple[dict, dict]:
        return (
            {"server": {"java_version": handle.java_version, "command": handle.command, "foreign": handle.info()}},
            {"server_log": "server.log"} if self.config.command is not None else {},
        )


class CommitTarget(BuiltinTarget):
    """The built-in server at a git commit (:class:`~perflab.commits.Commit`): resolved, built apart once into
    ``builds`` (:class:`~perflab.commits.BuildCache`; the working tree never touched) and run as the Commit's
    configuration says; ``what`` names it in an error (a commit that does not resolve or build)."""

    def __init__(self, commit: Commit, builds: Path, what: str = "commit"):
        repo = Path(commit.repo) if commit.repo else None
        self.commit = resolve(repo, commit.rev, what=what).sha
        install = BuildCache(builds).server(self.commit, repo, what=what)
        super().__init__(commit.config.replace(install_dir=str(install)))


def server_target(config: ServerConfig | ForeignServer) -> _OneServer:
    return BuiltinTarget(config) if isinstance(config, ServerConfig) else ForeignTarget(config)
