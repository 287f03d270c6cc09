"""async-profiler attached to the running server through the in-process JVM (see :mod:`perflab.profiling.bridge`).

``Profiler(pid, ProfileParams(event="cpu"), out_dir)`` → ``start()`` at the beginning of the measured
window, ``stop()`` at its end → :class:`Profile` with the collapsed stacks (kept as text), the HTML
flame graph from async-profiler's converter, and the analysis of :mod:`perflab.profiling.flame`.

``cpu`` uses perf_events. When the agent cannot use them (containers, ``perf_event_paranoid``), the
profiler retries with ``itimer`` and issues a ``RuntimeWarning`` saying so (``fallback=False`` makes
it an error instead).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import bridge, flame

from .. import paths, procs
from ..config import ProfileParams
from ..errors import ProfilerError


@dataclass
class Profile:
    """One recorded profile (files plus lazily computed tables)."""

    event: str
    requested_event: str
    collapsed_path: Path
    html_path: Path | None
    started_at: float
    stopped_at: float
    warnings: list[str] = field(default_factory=list)
    _stacks: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def stacks(self) -> pd.DataFrame:
        """``stack, samples, thread`` (see :func:`perflab.profiling.flame.read_collapsed`)."""
        if self._stacks is None:
            self._stacks = flame.read_collapsed(self.collapsed_path) if self.collapsed_path.stat().st_size else \
                pd.DataFrame({"stack": pd.Series(dtype=str), "samples": pd.Series(dtype="int64"),
                              "thread": pd.Series(dtype=object)})
        return self._stacks

    @property
    def samples(self) -> int:
        return int(self.stacks["samples"].sum())

    @property
    def collapsed(self) -> str:
        return self.collapsed_path.read_text()

    @property
    def duration_s(self) -> float:
        return self.stopped_at - self.started_at

    def frames(self) -> pd.DataFrame:
        return flame.frames_table(self.stacks)

    def categories(self, by_thread: bool = False) -> pd.DataFrame:
        return flame.categorize(self.stacks, event=self.event, by_thread=by_thread)

    def threads(self) -> pd.DataFrame:
        return flame.threads_table(self.stacks)

    def top(self, n: int = 15, by: str = "self") -> pd.DataFrame:
        """The ``n`` frames with the largest ``self`` (or ``total``) share."""
        if by not in ("self", "total"):
            raise ValueError(f"by must be 'self' or 'total', got {by!r}")
        return self.frames().sort_values(by, ascending=False).head(n).reset_index(drop=True)

    def record(self) -> dict:
        return {"event": self.event, "requested_event": self.requested_event, "samples": self.samples,
                "duration_s": round(self.duration_s, 3), "collapsed": self.collapsed_path.name,
                "html": self.html_path.name if self.html_path else None, "warnings": self.warnings}


def perf_events_usable() -> bool:
    """Whether the kernel lets us use perf_events (root, or ``perf_event_paranoid`` <= 1)."""
    import os
    try:
        level = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip())
    except (OSError, ValueError):
        return False
    return os.geteuid() == 0 or level <= 1


class Profiler:
    """Controls async-profiler inside the JVM ``pid``. One session per target JVM at a time.

    ``out_dir``: where ``profile-<event>.collapsed``, ``.html`` and ``profiler-<event>.log`` go.
    ``name``: file stem (default ``profile-<event>``).
    """

    def __init__(self, pid: int, params: ProfileParams | None = None, out_dir: str | Path | None = None,
                 name: str | None = None, html: bool = True, title: str | None = None):
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            raise ValueError(f"pid must be a positive int, got {pid!r}")
        params = params or ProfileParams()
        if not isinstance(params, ProfileParams):
            raise ValueError(f"params must be a ProfileParams, got {type(params).__name__}")
        if out_dir is None:
            import tempfile
            out_dir = tempfile.mkdtemp(prefix="perflab-profile-")
        self.pid = pid
        self.params = params
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.name = name or f"profile-{params.event}"
        self.html = html
        self.title = title
        self.event: str | None = None
        self.active = False
        self.started_at = 0.0
        self.warnings: list[str] = []
        self.agent = paths.async_profiler_lib()

    @property
    def log_path(self) -> Path:
        return self.out_dir / f"{self.name}.log"

    def _cmd(self, options: str) -> None:
        try:
            bridge.load_agent(self.pid, self.agent, f"{options},log={self.log_path}")
        except ProfilerError as e:
            raise ProfilerError(e.cause, procs.tail(self.log_path, 20)) from None

    def prepare(self) -> "Profiler":
        """Start the in-process JVM and load the agent into the target now (a ``status`` command), so
        a later :meth:`start` is one quick attach: the first attach and the agent's initialization
        take up to a second, which would otherwise be cut from the start of the measured window."""
        bridge.start_jvm()
        self._cmd("status")
        return self

    def start(self) -> "Profiler":
        """Start recording. Raises :class:`ProfilerError` (cause + profiler log tail) on failure."""
        if self.active:
            raise RuntimeError("profiler already started")
        if procs.tail(self.log_path):
            self.log_path.unlink()
        ev = self.params.event
        if ev == "cpu" and not perf_events_usable():
            ev = self._fallback("perf_events are not permitted (perf_event_paranoid > 1 and not root)")
        try:
            self._cmd(self.params.agent_start_options(ev))
        except ProfilerError as e:
            if ev == "cpu" and "perf" in str(e).lower():
                ev = self._fallback(f"perf_events failed: {e.cause}")
                self._cmd(self.params.agent_start_options(ev))
            else:
                raise
        log = procs.tail(self.log_path, 50)
        if ev == "cpu" and ("perf_event" in log.lower() and "warn" in log.lower()):
            self.warnings.append("async-profiler: " + log.strip().splitlines()[-1])
        self.event = ev
        self.active = True
        self.started_at = time.time()
        return self

    def _fallback(self, why: str) -> str:
        if not self.params.fallback:
            raise ProfilerError(f"cpu profiling unavailable: {why} (set fallback=True to use itimer)")
        msg = f"cpu profiling: {why}; falling back to itimer (samples CPU time, without kernel stacks)"
        warnings.warn(msg, RuntimeWarning, stacklevel=3)
        self.warnings.append(msg)
        return "itimer"

    # --- window mode: record JFR around the load, keep exactly the measured window -------------
    def start_recording(self) -> "Profiler":
        """Start recording to JFR (``<name>.jfr``) before the load begins. :meth:`stop_window` then
        keeps exactly the measured window, whatever the attach latency on a busy machine."""
        if self.active:
            raise RuntimeError("profiler already started")
        ev = self.params.event
        if ev == "cpu" and not perf_events_usable():
            ev = self._fallback("perf_events are not permitted (perf_event_paranoid > 1 and not root)")
        self.jfr_path = self.out_dir / f"{self.name}.jfr"
        opts = self.params.agent_start_options(ev).replace(",threads", "") + f",jfr,file={self.jfr_path}"
        try:
            self._cmd(opts)
        except ProfilerError as e:
            if ev == "cpu" and "perf" in str(e).lower():
                ev = self._fallback(f"perf_events failed: {e.cause}")
                self._cmd(self.params.agent_start_options(ev).replace(",threads", "") + f",jfr,file={self.jfr_path}")
            else:
                raise
        self.event = ev
        self.active = True
        self.started_at = time.time()
        return self

    def stop_window(self, from_s: float, to_s: float) -> Profile:
        """Stop the JFR recording and convert only ``[from_s, to_s]`` (epoch seconds) to collapsed
        stacks (thread-split) and the HTML flame graph."""
        if not self.active:
            raise RuntimeError("profiler is not running")
        if not (to_s > from_s):
            raise ValueError(f"to_s must be after from_s, got [{from_s}, {to_s}]")
        try:
            self._cmd("stop")
        finally:
            self.active = False
        if not self.jfr_path.exists() or not self.jfr_path.stat().st_size:
            raise ProfilerError(f"async-profiler wrote no JFR to {self.jfr_path}", procs.tail(self.log_path))
        jfr_event = {"alloc": "alloc", "lock": "lock", "wall": "wall"}.get(self.event, "cpu")
        window = ["--from", str(int(from_s * 1000)), "--to", str(int(to_s * 1000))]
        filt = []
        for opt, pats in (("--include", self.params.include), ("--exclude", self.params.exclude)):
            for pat in pats:  # the agent's globs as the converter's regexes
                filt += [opt, ".*" + pat.replace("*", ".*") + ".*"]
        collapsed = self.out_dir / f"{self.name}.collapsed"
        bridge.jfr_convert(self.jfr_path, collapsed, event=jfr_event, threads=self.params.threads,
                           extra=window + filt)
        html = None
        if self.html and collapsed.stat().st_size:
            html = self.out_dir / f"{self.name}.html"
            bridge.collapsed_to_html(collapsed, html, title=self.title or f"{self.event} profile (pid {self.pid})")
        elif not collapsed.stat().st_size:
            self.warnings.append("the profile is empty (no samples in the window)")
        return Profile(event=self.event, requested_event=self.params.event, collapsed_path=collapsed, html_path=html,
                       started_at=from_s, stopped_at=to_s, warnings=list(self.warnings))

    def dump(self, path: str | Path | None = None) -> Path:
        """Write the samples collected so far (collapsed) without stopping."""
        if not self.active:
            raise RuntimeError("profiler is not running")
        out = Path(path) if path else self.out_dir / f"{self.name}-dump.collapsed"
        self._cmd(f"dump,collapsed,file={out}")
        return out

    def stop(self) -> Profile:
        """Stop recording, write the collapsed stacks and the HTML flame graph, return the :class:`Profile`."""
        if not self.active:
            raise RuntimeError("profiler is not running")
        collapsed = self.out_dir / f"{self.name}.collapsed"
        try:
            self._cmd(f"stop,collapsed,file={collapsed}")
        finally:
            self.active = False
        stopped = time.time()
        if not collapsed.exists():
            raise ProfilerError(f"async-profiler wrote no output to {collapsed}", procs.tail(self.log_path))
        html = None
        if self.html:
            html = self.out_dir / f"{self.name}.html"
            title = self.title or f"{self.event} profile (pid {self.pid})"
            if collapsed.stat().st_size:
                bridge.collapsed_to_html(collapsed, html, title=title)
            else:
                html = None
                self.warnings.append("the profile is empty (no samples in the window)")
        return Profile(event=self.event, requested_event=self.params.event, collapsed_path=collapsed, html_path=html,
                       started_at=self.started_at, stopped_at=stopped, warnings=list(self.warnings))

    def abort(self) -> None:
        """Stop without producing output (cleanup after a failure). Never raises."""
        if not self.active:
            return
        self.active = False
        try:
            bridge.load_agent(self.pid, self.agent, f"stop,log={self.log_path}")
        except Exception:
            pass

    def __enter__(self) -> "Profiler":
        return self.start()

    def __exit__(self, et, ev, tb):
        if et is not None:
            self.abort()
        return False


def profile_for(pid: int, seconds: float, params: ProfileParams | None = None, out_dir=None) -> Profile:
    """Profile JVM ``pid`` for ``seconds`` and return the :class:`Profile`."""
    if not (seconds > 0):
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    p = Profiler(pid, params, out_dir).start()
    try:
        time.sleep(seconds)
    except BaseException:
        p.abort()
        raise
    return p.stop()
