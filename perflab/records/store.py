"""Run records under ``<data root>/runs/<run-id>/`` and the DuckDB index across them.

A run directory is created once and never reused: its id is a UTC timestamp, a short name and a
random suffix, and it is created with ``mkdir`` (which fails rather than overwrite). ``meta.json``
holds the parameters, status (``running`` → ``ok`` / ``failed`` / ``interrupted``), git commit,
machine, JVM and tool versions, and the result numbers. Besides the raw artifacts, each run writes
index rows to ``tables/<table>.jsonl``; :func:`rebuild_index` reads every run's ``meta.json`` and
``tables/`` into ``<data root>/index.duckdb``, so the index can always be rebuilt from the run dirs.

Index tables (every one joined with the run's identity and parameters, see :func:`rebuild_index`):
``runs`` (one row per run), ``loads`` (one row per load: an experiment's measurement or a
breakpoint probe), ``breakpoints``, ``intervals`` (per-interval latency), ``stats`` (server stats
samples), ``profiles``, ``categories``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import secrets
import shutil
import traceback
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from .. import paths
from ..errors import RunInterrupted

STATUSES = ("running", "ok", "failed", "interrupted")
INDEX_FILE = "index.duckdb"
_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


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


def _clean(o):
    """NaN/inf are not JSON: store them as null."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if hasattr(o, "item") and not isinstance(o, (str, bytes)):
        try:
            return _clean(o.item())
        except (ValueError, AttributeError):
            return o
    return o


def dump_json(obj, path: Path) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(_clean(obj), indent=2, default=_json_default, allow_nan=False) + "\n")
    os.replace(tmp, path)


class Run:
    """One run directory. Create with :func:`new_run`; open an existing one with :func:`load_run`.

    As a context manager it marks the run ``ok`` on success, ``interrupted`` on Ctrl-C/SIGTERM and
    ``failed`` (with the error and traceback in ``meta.json``) on any other exception, which it
    re-raises.
    """

    def __init__(self, directory: Path, meta: dict):
        self.dir = Path(directory)
        self.meta = meta

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def status(self) -> str:
        return self.meta.get("status", "running")

    def path(self, name: str) -> Path:
        """Path of an artifact inside the run directory (subdirectories created)."""
        if not name or Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"name must be a relative path inside the run, got {name!r}")
        p = self.dir / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def save(self) -> None:
        dump_json(self.meta, self.dir / "meta.json")

    def update(self, **fields) -> "Run":
        """Set top-level ``meta.json`` fields and save."""
        self.meta.update(fields)
        self.save()
        return self

    def set_result(self, **numbers) -> "Run":
        """Merge numbers into ``meta['results']`` and save."""
        self.meta.setdefault("results", {}).update(numbers)
        self.save()
        return self

    def add_artifact(self, name: str, path: Path | str) -> None:
        rel = str(Path(path).resolve().relative_to(self.dir.resolve())) if Path(path).is_absolute() else str(path)
        self.meta.setdefault("artifacts", {})[name] = rel
        self.save()

    def write_text(self, name: str, text: str, artifact: str | None = None) -> Path:
        p = self.path(name)
        p.write_text(text)
        if artifact:
            self.add_artifact(artifact, name)
        return p

    def write_json(self, name: str, obj, artifact: str | None = None) -> Path:
        p = self.path(name)
        dump_json(obj, p)
        if artifact:
            self.add_artifact(artifact, name)
        return p

    def write_frame(self, name: str, df: pd.DataFrame, artifact: str | None = None) -> Path:
        """A DataFrame as CSV (readable anywhere, diff-able)."""
        p = self.path(name)
        df.to_csv(p, index=False)
        if artifact:
            self.add_artifact(artifact, name)
        return p

    def add_rows(self, table: str, rows: Iterable[dict]) -> None:
        """Append index rows to ``tables/<table>.jsonl`` (``run_id`` added)."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", table or ""):
            raise ValueError(f"table must be a lowercase identifier, got {table!r}")
        p = self.path(f"tables/{table}.jsonl")
        with p.open("a") as f:
            for r in rows:
                f.write(json.dumps(_clean({"run_id": self.id, **r}), default=_json_default, allow_nan=False) + "\n")

    def finish(self, status: str = "ok", error: BaseException | None = None) -> "Run":
        """Mark the run finished with ``status`` (one of ok/failed/interrupted)."""
        if status not in STATUSES[1:]:
            raise ValueError(f"status must be one of ok, failed, interrupted, got {status!r}")
        self.meta["status"] = status
        self.meta["finished_at"] = _now()
        try:
            t0 = dt.datetime.fromisoformat(self.meta["created_at"])
            self.meta["elapsed_s"] = round((dt.datetime.now(dt.timezone.utc) - t0).total_seconds(), 3)
        except (KeyError, ValueError):
            pass
        if error is not None:
            self.meta["error"] = {"type": type(error).__name__, "message": str(error),
                                  "traceback": "".join(traceback.format_exception(error))[-20000:]}
        self.save()
        return self

    def __enter__(self) -> "Run":
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

    def __repr__(self):
        return f"<Run {self.id} {self.status}>"


def runs_dir(data_root=None) -> Path:
    p = paths.data_root(data_root) / "runs"
    p.mkdir(parents=True, exist_ok=True)
    return p


def new_run(kind: str, name: str | None = None, params: dict | None = None, data_root=None,
            environment: dict | None = None) -> Run:
    """Create ``runs/<UTC timestamp>-<name>-<suffix>/`` with ``meta.json`` (status ``running``).

    ``kind``: what made it (``experiment``, ``breakpoint``, ``profile``, ``prefill``...); ``params``:
    every parameter (config objects are stored via their ``to_dict``); ``environment``: defaults to
    :func:`perflab.records.environment.environment`.
    """
    if not isinstance(kind, str) or not re.fullmatch(r"[a-z][a-z0-9_-]*", kind):
        raise ValueError(f"kind must be a lowercase word like 'experiment', got {kind!r}")
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"params must be a dict, got {type(params).__name__}")
    slug = _NAME_RE.sub("-", name or kind).strip("-")[:40] or kind
    root = runs_dir(data_root)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
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
        from .environment import environment as env_fn
        environment = env_fn()
    meta = {"id": rid, "kind": kind, "name": name or kind, "status": "running", "created_at": _now(),
            "finished_at": None, "params": _clean(json.loads(json.dumps(params or {}, default=_json_default))),
            "environment": environment, "results": {}, "artifacts": {}}
    run = Run(d, meta)
    run.save()
    return run


def load_run(run: str | os.PathLike, data_root=None) -> Run:
    """Open a recorded run by id or directory."""
    p = Path(run)
    if not (p / "meta.json").is_file():
        p = runs_dir(data_root) / str(run)
    if not (p / "meta.json").is_file():
        raise ValueError(f"run: no run {run!s} (no meta.json in {p})")
    return Run(p, json.loads((p / "meta.json").read_text()))


def iter_runs(data_root=None):
    for d in sorted(runs_dir(data_root).iterdir()):
        if (d / "meta.json").is_file():
            try:
                yield Run(d, json.loads((d / "meta.json").read_text()))
            except ValueError:
                continue  # a half-written meta.json (crash mid-write) is skipped, not fatal


def _flat(prefix: str, d: dict | None, out: dict):
    for k, v in (d or {}).items():
        key = f"{prefix}{k}".replace("-", "_").replace(".", "_")
        if isinstance(v, dict):
            _flat(key + "_", v, out)
        elif isinstance(v, list):
            out[key] = json.dumps(v)
        else:
            out[key] = v


def run_row(run: Run) -> dict:
    """One ``runs`` index row: identity, status, environment highlights, and every parameter
    flattened with its group as prefix (``server_mode``, ``load_rate``, ``breakpoint_precision``...)."""
    m = run.meta
    env = m.get("environment") or {}
    row = {"run_id": m["id"], "kind": m.get("kind"), "name": m.get("name"), "status": m.get("status"),
           "created_at": m.get("created_at"), "finished_at": m.get("finished_at"), "elapsed_s": m.get("elapsed_s"),
           "git_commit": (env.get("git") or {}).get("commit"), "git_dirty": (env.get("git") or {}).get("dirty"),
           "hostname": (env.get("machine") or {}).get("hostname"), "cores": (env.get("machine") or {}).get("cores"),
           "java_version": (m.get("server") or {}).get("java_version"),
           "error": (m.get("error") or {}).get("message"), "dir": str(run.dir),
           "validity": (m.get("validity") or {}).get("verdict"),
           "validity_reasons": json.dumps((m.get("validity") or {}).get("reasons") or []),
           "placement": (m.get("placement") or {}).get("mode")}
    params = m.get("params") or {}
    for group, vals in params.items():
        if isinstance(vals, dict):
            _flat(group + "_", vals, row)
        else:
            row[group] = json.dumps(vals) if isinstance(vals, list) else vals
    _flat("result_", m.get("results"), row)
    return row


def list_runs(data_root=None) -> pd.DataFrame:
    """All runs as a DataFrame (the ``runs`` index table, read straight from the run dirs)."""
    rows = [run_row(r) for r in iter_runs(data_root)]
    return pd.DataFrame(rows)


def _uniform_types(df: pd.DataFrame) -> pd.DataFrame:
    """Make every column one SQL type: lists/dicts become JSON text, and a column whose values
    mix types across runs (e.g. a parameter that was a number in one run and a string in another)
    becomes text, so DuckDB can load it."""
    for c in df.columns:
        if df[c].dtype != object:
            continue
        vals = df[c].dropna()
        if vals.map(lambda v: isinstance(v, (list, dict))).any():
            df[c] = df[c].map(lambda v: json.dumps(v) if isinstance(v, (list, dict)) else v)
            vals = df[c].dropna()
        kinds = {("num" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__) for v in vals}
        if len(kinds) > 1:
            df[c] = df[c].map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return df


def rebuild_index(data_root=None) -> Path:
    """Rebuild ``<data root>/index.duckdb`` from every run directory and return its path.

    Written to a temporary file and renamed into place, so a reader never sees a half-built index.
    Each table ``t`` with rows in ``runs/*/tables/t.jsonl`` becomes a table with those rows joined
    with the ``runs`` row of their run (run columns that the table also has keep the table's value).
    """
    import duckdb

    root = paths.data_root(data_root)
    target = root / INDEX_FILE
    tmp = root / f".{INDEX_FILE}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
    runs = list_runs(root)
    tables: dict[str, list[Path]] = {}
    for d in runs_dir(root).iterdir():
        td = d / "tables"
        if td.is_dir():
            for f in td.glob("*.jsonl"):
                if f.stat().st_size:
                    tables.setdefault(f.stem, []).append(f)
    con = duckdb.connect(str(tmp))
    try:
        if runs.empty:
            con.execute("CREATE TABLE runs (run_id VARCHAR, kind VARCHAR, name VARCHAR, status VARCHAR)")
        else:
            con.register("runs_df", _uniform_types(runs))
            con.execute("CREATE TABLE runs AS SELECT * FROM runs_df")
            con.unregister("runs_df")
        run_cols = [c for c in runs.columns] if not runs.empty else ["run_id", "kind", "name", "status"]
        for name, files in sorted(tables.items()):
            if name == "runs":
                continue
            rows = []
            for f in files:
                with f.open() as fh:
                    for line in fh:
                        line = line.strip()
                        if line:
                            try:
                                rows.append(json.loads(line))
                            except ValueError:
                                continue  # a torn last line of a crashed run
            df = pd.DataFrame(rows)
            if df.empty:
                continue
            con.register("t_df", _uniform_types(df))
            extra = [c for c in run_cols if c not in df.columns]
            sel = ", ".join(f'r."{c}"' for c in extra)
            con.execute(f'CREATE TABLE "{name}" AS SELECT t.*{", " + sel if sel else ""} '
                        f'FROM t_df t LEFT JOIN runs r ON r.run_id = t.run_id')
            con.unregister("t_df")
        con.execute("CREATE TABLE index_info AS SELECT ? AS built_at, ? AS runs", [_now(), len(runs)])
    finally:
        con.close()
    os.replace(tmp, target)
    wal = Path(str(tmp) + ".wal")
    if wal.exists():
        wal.unlink()
    return target


def connect(data_root=None, rebuild: bool = True):
    """A read-only DuckDB connection to the index (rebuilt first unless ``rebuild=False``)."""
    import duckdb

    root = paths.data_root(data_root)
    if rebuild or not (root / INDEX_FILE).exists():
        rebuild_index(root)
    return duckdb.connect(str(root / INDEX_FILE), read_only=True)


def query(sql: str, data_root=None, rebuild: bool = True, params: list | None = None) -> pd.DataFrame:
    """Run SQL on the index and return a DataFrame, e.g.
    ``query("SELECT server_workers, connections, breakpoint_rate FROM breakpoints WHERE method='GET' AND server_mode='async'")``."""
    if not isinstance(sql, str) or not sql.strip():
        raise ValueError("sql must be a non-empty SQL string")
    con = connect(data_root, rebuild)
    try:
        return con.execute(sql, params or []).df()
    finally:
        con.close()


def tables(data_root=None, rebuild: bool = False) -> list[str]:
    """Names of the index's tables."""
    con = connect(data_root, rebuild)
    try:
        return [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()]
    finally:
        con.close()


def delete_run(run: str | os.PathLike, data_root=None) -> None:
    """Remove a run directory (the index forgets it at the next rebuild)."""
    r = load_run(run, data_root)
    shutil.rmtree(r.dir)
