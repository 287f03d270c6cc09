"""The coordinator's handles on what runs on the server host: the target and its profilers.

:class:`RemoteServer` stands for the target a session measures (``url``, ``entries``, ``pid``,
``java_version``, ``command``, ``info()``, ``stop()``, what the run records about it, how its samples read);
:func:`handle` gives the one a target's agent describes (a cluster's is
:class:`perflab.cluster.remote.RemoteCluster`). :class:`RemoteProfiler` stands in for
:class:`perflab.profiling.profiler.Profiler` in window mode (``prepare``, ``start_recording``,
``stop_window``, ``abort``): the recording is taken on the server host, its JFR file comes back and is cut
to the measured window here, into the run directory.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

#: seconds an agent call that should be quick may take
CALL_S = 120.0


def handle(hosts, desc: dict) -> "RemoteServer":
    """The coordinator's handle on the target its agent started (``desc``: what the agent reported)."""
    if desc["kind"] == "cluster":
        from ..cluster.remote import RemoteCluster
        return RemoteCluster(hosts, desc)
    return RemoteServer(hosts, desc)


class RemoteServer:
    """The server under test on the session's server host (``desc``: what its agent reported)."""

    def __init__(self, hosts, desc: dict):
        self.hosts = hosts
        self.desc = desc
        self._final: dict | None = None

    url = property(lambda self: self.desc["url"])
    #: where loads go: entry name -> URL (one server: itself)
    entries = property(lambda self: {"server": self.desc["url"]})
    pid = property(lambda self: self.desc["pid"])
    java_version = property(lambda self: self.desc["java_version"])
    command = property(lambda self: self.desc["command"])
    effective_config = property(lambda self: self.desc["effective_config"])
    ready = property(lambda self: self.desc["ready"])
    jvm = property(lambda self: self.desc["jvm"])

    @property
    def profiling_unavailable(self) -> str | None:
        """Why async-profiler cannot attach to it (``None``: it can)."""
        return self.desc["profiling_unavailable"]

    @property
    def stats_unavailable(self) -> str | None:
        return self.desc["stats_unavailable"]

    def info(self) -> dict:
        return self._final if self._final is not None else self.desc["info"]

    def stop(self) -> None:
        self._final = self.hosts.server_agent.stop_server().result(timeout=CALL_S) or self.desc["info"]

    def load_for(self, load):
        """``load`` as it is sent to this target (unchanged)."""
        return load

    def stats_frame(self, samples: list, t0: float | None = None) -> pd.DataFrame:
        """The agent's ``/v0/stats`` samples as the stats frame (:func:`perflab.server.stats.stats_frame`)."""
        from ..server.stats import stats_frame
        return stats_frame(samples, t0)

    def record(self, config) -> tuple[dict, dict]:
        """What the run records about the server (``meta.json`` fields) and its artifacts."""
        from ..config.target import ForeignServer

        if isinstance(config, ForeignServer):
            return ({"server": {"java_version": self.java_version, "command": self.command, "foreign": self.info()}},
                    {"server_log": "server.log"} if config.command is not None else {})
        return ({"server": {"java_version": self.java_version, "command": self.command,
                            "jvm_flags": config.jvm_args(), "effective_config": self.effective_config,
                            "ready": self.ready}},
                {"server_log": "server.log", "server_events": "server-events.jsonl"})


class RemoteProfiler:
    """async-profiler in a JVM on the server host (the server's, or node ``node``'s of a cluster), recording
    one window (see the module docstring)."""

    def __init__(self, hosts, params, out_dir: Path, title: str, name: str | None = None, node: int | None = None):
        self.hosts = hosts
        self.pid: int | None = None
        self.params = params
        self.out_dir = Path(out_dir)
        self.title = title
        self.name = name or f"profile-{params.event.replace(',', '-')}"
        self.node = node
        self.active = False

    @property
    def _agent(self):
        return self.hosts.server_agent

    def prepare(self) -> "RemoteProfiler":
        where = str(self.out_dir) if self.hosts.shares_files else None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.pid = self._agent.profile_prepare(self.params, self.name, self.title, where, self.node).result(
            timeout=CALL_S)
        return self

    def start_recording(self) -> "RemoteProfiler":
        self._agent.profile_start(self.node).result(timeout=CALL_S)
        self.active = True
        return self

    def stop_window(self, from_s: float, to_s: float):
        """The :class:`~perflab.profiling.profiler.Recording` of ``[from_s, to_s]`` (the server host's clock)."""
        from ..profiling.profiler import window_recording

        if not (to_s > from_s):
            raise ValueError(f"to_s must be after from_s, got [{from_s}, {to_s}]")
        self.active = False
        got = self._agent.profile_stop(not self.hosts.shares_files, self.node).result(timeout=CALL_S)
        jfr = self.out_dir / got["jfr_name"]
        if got["jfr"] is not None:
            jfr.write_bytes(got["jfr"])
            (self.out_dir / f"{self.name}.log").write_text(got["log"])
        return window_recording(jfr, from_s, to_s, self.out_dir, self.name, self.params, self.title, self.pid,
                                got["warnings"], got["recorded_events"], got["gc_recorded"])

    def abort(self) -> None:
        """Stop without output (after a failure). Never raises."""
        if not self.active:
            return
        self.active = False
        try:
            self._agent.profile_abort(self.node).result(timeout=30)
        except Exception:  # noqa: BLE001 - cleanup after a failure must not mask it
            pass
