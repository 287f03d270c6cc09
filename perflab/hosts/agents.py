"""What runs on a host: Dask actors that own the processes started there and hand back data, not paths.

* :class:`GeneratorAgent` (on a generator host): the perflab-load segments of one load (one, or one per
  entry node of a cluster); their ready lines, exits, and files' contents (JSON summary, hdr log, console,
  stderr).
* :class:`ServerAgent` (on the server host): the target of the run (one server: built-in, your command, or
  one already running; or a cluster's N nodes), its data directory and prefill, ``/v0/stats`` samples,
  ``/proc`` CPU, timed events, the machine's speed, async-profiler's JFR recordings, and freezing
  the server (an A/B comparison's idle cost).

The coordinator (:mod:`perflab.hosts.hostset`) drives them. Only the coordinator writes ``data/``: an
agent works in a temporary directory of its host and returns what it recorded; the in-process agent of
the one-machine cluster is handed the run directory itself (same files, no copies). Every process an
agent starts dies with its worker (``setpriv --pdeathsig KILL``), and an agent whose coordinator has not
been heard from for :data:`WATCHDOG_S` stops its processes: no orphan on any host, even when the
coordinator is killed or cut off.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from .. import children
from ..children import pdeathsig_prefix

#: an agent that hears nothing from its coordinator for this long stops what it runs
WATCHDOG_S = 60.0
#: the generator's ready line on stderr (docs/architecture.md section 5)
READY_LINE = "perflab-load: ready"


def host_facts() -> dict:
    """What a host is: name, CPUs, versions of perflab, perflab-load and the JDK, its boot id (two workers
    with one boot id share one machine's CPUs) and its clock."""
    return {**_static_facts(), "time": time.time()}


@functools.lru_cache(maxsize=1)
def _static_facts() -> dict:
    # asked at every session's start: the versions (two subprocesses) are read once per worker process
    import platform
    import sys

    from .. import __version__, paths
    from ..measure.generator import LoadTool
    from ..records.environment import java_version

    try:
        loadgen = LoadTool("perflab-load", paths.loadgen_binary()).version()
        loadgen = loadgen.split(" (")[0] if loadgen else loadgen
    except Exception as e:  # noqa: BLE001 - a host without the generator is a fact to report
        loadgen = None
        loadgen_error = str(e).splitlines()[0]
    else:
        loadgen_error = None
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        boot = None
    import distributed

    return {"hostname": platform.node(), "cpus": os.cpu_count(), "pid": os.getpid(), "boot_id": boot,
            "versions": {"perflab": __version__, "perflab-load": loadgen, "java": java_version(),
                         "python": sys.version.split()[0], "distributed": distributed.__version__},
            "perflab_load_error": loadgen_error, "repo": str(paths.repo_root())}


class Agent:
    """Heartbeat and watchdog shared by both agents; ``touch`` is also one clock sample."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        self.name = name
        self.watchdog_s = watchdog_s
        self._heard = time.monotonic()
        self._closed = threading.Event()
        self._tmp = Path(tempfile.mkdtemp(prefix=f"perflab-{type(self).__name__.lower()}-"))
        threading.Thread(target=self._watch, name=f"perflab-watchdog-{name}", daemon=True).start()

    async def touch(self) -> float:
        """The coordinator is alive; returns this host's clock (epoch seconds)."""
        self._heard = time.monotonic()
        return time.time()

    def _watch(self):
        while not self._closed.wait(1.0):
            if time.monotonic() - self._heard > self.watchdog_s:
                self._expire()
                return

    def _expire(self):  # the coordinator is gone: stop everything this agent started
        self.close()

    def close(self) -> None:
        self._closed.set()
        shutil.rmtree(self._tmp, ignore_errors=True)


class GeneratorAgent(Agent):
    """The perflab-load processes of one load on a generator host: one per *part* (one part; or, for a load
    sent to several entry nodes of a cluster, one per entry node), each its own segment of one schedule."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        super().__init__(name, watchdog_s)
        self.parts: dict[int, tuple] = {}     # part -> (LoadProcess, its output directory, made here)

    def start(self, url: str, params, extra: list[str], out_dir: str | None = None,
              cpu_prefix: list[str] | None = None, part: int = 0) -> dict:
        """Start part ``part`` (perflab-load against ``url``; ``params``: the whole run's LoadParams,
        ``extra``: ``--segment``/``--start-at``) writing into ``out_dir`` (a directory of this host; default
        a fresh temporary one)."""
        from ..measure.generator import LoadProcess

        if part in self.parts and self.parts[part][0].poll() is None:
            raise RuntimeError(f"{self.name}: part {part} of a load is already running")
        self._heard = time.monotonic()
        own = out_dir is None
        d = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="load-", dir=self._tmp))
        lp = LoadProcess(url, _local_script(params), d, [*(cpu_prefix or []), *pdeathsig_prefix()], extra=extra)
        self.parts[part] = (lp, d, own)
        lp.start()
        return {"command": lp.command, "pid": lp.proc.pid, "started_at": lp.started_at}

    async def state(self) -> dict:
        """Per part: ``ready`` (its ready line is on stderr), ``rc`` (exit status, ``None`` while it runs);
        and the host's clock. Cheap: the coordinator polls it, which also keeps the watchdog quiet."""
        self._heard = time.monotonic()
        from ..measure.result import STDERR

        out = {}
        for part, (lp, d, _) in list(self.parts.items()):
            try:
                ready = READY_LINE in (d / STDERR).read_text(errors="replace")
            except OSError:
                ready = False
            out[part] = {"ready": ready, "rc": lp.poll()}
        return {"parts": out, "time": time.time()}

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGINT (perflab-load writes what it has), then SIGKILL of its group after ``grace_s``."""
        for lp, _, _ in list(self.parts.values()):
            lp.stop(grace_s)

    def collect(self, contents: bool = True) -> dict:
        """Once they have exited, per part: its exit status, start and end, and (``contents``) its files'
        text."""
        from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY

        if not self.parts:
            raise RuntimeError(f"{self.name}: no load was started")
        out = {}
        for part, (lp, d, own) in self.parts.items():
            rc = lp.proc.wait(timeout=30)
            children.unregister(lp.proc)
            lp._close()
            got = {"rc": rc, "command": lp.command, "started_at": lp.started_at, "ended_at": time.time(), "files": {}}
            if contents:
                for f in (CONSOLE, STDERR, SUMMARY, HDR_LOG):
                    if (d / f).is_file():
                        got["files"][f] = (d / f).read_text(errors="replace")
            if own:
                shutil.rmtree(d, ignore_errors=True)
            out[part] = got
        self.parts = {}
        return out

    def _expire(self):
        self.stop(1.0)
        super()._expire()

    def close(self) -> None:
        self.stop(1.0)
        super().close()


def _local_script(params):
    """The script as a path on this host: a script inside the coordinator's checkout is looked up in this
    host's checkout (``wrk-scripts/...``), anything else must exist at the same path."""
    from .. import paths

    if not params.script:
        return params
    p = Path(params.script)
    if p.is_file():
        return params
    parts = p.parts
    if "wrk-scripts" in parts:
        mine = paths.wrk_scripts_dir().joinpath(*parts[parts.index("wrk-scripts") + 1:])
        if mine.is_file():
            return params.replace(script=str(mine))
    raise FileNotFoundError(f"script {params.script} does not exist on this host")


class ServerAgent(Agent):
    """The target of a run on the server host (see the module docstring): its storage, then one target
    (:class:`perflab.server.target.ServerTarget`, or :class:`perflab.cluster.target.ClusterTarget` for N
    nodes) that this agent starts, samples, profiles and stops; whatever else a target offers goes through
    :meth:`call`."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        super().__init__(name, watchdog_s)
        self.target = None
        self.profilers: dict = {}
        self.data_dir: Path | None = None
        self.log_dir: Path | None = None
        self._scratch: Path | None = None

    # --- storage ------------------------------------------------------------------------------------
    def prepare(self, log_dir: str | None, data_dir: str | None, scratch: str | None, needs_data_dir: bool,
                prefill=None, backend: str = "lsm") -> dict:
        """Where the target's logs go (``log_dir``: the run directory when the coordinator shares this
        host's files, else a temporary one) and its storage: ``data_dir`` as given, else a fresh
        ``scratch`` directory (deleted by :meth:`close`), prefilled with ``prefill`` (PrefillParams)."""
        from ..profiling import bridge

        self._heard = time.monotonic()
        self.log_dir = Path(log_dir) if log_dir else self._tmp / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        out: dict = {"data_dir": None, "prefill": None}
        if needs_data_dir:
            if data_dir is not None:
                self.data_dir = Path(data_dir)
            else:
                self._scratch = Path(scratch) if scratch else self._tmp / "scratch"
                self.data_dir = self._scratch / "db"
            self.data_dir.mkdir(parents=True, exist_ok=True)
            out["data_dir"] = str(self.data_dir)
        if prefill is not None:
            t = time.monotonic()
            res = bridge.prefill(self.data_dir, prefill.keys, prefill.value_size, prefill.seed, prefill.key_prefix,
                                 backend=backend)
            res["wall_s"] = round(time.monotonic() - t, 3)
            out["prefill"] = res
        self._heard = time.monotonic()
        return out

    # --- the target -----------------------------------------------------------------------------------
    def start(self, config, cpu_prefix: list[str] | None, stats_interval: float, host: str | None = None) -> dict:
        """Start the target (again, after :meth:`stop_server`: the same one, on the same storage) and its
        samplers; what the coordinator records about it."""
        self._heard = time.monotonic()
        if self.target is None:
            from ..cluster.target import ClusterTarget, is_cluster
            from ..server.target import ServerTarget

            cls = ClusterTarget if is_cluster(config) else ServerTarget
            self.target = cls(config, self.data_dir, self.log_dir, [*(cpu_prefix or []), *pdeathsig_prefix()],
                              stats_interval, host)
        desc = self.target.start()
        self._heard = time.monotonic()
        return desc

    def stop_server(self) -> dict | None:
        """Stop the target and its samplers; its final record (``None`` if none ran)."""
        return self.target.stop() if self.target is not None else None

    def samples(self) -> list:
        """Every ``/v0/stats`` sample so far (the target's shape: :meth:`RemoteServer.stats_frame` reads it)."""
        return self.target.samples() if self.target is not None else []

    def cpu_window(self, start: float, end: float):
        """The target's and this machine's CPU over ``[start, end]`` (this host's clock)."""
        return self.target.cpu_window(start, end) if self.target is not None else None

    def files(self) -> dict[str, str]:
        """The target's log and event lines so far, by their path in the run directory."""
        return self.target.files() if self.target is not None else {}

    def call(self, name: str, *args, **kwargs):
        """One of the target's own operations (its ``CALLS``: a cluster's faults, checker, fill...)."""
        self._heard = time.monotonic()
        if self.target is None or name not in type(self.target).CALLS:
            raise ValueError(f"{type(self.target).__name__} has no operation {name!r}")
        try:
            return getattr(self.target, name)(*args, **kwargs)
        finally:
            self._heard = time.monotonic()

    def calibrate(self):
        """The machine's own speed (:mod:`perflab.measure.hostspeed`), timed here, while the server idles."""
        from ..measure import hostspeed

        self._heard = time.monotonic()
        return hostspeed.calibrate()

    # --- async-profiler: one recording per slot (the server, or each node of a cluster) -----------------
    def profile_prepare(self, params, name: str, title: str, out_dir: str | None = None,
                        node: int | None = None) -> int:
        """Attach to the target's process (a cluster's node ``node``); returns its pid."""
        from ..profiling.profiler import Profiler

        self._heard = time.monotonic()
        pid = self.target.pid_of(node)
        d = Path(out_dir) if out_dir else self._tmp / "profile" / str(node if node is not None else "server")
        self.profilers[node] = Profiler(pid, params, out_dir=d, name=name, title=title).prepare()
        return pid

    def profile_start(self, node: int | None = None) -> float:
        self._heard = time.monotonic()
        p = self.profilers[node]
        p.start_recording()
        return p.started_at

    def profile_stop(self, contents: bool = True, node: int | None = None) -> dict:
        """Stop the JFR recording; what the coordinator needs to cut the window (the file's bytes, unless
        the coordinator shares this host's files)."""
        self._heard = time.monotonic()
        p = self.profilers.pop(node)
        try:
            p.stop_recording()
        except BaseException:
            p.abort()   # a node killed in the window took its JVM with it: nothing of this recording is left
            raise
        out = {"jfr_name": p.jfr_path.name, "started_at": p.started_at, "warnings": list(p.warnings),
               "recorded_events": tuple(p.recorded_events), "gc_recorded": p.gc_recorded,
               "log": p.log_path.read_text(errors="replace") if p.log_path.is_file() else "", "jfr": None}
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
        self.stop_server()
        super()._expire()

    def close(self, keep_data: bool = False) -> None:
        """Stop everything; delete the scratch storage (unless ``keep_data``) and the temporary files."""
        self._abort_profiles()
        self.stop_server()
        if self._scratch is not None and not keep_data:
            shutil.rmtree(self._scratch, ignore_errors=True)
        super().close()
