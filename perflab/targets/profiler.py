"""async-profiler in a target's JVM on the server host, seen from the coordinator: :class:`RemoteProfiler`.

It stands in for :class:`perflab.profiling.profiler.Profiler` in window mode (``prepare``,
``start_recording``, ``stop_window``, ``abort``): the recording is taken on the server host
(:class:`perflab.targets.base.TargetHost`), its JFR file comes back and is cut to the measured window here,
into the run directory.
"""

from __future__ import annotations

from pathlib import Path

from ..hosts.actors import answer
from ..profiling.codemap import BUILTIN, CodeMap
from ..profiling.profiler import window_recording
from .base import CALL_S


class RemoteProfiler:
    """async-profiler in a JVM on the server host (the server's, or node ``node``'s of a cluster), recording
    one window (see the module docstring)."""

    def __init__(
        self,
        hosts,
        params,
        out_dir: Path,
        title: str,
        name: str | None = None,
        node: int | None = None,
        code_map: CodeMap = BUILTIN,
    ):
        self.hosts = hosts
        self.pid: int | None = None
        self.params = params
        self.out_dir = Path(out_dir)
        self.title = title
        self.name = name or f"profile-{params.event.replace(',', '-')}"
        self.node = node
        self.code_map = code_map
        self.active = False

    @property
    def _agent(self):
        return self.hosts.server_agent

    def _on(self, call: str) -> str:
        return f"server host {self.hosts.server.name}: {call.replace('_', ' ')}"

    def prepare(self) -> RemoteProfiler:
        where = str(self.out_dir) if self.hosts.shares_files else None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.pid = answer(
            self._agent.profile_prepare(self.params, self.name, self.title, where, self.node),
            CALL_S,
            self._on("profile_prepare"),
        )
        return self

    def start_recording(self) -> RemoteProfiler:
        answer(self._agent.profile_start(self.node), CALL_S, self._on("profile_start"))
        self.active = True
        return self

    def stop_window(self, from_s: float, to_s: float):
        """The :class:`~perflab.profiling.profiler.Recording` of ``[from_s, to_s]`` (the server host's clock)."""
        if not (to_s > from_s):
            raise ValueError(f"to_s must be after from_s, got [{from_s}, {to_s}]")
        self.active = False
        got = answer(self._agent.profile_stop(not self.hosts.shares_files, self.node), CALL_S, self._on("profile_stop"))
        jfr = self.out_dir / got["jfr_name"]
        if got["jfr"] is not None:
            jfr.write_bytes(got["jfr"])
            (self.out_dir / f"{self.name}.log").write_text(got["log"])
        return window_recording(
            jfr,
            from_s,
            to_s,
            self.out_dir,
            self.name,
            self.params,
            self.title,
            self.pid,
            got["warnings"],
            got["recorded_events"],
            got["gc_recorded"],
            code_map=self.code_map,
        )

    def abort(self) -> None:
        """Stop without output (after a failure). Never raises."""
        if not self.active:
            return
        self.active = False
        try:
            answer(self._agent.profile_abort(self.node), 30, self._on("profile_abort"))
        except Exception:  # noqa: BLE001 - cleanup after a failure must not mask it
            pass
