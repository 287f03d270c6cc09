"""The measurement session: one recorded run around one target.

:class:`Session` opens the hosts (:mod:`perflab.hosts`: by default this machine's in-process hosts, on the
same code path as many), creates the run, prepares the target's storage on the server host (prefilled
when asked), starts the target there (:class:`perflab.targets.base.TargetHost`) with its logs in the run,
samples ``/v0/stats`` and its CPU, times the machine's own speed (:mod:`perflab.hostspeed`), starts
loads with the session's load tool on its generator hosts (:mod:`.load`) and judges each one's validity;
on exit it stops everything and marks the run. The strategies are built on it: a fixed-rate run
(:mod:`perflab.experiment`), a cluster run (:mod:`perflab.cluster_run`), a breakpoint search
(:mod:`perflab.breakpoint`), an A/B comparison (:mod:`perflab.ab`); one probe of a load is :mod:`.probe`.

The session knows targets through their protocol only (:mod:`perflab.targets`): what the user passed
becomes a :class:`~perflab.targets.base.Target`, which says what it can do, and its running side is a
:class:`~perflab.targets.base.TargetHandle`. How and where a session measures is one
:class:`SessionOptions`: one typed value every strategy takes (``session=``).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import children, hostspeed, paths
from ..cancel import CancelToken
from ..config import LoadParams, PrefillParams
from ..config.hosts import HostOptions
from ..config.validity import ValidityThresholds
from ..config.version import Version
from ..errors import LoadError
from ..hosts.actors import answer
from ..hosts.hostset import HostSet
from ..hosts.pool import HostLost
from ..measure.generator import LoadTool
from ..measure.result import LoadResult
from ..measure.validity import Validity, assess, with_hosts
from ..records import Run, new_run
from ..records.environment import environment
from ..records.run import dump_json
from ..server.placement import Placement
from ..targets import Target, TargetHandle, target_of
from ..targets.profiler import RemoteProfiler
from .generators import GeneratorHost
from .load import DistributedLoad, check_split, lead_for
from .quiet import QuietCheck, QuietLevel

#: set by the report batch for each notebook it runs side by side with others
RUN_TAG_ENV = "PERFLAB_RUN_TAG"
#: tries of a timed load whose start was missed (nothing was sent), each with the longer lead the miss taught
START_TRIES = 3
#: the keywords of SessionOptions that choose the hosts (HostOptions' fields)
HOST_KEYWORDS = ("scheduler", "generators", "server_host", "lease_timeout", "tls")


@dataclass(frozen=True)
class SessionOptions:
    """How and where a session measures, beyond what it measures: one typed value every strategy takes as
    ``session=`` (``run_experiment``, ``find_breakpoint``, ``compare_ab``, the gate, the bisection, the history,
    the notebooks' helpers), checked once here.

    ``data_root``: where the run is recorded (default ``$PERFLAB_DATA`` or ``<repo>/data``); ``data_dir``:
    use (and keep) this storage directory instead of a fresh one under ``<data root>/scratch/<run id>/``;
    ``keep_data``: keep the fresh one; ``stats_interval``: seconds between ``/v0/stats`` samples;
    ``placement``: ``"shared"``, ``"split"`` or ``"server=CPUS;load=CPUS"`` (:mod:`perflab.server.placement`,
    a :class:`~perflab.server.placement.Placement` once built); ``thresholds``: the validity record's limits;
    ``scheduler``, ``generators``, ``server_host``, ``lease_timeout``, ``tls``: the hosts
    (:class:`~perflab.config.hosts.HostOptions`, built once as ``hosts``); ``cancel``: a
    :class:`~perflab.cancel.CancelToken` that stops the run's loads and lease waits (a sweep's); ``version``:
    the version of the server measured (:class:`~perflab.config.version.Version`). Variants:
    :meth:`replace`.
    """

    data_root: str | Path | None = None
    data_dir: str | Path | None = None
    keep_data: bool = False
    stats_interval: float = 1.0
    placement: Placement | str | None = "shared"
    thresholds: ValidityThresholds | None = None
    scheduler: str | None = None
    generators: tuple[str, ...] | int | str | None = None
    server_host: str | None = None
    lease_timeout: float | None = None
    tls: str | None = None
    cancel: CancelToken | None = field(default=None, compare=False)
    version: Version | dict | str | None = None
    hosts: HostOptions = field(init=False)

    def __post_init__(self):
        if not (isinstance(self.stats_interval, (int, float)) and self.stats_interval > 0):
            raise ValueError(f"stats_interval must be > 0 seconds, got {self.stats_interval!r}")
        thresholds = self.thresholds if self.thresholds is not None else ValidityThresholds()
        if not isinstance(thresholds, ValidityThresholds):
            raise ValueError(f"thresholds must be a ValidityThresholds, got {type(thresholds).__name__}")
        if self.cancel is not None and not isinstance(self.cancel, CancelToken):
            raise ValueError(f"cancel must be a CancelToken, got {type(self.cancel).__name__}")
        built = {
            "thresholds": thresholds,
            "placement": Placement.of(self.placement),
            "version": Version.of(self.version),
            "hosts": HostOptions(**{k: getattr(self, k) for k in HOST_KEYWORDS}),
        }
        for k, v in built.items():
            object.__setattr__(self, k, v)  # frozen: set once, here, as the other config classes do

    def replace(self, **changes) -> SessionOptions:
        """A copy with ``changes`` applied (checked again)."""
        return dataclasses.replace(self, **changes)


def check_load(target: Target, load: LoadParams, options: SessionOptions) -> None:
    """``load`` can be sent to ``target`` as the session will send it (a cluster's: with its ack/from), or
    ``ValueError``, before anything starts: split over the generator hosts and the target's entries, every
    part needs a thread of its own and none can stop the others early (:func:`.load.check_split`)."""
    check_split(target.load_for(load), options.hosts.generator_count, target.entry_count)


class Session:
    """A recorded run around one target (see the module docstring).

    ``kind``/``name``: the run's; ``target``: what is measured (anything :func:`perflab.targets.target_of`
    takes); ``tool``: the load generator every load of the session runs with (its version is recorded);
    ``params``: what else the run records as parameters. Inside the block, ``handle`` is the running target.
    """

    def __init__(
        self,
        kind: str,
        name: str,
        target,
        tool: LoadTool,
        options: SessionOptions | None = None,
        prefill: PrefillParams | None = None,
        params: dict | None = None,
    ):
        self.target = target_of(target)
        self.options = options or SessionOptions()
        self.target.check_prefill(prefill)
        if not isinstance(tool, LoadTool):
            raise ValueError(f"tool must be a LoadTool, got {type(tool).__name__}")
        self.placement = self.options.placement
        if self.placement.server_cpus is not None:
            self.target.require("placement")
        self.kind, self.name, self.tool = kind, name, tool
        self.prefill_params = prefill
        self.extra_params = params or {}
        self.data_root = paths.data_root(self.options.data_root)
        self.run: Run | None = None
        self.hosts: HostSet | None = None
        self.handle: TargetHandle | None = None
        self.stats_unavailable: str | None = None
        self.prefill_result: dict | None = None
        self.data_dir: Path | None = None
        self.calibrations: list[hostspeed.Calibration] = []
        self.quiet = QuietLevel(
            lambda seconds: self.handle.others(seconds, self.hosts.on_server_machine),
            self.thresholds.others_warn,
            self.cancel,
        )
        self._sig = None
        self._servers: list[dict] = []

    @property
    def thresholds(self) -> ValidityThresholds:
        return self.options.thresholds

    @property
    def cancel(self) -> CancelToken | None:
        return self.options.cancel

    def __enter__(self) -> Session:
        # the hosts first: a missing host or role, a version mismatch or an unreachable scheduler is an error
        # before a run exists or anything starts
        self.hosts = HostSet.open(
            self.options.hosts, f"{self.kind} {self.name}", self.options.hosts.lease_timeout, self.cancel
        )
        try:
            if self.hosts.apart and self.placement.server_cpus is not None:
                raise ValueError(
                    "placement: CPU sets place the server and the generator on one machine; with "
                    "generator hosts apart from the server host use 'shared'"
                )
            why = self.target.why_not("remote") if not self.hosts.shares_files else None
            if why is not None:
                raise ValueError(f"server: {why}")
            self.hosts.start_agents(self.target.host_class, GeneratorHost)
            params = {
                "server": self.target.to_dict(),
                "target": self.target.kind,
                **self.extra_params,
                "prefill": self.prefill_params.to_dict() if self.prefill_params else None,
                "stats_interval": self.options.stats_interval,
                "validity": self.thresholds.to_dict(),
            }
            self.run = new_run(
                self.kind,
                self.name,
                params,
                self.data_root,
                environment=environment({self.tool.name: self.tool.version()}),
                version=self.version(),
            )
        except BaseException:
            self.hosts.close()
            raise
        self.run.meta["placement"] = self.placement.to_dict()
        self.run.meta["hosts"] = self.hosts.record()
        if os.environ.get(RUN_TAG_ENV):
            self.run.meta["tag"] = os.environ[RUN_TAG_ENV]  # which notebook of a parallel report made it
        self.run.save()
        self._sig = children.sigterm_as_exception()
        self._sig.__enter__()
        try:
            self._setup()
        except BaseException as e:
            self.__exit__(type(e), e, e.__traceback__)
            raise
        return self

    def version(self) -> dict:
        """Which version of the server under test the run measures: ``{"commit", "label"}`` (what is given wins;
        the commit found: :meth:`perflab.targets.base.Target.version_commit`; the label, else your server's own: a
        ``perflab.toml``'s, or a course server's student and stage, so the runs of one server of yours can be told
        from the others')."""
        given = self.options.version
        own = Version.of(getattr(self.target.config, "label", None)).label
        return {"commit": given.commit or self.target.version_commit(), "label": given.label or own}

    @property
    def _host(self):
        return self.hosts.server_agent

    def _setup(self):
        shares = self.hosts.shares_files
        # on this machine the scratch storage is <data root>/scratch/<run id>/ as always; on another host, the
        # agent's own temporary directory there
        scratch = str(self.data_root / "scratch" / self.run.id) if shares and self.options.data_dir is None else None
        got = answer(
            self._host.prepare(
                self.target,
                str(self.run.dir) if shares else None,
                str(self.options.data_dir) if self.options.data_dir is not None else None,
                scratch,
                self.prefill_params,
            ),
            self.target.prepare_s(self.prefill_params),
            f"server host {self.hosts.server.name}: the storage",
        )
        self.data_dir = Path(got["data_dir"]) if got["data_dir"] else None
        if got["prefill"] is not None:
            self.prefill_result = got["prefill"]
            self.run.update(prefill=self.prefill_result)
        self.start_target()
        self.calibrate()

    def start_target(self):
        """Start the target on the server host and record what it is."""
        desc = answer(
            self._host.start(self.placement.prefix("server"), self.options.stats_interval, self.hosts.server_address()),
            self.target.start_s,
            f"server host {self.hosts.server.name}: the server's start",
        )
        self.handle = self.target.handle(self.hosts, desc)
        record, artifacts = self.handle.record()
        self.run.update(**record)
        self.run.meta["artifacts"].update(artifacts)
        self._servers.append({"pid": self.handle.pid, "started_at": desc["started_at"], "host": self.hosts.server.name})
        self.stats_unavailable = self.handle.stats_unavailable
        if self.stats_unavailable is not None:
            self.run.update(stats_unavailable=self.stats_unavailable)

    @property
    def split(self) -> bool:
        """Every load runs as several generator processes (several generator hosts, or entry nodes)."""
        return self.hosts.split or len(self.handle.entries) > 1

    def _start_once(self, load: LoadParams, out_dir, timed: bool | None = None) -> DistributedLoad:
        """Start ``load`` against the target's entries with the session's tool, on its generator hosts (split
        over hosts and entry nodes when there are several; placed on its CPUs). ``timed``: with a start time
        set ahead even when unsplit (``window_start``: faults and a checker run on it); by default whenever the
        tool takes one. A timed load's window is known before it starts, so the server host samples the
        target's CPU at both its edges (the load's CPU per request: :meth:`validity`); ``False`` for a load
        nothing is measured of (a warm-up), which then starts at once."""
        if LoadTool.of(load) != self.tool:
            raise ValueError(
                f"load: this session measures with {self.tool.name} ({self.tool.binary}), the load asks for {load.tool}"
            )
        timed = self.tool.starts_at_a_time if timed is None else timed
        sent = self.handle.load_for(load)
        lp = DistributedLoad(
            self.hosts,
            self.handle.entries,
            sent,
            Path(out_dir),
            self.placement.prefix("load"),
            lead_for(self.hosts),
            timed,
            self.cancel,
        ).start()
        if lp.window_start is not None:
            self.handle.cpu_at([lp.window_start, lp.window_start + sent.duration], self.hosts.on_server_machine)
        return lp

    def start_load(self, load: LoadParams, out_dir, timed: bool | None = None) -> DistributedLoad:
        """:meth:`_start_once`, returned once every part is ready before its start time (the load is then sure
        to be sent as planned, so what depends on its window may be started). A start the hosts missed sends
        nothing: it is tried again, up to :data:`START_TRIES` times, each with the longer lead the miss taught
        (:func:`.load.lead_for`). A part that exited before its ready line (perflab-load finding its start
        time already past, or failing) counts as a miss too; its error is raised after the last try. The only
        way a session starts a load: a split one (several hosts, a cluster's entry nodes) has a start time even
        when ``timed`` is ``False`` (a warm-up, a ramp), so it can miss it too."""
        for attempt in range(1, START_TRIES + 1):
            lp = self._start_once(load, out_dir, timed)
            try:
                lp.barrier()
                if not lp.failed_before_start:
                    return lp
                lp.wait()  # a part exited before its ready line: its error
                raise LoadError("perflab-load exited before its ready line")
            except LoadError:
                if not lp.failed_before_start or attempt == START_TRIES:
                    raise
        raise AssertionError("unreachable")

    def profiler(self, params, title: str, node: int | None = None, out_dir=None) -> RemoteProfiler:
        """async-profiler in the target's JVM (a cluster's node ``node``) on its host, writing into the run
        (or ``out_dir``; window mode)."""
        return RemoteProfiler(
            self.hosts,
            params,
            Path(out_dir) if out_dir is not None else self.run.dir,
            title,
            node=node,
            code_map=self.handle.code_map,
        )

    def calibrate(self) -> hostspeed.Calibration:
        """Time the fixed loop on every CPU of the server host (:mod:`perflab.hostspeed`); call it
        while no load runs."""
        cal = self.handle.calibrate()
        self.calibrations.append(cal)
        return cal

    def wait_quiet(self, first_s: float, max_wait_s: float) -> QuietCheck:
        """Before a measured load: other programs' CPU on the server host read for ``first_s`` while the target
        idles, then waited out for up to ``max_wait_s`` while above the session's quiet level
        (:mod:`perflab.core.quiet`); the loads after it are judged against that level."""
        return self.quiet.wait(first_s, max_wait_s)

    def validity(self, res: LoadResult, started_at: float | None = None) -> Validity:
        """The validity record of a load that ran against this session's target; its ``host_speed`` check
        holds the last calibration before the load (and the first after it, if any) against the session's
        fastest. With several generator hosts (or one on another machine) each host is judged on its own
        share too, and the run is only as valid as its worst host (:func:`perflab.measure.validity.with_hosts`).
        The target's CPU over the same window becomes the load's ``server_cpu_s`` (its CPU per request), so
        the validity record and the metric read one window."""
        start = res.measure_start or started_at or res.started_at
        end = res.measure_end or res.ended_at
        window = self.handle.cpu_window(start, end) if end else None
        res.server_cpu_s = window.cpu_s if window is not None else None
        began = started_at or start or 0.0
        before = [c for c in self.calibrations if c.at <= began][-1:]
        after = [c for c in self.calibrations if end and c.at >= end][:1]
        host = (before + after, self.calibrations) if before or after else None
        v = assess(res, window, self.placement, self.thresholds, host, self.quiet.level if self.quiet.checks else None)
        if res.parts and (len(res.parts) > 1 or self.hosts.apart):
            per_host = {n: assess(part, None, None, self.thresholds) for n, part in res.parts.items()}
            v, bottleneck = with_hosts(v, per_host, self._sharing_note())
            if res.hosts is not None:
                for n, hv in per_host.items():
                    res.hosts["generators"][n]["validity"] = hv.to_dict()
                res.hosts["bottleneck"] = bottleneck
                res.hosts["verdict"] = str(v.level)
                if res.out_dir is not None:
                    dump_json(res.hosts, Path(res.out_dir) / "hosts.json")
        return v

    def _sharing_note(self) -> str:
        gens = [g for g in self.hosts.generators if g.name != self.hosts.server.name]
        same = [g.name for g in gens if g.boot_id is not None and g.boot_id == self.hosts.server.boot_id]
        note = (
            f"server on host {self.hosts.server.name}, generators on {', '.join(g.name for g in self.hosts.generators)}"
        )
        if same:
            note += f" ({', '.join(same)} on the server's machine: they share its CPUs)"
        return note

    def restart_target(self):
        """Stop and start the target again on the same data (fresh processes per probe)."""
        self.target.require("restart")
        self._stop_target()
        self.start_target()

    def fresh_start(self) -> dict:
        """Stop the target, bring its storage back to how it was before any load (a scratch directory emptied and
        prefilled again; a directory you gave is kept) and start it again: what another tool would measure after
        starting the server itself. What it began on (:meth:`perflab.targets.base.TargetHost.reset_storage`)."""
        self.target.require("restart")
        self._stop_target()
        got = self.handle.reset_storage(self.target.prepare_s(self.prefill_params))
        self.start_target()
        return got

    def _stop_target(self):
        if self.handle is not None:
            self.handle.stop()
            info = self.handle.info()
            self._servers[-1].update(exit_code=info.get("exit_code"), stopped=info.get("stopped"))

    def sync_files(self) -> None:
        """Bring the server host's logs and event lines into the run (nothing to do on this machine)."""
        if self.hosts is None or self.hosts.shares_files or self.run is None:
            return
        for name, text in self.handle.files().items():
            path = self.run.dir / name
            path.parent.mkdir(parents=True, exist_ok=True)  # a cluster's are under nodes/<i>/
            path.write_text(text)

    def stats_frame(self, t0: float | None = None) -> pd.DataFrame:
        if self.handle is None or self.stats_unavailable is not None:
            return pd.DataFrame()
        return self.handle.stats_frame(self.handle.samples(), t0)

    def __exit__(self, et, ev, tb):
        if et is not None and self.hosts is not None:
            self.hosts.abort()  # an interrupted start or fill would hold the server host's stop behind it
        try:
            if (
                self.hosts is not None
                and self.hosts.server_agent is not None
                and self.run is not None
                and self.handle is not None
            ):
                try:
                    self._stop_target()
                    samples = self.handle.samples(timeout=60) if self.stats_unavailable is None else []
                    if samples and not (self.run.dir / "stats.csv").exists():
                        self.run.write_frame("stats.csv", self.handle.stats_frame(samples), artifact="stats")
                    self.sync_files()
                except Exception:  # noqa: BLE001 - a lost server host: the run says so below
                    if et is None:
                        raise
            if self.run is not None:
                self.run.meta["servers"] = self._servers
                if self.quiet.checks:
                    self.run.meta["quiet"] = self.quiet.summary()
                if self.calibrations:
                    self.run.meta["host_speed"] = {
                        "loop": hostspeed.LOOP,
                        "spread": hostspeed.spread(self.calibrations),
                        "calibrations": [c.to_dict() for c in self.calibrations],
                    }
                if ev is not None and isinstance(ev, HostLost):
                    # what the other hosts returned is kept under the load's hosts/<name>/; the run says why
                    # nothing it measured can be trusted
                    self.run.meta["validity"] = Validity.lost(ev.cause).to_dict()
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
