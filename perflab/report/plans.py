"""Experiment plans: which notebooks the batch runs, with which parameters.

A plan is an ordered list of notebooks, each with the papermill parameters that override its
``parameters`` cell. Three plans are built in:

* ``quick`` (``make report``): a tour. Every notebook runs and tells its story with honest, short
  measurements (1-2 s windows, one probe per rate, few pairs), about 8 minutes on a 2-core machine with
  the builds; each page says its numbers are a tour's (:attr:`Plan.caveat`).
* ``standard`` (``make report PLAN=standard``): numbers worth quoting, in well under an hour: windows of
  seconds after warm-up, repeated edges, enough pairs to claim a difference.
* ``full`` (``make report PLAN=full``): course-length durations (the seeds' 1-5 minute runs), more
  probes and a tighter breakpoint precision.

A plan can also be a JSON file: ``{"name": "...", "notebooks": [{"notebook": "01-stable-load",
"parameters": {...}}, ...]}`` (the tests use tiny ones).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import nbformat

from .. import i18n, paths
from ..config import ForeignServer
from ..config.measured import Measured
from ..config.project import Project
from . import aim, own, stage


@dataclass(frozen=True)
class NotebookSpec:
    notebook: str  # file stem in notebooks/, e.g. "01-stable-load"
    parameters: dict = field(default_factory=dict)
    title: str | None = None  # defaults to the notebook's first heading
    output: str | None = None  # name of the executed copy and its page (default: notebook)
    not_applicable: str | None = None  # why the batch skips it (e.g. for your own server), shown on the index
    after: bool = False  # runs after every other notebook (it reads what they recorded)
    yours: dict = field(default_factory=dict)  # parameters that replace the built-in server's for yours

    @property
    def name(self) -> str:
        return self.output or self.notebook

    def path(self, notebooks_dir: Path) -> Path:
        p = notebooks_dir / f"{self.notebook}.ipynb"
        if not p.is_file():
            raise ValueError(f"plan names notebook {self.notebook!r} but {p} does not exist")
        return p


@dataclass(frozen=True)
class Plan:
    name: str
    notebooks: tuple[NotebookSpec, ...]
    description: str = ""
    target: str = ""  # what the notebooks test when it is not the built-in server
    caveat: str = ""  # one line every page shows: what its numbers are not
    lead: str | None = None  # the notebook whose finding heads the index (a course server's stages)
    language: str = i18n.DEFAULT  # what report.md and the index are written in (perflab.i18n)
    stage: int | None = None  # the course stage whose asks the report answers (perflab.report.stage)

    @property
    def aim(self) -> str:
        """Whose pages these are: :data:`~perflab.report.aim.BUILTIN` or :data:`~perflab.report.aim.YOURS`."""
        return aim.YOURS if self.target else aim.BUILTIN

    def only(self, names: list[str]) -> Plan:
        wanted = [n.strip() for n in names if n.strip()]
        known = {s.notebook for s in self.notebooks}
        unknown = [n for n in wanted if not any(n == k or k.startswith(n) for k in known)]
        if unknown:
            raise ValueError(
                f"--only: no notebook named {', '.join(unknown)} in plan {self.name} (has: {', '.join(sorted(known))})"
            )
        picked = tuple(s for s in self.notebooks if any(s.notebook == n or s.notebook.startswith(n) for n in wanted))
        return replace(self, notebooks=picked)

    def aimed(self, what: Measured, every: bool = False, language: str | None = None) -> Plan:
        """This plan aimed at what is measured (:func:`perflab.config.measured.resolve`, as every command
        resolves it): the server a project file declares (:meth:`for_project`; ``every``: every notebook, not
        only what its course stage asks; ``language``: the report's, over the file's), yours by command (:meth:`for_server`), or the built-in server (this
        plan)."""
        if what.project is not None:
            return self.for_project(what.project, every, language)
        if isinstance(what.target, ForeignServer):
            return self.for_server(what.target, what.script_args)
        return self

    def for_server(self, server: ForeignServer, script_args: tuple[str, ...] = ()) -> Plan:
        """This plan aimed at your server (its ``command`` with ``{port}``): a notebook whose parameters cell
        has ``server_cmd`` gets it, its ready path and directory (and ``script_args``, e.g. ``path=/kv``, for
        your API); every other one is marked not applicable with the reason its own metadata gives
        (``perflab.foreign_server``)."""
        if server.command is None:
            raise ValueError(f"a report starts your server: give its command, not a URL ({server.url})")
        extra = {"script_args": list(script_args)} if script_args else {}
        # the notebooks run in notebooks/: the command keeps the directory it was given in
        given = {
            "server_cmd": server.command,
            "ready_path": server.ready_path,
            "server_dir": server.workdir or os.getcwd(),
            **extra,
        }
        return self._aimed(
            lambda spec, names: None if "server_cmd" in names else _NO, given, f"your server ({server.command})"
        )

    def for_project(self, project: Project, every: bool = False, language: str | None = None) -> Plan:
        """This plan aimed at your server declared in ``project`` (a ``perflab.toml``): a notebook whose
        parameters cell has ``project`` gets its path, unless what it needs is missing (07: a ``[cluster]``, or a
        course server of stage 3 or later; 08: the stage before this one; 09: a history of commits to build),
        which the index then says; every other one is marked not applicable with the reason its metadata gives.
        A server of a course stage (:attr:`Project.stage`) gets what its stage asks (:mod:`.stage`), in the
        stage's order and leading the report, the rest left out unless ``every``; otherwise, with a stage to
        compare with, 08's finding heads the index."""
        asked = stage.of(project.stage)
        t = i18n.language(language or project.report_language)

        def why_not(spec: NotebookSpec, names: set[str]) -> str | None:
            if "project" not in names:
                return _NO
            if "cluster_cmd" in names and project.cluster is None and not _distributed(project):
                return _NO
            why = own.why_not(spec.notebook, project)
            return None if why is None else i18n.say(t, why)

        plan = self._aimed(why_not, {"project": str(project.path)}, f"{project.name} ({project.path})")
        nb_dir = notebooks_dir()
        specs = tuple(
            s
            if s.not_applicable
            else replace(s, parameters=own.fitted(s.notebook, project, s.parameters, aim.parameters(s.path(nb_dir))))
            for s in plan.notebooks
        )
        lead = next((s.name for s in specs if s.notebook == own.STAGES and not s.not_applicable), None)
        plan = replace(plan, notebooks=specs, lead=lead, language=language or project.report_language)
        return plan._staged(asked, every) if asked is not None else plan

    def _staged(self, asked: stage.Stage, every: bool) -> Plan:
        """What ``asked`` (a course stage) asks, first and in its order, with its parameters; the notebooks it
        does not ask for after them, left out (``every``: run too). Its first runnable notebook leads (none: the lead
        the plan had)."""
        t = i18n.language(self.language)
        order = {name: i for i, name in enumerate(asked.notebooks)}
        specs = []
        for s in self.notebooks:
            if s.notebook in order and not s.not_applicable:
                s = replace(s, parameters={**s.parameters, **asked.parameters.get(s.notebook, {})})
            elif s.notebook not in order and not s.not_applicable and not every and not s.after:
                s = replace(s, not_applicable=stage.not_asked(t, asked.number))
            specs.append(s)
        specs.sort(key=lambda s: (s.after, order.get(s.notebook, len(order))))
        lead = next((s.name for s in specs if s.notebook in order and not s.not_applicable), self.lead)
        return replace(self, notebooks=tuple(specs), lead=lead, stage=asked.number)

    def _aimed(self, why_not, given: dict, target: str) -> Plan:
        nb_dir = notebooks_dir()
        out = []
        for spec in self.notebooks:
            src = spec.path(nb_dir)
            params = aim.parameters(src)
            why = why_not(spec, set(params))
            if why is None:
                theirs = aim.foreign(params, aim.YOURS)  # the built-in server's: they would not reach yours
                kept = {k: v for k, v in spec.parameters.items() if k not in theirs}
                out.append(replace(spec, parameters={**kept, **spec.yours, **given}))
                continue
            if why is _NO:
                why = foreign_server_note(src)
                if not why:
                    raise ValueError(
                        f"{src.name}: cannot test your server and its metadata does not say why "
                        f"(perflab.foreign_server)"
                    )
            out.append(replace(spec, not_applicable=why))
        return replace(self, notebooks=tuple(out), target=target)


def _distributed(project: Project) -> bool:
    """A course server of stage 3 or later is a cluster's node: its nodes start without a ``[cluster]`` table
    (3 of them, unless a notebook says)."""
    return project.course is not None and (project.stage or 0) >= 3


#: a notebook that does not take your server at all: its metadata says why (``perflab.foreign_server``)
_NO = "the notebook's own reason"


def foreign_server_note(path: Path) -> str | None:
    """Why a notebook cannot run against your server, as the notebook's metadata says."""

    return (nbformat.read(str(path), as_version=4).metadata.get("perflab") or {}).get("foreign_server")


def notebooks_dir() -> Path:
    return paths.repo_root() / "notebooks"


# --- the built-in plans ---------------------------------------------------------------------------
# Durations carry their unit ("5s", "500ms": notebooks/README.md, Conventions). perflab-load records
# everything after --warmup, so even the tour's 2 s windows have no wrk2-style 10 s calibration hole in them;
# what a short window lacks is samples (p99 of 4,000 requests rests on 40) and repeats.

# The tour's searches: the JVM's warm-up (3 s: a shorter one left the JIT compiling into the ramp, which then
# broke at once), a 2 s ramp, then at most 4 probes of 1 s after 0.3 s, no repeats. The interval it reports is
# wide: it says so.
_TOUR_SEARCH = {
    "probe_duration": "1s",
    "warmup": "300ms",
    "ramp_duration": "2s",
    "server_warmup": "3s",
    "precision": 0.1,
    "repeats": 1,
    "max_probes": 4,
    "cooldown": "200ms",
}
# The tour's breakpoints are held for 3 s from a fresh start (the standard plan's 20 s is the default), one window a
# rate, the search's and one above or below it, after waits of at most 3 s for a quiet machine: the page says how
# each was held
_TOUR_HOLD = {"sustain": "3s", "quiet_wait": "3s", "hold_windows": 1, "sustain_tries": 2}
# The tour's interleaved comparisons: up to 10 pairs of 0.3 s probes at alpha 0.01, the fewest with which a
# claim is possible (Family.first_claim): a clear difference is claimed, a small one reported as undecided.
_TOUR_PAIRS = {
    "probe_duration": "300ms",
    "warmup": "150ms",
    "max_pairs": 10,
    "alpha": 0.01,
    "budget": "30s",
    "idle_pairs": 0,
    "server_warmup": "1s",
}
# The standard plan's searches: 3 s probes after 1 s, an 8 s ramp, two unanimous probes at each edge.
_STANDARD_SEARCH = {
    "probe_duration": "3s",
    "warmup": "1s",
    "ramp_duration": "8s",
    "precision": 0.04,
    "repeats": 2,
    "max_probes": 12,
}
# 24 pairs of 1 s probes can claim at alpha 1e-6 (the default); a budget bounds a noisy comparison.
_STANDARD_PAIRS = {"probe_duration": "1s", "warmup": "500ms", "max_pairs": 32, "budget": "120s", "idle_pairs": 0}
_FULL_PAIRS = {"probe_duration": "2s", "warmup": "1s", "max_pairs": 64, "budget": "600s", "idle_pairs": 0}

# Your stages in the tour (08 with a perflab.toml): the same interleaved pairs, on GETs of keys written through your
# API (a course server has no no-op endpoint), at a rate most stage-1 servers keep up with on 2 cores.
_TOUR_STAGES = {
    "script": "get-random.lua",
    "prefill_keys": 10_000,
    "connections": 16,
    "threads": 2,
    "rates": [2000],
    "idle_pairs": 0,
}
# Your history (09 with a perflab.toml in a repository): PUTs, which need no keys written first, at the plan's rate;
# the last 6 commits (or all, when there are fewer).
_YOUR_HISTORY = {"script": "put.lua", "commits": 6, "connections": 4, "threads": 2}

QUICK = Plan(
    "quick",
    (
        # each operation at 70% of the breakpoint a tour's search finds first with 16 connections (2,000/s when it
        # finds none and no lower bound); a 128k memtable: PUTs at 2,000/s flush about twice a second, so even a 2 s
        # window holds flushes
        NotebookSpec(
            "01-stable-load",
            {
                "duration": "2s",
                "warmup": "1s",
                "put_rate": 2000,
                "get_rate": 2000,
                "stable_fraction": 0.7,
                "search": {**_TOUR_SEARCH, **_TOUR_HOLD},
                "connections": [1, 16],
                "threads": 2,
                "prefill_keys": 20_000,
                "memtable_size": "128k",
                "profile_events": "cpu,alloc,lock",
            },
        ),
        NotebookSpec(
            "02-breakpoint",
            {
                **_TOUR_SEARCH,
                **_TOUR_HOLD,
                "connections": [32],
                "prefill_keys": 20_000,
                "include_ceiling": True,
            },
        ),
        NotebookSpec(
            "03-sync-vs-async",
            {
                # async against sync: one interleaved comparison of two searches, one of latency (virtual: standard)
                **_TOUR_SEARCH,
                "modes": ["sync", "async"],
                "connections": 32,
                "prefill_keys": 20_000,
                "profile_duration": "2s",
                "profile_events": "cpu,alloc,lock",
                "pairs": _TOUR_PAIRS,
            },
        ),
        NotebookSpec(
            "04-executor-tuning",
            {
                **_TOUR_SEARCH,
                "workers": [1, 4],
                "queues": [1024],
                "connections": 32,
                "prefill_keys": 20_000,
                "overload_duration": "2s",
            },
        ),
        # our LSM against RocksDB (the memory backend's baseline and its comparison, some 25 s, are standard's)
        NotebookSpec(
            "05-storage",
            {
                "duration": "1s",
                "warmup": "500ms",
                "rate": 2000,
                "connections": 16,
                "prefill_keys": 10_000,
                "backends": ["lsm", "rocksdb"],
                "flush_threads": [1, 2],
                "memtable_sizes": ["128k"],
                "compaction_memtable": "128k",
                "pairs": _TOUR_PAIRS,
            },
        ),
        # one start of the three nodes serves every run; the capacities are the ramps' estimates
        NotebookSpec(
            "07-cluster",
            {
                "rate": 200,
                "duration": "2s",
                "warmup": "1s",
                "threads": 3,
                "connections": 6,
                "keys": 2000,
                "fill_keys": 300,
                "cluster_warmup": "2s",
                "search": "ramp",
                "search_start_rate": 100,
                "search_max_rate": 20_000,
                "ramp_duration": "3s",
                "fault_at": "1.5s",
                "fault_down": "1.5s",
                "fault_duration": "4s",
                "check_rate": 60,
            },
        ),
        # the A/B method checked against known truth in every report: a 5 ms park against a 4 ms one (B's p50
        # about 1.23x A's); at alpha 1e-3, 16 pairs that agree can claim it
        NotebookSpec(
            "08-ab",
            {
                "a": {"mode": "async", "workers": 8, "debug_delay": "4ms"},
                "b": {"mode": "async", "workers": 8, "debug_delay": "5ms"},
                "common": {"backend": "memory"},
                "script": "status.lua",
                "prefill_keys": 0,
                "rates": [500],
                "metric": "p50",
                "probe_duration": "300ms",
                "warmup": "150ms",
                "max_pairs": 16,
                "alpha": 1e-3,
                "budget": "40s",
                "idle_pairs": 2,
                "server_warmup": "1s",
            },
            yours=_TOUR_STAGES,
        ),
        # a synthetic history of 5 commits, the fourth adding 100 us of CPU per request (several times the
        # server's own at 1,000/s): two 0.2 s probes per commit, the change point checked with 8 pairs at alpha
        # 0.05 (8 pairs that agree can claim it); some 30 s, half of it the check
        NotebookSpec(
            "09-history",
            {
                "commits": 4,
                "planted": 2,
                "planted_us": 100,
                "rate": 1000,
                "repeats": 2,
                "probe_duration": "200ms",
                "warmup": "100ms",
                "server_warmup": "500ms",
                "max_pairs": 8,
                "alpha": 0.05,
                "margin": 0.2,
                "budget": "30s",
            },
            yours=_YOUR_HISTORY,
        ),
        # the whole range from 1.25 x a 64 MiB heap (80 MiB, some 20,000 writes); yours at its own heap, in 16 KiB
        # values so its fill is a quarter as many writes
        NotebookSpec("10-range", {"heap": "64m", "fill_factor": 1.25, "value_size": "4k"}, yours={"value_size": "16k"}),
        NotebookSpec("06-summary", {}, after=True),
    ),
    "every notebook with 1-2 s windows, one probe per rate and few pairs (about 8 minutes on a 2-core machine, "
    "builds included)",
    caveat="A quick plan's numbers: 1-2 s windows, single probes, wide intervals; they show the method, not limits "
    "to quote. For those: make report PLAN=standard.",
)

STANDARD = Plan(
    "standard",
    (
        NotebookSpec(
            "01-stable-load",
            {
                "duration": "10s",
                "warmup": "3s",
                "put_rate": 5000,
                "get_rate": 5000,
                "connections": [1, 64],
                "threads": 2,
                "prefill_keys": 200_000,
                "memtable_size": "1m",
                "profile_events": "cpu,alloc,lock",
            },
        ),
        NotebookSpec(
            "02-breakpoint",
            {
                **_STANDARD_SEARCH,
                "connections": [1, 64],
                "prefill_keys": 200_000,
                "include_ceiling": True,
            },
        ),
        NotebookSpec(
            "03-sync-vs-async",
            {
                **_STANDARD_SEARCH,
                "modes": ["sync", "async", "virtual"],
                "connections": 64,
                "prefill_keys": 200_000,
                "profile_duration": "10s",
                "profile_events": "cpu,alloc,lock",
                "pairs": _STANDARD_PAIRS,
            },
        ),
        NotebookSpec(
            "04-executor-tuning",
            {
                **_STANDARD_SEARCH,
                "workers": [1, 4, 8],
                "queues": [1024],
                "connections": 64,
                "prefill_keys": 200_000,
                "overload_duration": "5s",
            },
        ),
        NotebookSpec(
            "05-storage",
            {
                "duration": "10s",
                "warmup": "3s",
                "rate": 5000,
                "connections": 64,
                "prefill_keys": 200_000,
                "backends": ["lsm", "rocksdb", "memory"],
                "flush_threads": [1, 2],
                "memtable_sizes": ["1m", "8m"],
                "compaction_memtable": "1m",
                "pairs": _STANDARD_PAIRS,
            },
        ),
        NotebookSpec(
            "07-cluster",
            {
                "rate": 500,
                "duration": "8s",
                "warmup": "3s",
                "threads": 3,
                "connections": 12,
                "keys": 20_000,
                "fill_keys": 2000,
                "cluster_warmup": "15s",
                "search": "probes",
                "search_start_rate": 200,
                "search_max_rate": 100_000,
                "ramp_duration": "8s",
                "probe_duration": "3s",
                "fault_at": "4s",
                "fault_down": "4s",
                "fault_duration": "16s",
                "check_rate": 100,
            },
        ),
        NotebookSpec(
            "08-ab",
            {
                "a": {"mode": "sync"},
                "b": {"mode": "async"},
                "common": {"backend": "lsm"},
                "script": "get-random.lua",
                "connections": 16,
                "threads": 1,
                "prefill_keys": 100_000,
                "rates": [3000],
                "metric": "p99",
                "probe_duration": "1s",
                "warmup": "500ms",
                "max_pairs": 48,
                "budget": "300s",
                "idle_pairs": 4,
            },
            yours={"prefill_keys": 20_000, "rates": [2000]},
        ),
        # 8 commits, a 20 us step (some +30 % at 2,000/s), five 1 s probes per commit, checks of up to 32 pairs
        NotebookSpec(
            "09-history",
            {
                "commits": 8,
                "planted": 5,
                "planted_us": 20,
                "rate": 2000,
                "repeats": 5,
                "probe_duration": "1s",
                "warmup": "500ms",
                "server_warmup": "3s",
                "max_pairs": 32,
                "budget": "120s",
            },
            yours=_YOUR_HISTORY,
        ),
        # the whole range from 1.25 x the default 256 MiB heap (320 MiB in 4 KiB values), as the course asks
        NotebookSpec("10-range", {"heap": "256m", "fill_factor": 1.25, "value_size": "4k"}, yours={"value_size": "8k"}),
        NotebookSpec("06-summary", {}, after=True),
    ),
    "numbers worth quoting: second-long windows after warm-up, two unanimous probes at each edge, up to 32 "
    "interleaved pairs per comparison",
)

FULL = Plan(
    "full",
    (
        NotebookSpec(
            "01-stable-load",
            {
                "duration": "120s",
                "warmup": "15s",
                "put_rate": 10000,
                "get_rate": 10000,
                "connections": [1, 64],
                "threads": 2,
                "prefill_keys": 2_000_000,
                "memtable_size": "4m",
                "profile_events": "cpu,alloc,lock",
            },
        ),
        NotebookSpec(
            "02-breakpoint",
            {
                "probe_duration": "10s",
                "warmup": "3s",
                "ramp_duration": "20s",
                "precision": 0.03,
                "repeats": 3,
                "max_probes": 20,
                "connections": [1, 64],
                "prefill_keys": 2_000_000,
                "include_ceiling": True,
                "placements": ["shared", "split"],
            },
        ),
        NotebookSpec(
            "03-sync-vs-async",
            {
                "modes": ["sync", "async", "virtual"],
                "probe_duration": "10s",
                "warmup": "3s",
                "ramp_duration": "20s",
                "precision": 0.03,
                "repeats": 3,
                "max_probes": 20,
                "connections": 64,
                "prefill_keys": 2_000_000,
                "profile_duration": "60s",
                "profile_events": "cpu,alloc,lock",
                "pairs": _FULL_PAIRS,
            },
        ),
        NotebookSpec(
            "04-executor-tuning",
            {
                # each configuration against 1 worker, queue 16: 11 interleaved comparisons of two searches each
                "workers": [1, 2, 4, 8],
                "queues": [16, 256, 4096],
                "probe_duration": "8s",
                "warmup": "2s",
                "ramp_duration": "15s",
                "precision": 0.04,
                "repeats": 2,
                "max_probes": 16,
                "connections": 64,
                "prefill_keys": 1_000_000,
                "overload_duration": "30s",
            },
        ),
        NotebookSpec(
            "05-storage",
            {
                "duration": "60s",
                "warmup": "10s",
                "rate": 10000,
                "connections": 64,
                "prefill_keys": 2_000_000,
                "backends": ["lsm", "rocksdb", "memory"],
                "flush_threads": [1, 2, 4],
                "memtable_sizes": ["1m", "4m", "16m", "64m"],
                "compaction_memtable": "1m",
                "pairs": _FULL_PAIRS,
            },
        ),
        NotebookSpec(
            "07-cluster",
            {
                "rate": 1000,
                "duration": "60s",
                "warmup": "10s",
                "threads": 3,
                "connections": 48,
                "keys": 200_000,
                "fill_keys": 20_000,
                "cluster_warmup": "60s",
                "search": "probes",
                "search_start_rate": 200,
                "search_max_rate": 100_000,
                "ramp_duration": "20s",
                "probe_duration": "10s",
                "fault_at": "20s",
                "fault_down": "15s",
                "fault_duration": "60s",
                "check_rate": 200,
            },
        ),
        NotebookSpec(
            "08-ab",
            {
                "a": {"mode": "sync"},
                "b": {"mode": "async"},
                "common": {"backend": "lsm"},
                "script": "get-random.lua",
                "connections": 64,
                "threads": 2,
                "prefill_keys": 1_000_000,
                "rates": [10000, 25000],
                "metric": "p99",
                "probe_duration": "2s",
                "warmup": "1s",
                "max_pairs": 64,
                "budget": "1200s",
                "idle_pairs": 8,
            },
            yours={"prefill_keys": 200_000, "rates": [5000]},
        ),
        # 16 commits, a 5 us step (some +8 % at 2,000/s), seven 2 s probes per commit, checks of up to 64 pairs
        NotebookSpec(
            "09-history",
            {
                "commits": 16,
                "planted": 11,
                "planted_us": 5,
                "rate": 2000,
                "repeats": 7,
                "probe_duration": "2s",
                "warmup": "1s",
                "server_warmup": "5s",
                "max_pairs": 64,
                "budget": "600s",
            },
            yours=_YOUR_HISTORY,
        ),
        # the whole range from 1.5 x a 512 MiB heap (768 MiB): a read long enough for thousands of samples
        NotebookSpec("10-range", {"heap": "512m", "fill_factor": 1.5, "value_size": "4k"}, yours={"fill_factor": 1.5}),
        NotebookSpec("06-summary", {}, after=True),
    ),
    "course-length durations (minute-long runs, as the course's reports), repeated edges, both CPU placements",
)

BUILTIN = {"quick": QUICK, "standard": STANDARD, "full": FULL}


def load_plan(name_or_path: str) -> Plan:
    """A built-in plan by name, or a plan JSON file."""
    if name_or_path in BUILTIN:
        return BUILTIN[name_or_path]
    p = Path(name_or_path)
    if not p.is_file():
        raise ValueError(f"--plan: {name_or_path!r} is neither a built-in plan ({', '.join(BUILTIN)}) nor a plan file")
    try:
        raw = json.loads(p.read_text())
    except json.JSONDecodeError as e:
        raise ValueError(f"--plan: {p} is not valid JSON: {e}") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("notebooks"), list) or not raw["notebooks"]:
        raise ValueError(f"--plan: {p} must be an object with a non-empty 'notebooks' list")
    specs = []
    for i, item in enumerate(raw["notebooks"]):
        if not isinstance(item, dict) or not isinstance(item.get("notebook"), str):
            raise ValueError(f"--plan: {p}: notebooks[{i}] needs a 'notebook' name")
        params = item.get("parameters", {})
        if not isinstance(params, dict):
            raise ValueError(f"--plan: {p}: notebooks[{i}].parameters must be an object")
        out = item.get("output")
        if out is not None and (not isinstance(out, str) or not out.replace("-", "").replace("_", "").isalnum()):
            raise ValueError(f"--plan: {p}: notebooks[{i}].output must be a simple name, got {out!r}")
        yours = item.get("yours", {})
        if not isinstance(yours, dict):
            raise ValueError(f"--plan: {p}: notebooks[{i}].yours must be an object (parameters for your server)")
        specs.append(
            NotebookSpec(item["notebook"], params, item.get("title"), out, after=bool(item.get("after")), yours=yours)
        )
    names = [s.name for s in specs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(
            f"--plan: {p}: {', '.join(dup)} appear more than once: give the copies distinct 'output' names"
        )
    return Plan(
        str(raw.get("name") or p.stem), tuple(specs), str(raw.get("description", "")), caveat=str(raw.get("caveat", ""))
    )
