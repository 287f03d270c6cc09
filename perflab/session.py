"""The measurement session: one recorded run around one server.

:class:`Session` creates the run, a fresh data directory (prefilled when asked), starts the server with
its logs in the run directory, samples ``/v0/stats`` and the server's CPU, times the machine's own speed
(:mod:`perflab.measure.hostspeed`), starts loads with the session's load tool and judges each one's
validity; on exit it stops everything and marks the run. :func:`perflab.run_experiment` holds one load
in a session, :func:`perflab.find_breakpoint` many probes.

How and where a session measures is one :class:`SessionOptions` (the keyword arguments both take),
hosts included: the server runs on the session's server host and every load on its generator hosts
(:mod:`perflab.hosts`: by default the in-process cluster of this one machine, on the same code path).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import children, paths
from .config import LoadParams, PrefillParams, ServerConfig
from .config.target import ForeignServer
from .config.validity import ValidityThresholds
from .measure import hostspeed
from .measure.generator import LoadTool
from .measure.result import LoadResult
from .measure.validity import Level, Validity, assess, with_hosts
from .records import Run, new_run
from .server.placement import Placement
from .server.stats import stats_frame


@dataclass(frozen=True)
class SessionOptions:
    """How and where a session measures (every field a keyword of ``run_experiment`` and
    ``find_breakpoint``).

    ``data_root``: where the run is recorded (default ``$PERFLAB_DATA`` or ``<repo>/data``);
    ``data_dir``: use (and keep) this storage directory instead of a fresh one under
    ``<data root>/scratch/<run id>/``; ``keep_data``: keep the fresh one; ``stats_interval``: seconds
    between ``/v0/stats`` samples; ``placement``: ``"shared"``, ``"split"`` or ``"server=CPUS;load=CPUS"``
    (:mod:`perflab.server.placement`); ``thresholds``: the validity record's limits.

    Hosts (:mod:`perflab.hosts`): ``cluster``: a Dask scheduler (``tcp://HOST:8786``; default
    ``$PERFLAB_CLUSTER``, else the in-process cluster of this machine); ``generators``: the generator hosts
    by name (``("gen1", "gen2")`` or ``"gen1,gen2"``) or how many (``2``; default ``$PERFLAB_GENERATORS``,
    else 1): one run is split over them; ``server_host``: the server's host by name (default
    ``$PERFLAB_SERVER_HOST``, else any free one); ``lease_timeout``: how long to wait for busy hosts
    (default: as long as it takes).
    """

    data_root: str | Path | None = None
    data_dir: str | Path | None = None
    keep_data: bool = False
    stats_interval: float = 1.0
    placement: Placement | str | None = "shared"
    thresholds: ValidityThresholds = field(default_factory=ValidityThresholds)
    cluster: str | None = None
    generators: tuple[str, ...] | int | str | None = None
    server_host: str | None = None
    lease_timeout: float | None = None

    def __post_init__(self):
        if not (isinstance(self.stats_interval, (int, float)) and self.stats_interval > 0):
            raise ValueError(f"stats_interval must be > 0 seconds, got {self.stats_interval!r}")
        if not isinstance(self.thresholds, ValidityThresholds):
            raise ValueError(f"thresholds must be a ValidityThresholds, got {type(self.thresholds).__name__}")
        object.__setattr__(self, "placement", Placement.of(self.placement))
        from .hosts.cluster import address_of
        address_of(self.cluster)   # a malformed address fails here, before anything connects
        object.__setattr__(self, "generators", generators_of(
            self.generators if self.generators is not None else os.environ.get(GENERATORS_ENV) or None))
        host = self.server_host if self.server_host is not None else os.environ.get(SERVER_HOST_ENV) or None
        if host is not None and (not isinstance(host, str) or not host.strip() or "," in host):
            raise ValueError(f"server_host must be one host name, got {host!r}")
        object.__setattr__(self, "server_host", host.strip() if host else None)
        if self.lease_timeout is not None and not (isinstance(self.lease_timeout, (int, float)) and self.lease_timeout > 0):
            raise ValueError(f"lease_timeout must be > 0 seconds or None, got {self.lease_timeout!r}")

    def host_request(self):
        from .hosts.hostset import HostRequest
        return HostRequest(self.cluster, self.generators, self.server_host)


#: the host fields of SessionOptions, their command-line flags and what they mean: the one source of the CLI's
#: --scheduler, --generators and --server-host (perflab.cli, perflab report). The scheduler's flag is not
#: --cluster: that is the built-in server's own flag (its node list, docs/architecture.md section 7).
HOST_FLAGS = {"cluster": "--scheduler", "generators": "--generators", "server_host": "--server-host"}
HOST_FIELDS = {
    "cluster": "Dask scheduler of the hosts, tcp://HOST:8786 (default $PERFLAB_CLUSTER, else this machine alone)",
    "generators": "generator hosts by name (gen1,gen2), or how many (2); one run is split over them "
                  "(default $PERFLAB_GENERATORS, else one)",
    "server_host": "the host the server runs on (default $PERFLAB_SERVER_HOST, else any free server host)",
}


def host_options(source) -> dict:
    """The host fields of ``source`` (argparse namespace or dict) that are set, as SessionOptions keywords."""
    get = source.get if isinstance(source, dict) else lambda k: getattr(source, k, None)
    return {k: get(k) for k in HOST_FIELDS if get(k) not in (None, "")}


GENERATORS_ENV = "PERFLAB_GENERATORS"
#: set by the report batch for each notebook it runs side by side with others
RUN_TAG_ENV = "PERFLAB_RUN_TAG"
SERVER_HOST_ENV = "PERFLAB_SERVER_HOST"


def generators_of(value) -> tuple[str, ...] | int | None:
    """``generators`` as names or a count: ``"gen1,gen2"``, ``["gen1"]``, ``2``, ``"2"`` or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"generators must be host names or a count, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"generators must be at least 1 host, got {value}")
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit():
            return generators_of(int(text))
        value = [v for v in text.split(",")]
    names = tuple(str(v).strip() for v in value)
    if not names or any(not n for n in names):
        raise ValueError(f"generators must be host names separated by commas or a count, got {value!r}")
    if len(set(names)) != len(names):
        raise ValueError(f"generators: a host named twice in {', '.join(names)}")
    return names


def as_target(server) -> ServerConfig | ForeignServer:
    """``server`` as a target: a ``ServerConfig`` (the built-in server), a ``ForeignServer``, or a URL
    string (shorthand for ``ForeignServer(url=...)``)."""
    if isinstance(server, str):
        return ForeignServer(url=server)
    if not isinstance(server, (ServerConfig, ForeignServer)):
        raise ValueError(f"server must be a ServerConfig, a ForeignServer or the URL of a running server, "
                         f"got {type(server).__name__}")
    return server


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
        if prefill is not None and not isinstance(prefill, PrefillParams):
            raise ValueError(f"prefill must be a PrefillParams, got {type(prefill).__name__}")
        if prefill is not None and self.foreign:
            raise ValueError("prefill: it writes the built-in server's storage files; your server loads its own data")
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
        self.hosts = None
        self.server = None
        self.stats_unavailable: str | None = None
        self.prefill_result: dict | None = None
        self.data_dir: Path | None = None
        self.calibrations: list[hostspeed.Calibration] = []
        self._sig = None
        self._servers: list[dict] = []

    @property
    def thresholds(self) -> ValidityThresholds:
        return self.options.thresholds

    def __enter__(self) -> "Session":
        from .hosts.hostset import HostSet

        # the hosts first: a missing host or role, a version mismatch or an unreachable scheduler is an error
        # before a run exists or anything starts
        self.hosts = HostSet.open(self.options.host_request(), f"{self.kind} {self.name}", self.options.lease_timeout)
        try:
            if self.hosts.apart and self.placement.server_cpus is not None:
                raise ValueError("placement: CPU sets place the server and the generator on one machine; with "
                                 "generator hosts apart from the server host use 'shared'")
            params = {"server": self.config.to_dict(), "target": "foreign" if self.foreign else "built-in",
                      **self.extra_params,
                      "prefill": self.prefill_params.to_dict() if self.prefill_params else None,
                      "stats_interval": self.options.stats_interval, "validity": self.thresholds.to_dict()}
            from .records.environment import environment
            self.run = new_run(self.kind, self.name, params, self.data_root,
                               environment=environment({self.tool.name: self.tool.version()}))
        except BaseException:
            self.hosts.close()
            raise
        self.run.meta["placement"] = self.placement.to_dict()
        self.run.meta["hosts"] = self.hosts.record()
        if os.environ.get(RUN_TAG_ENV):
            self.run.meta["tag"] = os.environ[RUN_TAG_ENV]   # which notebook of a parallel report made it
        self.run.save()
        self._sig = children.sigterm_as_exception()
        self._sig.__enter__()
        try:
            self._setup()
        except BaseException as e:
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    @property
    def _agent(self):
        return self.hosts.server_agent

    def _setup(self):
        shares = self.hosts.shares_files
        needs = not self.foreign and self.config.needs_data_dir
        # on this machine the scratch storage is <data root>/scratch/<run id>/ as always; on another host, the
        # agent's own temporary directory there
        scratch = str(self.data_root / "scratch" / self.run.id) if shares and self.options.data_dir is None else None
        p = self.prefill_params
        got = self._agent.prepare(str(self.run.dir) if shares else None,
                                  str(self.options.data_dir) if self.options.data_dir is not None else None,
                                  scratch, needs, p, getattr(self.config, "backend", "lsm")).result()
        self.data_dir = Path(got["data_dir"]) if got["data_dir"] else None
        if got["prefill"] is not None:
            self.prefill_result = got["prefill"]
            self.run.update(prefill=self.prefill_result)
        self.start_server()
        self.calibrate()

    def start_server(self):
        from .hosts.remote import RemoteServer

        cfg, bind = self.config, self.hosts.server_address()
        if bind is not None and not self.foreign and cfg.host == "127.0.0.1":
            cfg = cfg.replace(host=bind)   # the generator hosts must reach it: its host's own address
        desc = self._agent.start(cfg, self.placement.prefix("server"), self.options.stats_interval, bind).result()
        self.server = RemoteServer(self.hosts, desc)
        if self.foreign:
            self.run.update(server={"java_version": self.server.java_version, "command": self.server.command,
                                    "foreign": self.server.info()})
            if self.config.command is not None:
                self.run.meta["artifacts"]["server_log"] = "server.log"
        else:
            self.run.update(server={"java_version": self.server.java_version, "command": self.server.command,
                                    "jvm_flags": self.config.jvm_args(),
                                    "effective_config": self.server.effective_config, "ready": self.server.ready})
            self.run.meta["artifacts"].update({"server_log": "server.log", "server_events": "server-events.jsonl"})
        self._servers.append({"pid": self.server.pid, "started_at": desc["started_at"],
                              "host": self.hosts.server.name})
        self.stats_unavailable = self.server.stats_unavailable
        if self.stats_unavailable is not None:
            self.run.update(stats_unavailable=self.stats_unavailable)

    def start_load(self, load: LoadParams, out_dir):
        """Start ``load`` against the session's server with the session's tool, on its generator hosts
        (split over them when there are several; placed on its CPUs)."""
        from .hosts.load import DistributedLoad, lead_for

        if LoadTool.of(load) != self.tool:
            raise ValueError(f"load: this session measures with {self.tool.name} ({self.tool.binary}), "
                             f"the load asks for {load.tool}")
        lp = DistributedLoad(self.hosts, self.server.url, load, Path(out_dir), self.placement.prefix("load"),
                             lead_for(self.hosts))
        return lp.start()

    def profiler(self, params, title: str):
        """async-profiler in the server's JVM on its host, writing into the run (window mode)."""
        from .hosts.remote import RemoteProfiler

        return RemoteProfiler(self.hosts, self.server.pid, params, self.run.dir, title)

    def calibrate(self) -> hostspeed.Calibration:
        """Time the fixed loop on every CPU of the server host (:mod:`perflab.measure.hostspeed`); call it
        while no load runs."""
        cal = self._agent.calibrate().result()
        self.calibrations.append(cal)
        return cal

    def validity(self, res: LoadResult, started_at: float | None = None) -> Validity:
        """The validity record of a load that ran against this session's server; its ``host_speed`` check
        holds the last calibration before the load (and the first after it, if any) against the session's
        fastest. With several generator hosts (or one on another machine) each host is judged on its own
        share too, and the run is only as valid as its worst host (:func:`perflab.measure.validity.with_hosts`)."""
        start = res.measure_start or started_at or res.started_at
        end = res.measure_end or res.ended_at
        window = self._agent.cpu_window(start, end).result() if end else None
        began = started_at or start or 0.0
        before = [c for c in self.calibrations if c.at <= began][-1:]
        after = [c for c in self.calibrations if end and c.at >= end][:1]
        host = (before + after, self.calibrations) if before or after else None
        v = assess(res, window, self.placement, self.thresholds, host)
        if res.parts and (len(res.parts) > 1 or self.hosts.apart):
            per_host = {n: assess(part, None, None, self.thresholds) for n, part in res.parts.items()}
            v, bottleneck = with_hosts(v, per_host, self._sharing_note())
            if res.hosts is not None:
                for n, hv in per_host.items():
                    res.hosts["generators"][n]["validity"] = hv.to_dict()
                res.hosts["bottleneck"] = bottleneck
                res.hosts["verdict"] = str(v.level)
                if res.out_dir is not None:
                    from .records.run import dump_json
                    dump_json(res.hosts, Path(res.out_dir) / "hosts.json")
        return v

    def _sharing_note(self) -> str:
        gens = [g for g in self.hosts.generators if g.name != self.hosts.server.name]
        same = [g.name for g in gens if g.boot_id is not None and g.boot_id == self.hosts.server.boot_id]
        note = (f"server on host {self.hosts.server.name}, generators on "
                f"{', '.join(g.name for g in self.hosts.generators)}")
        if same:
            note += f" ({', '.join(same)} on the server's machine: they share its CPUs)"
        return note

    def restart_server(self):
        """Stop and start the server again on the same data (a fresh process per probe)."""
        if self.foreign and self.config.url is not None:
            raise ValueError("restart_server: a server that is already running (url) cannot be restarted")
        self._stop_server()
        self.start_server()

    def _stop_server(self):
        if self.server is not None:
            self.server.stop()
            info = self.server.info()
            self._servers[-1].update(exit_code=info.get("exit_code"), stopped=info.get("stopped"))

    def sync_events(self) -> None:
        """The server's event lines so far, in the run (``server-events.jsonl``)."""
        self.sync_files()

    def sync_files(self) -> None:
        """Bring the server host's log and event lines into the run (nothing to do on this machine)."""
        if self.hosts is None or self.hosts.shares_files or self.run is None:
            return
        for name, text in self._agent.files().result().items():
            (self.run.dir / name).write_text(text)

    def stats_frame(self, t0: float | None = None) -> pd.DataFrame:
        if self.server is None or self.stats_unavailable is not None:
            return pd.DataFrame()
        return stats_frame(self._agent.samples().result(), t0)

    def __exit__(self, et, ev, tb):
        from .hosts.load import HostLost

        try:
            if self.hosts is not None and self.hosts.server_agent is not None and self.run is not None:
                try:
                    self._stop_server()
                    samples = self._agent.samples().result(timeout=60) if self.stats_unavailable is None else []
                    if samples and not (self.run.dir / "stats.csv").exists():
                        self.run.write_frame("stats.csv", stats_frame(samples), artifact="stats")
                    self.sync_files()
                except Exception:  # noqa: BLE001 - a lost server host: the run says so below
                    if et is None:
                        raise
            if self.run is not None:
                self.run.meta["servers"] = self._servers
                if self.calibrations:
                    self.run.meta["host_speed"] = {"loop": hostspeed.LOOP, "spread": hostspeed.spread(self.calibrations),
                                                   "calibrations": [c.to_dict() for c in self.calibrations]}
                if ev is not None and isinstance(ev, HostLost):
                    # what the other hosts returned is kept under the load's hosts/<name>/; the run says why
                    # nothing it measured can be trusted
                    self.run.meta["validity"] = {"verdict": str(Level.INVALID), "reasons": [ev.cause],
                                                 "checks": {"hosts": {"status": "fail", "value": None,
                                                                      "limit": None, "note": ev.cause}}}
        finally:
            try:
                if self.hosts is not None:
                    self.hosts.close(keep_data=self.options.keep_data, release=False)
                if self._sig is not None:
                    self._sig.__exit__(None, None, None)
                if self.run is not None:
                    self.run.__exit__(et, ev, tb)
            finally:
                if self.hosts is not None and self.hosts.lease is not None:
                    self.hosts.lease.release()
        return False
