"""The coordinator's handles on what runs on the server host: the server and its profiler.

:class:`RemoteServer` stands in for :class:`perflab.server.builtin.Server` in a session (``url``, ``pid``,
``java_version``, ``command``, ``info()``, ``stop()``); :class:`RemoteProfiler` for
:class:`perflab.profiling.profiler.Profiler` in window mode (``prepare``, ``start_recording``,
``stop_window``, ``abort``): the recording is taken on the server host, its JFR file comes back and is cut
to the measured window here, into the run directory.
"""

from __future__ import annotations

from pathlib import Path

#: seconds an agent call that should be quick may take
CALL_S = 120.0


class RemoteServer:
    """The server under test on the session's server host (``desc``: what its agent reported)."""

    def __init__(self, hosts, desc: dict):
        self.hosts = hosts
        self.desc = desc
        self._final: dict | None = None

    url = property(lambda self: self.desc["url"])
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


class RemoteProfiler:
    """async-profiler in the server host's JVM, recording one window (see the module docstring)."""

    def __init__(self, hosts, pid: int, params, out_dir: Path, title: str, name: str | None = None):
        self.hosts = hosts
        self.pid = pid
        self.params = params
        self.out_dir = Path(out_dir)
        self.title = title
        self.name = name or f"profile-{params.event.replace(',', '-')}"
        self.active = False

    @property
    def _agent(self):
        return self.hosts.server_agent

    def prepare(self) -> "RemoteProfiler":
        where = str(self.out_dir) if self.hosts.shares_files else None
        self._agent.profile_prepare(self.params, self.name, self.title, where).result(timeout=CALL_S)
        return self

    def start_recording(self) -> "RemoteProfiler":
        self._agent.profile_start().result(timeout=CALL_S)
        self.active = True
        return self

    def stop_window(self, from_s: float, to_s: float):
        """The :class:`~perflab.profiling.profiler.Recording` of ``[from_s, to_s]`` (the server host's clock)."""
        from ..profiling.profiler import window_recording

        if not (to_s > from_s):
            raise ValueError(f"to_s must be after from_s, got [{from_s}, {to_s}]")
        self.active = False
        got = self._agent.profile_stop(not self.hosts.shares_files).result(timeout=CALL_S)
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
            self._agent.profile_abort().result(timeout=30)
        except Exception:  # noqa: BLE001 - cleanup after a failure must not mask it
            pass
