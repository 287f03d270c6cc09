"""What runs on a host: Dask actors that own the processes started there and hand back data, not paths.

* :class:`GeneratorAgent` (on a generator host): one perflab-load segment at a time; its ready line, its
  exit, and its files' contents (JSON summary, hdr log, console, stderr).
* :class:`ServerAgent` (on the server host): the server process (built-in, your command, or one already
  running), its data directory and prefill, ``/v0/stats`` samples, ``/proc`` CPU, timed events, the
  machine's speed, async-profiler's JFR recording, and freezing the server (an A/B comparison's idle cost).

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

#: an agent that hears nothing from its coordinator for this long stops what it runs
WATCHDOG_S = 60.0
#: the generator's ready line on stderr (docs/architecture.md section 5)
READY_LINE = "perflab-load: ready"


def pdeathsig_prefix() -> list[str]:
    """A command prefix that kills the process when the worker that started it dies (util-linux setpriv)."""
    exe = shutil.which("setpriv")
    return [exe, "--pdeathsig", "KILL", "--"] if exe else []


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
    """One perflab-load process at a time on a generator host."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        super().__init__(name, watchdog_s)
        self.lp = None
        self.out_dir: Path | None = None
        self._own_dir = False

    def start(self, url: str, params, extra: list[str], out_dir: str | None = None,
              cpu_prefix: list[str] | None = None) -> dict:
        """Start perflab-load (``params``: the whole run's LoadParams, ``extra``: ``--segment``/``--start-at``)
        writing into ``out_dir`` (a directory of this host; default a fresh temporary one)."""
        from ..measure.generator import LoadProcess

        if self.lp is not None and self.lp.poll() is None:
            raise RuntimeError(f"{self.name}: a load is already running")
        self._heard = time.monotonic()
        self._own_dir = out_dir is None
        self.out_dir = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="load-", dir=self._tmp))
        params = _local_script(params)
        self.lp = LoadProcess(url, params, self.out_dir, [*(cpu_prefix or []), *pdeathsig_prefix()], extra=extra)
        self.lp.start()
        return {"command": self.lp.command, "pid": self.lp.proc.pid, "started_at": self.lp.started_at}

    async def state(self) -> dict:
        """``ready`` (its ready line is on stderr), ``rc`` (exit status, ``None`` while it runs), the host's
        clock. Cheap: the coordinator polls it, which also keeps the watchdog quiet."""
        self._heard = time.monotonic()
        from ..measure.result import STDERR

        ready = False
        if self.out_dir is not None:
            try:
                ready = READY_LINE in (self.out_dir / STDERR).read_text(errors="replace")
            except OSError:
                pass
        return {"ready": ready, "rc": self.lp.poll() if self.lp is not None else None, "time": time.time()}

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGINT (perflab-load writes what it has), then SIGKILL of its group after ``grace_s``."""
        if self.lp is not None:
            self.lp.stop(grace_s)

    def collect(self, contents: bool = True) -> dict:
        """Once it has exited: its exit status, start and end, and (``contents``) its files' text."""
        from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY

        if self.lp is None:
            raise RuntimeError(f"{self.name}: no load was started")
        rc = self.lp.proc.wait(timeout=30)
        children.unregister(self.lp.proc)
        self.lp._close()
        out = {"rc": rc, "command": self.lp.command, "started_at": self.lp.started_at, "ended_at": time.time(),
               "files": {}}
        if contents:
            for f in (CONSOLE, STDERR, SUMMARY, HDR_LOG):
                p = self.out_dir / f
                if p.is_file():
                    out["files"][f] = p.read_text(errors="replace")
        if self._own_dir:
            shutil.rmtree(self.out_dir, ignore_errors=True)
        self.lp = None
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
    """The server under test on its host (see the module docstring)."""

    def __init__(self, name: str, watchdog_s: float = WATCHDOG_S):
        super().__init__(name, watchdog_s)
        self.server = None
        self.sampler = None
        self.cpu = None
        self.profiler = None
        self.data_dir: Path | None = None
        self.log_dir: Path | None = None
        self._scratch: Path | None = None
        self._own_log_dir = False
        self._paused = False

    # --- storage ------------------------------------------------------------------------------------
    def prepare(self, log_dir: str | None, data_dir: str | None, scratch: str | None, needs_data_dir: bool,
                prefill=None, backend: str = "lsm") -> dict:
        """Where the server's logs go (``log_dir``: the run directory when the coordinator shares this
        host's files, else a temporary one) and its storage: ``data_dir`` as given, else a fresh
        ``scratch`` directory (deleted by :meth:`close`), prefilled with ``prefill`` (PrefillParams)."""
        from ..profiling import bridge

        self._heard = time.monotonic()
        self._own_log_dir = log_dir is None
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

    # --- the server -----------------------------------------------------------------------------------
    def start(self, config, cpu_prefix: list[str] | None, stats_interval: float, host: str | None = None) -> dict:
        """Start (or attach to) the server and its samplers; what the coordinator records about it."""
        from ..config.target import ForeignServer
        from ..server import Server
        from ..server.cpu import CpuSampler
        from ..server.foreign import AttachedServer, ForeignProcess, stats_available
        from ..server.stats import StatsSampler

        self._heard = time.monotonic()
        prefix = [*(cpu_prefix or []), *pdeathsig_prefix()]
        if isinstance(config, ForeignServer):
            if config.command is not None:
                self.server = ForeignProcess(config, self.log_dir, prefix, host=host or "127.0.0.1").start()
            else:
                self.server = AttachedServer(config)
        else:
            self.server = Server(config, data_dir=self.data_dir, log_dir=self.log_dir, keep_data=True,
                                 cpu_prefix=prefix).start()
        stats_unavailable = stats_available(self.server.url)
        self.sampler = StatsSampler(self.server.url, stats_interval).start() if stats_unavailable is None else None
        self.cpu = CpuSampler(self.server.pid).start() if self.server.pid else None
        self._heard = time.monotonic()
        return self.describe(stats_unavailable)

    def describe(self, stats_unavailable: str | None = None) -> dict:
        from ..experiment import profiling_unavailable

        s = self.server
        return {"url": s.url, "pid": s.pid, "java_version": s.java_version, "command": list(s.command),
                "info": s.info(), "effective_config": getattr(s, "effective_config", None),
                "ready": getattr(s, "ready", None), "jvm": getattr(s, "jvm", None),
                "profiling_unavailable": profiling_unavailable(s), "stats_unavailable": stats_unavailable,
                "started_at": time.time()}

    def pause(self, paused: bool) -> None:
        """Freeze (SIGSTOP: no CPU at all) or thaw every process of the server this agent started: what an
        idle server costs a busy one beside it is measured against a frozen one (:mod:`perflab.ab`)."""
        self._heard = time.monotonic()
        proc = getattr(self.server, "proc", None)
        if proc is None:
            raise ValueError("pause: only a server process perflab started can be frozen")
        children.pause_group(proc, paused)
        self._paused = paused

    def stop_server(self) -> dict | None:
        """Stop the samplers and the server (thawed first, if frozen); its final record (``None`` if none
        ran)."""
        if self.sampler is not None:
            self.sampler.stop()
        if self.cpu is not None:
            self.cpu.stop()
        if self.server is None:
            return None
        if self._paused:
            self.pause(False)
        self.server.stop()
        return self.server.info()

    def samples(self) -> list[dict]:
        """Every ``/v0/stats`` sample so far."""
        return list(self.sampler.samples) if self.sampler is not None else []

    def cpu_window(self, start: float, end: float):
        """The server's and this machine's CPU over ``[start, end]`` (this host's clock)."""
        return self.cpu.window(start, end) if self.cpu is not None else None

    def calibrate(self):
        """The machine's own speed (:mod:`perflab.measure.hostspeed`), timed here, while the server idles."""
        from ..measure import hostspeed

        self._heard = time.monotonic()
        return hostspeed.calibrate()

    def files(self) -> dict[str, str]:
        """The server's log and event lines so far (``server.log``, ``server-events.jsonl``)."""
        out = {}
        for f in ("server.log", "server-events.jsonl"):
            p = self.log_dir / f if self.log_dir is not None else None
            if p is not None and p.is_file():
                out[f] = p.read_text(errors="replace")
        return out

    # --- async-profiler -------------------------------------------------------------------------------
    def profile_prepare(self, params, name: str, title: str, out_dir: str | None = None) -> None:
        from ..profiling.profiler import Profiler

        self._heard = time.monotonic()
        d = Path(out_dir) if out_dir else self._tmp / "profile"
        self.profiler = Profiler(self.server.pid, params, out_dir=d, name=name, title=title).prepare()

    def profile_start(self) -> float:
        self._heard = time.monotonic()
        self.profiler.start_recording()
        return self.profiler.started_at

    def profile_stop(self, contents: bool = True) -> dict:
        """Stop the JFR recording; what the coordinator needs to cut the window (the file's bytes, unless
        the coordinator shares this host's files)."""
        self._heard = time.monotonic()
        p = self.profiler
        p.stop_recording()
        out = {"jfr_name": p.jfr_path.name, "started_at": p.started_at, "warnings": list(p.warnings),
               "recorded_events": tuple(p.recorded_events), "gc_recorded": p.gc_recorded,
               "log": p.log_path.read_text(errors="replace") if p.log_path.is_file() else "", "jfr": None}
        if contents:
            out["jfr"] = p.jfr_path.read_bytes()
        return out

    def profile_abort(self) -> None:
        if self.profiler is not None:
            self.profiler.abort()

    # --- the end --------------------------------------------------------------------------------------
    def _expire(self):
        self.profile_abort()
        self.stop_server()
        super()._expire()

    def close(self, keep_data: bool = False) -> None:
        """Stop everything; delete the scratch storage (unless ``keep_data``) and the temporary files."""
        self.profile_abort()
        self.stop_server()
        if self._scratch is not None and not keep_data:
            shutil.rmtree(self._scratch, ignore_errors=True)
        super().close()
