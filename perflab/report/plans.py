"""Experiment plans: which notebooks the batch runs, with which parameters.

A plan is an ordered list of notebooks, each with the papermill parameters that override its
``parameters`` cell. Two plans are built in:

* ``quick`` (``make report``): every notebook with short durations and few probes, a few minutes in
  total on a 2-core machine; each load is still long enough to mean something (several seconds after
  a warm-up, so a percentile spectrum has thousands of samples and the server's JIT has settled).
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

from .. import paths
from ..config import ForeignServer
from ..config.project import Project


@dataclass(frozen=True)
class NotebookSpec:
    notebook: str                      # file stem in notebooks/, e.g. "01-stable-load"
    parameters: dict = field(default_factory=dict)
    title: str | None = None           # defaults to the notebook's first heading
    output: str | None = None          # name of the executed copy and its page (default: notebook)
    not_applicable: str | None = None  # why the batch skips it (e.g. for your own server), shown on the index
    after: bool = False                # runs after every other notebook (it reads what they recorded)

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
    target: str = ""                   # what the notebooks test when it is not the built-in server

    def only(self, names: list[str]) -> "Plan":
        wanted = [n.strip() for n in names if n.strip()]
        known = {s.notebook for s in self.notebooks}
        unknown = [n for n in wanted if not any(n == k or k.startswith(n) for k in known)]
        if unknown:
            raise ValueError(f"--only: no notebook named {', '.join(unknown)} in plan {self.name} "
                             f"(has: {', '.join(sorted(known))})")
        picked = tuple(s for s in self.notebooks if any(s.notebook == n or s.notebook.startswith(n) for n in wanted))
        return Plan(self.name, picked, self.description, self.target)

    def for_server(self, command: str, ready_path: str = "/", script_args: tuple[str, ...] = ()) -> "Plan":
        """This plan aimed at your server (``command`` with ``{port}``): a notebook whose parameters cell
        has ``server_cmd`` gets it (and ``script_args``, e.g. ``path=/kv``, for your API); every other one
        is marked not applicable with the reason its own metadata gives (``perflab.foreign_server``)."""
        ForeignServer(command=command, ready_path=ready_path)   # a bad command fails before anything runs
        extra = {"script_args": list(script_args)} if script_args else {}
        # the notebooks run in notebooks/: the command keeps the directory it was given in
        given = {"server_cmd": command, "ready_path": ready_path, "server_dir": os.getcwd(), **extra}
        return self._aimed(lambda names: "server_cmd" in names, given, f"your server ({command})")

    def for_project(self, project: Project) -> "Plan":
        """This plan aimed at your server declared in ``project`` (a ``perflab.toml``): a notebook whose
        parameters cell has ``project`` gets its path (07, the cluster's, only when the file has a
        ``[cluster]``); every other one is marked not applicable with the reason its metadata gives."""
        def takes(names: set[str]) -> bool:
            return "project" in names and ("cluster_cmd" not in names or project.cluster is not None)
        return self._aimed(takes, {"project": str(project.path)}, f"{project.name} ({project.path})")

    def _aimed(self, takes, given: dict, target: str) -> "Plan":
        nb_dir = notebooks_dir()
        out = []
        for spec in self.notebooks:
            src = spec.path(nb_dir)
            if takes(notebook_parameters(src)):
                out.append(replace(spec, parameters={**spec.parameters, **given}))
            else:
                why = foreign_server_note(src)
                if not why:
                    raise ValueError(f"{src.name}: cannot test your server and its metadata does not say why "
                                     f"(perflab.foreign_server)")
                out.append(replace(spec, not_applicable=why))
        return Plan(self.name, tuple(out), self.description, target)


def notebook_parameters(path: Path) -> set[str]:
    """The names its ``parameters`` cell assigns."""
    import papermill  # in here: ~0.3 s to import, and only running notebooks needs it

    return set(papermill.inspect_notebook(str(path)))


def foreign_server_note(path: Path) -> str | None:
    """Why a notebook cannot run against your server, as the notebook's metadata says."""

    return (nbformat.read(str(path), as_version=4).metadata.get("perflab") or {}).get("foreign_server")


def notebooks_dir() -> Path:
    return paths.repo_root() / "notebooks"


# --- the built-in plans ---------------------------------------------------------------------------
# Durations carry their unit ("5s", "500ms": notebooks/README.md, Conventions). The quick plan keeps every
# measured window >= 3 s after >= 2 s of warm-up (perflab-load records everything after --warmup: no
# wrk2-style 10 s calibration hole to outlast).

# The quick plan's searches: 2 s probes after 0.5 s of warm-up, a 6 s ramp, at most 10 probes (two
# repeats at each edge included); a search then takes 30-45 s. Its interval is what the probes show: in
# the quick report of 2026-11-23 two of eight were within ±10%, the rest ±17-23% or open (the shared
# 2-core machine's p99 noise; java-server/bench/RESULTS.md).
_QUICK_SEARCH = {"probe_duration": "2s", "warmup": "500ms", "ramp_duration": "6s", "precision": 0.04, "repeats": 2,
                 "max_probes": 10}
# The quick plan's interleaved comparisons at a fixed rate (03's latency, 05's backends): 0.5 s probes after
# 0.25 s of warm-up, at most 16 pairs (under 40 s a comparison); alpha 1e-3, so that 16 pairs that agree can
# claim a difference (the default 1e-6 needs 24). The idle side's cost is notebook 8's.
_QUICK_PAIRS = {"probe_duration": "500ms", "warmup": "250ms", "max_pairs": 16, "alpha": 1e-3, "budget": "60s",
                "idle_pairs": 0}
_FULL_PAIRS = {"probe_duration": "2s", "warmup": "1s", "max_pairs": 64, "budget": "600s", "idle_pairs": 0}

QUICK = Plan(
    "quick",
    (
        # a 256k memtable: PUTs at 3000/s flush every ~0.4 s and compact every few flushes, so the
        # 5 s window holds the events the notebook is about
        NotebookSpec("01-stable-load", {
            "duration": "5s", "warmup": "3s", "put_rate": 3000, "get_rate": 3000, "many_connections": 32,
            "threads": 2, "prefill_keys": 100_000, "memtable_size": "256k", "profile_events": "cpu,alloc,lock",
        }),
        NotebookSpec("02-breakpoint", {
            **_QUICK_SEARCH, "connections": [64], "prefill_keys": 100_000, "include_ceiling": True,
        }),
        NotebookSpec("03-sync-vs-async", {
            # async and virtual each against sync: two interleaved comparisons of two searches each
            **_QUICK_SEARCH, "modes": ["sync", "async", "virtual"], "connections": 32, "prefill_keys": 100_000,
            "profile_duration": "4s", "profile_events": "cpu,alloc,lock", "pairs": _QUICK_PAIRS,
        }),
        NotebookSpec("04-executor-tuning", {
            # one interleaved comparison (two searches), not three: the batch stays short (the full plan crosses
            # queues too)
            **_QUICK_SEARCH, "workers": [1, 4], "queues": [1024], "connections": 32, "prefill_keys": 100_000,
            "overload_duration": "3s",
        }),
        NotebookSpec("05-storage", {
            "duration": "4s", "warmup": "2s", "rate": 3000, "connections": 16, "prefill_keys": 100_000,
            "backends": ["lsm", "rocksdb", "memory"], "flush_threads": [1, 2], "memtable_sizes": ["256k", "4m"],
            "compaction_memtable": "256k", "pairs": _QUICK_PAIRS,
        }),
        # one start of the three nodes serves every run; the breakpoints are the ramps' estimates (a probed
        # search of both targets alone would take longer than the rest of the notebook)
        NotebookSpec("07-cluster", {
            "rate": 200, "duration": "3s", "warmup": "2s", "threads": 3, "connections": 6, "keys": 5000,
            "fill_keys": 500, "cluster_warmup": "8s", "search": "ramp", "search_start_rate": 100,
            "search_max_rate": 20_000, "ramp_duration": "4s", "fault_at": "1.5s", "fault_down": "1s",
            "fault_duration": "12s", "check_rate": 60,
        }),
        # the A/B method checked against known truth in every quick report: a 5 ms park against a 4 ms one
        # (B's p50 about 1.23x A's); 24 pairs of 0.5 s probes are the fewest that can claim it (alpha 1e-6)
        NotebookSpec("08-ab", {
            "a": {"mode": "async", "workers": 8, "debug_delay": "4ms"},
            "b": {"mode": "async", "workers": 8, "debug_delay": "5ms"}, "common": {"backend": "memory"},
            "script": "status.lua", "prefill_keys": 0, "rates": [500], "metric": "p50", "probe_duration": "500ms",
            "warmup": "250ms", "max_pairs": 32, "budget": "90s", "idle_pairs": 4,
        }),
        NotebookSpec("06-summary", {}, after=True),
    ),
    "short durations (about twelve minutes in total on a 2-core machine)",
)

FULL = Plan(
    "full",
    (
        NotebookSpec("01-stable-load", {
            "duration": "120s", "warmup": "15s", "put_rate": 10000, "get_rate": 10000, "many_connections": 64,
            "threads": 2, "prefill_keys": 2_000_000, "memtable_size": "4m", "profile_events": "cpu,alloc,lock",
        }),
        NotebookSpec("02-breakpoint", {
            "probe_duration": "10s", "warmup": "3s", "ramp_duration": "20s", "precision": 0.03, "repeats": 3,
            "max_probes": 20, "connections": [1, 64], "prefill_keys": 2_000_000, "include_ceiling": True,
            "placements": ["shared", "split"],
        }),
        NotebookSpec("03-sync-vs-async", {
            "modes": ["sync", "async", "virtual"], "probe_duration": "10s", "warmup": "3s", "ramp_duration": "20s",
            "precision": 0.03, "repeats": 3, "max_probes": 20, "connections": 64, "prefill_keys": 2_000_000,
            "profile_duration": "60s", "profile_events": "cpu,alloc,lock", "pairs": _FULL_PAIRS,
        }),
        NotebookSpec("04-executor-tuning", {
            # each configuration against 1 worker, queue 16: 11 interleaved comparisons of two searches each
            "workers": [1, 2, 4, 8], "queues": [16, 256, 4096], "probe_duration": "8s", "warmup": "2s",
            "ramp_duration": "15s", "precision": 0.04, "repeats": 2, "max_probes": 16, "connections": 64,
            "prefill_keys": 1_000_000, "overload_duration": "30s",
        }),
        NotebookSpec("05-storage", {
            "duration": "60s", "warmup": "10s", "rate": 10000, "connections": 64, "prefill_keys": 2_000_000,
            "backends": ["lsm", "rocksdb", "memory"], "flush_threads": [1, 2, 4],
            "memtable_sizes": ["1m", "4m", "16m", "64m"], "compaction_memtable": "1m", "pairs": _FULL_PAIRS,
        }),
        NotebookSpec("07-cluster", {
            "rate": 1000, "duration": "60s", "warmup": "10s", "threads": 3, "connections": 48, "keys": 200_000,
            "fill_keys": 20_000, "cluster_warmup": "60s", "search": "probes", "search_start_rate": 200,
            "search_max_rate": 100_000, "ramp_duration": "20s", "probe_duration": "10s",
            "fault_at": "20s", "fault_down": "15s", "fault_duration": "60s", "check_rate": 200,
        }),
        NotebookSpec("08-ab", {
            "a": {"mode": "sync"}, "b": {"mode": "async"}, "common": {"backend": "lsm"}, "script": "get-random.lua",
            "connections": 64, "threads": 2, "prefill_keys": 1_000_000, "rates": [10000, 25000], "metric": "p99",
            "probe_duration": "2s", "warmup": "1s", "max_pairs": 64, "budget": "1200s", "idle_pairs": 8,
        }),
        NotebookSpec("06-summary", {}, after=True),
    ),
    "course-length durations (the seeds' minute-long runs), repeated edges, both CPU placements",
)

BUILTIN = {"quick": QUICK, "full": FULL}


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
        specs.append(NotebookSpec(item["notebook"], params, item.get("title"), out, after=bool(item.get("after"))))
    names = [s.name for s in specs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"--plan: {p}: {', '.join(dup)} appear more than once: give the copies distinct 'output' names")
    return Plan(str(raw.get("name") or p.stem), tuple(specs), str(raw.get("description", "")))
