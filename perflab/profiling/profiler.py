"""async-profiler attached to the running server through the in-process JVM (see :mod:`perflab.profiling.bridge`).

The lab's way (window mode): ``Profiler(pid, ProfileParams(event="cpu,alloc,lock"), out_dir)`` →
``start_recording()`` before the load → ``stop_window(from, to)`` after it → a :class:`Recording`: one JFR
file holding every requested event and the JVM's GC pauses, cut to exactly the measured window when
converted (the attach latency of a busy machine cannot shift it), with a :class:`~perflab.profiling.profile.Profile` per event
(collapsed stacks, async-profiler's HTML flame graph, the analysis of :mod:`perflab.profiling.flame`), the
CPU heatmap, and flame graphs of any sub-windows (the latency spikes against the rest).

``start()``/``stop()`` (live mode) record one event straight to collapsed stacks.

``cpu`` uses perf_events. When the agent cannot use them (containers, ``perf_event_paranoid``), the
profiler retries with ``itimer`` and issues a ``RuntimeWarning`` saying so (``fallback=False`` makes
it an error instead).
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from .. import children, paths
from ..config import ProfileParams
from ..errors import ProfilerError
from . import bridge, flame, jfr_events
from .codemap import BUILTIN, CodeMap
from .profile import Profile


def perf_events_usable() -> bool:
    """Whether the kernel lets us use perf_events (root, or ``perf_event_paranoid`` <= 1)."""
    try:
        level = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip())
    except (OSError, ValueError):
        return False
    return os.geteuid() == 0 or level <= 1


class Profiler:
    """Controls async-profiler inside the JVM ``pid``. One session per target JVM at a time.

    ``out_dir``: where ``profile-<event>.collapsed``, ``.html`` and ``profiler-<event>.log`` go.
    ``name``: file stem (default ``profile-<event>``). ``code_map``: what is known of the JVM's code (default:
    the lab's own server), for the categories of the profiles it makes (with ``params.category`` added).
    """

    def __init__(
        self,
        pid: int,
        params: ProfileParams | None = None,
        out_dir: str | Path | None = None,
        name: str | None = None,
        html: bool = True,
        title: str | None = None,
        code_map: CodeMap = BUILTIN,
    ):
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
            raise ValueError(f"pid must be a positive int, got {pid!r}")
        params = params or ProfileParams()
        if not isinstance(params, ProfileParams):
            raise ValueError(f"params must be a ProfileParams, got {type(params).__name__}")
        if out_dir is None:
            out_dir = tempfile.mkdtemp(prefix="perflab-profile-")
        self.pid = pid
        self.params = params
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.name = name or f"profile-{params.event.replace(',', '-')}"
        self.html = html
        self.title = title
        self.code_map = code_map
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
            raise ProfilerError(e.cause, children.tail(self.log_path, 20)) from None

    def prepare(self) -> Profiler:
        """Start the in-process JVM and load the agent into the target now (a ``status`` command), so
        a later :meth:`start` is one quick attach: the first attach and the agent's initialization
        take up to a second, which would otherwise be cut from the start of the measured window."""
        bridge.start_jvm()
        self._cmd("status")
        return self

    def start(self) -> Profiler:
        """Start recording. Raises :class:`ProfilerError` (cause + profiler log tail) on failure."""
        if self.active:
            raise RuntimeError("profiler already started")
        if children.tail(self.log_path):
            self.log_path.unlink()
        if len(self.params.events) > 1:
            raise ValueError(
                f"params: start() records one event to collapsed stacks, got {self.params.event!r}; "
                "start_recording() records several in one JFR"
            )
        ev = self.params.event
        if ev == "cpu" and not perf_events_usable():
            ev = self._fallback("perf_events are not permitted (perf_event_paranoid > 1 and not root)")
        try:
            self._cmd(self.params.agent_start_options((ev,)))
        except ProfilerError as e:
            if ev == "cpu" and "perf" in str(e).lower():
                ev = self._fallback(f"perf_events failed: {e.cause}")
                self._cmd(self.params.agent_start_options((ev,)))
            else:
                raise
        log = children.tail(self.log_path, 50)
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
    def start_recording(self) -> Profiler:
        """Start recording every requested event (and, with ``params.gc``, the JVM's GC pauses) to one
        JFR file (``<name>.jfr``) before the load begins."""
        if self.active:
            raise RuntimeError("profiler already started")
        events = self.params.events
        if "cpu" in events and not perf_events_usable():
            events = self._swap_cpu(
                events, self._fallback("perf_events are not permitted (perf_event_paranoid > 1 and not root)")
            )
        self.jfr_path = self.out_dir / f"{self.name}.jfr"

        def options(evs, gc):
            o = self.params.agent_start_options(evs).replace(",threads", "") + f",jfr,file={self.jfr_path}"
            return o + (f",jfrsync={jfr_events.GC_SETTINGS}" if gc else "")

        gc = self.params.gc
        try:
            self._cmd(options(events, gc))
        except ProfilerError as e:
            if "cpu" in events and "perf" in str(e).lower():
                events = self._swap_cpu(events, self._fallback(f"perf_events failed: {e.cause}"))
            elif gc:
                gc = False  # a JVM without JFR: samples without its GC pauses
                self.warnings.append(f"GC pauses not recorded (JFR unavailable: {e.cause})")
            else:
                raise
            self._cmd(options(events, gc))
        self.recorded_events = events
        self.event = events[0]
        self.gc_recorded = gc
        self.active = True
        self.started_at = time.time()
        return self

    @staticmethod
    def _swap_cpu(events: tuple[str, ...], replacement: str) -> tuple[str, ...]:
        return tuple(replacement if e == "cpu" else e for e in events)

    def stop_window(self, from_s: float, to_s: float) -> Recording:
        """Stop the JFR recording and convert only ``[from_s, to_s]`` (epoch seconds): a
        :class:`Recording` with a :class:`Profile` per event, the heatmap and the GC pauses."""
        if not (to_s > from_s):
            raise ValueError(f"to_s must be after from_s, got [{from_s}, {to_s}]")
        self.stop_recording()
        return window_recording(
            self.jfr_path,
            from_s,
            to_s,
            self.out_dir,
            self.name,
            self.params,
            self.title,
            self.pid,
            self.warnings,
            self.recorded_events,
            self.gc_recorded,
            self.html,
            self.code_map,
        )

    def stop_recording(self) -> Path:
        """Stop the JFR recording started by :meth:`start_recording`; its file (the server host keeps it
        until the coordinator takes it: :class:`perflab.targets.base.TargetHost`)."""
        if not self.active:
            raise RuntimeError("profiler is not running")
        try:
            self._cmd("stop")
        finally:
            self.active = False
        if not self.jfr_path.exists() or not self.jfr_path.stat().st_size:
            raise ProfilerError(f"async-profiler wrote no JFR to {self.jfr_path}", children.tail(self.log_path))
        return self.jfr_path

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
            raise ProfilerError(f"async-profiler wrote no output to {collapsed}", children.tail(self.log_path))
        html = None
        if self.html:
            html = self.out_dir / f"{self.name}.html"
            title = self.title or f"{self.event} profile (pid {self.pid})"
            if collapsed.stat().st_size:
                bridge.collapsed_to_html(collapsed, html, title=title)
            else:
                html = None
                self.warnings.append("the profile is empty (no samples in the window)")
        return Profile(
            event=self.event,
            requested_event=self.params.event,
            collapsed_path=collapsed,
            html_path=html,
            started_at=self.started_at,
            stopped_at=stopped,
            warnings=list(self.warnings),
            code_map=self.code_map.with_categories(self.params.categories),
        )

    def abort(self) -> None:
        """Stop without producing output (cleanup after a failure). Never raises."""
        if not self.active:
            return
        self.active = False
        try:
            bridge.load_agent(self.pid, self.agent, f"stop,log={self.log_path}")
        except Exception:
            pass

    def __enter__(self) -> Profiler:
        return self.start()

    def __exit__(self, et, ev, tb):
        if et is not None:
            self.abort()
        return False


def window_recording(
    jfr_path: Path,
    from_s: float,
    to_s: float,
    out_dir: Path,
    name: str,
    params: ProfileParams,
    title: str | None,
    pid: int,
    warnings_: list[str],
    recorded_events,
    gc_recorded: bool,
    html: bool = True,
    code_map: CodeMap = BUILTIN,
) -> Recording:
    """The :class:`Recording` of ``[from_s, to_s]`` cut from a stopped JFR recording ``jfr_path`` (taken on
    the server's host; converted wherever the file now is). ``code_map``: what is known of the profiled
    server's code (``params.category`` is added to it)."""
    rec = Recording(
        Path(jfr_path),
        from_s,
        to_s,
        Path(out_dir),
        name,
        params,
        title,
        pid,
        list(warnings_),
        code_map=code_map.with_categories(params.categories),
    )
    for ev in recorded_events:
        rec.profiles[ev] = rec.convert(
            ev, [(from_s, to_s)], f"{name}-{ev}" if len(recorded_events) > 1 else name, html=html
        )
    rec.requested = params.event
    if "cpu" in recorded_events or "itimer" in recorded_events:
        heat = Path(out_dir) / f"{name}-heatmap.html"
        try:
            bridge.jfr_convert(rec.jfr_path, heat, event="cpu", fmt="heatmap", extra=_window_args(from_s, to_s))
            rec.heatmap_path = heat
        except Exception as e:  # noqa: BLE001 - a heatmap is an extra; the flame graphs stand without it
            rec.warnings.append(f"no heatmap: {e}")
    if gc_recorded:
        rec.gc_events = [e for e in jfr_events.gc_pauses(rec.jfr_path) if from_s * 1e6 <= e["ts_us"] <= to_s * 1e6]
    return rec


def _window_args(from_s: float, to_s: float) -> list[str]:
    return ["--from", str(int(from_s * 1000)), "--to", str(int(to_s * 1000))]


#: the converter's option for each recorded event
_JFR_EVENT = {"cpu": "cpu", "itimer": "cpu", "ctimer": "cpu", "wall": "wall", "alloc": "alloc", "lock": "lock"}


@dataclass
class Recording:
    """One JFR recording of a measured window: ``profiles`` (event -> :class:`Profile`), the CPU
    ``heatmap_path`` (async-profiler's heatmap), ``gc_events`` (the JVM's GC pauses in the server-event
    shape of :mod:`perflab.timeline.events`), and flame graphs of sub-windows (:meth:`window_profile`,
    :meth:`spike_diff`) from the same file. ``code_map``: what its profiles are categorized with (the user's
    categories included)."""

    jfr_path: Path
    started_at: float
    stopped_at: float
    out_dir: Path
    name: str
    params: ProfileParams
    title: str | None
    pid: int
    warnings: list[str] = field(default_factory=list)
    profiles: dict = field(default_factory=dict)
    heatmap_path: Path | None = None
    gc_events: list = field(default_factory=list)
    requested: str = ""
    code_map: CodeMap = BUILTIN

    @property
    def primary(self) -> Profile:
        return next(iter(self.profiles.values()))

    def convert(self, event: str, windows: list[tuple[float, float]], name: str, html: bool = True) -> Profile:
        """A :class:`Profile` of ``event`` over ``windows`` (epoch-second pairs, summed)."""
        jev = _JFR_EVENT[event]
        filt = []
        for opt, pats in (("--include", self.params.include), ("--exclude", self.params.exclude)):
            for pat in pats:  # the agent's globs as the converter's regexes
                filt += [opt, ".*" + pat.replace("*", ".*") + ".*"]
        collapsed = self.out_dir / f"{name}.collapsed"
        parts = []
        for i, (a, b) in enumerate(windows):
            target = collapsed if len(windows) == 1 else self.out_dir / f".{name}.{i}.collapsed"
            bridge.jfr_convert(
                self.jfr_path, target, event=jev, threads=self.params.threads, extra=_window_args(a, b) + filt
            )
            parts.append(target)
        if len(parts) > 1:
            stacks = [flame.read_collapsed(p) for p in parts if p.stat().st_size]
            flame.write_collapsed(
                flame.merge_collapsed(*stacks) if stacks else flame.read_collapsed(parts[0]), collapsed
            )
            for p in parts:
                p.unlink()
        warns = list(self.warnings)
        path = None
        if html and collapsed.stat().st_size:
            path = self.out_dir / f"{name}.html"
            bridge.collapsed_to_html(
                collapsed, path, title=self.title and f"{self.title} ({event})" or f"{event} profile (pid {self.pid})"
            )
        elif not collapsed.stat().st_size:
            warns.append(f"the {event} profile is empty (no samples in the window)")
        return Profile(
            event=event,
            requested_event=self.requested or self.params.event,
            collapsed_path=collapsed,
            html_path=path,
            started_at=windows[0][0],
            stopped_at=windows[-1][1],
            warnings=warns,
            code_map=self.code_map,
        )

    def window_profile(self, windows: list[tuple[float, float]], name: str, event: str | None = None) -> Profile:
        """The flame graph of just ``windows`` (e.g. the latency spikes), from the same recording."""
        return self.convert(event or self.primary.event, windows, name)

    def spike_diff(self, windows: list[tuple[float, float]], event: str | None = None) -> dict | None:
        """Flame graphs of ``windows`` (the spikes), of the rest of the measured window, and async-profiler's
        differential flame graph of the spikes against the rest; ``None`` without windows or samples."""
        if not windows:
            return None
        ev = event or self.primary.event
        spikes = self.window_profile(windows, f"{self.name}-{ev}-spikes", ev)
        whole = (
            flame.read_collapsed(self.profiles[ev].collapsed_path)
            if self.profiles[ev].collapsed_path.stat().st_size
            else None
        )
        if whole is None or not spikes.collapsed_path.stat().st_size:
            return None
        # the rest: every sample of the window that is not in a spike
        sp = flame.read_collapsed(spikes.collapsed_path).set_index("stack")["samples"]
        rest = whole.set_index("stack")["samples"].sub(sp, fill_value=0)
        rest = rest[rest > 0]
        rest_path = self.out_dir / f"{self.name}-{ev}-rest.collapsed"
        rest_path.write_text("".join(f"{s} {int(n)}\n" for s, n in rest.items()))
        if not rest_path.stat().st_size:
            return None
        diff = self.out_dir / f"{self.name}-{ev}-spikes-diff.html"
        bridge.diff_html(
            rest_path, spikes.collapsed_path, diff, title=f"{ev}: latency spikes against the rest of the window"
        )
        return {"spikes": spikes, "rest_collapsed": rest_path, "diff_html": diff, "windows": list(windows)}


def profile_for(
    pid: int, seconds: float, params: ProfileParams | None = None, out_dir=None, code_map: CodeMap = BUILTIN
) -> Profile:
    """Profile JVM ``pid`` for ``seconds`` and return the :class:`Profile` (categorized with ``code_map``)."""
    if not (seconds > 0):
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    p = Profiler(pid, params, out_dir, code_map=code_map).start()
    try:
        time.sleep(seconds)
    except BaseException:
        p.abort()
        raise
    return p.stop()
