"""The measurement session: one recorded run around one server.

:class:`Session` creates the run, a fresh data directory (prefilled when asked), starts the server with
its logs in the run directory, samples ``/v0/stats`` and the server's CPU, times the machine's own speed
(:mod:`perflab.measure.hostspeed`), starts loads with the session's load tool and judges each one's
validity; on exit it stops everything and marks the run. :func:`perflab.run_experiment` holds one load
in a session, :func:`perflab.find_breakpoint` many probes.

How and where a session measures is one :class:`SessionOptions` (the keyword arguments both take).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import children, paths
from .config import LoadParams, PrefillParams, ServerConfig
from .config.cluster import ClusterConfig
from .config.target import ForeignServer
from .config.validity import ValidityThresholds
from .measure import hostspeed
from .measure.generator import LoadTool, start_load
from .measure.result import LoadResult
from .measure.validity import Validity, assess
from .profiling import bridge
from .records import Run, new_run
from .server import Server
from .server.cpu import CpuSampler
from .server.foreign import AttachedServer, ForeignProcess, stats_available
from .server.placement import Placement
from .server.stats import StatsSampler


@dataclass(frozen=True)
class SessionOptions:
    """How and where a session measures (every field a keyword of ``run_experiment`` and
    ``find_breakpoint``).

    ``data_root``: where the run is recorded (default ``$PERFLAB_DATA`` or ``<repo>/data``);
    ``data_dir``: use (and keep) this storage directory instead of a fresh one under
    ``<data root>/scratch/<run id>/``; ``keep_data``: keep the fresh one; ``stats_interval``: seconds
    between ``/v0/stats`` samples; ``placement``: ``"shared"``, ``"split"`` or ``"server=CPUS;load=CPUS"``
    (:mod:`perflab.server.placement`); ``thresholds``: the validity record's limits.
    """

    data_root: str | Path | None = None
    data_dir: str | Path | None = None
    keep_data: bool = False
    stats_interval: float = 1.0
    placement: Placement | str | None = "shared"
    thresholds: ValidityThresholds = field(default_factory=ValidityThresholds)

    def __post_init__(self):
        if not (isinstance(self.stats_interval, (int, float)) and self.stats_interval > 0):
            raise ValueError(f"stats_interval must be > 0 seconds, got {self.stats_interval!r}")
        if not isinstance(self.thresholds, ValidityThresholds):
            raise ValueError(f"thresholds must be a ValidityThresholds, got {type(self.thresholds).__name__}")
        object.__setattr__(self, "placement", Placement.of(self.placement))


def as_target(server) -> ServerConfig | ForeignServer:
    """``server`` as a target: a ``ServerConfig`` (the built-in server), a ``ForeignServer``, a URL
    string (shorthand for ``ForeignServer(url=...)``), or a cluster: a ``ClusterConfig`` (N nodes started
    for the run) or a running :class:`~perflab.cluster.nodes.Cluster` (measured, left running)."""
    from .cluster.nodes import Cluster
    if isinstance(server, str):
        return ForeignServer(url=server)
    if not isinstance(server, (ServerConfig, ForeignServer, ClusterConfig, Cluster)):
        raise ValueError(f"server must be a ServerConfig, a ForeignServer, a ClusterConfig, a running Cluster or "
                         f"the URL of a running server, got {type(server).__name__}")
    return server


def is_cluster(target) -> bool:
    from .cluster.nodes import Cluster
    return isinstance(target, (ClusterConfig, Cluster))


class Session:
    """A recorded run around one server (see the module docstring).

    ``kind``/``name``: the run's; ``server``: the target; ``tool``: the load generator every load of the
    session runs with (its version is recorded); ``params``: what else the run records as parameters.
    """

    def __init__(self, kind: str, name: str, server, tool: LoadTool, options: SessionOptions | None = None,
                 prefill: PrefillParams | None = None, params: dict | None = None):
        server = as_target(server)
        self.options = options or SessionOptions()
        self.foreign = isinstance(server, ForeignServer)
        self.clustered = is_cluster(server)
        if prefill is not None and not isinstance(prefill, PrefillParams):
            raise ValueError(f"prefill must be a PrefillParams, got {type(prefill).__name__}")
        if prefill is not None and self.foreign:
            raise ValueError("prefill: it writes the built-in server's storage files; your server loads its own data")
        if prefill is not None and self.clustered:
            raise ValueError("prefill: it writes plain values, and a cluster node stores timestamped records; a "
                             "cluster starts empty or is filled through its API (run_cluster's fill=)")
        if prefill is not None and server.backend == "memory":
            raise ValueError("prefill needs a persistent backend (lsm or rocksdb); backend='memory' starts empty")
        if not isinstance(tool, LoadTool):
            raise ValueError(f"tool must be a LoadTool, got {type(tool).__name__}")
        self.placement = self.options.placement
        if self.foreign and server.url is not None and self.placement.server_cpus is not None:
            raise ValueError("placement: a server that is already running (url) cannot be placed; use 'shared', or "
                             "a command (--server-cmd) that perflab starts")
        self.kind, self.name, self.config, self.tool = kind, name, server, tool
        self.prefill_params = prefill
        self.extra_params = params or {}
        self.data_root = paths.data_root(self.options.data_root)
        self.run: Run | None = None
        self.server = None
        self.sampler: StatsSampler | None = None
        self.cpu: CpuSampler | None = None
        self.stats_unavailable: str | None = None
        self.prefill_result: dict | None = None
        self.data_dir: Path | None = None
        self.calibrations: list[hostspeed.Calibration] = []
        self._scratch: Path | None = None
        self._sig = None
        self._servers: list[dict] = []
        self._owns_server = True    # False for a running cluster the session only measures

    @property
    def thresholds(self) -> ValidityThresholds:
        return self.options.thresholds

    def __enter__(self) -> "Session":
        target = "cluster" if self.clustered else "foreign" if self.foreign else "built-in"
        params = {"server": self.config.to_dict(), "target": target,
                  **self.extra_params,
                  "prefill": self.prefill_params.to_dict() if self.prefill_params else None,
                  "stats_interval": self.options.stats_interval, "validity": self.thresholds.to_dict()}
        from .records.environment import environment
        self.run = new_run(self.kind, self.name, params, self.data_root,
                           environment=environment({self.tool.name: self.tool.version()}))
        self.run.meta["placement"] = self.placement.to_dict()
        self.run.save()
        self._sig = children.sigterm_as_exception()
        self._sig.__enter__()
        try:
            self._setup()
        except BaseException as e:
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def _setup(self):
        if not self.foreign and not self.clustered and self.config.needs_data_dir:
            if self.options.data_dir is not None:
                self.data_dir = Path(self.options.data_dir)
            else:
                self._scratch = self.data_root / "scratch" / self.run.id
                self.data_dir = self._scratch / "db"
            self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.prefill_params is not None:
            p = self.prefill_params
            t = time.monotonic()
            self.prefill_result = bridge.prefill(self.data_dir, p.keys, p.value_size, p.seed, p.key_prefix,
                                                 backend=self.config.backend)
            self.prefill_result["wall_s"] = round(time.monotonic() - t, 3)
            self.run.update(prefill=self.prefill_result)
        self.start_server()
        self.calibrate()

    def start_server(self):
        if self.clustered:
            from .cluster.session import start_cluster_target
            start_cluster_target(self)
            return
        if self.foreign:
            if self.config.command is not None:
                self.server = ForeignProcess(self.config, self.run.dir, self.placement.prefix("server")).start()
            else:
                self.server = AttachedServer(self.config)
            self.run.update(server={"java_version": self.server.java_version, "command": self.server.command,
                                    "foreign": self.server.info()})
            if self.config.command is not None:
                self.run.meta["artifacts"]["server_log"] = "server.log"
        else:
            self.server = Server(self.config, data_dir=self.data_dir, log_dir=self.run.dir, keep_data=True,
                                 cpu_prefix=self.placement.prefix("server")).start()
            self.run.update(server={"java_version": self.server.java_version, "command": self.server.command,
                                    "jvm_flags": self.config.jvm_args(),
                                    "effective_config": self.server.effective_config, "ready": self.server.ready})
            self.run.meta["artifacts"].update({"server_log": "server.log", "server_events": "server-events.jsonl"})
        self._servers.append({"pid": self.server.pid, "started_at": time.time()})
        self.stats_unavailable = stats_available(self.server.url)
        if self.stats_unavailable is None:
            self.sampler = StatsSampler(self.server.url, self.options.stats_interval).start()
        else:
            self.run.update(stats_unavailable=self.stats_unavailable)
        self.cpu = CpuSampler(self.server.pid).start() if self.server.pid else None

    def start_load(self, load: LoadParams, out_dir):
        """Start ``load`` against the session's server with the session's tool (placed on its CPUs)."""
        if LoadTool.of(load) != self.tool:
            raise ValueError(f"load: this session measures with {self.tool.name} ({self.tool.binary}), "
                             f"the load asks for {load.tool}")
        if self.clustered:
            from .cluster.load import ClusterLoadProcess
            return ClusterLoadProcess(self.server, load, out_dir, self.placement.prefix("load")).start()
        return start_load(self.server.url, load, out_dir=out_dir, cpu_prefix=self.placement.prefix("load"))

    def calibrate(self) -> hostspeed.Calibration:
        """Time the fixed loop on every CPU (:mod:`perflab.measure.hostspeed`); call it while no load runs."""
        cal = hostspeed.calibrate()
        self.calibrations.append(cal)
        return cal

    def validity(self, res: LoadResult, started_at: float | None = None) -> Validity:
        """The validity record of a load that ran against this session's server; its ``host_speed`` check
        holds the last calibration before the load (and the first after it, if any) against the session's
        fastest."""
        start = res.measure_start or started_at or res.started_at
        end = res.measure_end or res.ended_at
        window = self.cpu.window(start, end) if self.cpu is not None and end else None
        began = started_at or start or 0.0
        before = [c for c in self.calibrations if c.at <= began][-1:]
        after = [c for c in self.calibrations if end and c.at >= end][:1]
        host = (before + after, self.calibrations) if before or after else None
        return assess(res, window, self.placement, self.thresholds, host)

    def restart_server(self):
        """Stop and start the server again on the same data (a fresh process per probe)."""
        if (self.foreign and self.config.url is not None) or (self.clustered and not self._owns_server):
            raise ValueError("restart_server: a server that is already running (url, a started cluster) cannot be "
                             "restarted")
        self._stop_server()
        self.start_server()

    def _stop_server(self):
        if self.sampler is not None:
            self.sampler.stop()
        if self.cpu is not None:
            self.cpu.stop()
        if self.server is not None and self._owns_server:
            self.server.stop()
            info = self.server.info()
            self._servers[-1].update(exit_code=info.get("exit_code"), stopped=info.get("stopped"))

    def stats_frame(self, t0: float | None = None) -> pd.DataFrame:
        return self.sampler.frame(t0) if self.sampler is not None else pd.DataFrame()

    def __exit__(self, et, ev, tb):
        try:
            samples = list(self.sampler.samples) if self.sampler is not None else []
            self._stop_server()
            if samples and self.run is not None and not (self.run.dir / "stats.csv").exists():
                self.run.write_frame("stats.csv", self.sampler.frame(), artifact="stats")
            if self.run is not None:
                self.run.meta["servers"] = self._servers
                if self.calibrations:
                    self.run.meta["host_speed"] = {"loop": hostspeed.LOOP, "spread": hostspeed.spread(self.calibrations),
                                                   "calibrations": [c.to_dict() for c in self.calibrations]}
        finally:
            if self._scratch is not None and not self.options.keep_data:
                shutil.rmtree(self._scratch, ignore_errors=True)
            if self._sig is not None:
                self._sig.__exit__(None, None, None)
            if self.run is not None:
                self.run.__exit__(et, ev, tb)
        return False
