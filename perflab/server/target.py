"""One server as the target of a run, on its host: the process and its samplers.

A :class:`perflab.hosts.agents.ServerAgent` runs one *target* on the server host and asks every target the
same things (:class:`ServerTarget` here; :class:`perflab.cluster.target.ClusterTarget` for N nodes):
``start()`` (what the coordinator records about it), ``stop()``, ``samples()`` (``/v0/stats``),
``cpu_window()``, ``files()`` (logs and events to copy into the run), ``pid_of()`` (for async-profiler).
The coordinator's handle on it is :class:`perflab.hosts.remote.RemoteServer`.
"""

from __future__ import annotations

import time
from pathlib import Path


class ServerTarget:
    """The built-in server, your command, or a server already running (``config``: ``ServerConfig`` or
    ``ForeignServer``), with its ``/v0/stats`` and ``/proc`` CPU samplers. ``host``: the address to listen
    on when the generators run on other hosts (``None``: the server's default)."""

    #: what a coordinator may ask beyond the common calls (see perflab.hosts.agents.ServerAgent.call)
    CALLS: tuple[str, ...] = ("pause",)

    def __init__(self, config, data_dir: Path | None, log_dir: Path, cpu_prefix: list[str], stats_interval: float,
                 host: str | None = None):
        self.config, self.data_dir, self.log_dir = config, data_dir, log_dir
        self.cpu_prefix, self.stats_interval, self.host = cpu_prefix, stats_interval, host
        self.server = self.sampler = self.cpu = None
        self.paused = False

    def start(self) -> dict:
        from ..config import ServerConfig
        from ..config.target import ForeignServer
        from . import Server
        from .cpu import CpuSampler
        from .foreign import AttachedServer, ForeignProcess, stats_available
        from .stats import StatsSampler

        cfg = self.config
        if isinstance(cfg, ForeignServer):
            self.server = (ForeignProcess(cfg, self.log_dir, self.cpu_prefix, host=self.host or "127.0.0.1").start()
                           if cfg.command is not None else AttachedServer(cfg))
        else:
            if self.host is not None and isinstance(cfg, ServerConfig) and cfg.host == "127.0.0.1":
                cfg = cfg.replace(host=self.host)   # the generator hosts must reach it: its host's own address
            self.server = Server(cfg, data_dir=self.data_dir, log_dir=self.log_dir, keep_data=True,
                                 cpu_prefix=self.cpu_prefix).start()
        stats_unavailable = stats_available(self.server.url)
        self.sampler = StatsSampler(self.server.url, self.stats_interval).start() if stats_unavailable is None else None
        self.cpu = CpuSampler(self.server.pid).start() if self.server.pid else None
        return self.describe(stats_unavailable)

    def describe(self, stats_unavailable: str | None) -> dict:
        from ..experiment import profiling_unavailable

        s = self.server
        return {"kind": "server", "url": s.url, "pid": s.pid,
                "java_version": s.java_version, "command": list(s.command), "info": s.info(),
                "effective_config": getattr(s, "effective_config", None), "ready": getattr(s, "ready", None),
                "jvm": getattr(s, "jvm", None), "profiling_unavailable": profiling_unavailable(s),
                "stats_unavailable": stats_unavailable, "started_at": time.time()}

    def pause(self, paused: bool) -> None:
        """Freeze (SIGSTOP: no CPU at all) or thaw every process of the server perflab started: what an idle
        server costs a busy one beside it is measured against a frozen one (:mod:`perflab.ab`)."""
        from ..children import pause_group

        proc = getattr(self.server, "proc", None)
        if proc is None:
            raise ValueError("pause: only a server process perflab started can be frozen")
        pause_group(proc, paused)
        self.paused = paused

    def stop(self) -> dict | None:
        """Stop the samplers and the server (thawed first, if frozen); its final record (``None`` if none
        ran)."""
        for s in (self.sampler, self.cpu):
            if s is not None:
                s.stop()
        if self.server is None:
            return None
        if self.paused:
            self.pause(False)
        self.server.stop()
        return self.server.info()

    def samples(self) -> list[dict]:
        return list(self.sampler.samples) if self.sampler is not None else []

    def cpu_window(self, start: float, end: float):
        return self.cpu.window(start, end) if self.cpu is not None else None

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
