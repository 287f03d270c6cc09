"""One run directory under ``<data root>/runs/<run-id>/``: created once, written while the run lasts, and
read back the one way every part of the lab reads a run (:class:`Run`).

A run directory is created once and never reused: its id is a UTC timestamp, a short name and a random
suffix, and it is created with ``mkdir`` (which fails rather than overwrite). ``meta.json`` holds the
parameters, status (``running`` → ``ok`` / ``failed`` / ``interrupted``), the environment record
(:mod:`.environment`), the validity record and the result numbers; the raw artifacts lie beside it
(``data/README.md`` lists every file). Besides them, each run writes index rows to
``tables/<table>.jsonl``, which :mod:`.index` gathers into DuckDB.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import secrets
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import children, paths
from ..config.profile import PROFILE_EVENTS
from ..errors import RunInterrupted
from ..measure.result import CONSOLE, load_result_from_dir
from .environment import environment as env_fn

STATUSES = ("running", "ok", "failed", "interrupted")
#: what a ``running`` run reads as once its coordinator is known to be gone (killed with SIGKILL, its machine
#: rebooted): never written, so a run that is still going is never marked
ABANDONED = "abandoned"
_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def _json_default(o):
    if isinstance(o, Path):
        return str(o)
    if isinstance(o, (set, tuple)):
        return list(o)
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    if isinstance(o, (dt.datetime, pd.Timestamp)):
        return o.isoformat()
    return str(o)


def clean(o):
    """JSON-ready: NaN/inf become null, numpy scalars plain numbers, keys strings."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {str(k): clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean(v) for v in o]
    if hasattr(o, "item") and not isinstance(o, (str, bytes)):
        try:
            return clean(o.item())
        except (ValueError, AttributeError):
            return o
    return o


def dump_json(obj, path: Path) -> None:
    """Write ``obj`` as JSON atomically (a temporary file renamed into place)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(clean(obj), indent=2, default=_json_default, allow_nan=False) + "\n")
    os.replace(tmp, path)


#: what a breakpoint row says beyond its rate and interval: what it kept up with when it shows no breakpoint, the
#: search's own point and whether the reported rate held for a sustain window (:mod:`perflab.breakpoint.hold`)
HELD_FIELDS = (
    "at_least",
    "search_rate",
    "sustain_s",
    "held",
    "overestimate",
    "why",
    "held_windows",
    "fresh_start",
    "others_max_cores",
    "others_median_cores",
)


@dataclass
class RecordedSearch:
    """A breakpoint search read back from its run: the row the report and the index show, every probe
    (``table``: ``probes.csv`` with ``p999_ms``), the SLA it was judged by, and the load of the highest
    passing probe at the breakpoint (``at_breakpoint``)."""

    row: dict
    table: pd.DataFrame
    sla_ms: float | None
    at_breakpoint: object | None

    @property
    def rate(self) -> float | None:
        return self.row["rate"]

    @property
    def interval(self) -> list:
        return self.row["interval"]


class Run:
    """One run directory. Create with :func:`new_run`; open a recorded one with :func:`open_run`.

    As a context manager it marks the run ``ok`` on success, ``interrupted`` on Ctrl-C/SIGTERM and
    ``failed`` (with the error and traceback in ``meta.json``) on any other exception, which it
    re-raises.
    """

    def __init__(self, directory: Path, meta: dict):
        self.dir = Path(directory)
        self.meta = meta

    # --- identity -------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.meta.get("id") or self.dir.name

    @property
    def kind(self) -> str:
        return self.meta.get("kind") or "?"

    @property
    def name(self) -> str:
        return self.meta.get("name") or self.kind

    @property
    def status(self) -> str:
        """``running``, ``ok``, ``failed``, ``interrupted``, or ``abandoned``: still ``running`` in ``meta.json``
        while the process that ran it is gone (:func:`perflab.children.gone`)."""
        status = self.meta.get("status", "running")
        if status == "running" and children.gone(self.meta.get("coordinator")):
            return ABANDONED
        return status

    @property
    def validity(self) -> str | None:
        """The validity level (``valid``, ``suspect``, ``invalid``), ``None`` when none was recorded."""
        v = self.meta.get("validity")
        return v.get("verdict") if isinstance(v, dict) else None

    @property
    def validity_reasons(self) -> list[str]:
        v = self.meta.get("validity")
        return list(v.get("reasons") or []) if isinstance(v, dict) else []

    @property
    def commit(self) -> str | None:
        """perflab's own commit when the run was made (its environment's ``git``), not the measured server's:
        that is :attr:`version`."""
        return ((self.meta.get("environment") or {}).get("git") or {}).get("commit")

    @property
    def version(self) -> dict:
        """The version of the server under test it measured: ``{"commit", "label"}`` (each ``None`` when not
        known, as for a run of two servers or of many commits)."""
        v = self.meta.get("version") or {}
        return {"commit": v.get("commit"), "label": v.get("label")}

    @property
    def params(self) -> dict:
        return self.meta.get("params") or {}

    @property
    def results(self) -> dict:
        return self.meta.get("results") or {}

    # --- writing ---------------------------------------------------------------------------------
    def path(self, name: str) -> Path:
        """Path of an artifact inside the run directory (subdirectories created)."""
        if not name or Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"name must be a relative path inside the run, got {name!r}")
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def save(self) -> None:
        dump_json(self.meta, self.dir / "meta.json")

    def update(self, **fields) -> Run:
        """Set top-level ``meta.json`` fields and save."""
        self.meta.update(fields)
        self.save()
        return self

    def set_result(self, **numbers) -> Run:
        """Merge numbers into ``meta['results']`` and save."""
        self.meta.setdefault("results", {}).update(numbers)
        self.save()
        return self

    def add_artifact(self, name: str, path: Path | str) -> None:
        rel = str(Path(path).resolve().relative_to(self.dir.resolve())) if Path(path).is_absolute() else str(path)
        self.meta.setdefault("artifacts", {})[name] = rel
        self.save()

    def write_frame(self, name: str, df: pd.DataFrame, artifact: str | None = None) -> Path:
        """A DataFrame as CSV (readable anywhere, diff-able)."""
        p = self.path(name)
        df.to_csv(p, index=False)
        if artifact:
            self.add_artifact(artifact, name)
        return p

    def read_frame(self, name: str) -> pd.DataFrame | None:
        """A CSV the run wrote (:meth:`write_frame`), ``None`` when it has none."""
        p = self.dir / name
        return pd.read_csv(p) if p.is_file() else None

    def add_rows(self, table: str, rows: Iterable[dict]) -> None:
        """Append index rows to ``tables/<table>.jsonl`` (``run_id`` added)."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", table or ""):
            raise ValueError(f"table must be a lowercase identifier, got {table!r}")
        p = self.path(f"tables/{table}.jsonl")
        with p.open("a") as f:
            for r in rows:
                f.write(json.dumps(clean({"run_id": self.id, **r}), default=_json_default, allow_nan=False) + "\n")

    def set_rows(self, table: str, rows: Iterable[dict]) -> None:
        """Write ``tables/<table>.jsonl`` anew with ``rows``: a result recorded again replaces its rows."""
        self.path(f"tables/{table}.jsonl").unlink(missing_ok=True)
        self.add_rows(table, rows)

    def finish(self, status: str = "ok", error: BaseException | None = None) -> Run:
        """Mark the run finished with ``status`` (one of ok/failed/interrupted)."""
        if status not in STATUSES[1:]:
            raise ValueError(f"status must be one of ok, failed, interrupted, got {status!r}")
        self.meta["status"] = status
        self.meta["finished_at"] = _now()
        try:
            t0 = dt.datetime.fromisoformat(self.meta["created_at"])
            self.meta["elapsed_s"] = round((dt.datetime.now(dt.UTC) - t0).total_seconds(), 3)
        except (KeyError, ValueError):
            pass
        if error is not None:
            self.meta["error"] = {
                "type": type(error).__name__,
                "message": str(error),
                "traceback": "".join(traceback.format_exception(error))[-20000:],
            }
        self.save()
        return self

    def __enter__(self) -> Run:
        return self

    def __exit__(self, et, ev, tb):
        if et is None:
            if self.status == "running":
                self.finish("ok")
        elif issubclass(et, (KeyboardInterrupt, RunInterrupted)):
            self.finish("interrupted", ev)
        else:
            self.finish("failed", ev)
        return False

    # --- reading back ----------------------------------------------------------------------------
    def load(self, subdir: str | None = None):
        """The :class:`~perflab.measure.result.LoadResult` the run (or its ``subdir``, e.g. a probe's
        ``probes/03-2000``) recorded; ``None`` when it holds no load."""

        d = self.dir / subdir if subdir else self.dir
        return load_result_from_dir(d) if (d / CONSOLE).is_file() else None

    def breakpoint_row(self) -> dict:
        """A breakpoint run's result as one row: ``workload, connections, mode, rate, interval, verdict
        (the search's outcome), validity, run_id`` (the report's and the findings' breakpoint rows)."""
        res, params = self.results, self.params
        rate = res.get("breakpoint_rate")
        return {
            "workload": res.get("workload") or "?",
            "connections": res.get("connections") or (params.get("load") or {}).get("connections"),
            "mode": (params.get("server") or {}).get("mode"),
            "rate": rate,
            "interval": list(res.get("interval") or [rate, None]),
            "verdict": res.get("verdict"),
            "validity": self.validity,
            "run_id": self.id,
            **{k: res.get(k) for k in HELD_FIELDS},
        }

    def search(self) -> RecordedSearch:
        """A breakpoint run's search: its row, every probe and the load at the breakpoint."""
        if self.kind != "breakpoint":
            raise ValueError(f"run {self.id} is a {self.kind} run, not a breakpoint search")
        row = self.breakpoint_row()
        table = self.read_frame("probes.csv")
        if table is None:
            table = pd.DataFrame(columns=["probe", "rate", "passed", "p99_ms"])
        p999, at = [], None
        for r in table.itertuples():
            lr = self.load(f"probes/{int(r.probe):02d}-{int(r.rate)}")
            p999.append(lr.p999_ms if lr is not None else math.nan)
            passed = r.passed == True  # noqa: E712 (empty, NaN: an inconclusive probe)
            if lr is not None and passed and row["rate"] is not None and float(r.rate) == row["rate"]:
                at = lr
        if "p999_ms" not in table:
            table["p999_ms"] = p999
        crit = self.params.get("criteria") or {}
        sla = crit["sla_p99"] * 1000 if isinstance(crit.get("sla_p99"), (int, float)) else None
        return RecordedSearch(row, table, sla, at)

    def profiles(self) -> dict[str, Path]:
        """event -> the collapsed stacks of the run's whole-window profile (not the spike/rest split)."""

        found = {p.stem.rsplit("-", 1)[1]: p for p in sorted(self.dir.glob("profile-*.collapsed")) if p.stat().st_size}
        return {e: p for e, p in found.items() if e in PROFILE_EVENTS}

    def __repr__(self):
        return f"<Run {self.id} {self.status}>"


def new_run(
    kind: str,
    name: str | None = None,
    params: dict | None = None,
    data_root=None,
    environment: dict | None = None,
    version: dict | None = None,
) -> Run:
    """Create ``runs/<UTC timestamp>-<name>-<suffix>/`` with ``meta.json`` (status ``running``).

    ``kind``: what made it (``experiment``, ``breakpoint``...); ``params``: every parameter (config objects
    are stored via their ``to_dict``); ``environment``: defaults to
    :func:`perflab.records.environment.environment`; ``version``: the version of the server under test it
    measures (``{"commit", "label"}``: :meth:`perflab.core.session.Session.version`), for a run of one
    server.
    """
    if version is not None and (not isinstance(version, dict) or set(version) != {"commit", "label"}):
        raise ValueError(f"version must be a dict with commit and label, got {version!r}")
    if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_-]*", kind):
        raise ValueError(f"kind must be a lowercase word like 'experiment', got {kind!r}")
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"params must be a dict, got {type(params).__name__}")
    slug = _NAME_RE.sub("-", name or kind).strip("-")[:40] or kind
    root = paths.runs_root(data_root)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    for _ in range(20):
        rid = f"{stamp}-{slug}-{secrets.token_hex(3)}"
        d = root / rid
        try:
            d.mkdir()  # atomic: an existing directory is never reused
            break
        except FileExistsError:
            continue
    else:
        raise RuntimeError(f"could not create a unique run directory under {root}")
    if environment is None:
        environment = env_fn()
    meta = {
        "id": rid,
        "kind": kind,
        "name": name or kind,
        "status": "running",
        "created_at": _now(),
        "finished_at": None,
        "coordinator": children.identity(),
        "params": clean(json.loads(json.dumps(params or {}, default=_json_default))),
        "environment": environment,
        "results": {},
        "artifacts": {},
    }
    if version is not None:
        meta["version"] = version
    run = Run(d, meta)
    run.save()
    return run


def open_run(run: str | os.PathLike, data_root=None) -> Run:
    """A recorded run by its directory or its id under the data root."""
    p = Path(run)
    if not (p / "meta.json").is_file():
        p = paths.runs_root(data_root) / str(run)
    if not (p / "meta.json").is_file():
        raise ValueError(f"run: no run {run!s} (no meta.json in {p})")
    try:
        meta = json.loads((p / "meta.json").read_text())
    except ValueError as e:
        raise ValueError(f"run: {p / 'meta.json'} is not valid JSON ({e})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"run: {p / 'meta.json'} does not hold a JSON object")
    return Run(p, meta)


def iter_runs(data_root=None, names: Iterable[str] | None = None):
    """Every recorded run (or those with directory ``names``), oldest first; a half-written ``meta.json``
    (a crash mid-write) is skipped."""
    root = paths.runs_root(data_root)
    for d in sorted(root / n for n in names) if names is not None else sorted(root.iterdir()):
        try:
            yield open_run(d)
        except ValueError:
            continue


def run_names(data_root=None) -> set[str]:
    """The names of every run directory (to tell which runs a batch step added)."""
    return {p.name for p in paths.runs_root(data_root).iterdir() if p.is_dir()}
