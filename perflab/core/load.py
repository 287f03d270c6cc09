"""One load from the session's generator hosts to its entries: start, barrier, watch, collect, merge.

A load has one *part* per generator host and entry (the server; or each entry node of a cluster, which gets
its own share of the load): with N parts, part i runs ``--segment i/N`` of the same command (the whole
run's ``-t -c -R``: the union of the parts is exactly the one-process schedule) with one start time: the
coordinator picks ``T`` a little ahead (the *lead*), gives each host ``T`` on its own clock (``T`` + its
measured offset), waits for every part's ready line (the barrier) and stops them all before ``T`` if one is
missing. It then watches every host until its generators exit; a host whose worker leaves the pool, or
that stops answering, is *lost*: the others are stopped (they write what they have), everything returned is
kept under ``hosts/<name>/`` and :class:`~perflab.hosts.pool.HostLost` is raised. The parts are merged exactly
(:mod:`perflab.measure.merge`) into the load's own files, on the server host's clock.

With one part there is nothing to split or synchronise: the generator runs as it always did (in the run
directory itself on the in-process hosts), with a start time when the caller needs to know when the window
starts (``timed``: a session's measured loads, whose CPU is sampled at the window's edges, and a cluster
run's faults and checker).
"""

from __future__ import annotations

import json
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from .. import children
from ..cancel import CancelToken
from ..errors import LoadError
from ..hosts.actors import answer
from ..hosts.pool import ASK_S, HostLost
from ..measure.generator import expected_seconds
from ..measure.merge import Part, merge
from ..measure.result import CONSOLE, HDR_LOG, STDERR, SUMMARY, LoadResult, read_outputs
from ..records.run import dump_json

#: the lead (between picking the start time and the start) of the first load on a host set; later ones:
#: LEAD_FACTOR x the longest time their hosts took to get ready in their last READY_SEEN loads, within
#: [MIN_LEAD_S, MAX_LEAD_S] (this process remembers it per host set). A start the hosts missed counts as
#: having taken the whole lead, so the next lead is LEAD_FACTOR x longer, and the start is tried again
#: (Session.start_load): on a loaded machine the lead grows to what the hosts need there and then, where a
#: quiet one keeps the short lead (a local perflab-load is ready some 10-40 ms after its start here), which
#: every probe waits
FIRST_LEAD_S = 1.0
MIN_LEAD_S = 0.2
MAX_LEAD_S = 10.0
LEAD_FACTOR = 3.0
READY_SEEN = 10
#: every host must be ready this long before the start time (else all are stopped before it)
BARRIER_MARGIN_S = 0.1
_ready_s: dict[tuple, deque] = {}


def _key(hosts) -> tuple:
    return (hosts.pool.address, tuple(sorted(g.name for g in hosts.generators)))


def _seen(hosts, ready_s: float) -> None:
    _ready_s.setdefault(_key(hosts), deque(maxlen=READY_SEEN)).append(ready_s)


def lead_for(hosts) -> float:
    """How far ahead to set the next start on these hosts (see :data:`FIRST_LEAD_S`)."""
    seen = _ready_s.get(_key(hosts))
    if not seen:
        return FIRST_LEAD_S
    return min(MAX_LEAD_S, max(MIN_LEAD_S, LEAD_FACTOR * max(seen)))


#: seconds a host may take to answer one status call before it counts as cut off
ANSWER_S = 10.0
#: how often the coordinator looks at every host while a load runs
POLL_S = 0.1


class StartMissed(LoadError):
    """A part was not ready before the start time set ahead: every part was stopped before it, nothing was sent."""


def check_split(params, hosts: int, entries: int = 1) -> None:
    """A load may run as ``hosts`` x ``entries`` perflab-load processes (one per generator host and entry
    node), or ``ValueError`` naming why not: every part needs a thread of its own, and a part cannot stop
    the others early. Checked before anything starts (and again by :meth:`DistributedLoad.start`)."""
    n = hosts * entries
    if n == 1:
        return
    what = " and ".join(
        x
        for x in (f"{hosts} generator hosts" if hosts > 1 else "", f"{entries} entry nodes" if entries > 1 else "")
        if x
    )
    if params.tool != "perflab-load":
        raise ValueError(
            f"tool: {params.tool} cannot split a run over {what}; use perflab-load (its parts share one "
            f"schedule: --segment, --start-at)"
        )
    if params.threads < n:
        raise ValueError(
            f"threads: the load is split over {what}, one generator process each ({n}), so it needs "
            f"at least {n} threads (-t), got {params.threads}"
        )
    if params.stop_on_p99 is not None:
        raise ValueError(
            f"stop_on_p99: each of the {n} generator processes ({what}) would stop on its own; send "
            f"the load from one host to one node to stop early"
        )


@dataclass(frozen=True, eq=False)  # one object per part: parts key dicts by identity
class _Part:
    """One perflab-load process of a load: segment ``index`` on generator host ``host`` against entry
    ``entry`` (its name) at ``url``; ``name`` labels it in hosts.json and the validity record."""

    index: int
    host: object
    entry: str
    url: str
    name: str


class DistributedLoad:
    """A load running on ``hosts.generators`` against ``entries`` (name -> URL: the server, or a cluster's
    entry nodes), one part per host and entry (``.wait()`` returns the merged
    :class:`~perflab.measure.result.LoadResult`, like :class:`~perflab.measure.generator.LoadProcess`).
    ``timed``: give every part one start time even when there is one (a cluster run's faults and checker
    run on the window's clock, :attr:`window_start`); ``cancel``: stop waiting once it is cancelled."""

    def __init__(
        self,
        hosts,
        entries: dict[str, str],
        params,
        out_dir: Path,
        cpu_prefix: list[str],
        lead_s: float,
        timed: bool = False,
        cancel: CancelToken | None = None,
    ):
        self.hosts = hosts
        self.entries = dict(entries)
        self.params = params
        self.out_dir = Path(out_dir)
        self.cpu_prefix = cpu_prefix
        self.lead_s = lead_s
        self.gens = list(hosts.generators)
        self.url = ",".join(self.entries.values())
        several = len(self.entries) > 1
        self.parts = [
            _Part(
                g * len(self.entries) + e,
                h,
                name,
                url,
                h.name if not several else name if len(self.gens) == 1 else f"{h.name} {name}",
            )
            for g, h in enumerate(self.gens)
            for e, (name, url) in enumerate(self.entries.items())
        ]
        self.split = len(self.parts) > 1
        self.timed = timed or self.split
        self.start_at: float | None = None
        self.started_at = 0.0
        self.commands: dict[str, list[str]] = {}
        self.ready_s: float | None = None
        self.cancel = cancel
        self._done = False
        self._passed = False  # the barrier
        #: a part exited before its ready line (a start time it could not keep on a stalled machine, or an
        #: error of its own): nothing of the load was sent
        self.failed_before_start = False

    @property
    def window_start(self) -> float | None:
        """When the measured window starts (after the warm-up), on the server host's clock; ``None`` unless
        the start time was set."""
        if self.start_at is None:
            return None
        return self.start_at + self.hosts.server.clock_offset_s + self.params.warmup

    # --- starting ---------------------------------------------------------------------------------
    def start(self) -> DistributedLoad:
        p = self.params
        check_split(p, len(self.gens), len(self.entries))
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.started_at = time.time()
        if self.timed:
            self.start_at = time.time() + self.lead_s
        futures = {}
        n = len(self.parts)
        for part in self.parts:
            h = part.host
            extra = ["--start-at", f"{self.start_at + h.clock_offset_s:.6f}"] if self.timed else []
            extra += ["--segment", f"{part.index}/{n}"] if self.split else []
            out = str(self.out_dir) if self.hosts.shares_files and not self.split else None
            try:
                futures[part] = self.hosts.generator(h.name).start(part.url, p, extra, out, self.cpu_prefix, part.index)
            except Exception as e:  # noqa: BLE001 - a worker Dask already knows is lost
                futures[part] = HostLost(f"generator host {h.name} ({h.address}) is gone: {e}")
        errors = {}
        for part, f in futures.items():
            try:
                if isinstance(f, Exception):
                    raise f
                got = answer(f, ASK_S, f"generator host {part.host.name}: perflab-load's start")
                self.commands[part.name] = got["command"]
            except Exception as e:  # noqa: BLE001 - one part failing to start stops all of them
                errors[part.host.name] = e
        if errors:
            self.stop(1)
            name, e = next(iter(errors.items()))
            if isinstance(e, HostLost):
                raise e
            if isinstance(e, (ValueError, FileNotFoundError)):
                raise ValueError(f"generator host {name}: {e}") from None
            raise LoadError(f"generator host {name} could not start perflab-load: {type(e).__name__}: {e}")
        return self

    # --- watching ---------------------------------------------------------------------------------
    def _states(self) -> dict:
        """part -> state dict (``ready``, ``rc``), or the exception that stands for a lost host."""
        futures, by_host = {}, {}
        for h in self.gens:
            try:
                futures[h.name] = self.hosts.generator(h.name).state()
            except Exception as e:  # noqa: BLE001 - Dask knows the worker is gone before anyone asks
                futures[h.name] = e
        alive = set(self.hosts.live_workers())
        for h in self.gens:
            if h.address not in alive or isinstance(futures[h.name], Exception):
                by_host[h.name] = HostLost(f"generator host {h.name} ({h.address}) left the pool during the run")
                continue
            try:
                by_host[h.name] = futures[h.name].result(timeout=ANSWER_S)["parts"]
            except Exception as e:  # noqa: BLE001 - a dead or cut-off worker, whatever the transport says
                by_host[h.name] = HostLost(
                    f"generator host {h.name} ({h.address}) stopped answering during the run ({type(e).__name__}: {e})"
                )
        out = {}
        for part in self.parts:
            got = by_host[part.host.name]
            out[part] = got if isinstance(got, Exception) else got.get(part.index, {"ready": False, "rc": None})
        return out

    def barrier(self) -> None:
        """Every part ready before the start time, or all stopped before any load is sent
        (:class:`StartMissed`): the last look is :data:`BARRIER_MARGIN_S` before the start, so that the stop
        reaches every host in time. Once passed (or for an untimed load) it returns at once; a part that
        exited before its ready line sets :attr:`failed_before_start` (:meth:`wait` reports its error)."""
        if not self.timed or self._passed:
            return
        deadline = self.start_at - BARRIER_MARGIN_S
        try:
            while True:
                states = self._states()
                lost = [s for s in states.values() if isinstance(s, Exception)]
                if lost:
                    raise lost[0]
                if any(s["rc"] is not None and not s["ready"] for s in states.values()):
                    self.failed_before_start = self._passed = True
                    return  # a part failed before its ready line: collect() reports its error
                if all(s["ready"] for s in states.values()):
                    self.ready_s = time.time() - self.started_at
                    _seen(self.hosts, self.ready_s)
                    self._passed = True
                    return
                if time.time() > deadline:
                    late = sorted({p.host.name for p, s in states.items() if not s["ready"]})
                    _seen(self.hosts, self.lead_s)  # they needed more than that: the next lead is longer
                    self.failed_before_start = True  # stopped before the start: nothing was sent
                    raise StartMissed(
                        f"generator host{'s' if len(late) > 1 else ''} {', '.join(late)} not ready "
                        f"{self.lead_s - BARRIER_MARGIN_S:.2f} s after the start was set; every host "
                        f"was stopped before the start"
                    )
                time.sleep(0.01)
        except BaseException:
            self.stop(1)
            self._collect(partial=True)  # what each part wrote (its stderr says how far it got)
            raise

    def wait(self, timeout: float | None = None) -> LoadResult:
        """Wait for every part (default limit: the run's expected time + 60 s), collect and merge."""
        expected = expected_seconds(self.params)
        limit = timeout if timeout is not None else expected + 60 + (self.lead_s if self.timed else 0)
        deadline = time.monotonic() + limit
        lost: dict[str, Exception] = {}
        try:
            self.barrier()
            while True:
                states = self._states()
                lost = {p.host.name: s for p, s in states.items() if isinstance(s, Exception)}
                if lost:
                    break
                if all(s["rc"] is not None for s in states.values()):
                    break
                if self.cancel is not None:
                    self.cancel.check()
                if time.monotonic() > deadline:
                    self.stop(1)
                    raise LoadError(
                        f"perflab-load did not finish within {limit:g} s on "
                        f"{', '.join(p.name for p, s in states.items() if s['rc'] is None)}; stopped"
                    )
                time.sleep(POLL_S)
        except BaseException:
            self.stop(2)
            self._collect(partial=True)
            raise
        if lost:
            self.stop(5)  # the others write what they have; it is kept under hosts/<name>/
            got = self._collect(partial=True)
            self.lost = {n: str(e) for n, e in lost.items()}
            _write_json(
                self.out_dir / "hosts.json", {"lost": self.lost, "returned": sorted({p.host.name for p in got})}
            )
            raise next(iter(lost.values()))
        got = self._collect(partial=False)
        return self._result(got)

    def stop(self, grace_s: float = 5.0) -> None:
        """Interrupt every part (SIGINT: it writes what it has), then kill it."""
        futures = []
        for h in self.gens:
            try:
                futures.append(self.hosts.generator(h.name).stop(grace_s))
            except Exception:  # noqa: BLE001 - a lost host has nothing left to stop
                continue
        for f in futures:
            try:
                f.result(timeout=grace_s * len(self.entries) + ANSWER_S)
            except Exception:  # noqa: BLE001
                continue

    # --- collecting ---------------------------------------------------------------------------------
    def _collect(self, partial: bool) -> dict:
        """Every reachable part's outputs (part -> what its host returned), written to the run: the load's
        own directory when it ran alone, else its :meth:`part_dir`."""
        if self._done:
            return {}
        self._done = True
        contents = not (self.hosts.shares_files and not self.split)
        futures = {}
        for h in self.gens:
            try:
                futures[h.name] = self.hosts.generator(h.name).collect(contents)
            except Exception:  # noqa: BLE001
                continue
        by_host = {}
        for name, f in futures.items():
            try:
                by_host[name] = f.result(timeout=ANSWER_S + 30)
            except Exception:  # noqa: BLE001 - a lost host returns nothing
                continue
        got = {}
        for part in self.parts:
            r = by_host.get(part.host.name, {}).get(part.index)
            if r is None:
                continue
            got[part] = r
            target = self.part_dir(part)
            target.mkdir(parents=True, exist_ok=True)
            for f, text in r["files"].items():
                (target / f).write_text(text)
        return got

    def part_dir(self, part: _Part) -> Path:
        """Where a part's own files are kept: the load's directory itself when it ran alone and its clock is
        the server host's, else ``hosts/<name>/`` (several hosts, or another clock) and ``entries/<entry>/``
        (several entry nodes)."""
        d = self.out_dir
        if len(self.gens) > 1 or self.hosts.shift_s(part.host) != 0:
            d = d / "hosts" / part.host.name
        return d / "entries" / part.entry if len(self.entries) > 1 else d

    def _result(self, got: dict) -> LoadResult:
        failed = {p: r for p, r in got.items() if r["rc"] != 0}
        if failed:
            part, r = next(iter(failed.items()))
            err = children.tail(self.part_dir(part) / STDERR)
            lines = [ln for ln in err.splitlines() if ln.strip()]
            where = f" on {part.name}" if self.split or not self.hosts.shares_files else ""
            raise LoadError(
                f"perflab-load exited with status {r['rc']}{where}" + (f": {lines[-1]}" if lines else ""), err
            )
        parts, results = [], {}
        for part in self.parts:
            d = self.part_dir(part)
            console = (d / CONSOLE).read_text(errors="replace") if (d / CONSOLE).is_file() else ""
            summary, hdr = read_outputs(d, self.params, console)
            results[part.name] = LoadResult(
                params=self.params,
                url=part.url,
                command=got[part]["command"],
                returncode=0,
                console=console,
                summary=summary,
                hdr=hdr,
                out_dir=d,
                started_at=got[part]["started_at"],
                ended_at=got[part]["ended_at"],
                stderr_tail=(d / STDERR).read_text(errors="replace")[-4000:] if (d / STDERR).is_file() else "",
                tool_version=summary.get("version"),
            )
            if self.params.tool == "perflab-load":
                log = (d / HDR_LOG).read_text() if (d / HDR_LOG).is_file() else ""
                parts.append(Part(part.name, summary, log, self.hosts.shift_s(part.host)))
        first = results[self.parts[0].name]
        if len(results) == 1 and (first.out_dir == self.out_dir or self.params.tool != "perflab-load"):
            res = first
        else:
            summary, log = merge(parts)
            (self.out_dir / SUMMARY).write_text(json.dumps(summary, indent=2) + "\n")
            (self.out_dir / HDR_LOG).write_text(log)
            (self.out_dir / CONSOLE).write_text(_console(summary, results))
            (self.out_dir / STDERR).write_text("".join(f"== {n} ==\n{r.stderr_tail}\n" for n, r in results.items()))
            summary, hdr = read_outputs(self.out_dir, self.params, "")
            res = LoadResult(
                params=self.params,
                url=self.url,
                command=first.command,
                returncode=0,
                console=(self.out_dir / CONSOLE).read_text(),
                summary=summary,
                hdr=hdr,
                out_dir=self.out_dir,
                started_at=min(r.started_at for r in results.values()),
                ended_at=max(r.ended_at for r in results.values()),
                tool_version=first.tool_version,
            )
        res.parts = results
        res.hosts = self.record(results)
        _write_json(self.out_dir / "hosts.json", res.hosts)
        return res

    def record(self, results: dict[str, LoadResult]) -> dict:
        """The load's parts: each one's host, entry, segment, share, achieved rate, start skew and clock
        (``generators``, by part name)."""
        gens = {}
        for part in self.parts:
            h, s = part.host, results[part.name].summary
            seg, sa = s.get("segment") or {}, s.get("start_at") or {}
            gens[part.name] = {
                "host": h.name,
                "address": h.address,
                "url": part.url,
                "entry": part.entry if len(self.entries) > 1 else None,
                "segment": f"{seg.get('index', 0)}/{seg.get('count', 1)}",
                "threads": s.get("threads"),
                "connections": s.get("connections"),
                "target_rate": s.get("target_rate"),
                "achieved_rate": s.get("achieved_rate"),
                "requests": s.get("requests"),
                "offered": s.get("offered"),
                "clock_offset_us": round(h.clock_offset_s * 1e6, 1),
                "clock_uncertainty_us": round(h.clock_uncertainty_s * 1e6, 1),
                "start_at": sa.get("requested_s"),
                "start_skew_us": sa.get("skew_us"),
                "ready_ahead_s": sa.get("ready_ahead_s"),
                "command": self.commands.get(part.name),
                "dir": str(self.part_dir(part).relative_to(self.out_dir)) or ".",
            }
        skews = [g["start_skew_us"] for g in gens.values() if g["start_skew_us"] is not None]
        unc = max((h.clock_uncertainty_s for h in self.gens), default=0.0)
        return {
            "generators": gens,
            "server": self.hosts.server.name,
            "start_at": self.start_at,
            "lead_s": self.lead_s if self.timed else None,
            "ready_s": self.ready_s,
            # the parts' starts differ by their own skews plus what their measured offsets may be off by
            "start_skew_us": round(max(skews) - min(skews), 3)
            if len(skews) > 1
            else (0.0 if len(self.parts) == 1 else None),
            "offset_uncertainty_us": round(unc * 1e6, 1),
            "clock": "the server host's" if self.split or self.hosts.shift_s(self.gens[0]) else "the generator's",
        }


def _write_json(path: Path, obj) -> None:
    dump_json(obj, path)


def _console(summary: dict, results: dict) -> str:
    """wrk2-style text of the merged run (what the notebooks' console summary reads), then each host's."""
    lat = summary.get("latency_us") or {}

    def t(us):
        return f"{us / 1000:.2f}ms" if us >= 1000 else f"{us:.2f}us"

    lines = [
        f"perflab: one run merged from {len(results)} generator processes ({', '.join(results)}); each one's "
        f"own output is under hosts/<name>/ or entries/<node>/",
        f"Running {summary.get('duration_s', 0):.2f}s test @ {summary.get('url')}",
        f"  {summary.get('threads')} threads and {summary.get('connections')} connections",
        "  Latency Distribution (HdrHistogram - Recorded Latency)",
    ]
    for k, label in (
        ("p50", "50.000%"),
        ("p75", "75.000%"),
        ("p90", "90.000%"),
        ("p99", "99.000%"),
        ("p99.9", "99.900%"),
        ("p99.99", "99.990%"),
        ("p99.999", "99.999%"),
        ("p100", "100.000%"),
    ):
        if k in lat:
            lines.append(f" {label} {t(lat[k]):>10}")
    err = summary.get("errors") or {}
    lines.append(
        f"  {summary.get('requests', 0)} requests in {summary.get('duration_s', 0):.2f}s, "
        f"{summary.get('bytes_read', 0)}B read"
    )
    if any(err.get(k) for k in ("connect", "read", "write", "timeout")):
        lines.append(
            f"  Socket errors: connect {err.get('connect', 0)}, read {err.get('read', 0)}, write "
            f"{err.get('write', 0)}, timeout {err.get('timeout', 0)}"
        )
    if err.get("status"):
        lines.append(f"  Non-2xx or 3xx responses: {err['status']}")
    lines.append(f"Requests/sec: {summary.get('achieved_rate', 0):.2f}")
    for name, r in results.items():
        lines += ["", f"---------- {name} ----------", r.console.rstrip()]
    return "\n".join(lines) + "\n"
