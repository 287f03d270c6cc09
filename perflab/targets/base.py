"""What can be measured: one protocol for the built-in server, your server and a cluster of either.

A target has three sides, each a class of its own:

* :class:`Target`, on the coordinator: *what* is measured (the user's configuration), what it can do
  (:meth:`Target.why_not`: the one place that says "only the built-in server can be prefilled"), the checks
  a run makes before anything starts (:meth:`Target.check_load`), and how the run records it.
* :class:`TargetHost`, on the server host (a Dask actor, :class:`perflab.hosts.actors.Agent`): its storage
  and prefill, its processes started and stopped, their ``/v0/stats`` and ``/proc`` samplers, logs and
  events, async-profiler recordings, the fill through the HTTP API, and what only a cluster does (faults,
  the consistency checker, the key distribution: :class:`perflab.targets.cluster.ClusterHost`).
* :class:`TargetHandle`, on the coordinator: the typed handle on the running :class:`TargetHost`, one remote
  call per method, so a reader follows a call to its definition.

:func:`perflab.targets.target_of` turns what a user passes (a ``ServerConfig``, a ``ForeignServer``, a URL,
a ``ClusterConfig``, a running ``Cluster``) into its :class:`Target`; the session knows nothing else.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import ClassVar

import pandas as pd

from .. import hostspeed
from ..children import pdeathsig_prefix
from ..config import LoadParams, PrefillParams
from ..hosts.actors import WATCHDOG_S, Agent, answer
from ..profiling import bridge
from ..profiling.codemap import CodeMap
from ..profiling.profiler import Profiler
from ..server import machine
from ..server import metrics as m
from ..server.builtin import READY_S
from ..server.counters import stats_frame

#: seconds a remote call that should be quick may take
CALL_S = 120.0


class Around:
    """What a run does around its measured window besides the load (:func:`perflab.core.window.measure` calls each
    hook at its step, with the session's handle): for one server, nothing, and its events are its own (the
    window reads its ``server-events.jsonl`` and the JVM's GC pauses). A cluster's run starts faults and a checker
    on the window (:class:`perflab.targets.cluster.FaultsAndChecker`)."""

    #: the load starts at a time set ahead (``True``), or whenever the tool takes one (``None``)
    timed: bool | None = None

    def started(self, handle, lp) -> None:
        """The load started (its ``window_start`` is known when timed)."""

    def stopped(self, handle, res) -> None:
        """The load ended; the profiles are not cut yet."""

    def settled(self, handle) -> None:
        """The profiles are cut; nothing the run started around the window may go on."""

    def sampled(self, handle, t0: float) -> None:
        """The target's ``/v0/stats`` samples were taken (``t0``: the window's start)."""

    def events(self, handle, load_started: float, t0: float, end: float) -> pd.DataFrame | None:
        """The events of the window on its axis (0 = ``t0``); ``None``: the one server's own, which the window
        reads."""
        return None


class Target:
    """What a run measures (see the module docstring); subclasses say what they are and can do."""

    #: what a run records as its ``target``: ``built-in``, ``foreign`` or ``cluster``
    kind: ClassVar[str]
    #: the class that runs it on the server host
    host_class: ClassVar[type]
    #: the /v0/stats columns a run's index keeps of it (the rest stay in stats.csv)
    stats_indexed: ClassVar[tuple[str, ...]] = (
        "t_s",
        m.QUEUE_DEPTH,
        m.REJECTED + "_delta",
        m.FLUSHES + "_delta",
        m.COMPACTIONS + "_delta",
        m.GC_MS + "_delta",
        "requests_total_delta",
        m.MEMTABLE_BYTES,
        m.SSTABLES,
    )

    #: the commit it was built from (a :class:`~perflab.commits.Commit`'s), else ``None``
    commit: str | None = None

    def __init__(self, config):
        self.config = config

    # --- what it is ----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """Measured but not started by perflab (a URL, a started cluster): never placed nor restarted."""
        return False

    @property
    def mode(self) -> str:
        """Its request handling mode, as run names say it."""
        return self.config.mode

    @property
    def needs_data_dir(self) -> bool:
        """Whether the session makes it a storage directory."""
        return False

    @property
    def backend(self) -> str | None:
        return None

    @property
    def entry_count(self) -> int:
        """How many entries a load is split over (one server: 1; a cluster: its entry nodes)."""
        return 1

    @property
    def prefills(self) -> bool:
        """Whether GETs get their data by a prefill (the built-in server's storage written in-process before it
        starts) rather than by a fill through its API."""
        return False

    @property
    def status_path(self) -> str | None:
        """Its no-op endpoint, which answers 200 at once (a ceiling search loads it); ``None`` when it has none
        it declares."""
        return None

    def version_commit(self) -> str | None:
        """The commit of the server it runs, when it can be known (a run's ``version_commit``)."""
        return None

    @property
    def start_s(self) -> float:
        """Seconds the coordinator waits for the server host to start it: the host's own bound on its
        readiness (it fails past it, with the cause) and a call's."""
        return CALL_S + (getattr(self.config, "startup_timeout", None) or READY_S)

    def prepare_s(self, prefill: PrefillParams | None) -> float:
        """Seconds the coordinator waits for the server host to make its storage (and prefill it: at a
        thousandth of the in-process writes' speed here)."""
        return CALL_S + (prefill.keys / 1000 if prefill is not None else 0)

    def to_dict(self) -> dict:
        """What a run records as ``params.server``."""
        return self.config.to_dict()

    # --- what it can do ----------------------------------------------------------------------------
    def why_not(self, feature: str) -> str | None:
        """``None`` when the target supports ``feature`` (``prefill``, ``restart``, ``placement``,
        ``pause``, ``remote``: measured on hosts other than this machine, ``faults``: a cluster run's faults,
        checker and key distribution, ``side``: a side of an interleaved comparison), else why not, in words that
        name the alternative."""
        if feature == "faults":
            return (
                "faults, the consistency checker and the key distribution are a cluster's (a ClusterConfig, --nodes N)"
            )
        if feature in ("restart", "placement") and self.running:
            return "a server that is already running (url, a started cluster) cannot be " + (
                "restarted"
                if feature == "restart"
                else "placed; use 'shared', or a command (--server-cmd) or configuration that perflab starts"
            )
        return None

    def require(self, feature: str) -> None:
        """``ValueError`` naming ``feature`` and why, when the target does not support it."""
        why = self.why_not(feature)
        if why is not None:
            raise ValueError(f"{feature}: {why}")

    def check_prefill(self, prefill: PrefillParams | None) -> None:
        if prefill is None:
            return
        if not isinstance(prefill, PrefillParams):
            raise ValueError(f"prefill must be a PrefillParams, got {type(prefill).__name__}")
        self.require("prefill")

    # --- the load --------------------------------------------------------------------------------
    def load_for(self, load: LoadParams) -> LoadParams:
        """``load`` as it is sent to this target (a cluster adds its ack/from)."""
        return load

    # --- what a run reads and records -------------------------------------------------------------
    def stats_frame(self, samples, t0: float | None = None) -> pd.DataFrame:
        """The host's ``/v0/stats`` samples as the stats frame."""
        return stats_frame(samples, t0)

    def record(self, handle: TargetHandle) -> tuple[dict, dict]:
        """What the run records about it (``meta.json`` fields) and its artifacts."""
        raise NotImplementedError

    def code_map(self, ready: dict | None) -> CodeMap:
        """What is known of its code, for its profiles' categories: what its ``ready`` line says (a course
        server's Dao classes and packages), else found automatically (:mod:`perflab.profiling.codemap`)."""
        return CodeMap.from_ready(ready)

    def handle(self, hosts, desc: dict) -> TargetHandle:
        return TargetHandle(hosts, self, desc)

    def __repr__(self):
        return f"<{type(self).__name__} {self.config!r}>"


class TargetHost(Agent):
    """The target of a run on the server host (see the module docstring): its storage, then its processes,
    which this actor starts, samples, profiles and stops. Subclasses implement :meth:`_start`, :meth:`_stop`
    and what they sample."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        super().__init__(name, watchdog_s)
        self.target: Target | None = None
        self.profilers: dict = {}
        self.data_dir: Path | None = None
        self.log_dir: Path | None = None
        self._scratch: Path | None = None
        self._prefill: PrefillParams | None = None
        self.cpu_prefix: list[str] = []
        self.stats_interval = 1.0
        self.listen: str | None = None
        self.cpu = None  # the processes' CPU sampler (perflab.server.cpu.ProcessCpu), once started

    # --- storage ------------------------------------------------------------------------------------
    def prepare(
        self,
        target: Target,
        log_dir: str | None,
        data_dir: str | None,
        scratch: str | None,
        prefill: PrefillParams | None = None,
    ) -> dict:
        """The ``target`` this host runs (handed over in a call, not when the actor is made: a running
        cluster lives in the coordinator's process and cannot be serialized into a task), where its logs go
        (``log_dir``: the run directory when the coordinator shares this host's files, else a temporary one)
        and its storage: ``data_dir`` as given, else a fresh ``scratch`` directory (deleted by
        :meth:`close`), prefilled with ``prefill``."""
        self.heard()
        self.target = target
        self.log_dir = Path(log_dir) if log_dir else self.tmp / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        out: dict = {"data_dir": None, "prefill": None}
        if self.target.needs_data_dir:
            if data_dir is not None:
                self.data_dir = Path(data_dir)
            else:
                self._scratch = Path(scratch) if scratch else self.tmp / "scratch"
                self.data_dir = self._scratch / "db"
            self.data_dir.mkdir(parents=True, exist_ok=True)
            out["data_dir"] = str(self.data_dir)
        self._prefill = prefill
        if prefill is not None:
            out["prefill"] = self._prefill_storage()
        self.heard()
        return out

    def _prefill_storage(self) -> dict:
        p, t = self._prefill, time.monotonic()
        res = bridge.prefill(self.data_dir, p.keys, p.value_size, p.seed, p.key_prefix, backend=self.target.backend)
        res["wall_s"] = round(time.monotonic() - t, 3)
        return res

    def reset_storage(self) -> dict:
        """The storage as :meth:`prepare` made it, for a fresh start (call it while the target is stopped): the
        session's scratch directory emptied and prefilled again. ``storage`` says what a fresh start begins on:
        ``fresh``, or why not (a directory you gave is never emptied; a command without ``{dir}`` keeps its
        own)."""
        self.heard()
        out: dict = {"storage": "fresh", "prefill": None}
        if self.data_dir is not None and self._scratch is None:
            out["storage"] = f"the data directory given ({self.data_dir}), kept as the search left it"
        elif self.data_dir is None and self.target.kind == "foreign" and not self.target.running:
            out["storage"] = "your command's own (it names no {dir}), kept as the search left it"
        elif self.data_dir is not None:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir.mkdir(parents=True, exist_ok=True)
            if self._prefill is not None:
                out["prefill"] = self._prefill_storage()
        self.heard()
        return out

    # --- the processes -------------------------------------------------------------------------------
    def start(self, cpu_prefix: list[str] | None, stats_interval: float, listen: str | None = None) -> dict:
        """Start the target (again, after :meth:`stop`: the same one, on the same storage) and its samplers;
        what the coordinator records about it. ``listen``: the address to listen on when the generators
        run on other hosts (``None``: the server's default)."""
        self.heard()
        self.cpu_prefix = [*(cpu_prefix or []), *pdeathsig_prefix()]
        self.stats_interval, self.listen = stats_interval, listen
        with self.abortable():  # a readiness wait of up to its startup timeout
            desc = self._start()
        self.heard()
        return desc

    def _start(self) -> dict:
        raise NotImplementedError

    def stop(self) -> dict | None:
        """Stop the samplers and the processes; the final record (``None`` if none ran)."""
        raise NotImplementedError

    def samples(self):
        """Every ``/v0/stats`` sample so far (read by :meth:`Target.stats_frame`)."""
        raise NotImplementedError

    def cpu_window(self, start: float, end: float):
        """The target's and this machine's CPU over ``[start, end]`` (this host's clock)."""
        raise NotImplementedError

    def cpu_frame(self, t0: float | None):
        """Each process's cores and RSS over time (:meth:`perflab.server.cpu.ProcessCpu.frame`)."""
        raise NotImplementedError

    def cpu_at(self, times: list[float], ours: list[int]) -> None:
        """Sample the target's CPU at each of ``times`` too (a window's edges known ahead: this host's clock;
        :meth:`perflab.server.cpu.ProcessCpu.at`), and every process's, ``ours`` being the run's own."""
        raise NotImplementedError

    def files(self) -> dict[str, str]:
        """Logs and event lines so far, by their path in the run directory."""
        raise NotImplementedError

    def pid_of(self, node: int | None = None) -> int | None:
        """The process async-profiler attaches to (a cluster's node ``node``)."""
        raise NotImplementedError

    def calibrate(self):
        """The machine's own speed (:mod:`perflab.hostspeed`), timed here, while the server idles."""
        self.heard()
        return hostspeed.calibrate()

    def others(self, seconds: float, ours: list[int]) -> machine.OtherLoad:
        """Other programs' CPU on this host over the next ``seconds`` (:mod:`perflab.server.machine`; ``ours``:
        more processes of the run's own): call it while no load runs."""
        self.heard()
        return self.cpu.idle_others(seconds, ours) if self.cpu is not None else machine.measure(seconds, ours)

    # --- async-profiler: one recording per slot (the server, or each node of a cluster) -----------------
    def profile_prepare(
        self, params, name: str, title: str, out_dir: str | None = None, node: int | None = None
    ) -> int:
        """Attach to the target's process (a cluster's node ``node``); returns its pid."""
        self.heard()
        pid = self.pid_of(node)
        d = Path(out_dir) if out_dir else self.tmp / "profile" / str(node if node is not None else "server")
        self.profilers[node] = Profiler(pid, params, out_dir=d, name=name, title=title).prepare()
        return pid

    def profile_start(self, node: int | None = None) -> float:
        self.heard()
        p = self.profilers[node]
        p.start_recording()
        return p.started_at

    def profile_stop(self, contents: bool = True, node: int | None = None) -> dict:
        """Stop the JFR recording; what the coordinator needs to cut the window (the file's bytes, unless
        the coordinator shares this host's files)."""
        self.heard()
        p = self.profilers.pop(node)
        try:
            p.stop_recording()
        except BaseException:
            p.abort()  # a node killed in the window took its JVM with it: nothing of this recording is left
            raise
        out = {
            "jfr_name": p.jfr_path.name,
            "started_at": p.started_at,
            "warnings": list(p.warnings),
            "recorded_events": tuple(p.recorded_events),
            "gc_recorded": p.gc_recorded,
            "log": p.log_path.read_text(errors="replace") if p.log_path.is_file() else "",
            "jfr": None,
        }
        if contents:
            out["jfr"] = p.jfr_path.read_bytes()
        return out

    def profile_abort(self, node: int | None = None) -> None:
        p = self.profilers.pop(node, None)
        if p is not None:
            p.abort()

    def _abort_profiles(self) -> None:
        for node in list(self.profilers):
            self.profile_abort(node)

    # --- the end --------------------------------------------------------------------------------------
    def _expire(self):
        self._abort_profiles()
        self.stop()
        super()._expire()

    def close(self, keep_data: bool = False) -> None:
        """Stop everything; delete the scratch storage (unless ``keep_data``) and the temporary files."""
        self._abort_profiles()
        self.stop()
        if self._scratch is not None and not keep_data:
            shutil.rmtree(self._scratch, ignore_errors=True)
        super().close()


class TargetHandle:
    """The coordinator's handle on the target running on the session's server host (``desc``: what its
    host reported when it started). Every method is one call to :class:`TargetHost`."""

    def __init__(self, hosts, target: Target, desc: dict):
        self.hosts = hosts
        self.target = target
        self.desc = desc
        self._final: dict | None = None

    @property
    def _host(self):
        return self.hosts.server_agent

    def _on(self, call: str) -> str:
        """A call named in the error of a host that did not answer it in time (:func:`~perflab.hosts.actors.answer`)."""
        return f"server host {self.hosts.server.name}: {call.replace('_', ' ')}"

    url = property(lambda self: self.desc["url"])
    #: where loads go: entry name -> URL (one server: itself)
    entries = property(lambda self: {"server": self.desc["url"]})
    pid = property(lambda self: self.desc["pid"])
    java_version = property(lambda self: self.desc["java_version"])
    command = property(lambda self: self.desc["command"])
    effective_config = property(lambda self: self.desc["effective_config"])
    ready = property(lambda self: self.desc["ready"])
    jvm = property(lambda self: self.desc["jvm"])
    started_at = property(lambda self: self.desc["started_at"])

    @property
    def runs_jvm(self) -> bool:
        """Whether the target is a JVM (its processes report a Java version): it has a JIT to warm up."""
        return bool(self.java_version)

    @property
    def profiling_unavailable(self) -> str | None:
        """Why async-profiler cannot attach to it (``None``: it can)."""
        return self.desc["profiling_unavailable"]

    def profiling_unavailable_on(self, node: int | None) -> str | None:
        """Why async-profiler cannot attach to ``node`` (``None``: the one server)."""
        if node is not None:
            raise ValueError(f"node: a single server has no node {node}")
        return self.profiling_unavailable

    @property
    def stats_unavailable(self) -> str | None:
        return self.desc["stats_unavailable"]

    def info(self) -> dict:
        return self._final if self._final is not None else self.desc["info"]

    def stop(self) -> None:
        self._final = answer(self._host.stop(), CALL_S, self._on("stop")) or self.desc["info"]

    def reset_storage(self, timeout: float) -> dict:
        return answer(self._host.reset_storage(), timeout, self._on("reset_storage"))

    def samples(self, timeout: float = CALL_S):
        return answer(self._host.samples(), timeout, self._on("samples"))

    def cpu_window(self, start: float, end: float):
        return answer(self._host.cpu_window(start, end), CALL_S, self._on("cpu_window"))

    def cpu_frame(self, t0: float | None) -> pd.DataFrame | None:
        return answer(self._host.cpu_frame(t0), CALL_S, self._on("cpu_frame"))

    def cpu_at(self, times: list[float], ours: list[int]) -> None:
        answer(self._host.cpu_at(list(times), list(ours)), CALL_S, self._on("cpu_at"))

    def files(self) -> dict[str, str]:
        return answer(self._host.files(), CALL_S, self._on("files"))

    def calibrate(self):
        return answer(self._host.calibrate(), CALL_S, self._on("calibrate"))

    def others(self, seconds: float, ours: list[int]) -> machine.OtherLoad:
        return answer(self._host.others(seconds, list(ours)), CALL_S + seconds, self._on("others"))

    def load_for(self, load: LoadParams) -> LoadParams:
        return self.target.load_for(load)

    def stats_frame(self, samples, t0: float | None = None) -> pd.DataFrame:
        return self.target.stats_frame(samples, t0)

    def record(self) -> tuple[dict, dict]:
        return self.target.record(self)

    @property
    def code_map(self) -> CodeMap:
        return self.target.code_map(self.ready)
