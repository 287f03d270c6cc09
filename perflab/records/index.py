"""The DuckDB index over every run: ``<data root>/index.duckdb``, rebuilt from the run directories.

Each run writes its index rows to ``tables/<table>.jsonl`` (:meth:`perflab.records.run.Run.add_rows`);
:func:`rebuild_index` reads every run's ``meta.json`` and those rows into DuckDB, so the index can always
be rebuilt from the runs and is never the only copy of anything. Tables: ``runs`` (one row per run:
identity, status, environment highlights and every parameter flattened with its group as prefix),
``loads``, ``breakpoints``, ``intervals``, ``stats``, ``events``, ``profiles``, ``categories`` (every
row joined with its run's ``runs`` row); ``data/README.md`` lists their columns.
"""

from __future__ import annotations

import json
import math
import os
import secrets
from pathlib import Path

import pandas as pd

from .. import paths
from .run import Run, _now, iter_runs

INDEX_FILE = "index.duckdb"


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
    """One ``runs`` index row: identity, status, the version of the server it measured (``version_commit``,
    ``version_label``), perflab's own commit (``perflab_commit``), environment highlights, and every parameter
    flattened with its group as prefix (``server_mode``, ``load_rate``, ``breakpoint_precision``...)."""
    m = run.meta
    env = m.get("environment") or {}
    row = {"run_id": run.id, "kind": run.kind, "name": run.name, "status": run.status,
           "created_at": m.get("created_at"), "finished_at": m.get("finished_at"), "elapsed_s": m.get("elapsed_s"),
           "version_commit": run.version["commit"], "version_label": run.version["label"],
           "perflab_commit": run.commit, "perflab_dirty": (env.get("git") or {}).get("dirty"),
           "hostname": (env.get("machine") or {}).get("hostname"), "cores": (env.get("machine") or {}).get("cores"),
           "java_version": (m.get("server") or {}).get("java_version"),
           "error": (m.get("error") or {}).get("message"), "dir": str(run.dir),
           "validity": run.validity, "validity_reasons": json.dumps(run.validity_reasons),
           "placement": (m.get("placement") or {}).get("mode")}
    for group, vals in run.params.items():
        if isinstance(vals, dict):
            _flat(group + "_", vals, row)
        else:
            row[group] = json.dumps(vals) if isinstance(vals, list) else vals
    _flat("result_", run.results, row)
    return row


def list_runs(data_root=None) -> pd.DataFrame:
    """All runs as a DataFrame (the ``runs`` index table, read straight from the run dirs)."""
    return pd.DataFrame([run_row(r) for r in iter_runs(data_root)])


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


def _table_rows(files: list[Path]) -> pd.DataFrame:
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
    return pd.DataFrame(rows)


def rebuild_index(data_root=None) -> Path:
    """Rebuild ``<data root>/index.duckdb`` from every run directory and return its path.

    Written to a temporary file and renamed into place, so a reader never sees a half-built index.
    Each table ``t`` with rows in ``runs/*/tables/t.jsonl`` becomes a table with those rows joined
    with the ``runs`` row of their run (run columns that the table also has keep the table's value).
    """
    import duckdb  # in here: ~0.2 s to import, and only the index needs it

    root = paths.data_root(data_root)
    target = root / INDEX_FILE
    tmp = root / f".{INDEX_FILE}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
    runs = list_runs(root)
    tables: dict[str, list[Path]] = {}
    for d in paths.runs_root(root).iterdir():
        for f in (d / "tables").glob("*.jsonl") if (d / "tables").is_dir() else ():
            if f.stat().st_size and f.stem != "runs":
                tables.setdefault(f.stem, []).append(f)
    con = duckdb.connect(str(tmp))
    try:
        if runs.empty:
            # the columns every reader of an empty index sorts or filters on (notebook 06 on a fresh data root)
            con.execute("CREATE TABLE runs (run_id VARCHAR, kind VARCHAR, name VARCHAR, status VARCHAR, "
                        "created_at VARCHAR, validity VARCHAR)")
        else:
            con.register("runs_df", _uniform_types(runs))
            con.execute("CREATE TABLE runs AS SELECT * FROM runs_df")
            con.unregister("runs_df")
        run_cols = list(runs.columns) if not runs.empty else ["run_id", "kind", "name", "status"]
        for name, files in sorted(tables.items()):
            df = _table_rows(files)
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
    import duckdb  # in here: ~0.2 s to import, and only the index needs it

    root = paths.data_root(data_root)
    if rebuild or not (root / INDEX_FILE).exists():
        rebuild_index(root)
    return duckdb.connect(str(root / INDEX_FILE), read_only=True)


def query(sql: str, data_root=None, rebuild: bool = True, params: list | None = None) -> pd.DataFrame:
    """Run SQL on the index and return a DataFrame, e.g.
    ``query("SELECT server_workers, connections, breakpoint_rate FROM breakpoints WHERE workload='GET'")``."""
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


def of_version(df: pd.DataFrame, commit: str | None = None, label: str | None = None) -> pd.DataFrame:
    """The rows of ``df`` (with the ``runs`` columns) that measured the server at ``commit`` (a hash or its
    prefix) and/or with the version ``label``; all of them when neither is given."""
    if commit is None and label is None:
        return df
    keep = pd.Series(True, index=df.index)
    if commit is not None:
        commit = str(commit).strip().lower()
        col = df["version_commit"] if "version_commit" in df else pd.Series(None, index=df.index, dtype=object)
        keep &= col.map(lambda c: isinstance(c, str) and c.startswith(commit))
    if label is not None:
        col = df["version_label"] if "version_label" in df else pd.Series(None, index=df.index, dtype=object)
        keep &= col == label
    return df[keep]


def recorded(table: str, data_root=None, since_days: float | None = None, include_failed: bool = False,
             include_invalid: bool = False, rebuild: bool = True, commit: str | None = None,
             label: str | None = None) -> pd.DataFrame:
    """Every row of index table ``table`` (empty when nothing of that kind is recorded yet), oldest first,
    without failed or interrupted runs and without runs whose validity is ``invalid`` unless asked, and only
    runs created in the last ``since_days`` days when given, and only those that measured the server at
    ``commit`` (a prefix) or with the version ``label`` when given (:func:`of_version`)."""
    if not isinstance(table, str) or not table.isidentifier():
        raise ValueError(f"table must be the name of an index table, got {table!r}")
    if rebuild:
        rebuild_index(data_root)
    if table not in tables(data_root):
        return pd.DataFrame()
    df = query(f'SELECT * FROM "{table}" ORDER BY created_at', data_root, rebuild=False)
    if since_days is not None and len(df):
        cutoff = pd.Timestamp.now(tz="UTC") - pd.Timedelta(days=since_days)
        df = df[pd.to_datetime(df["created_at"], utc=True) >= cutoff]
    if not include_failed and "status" in df:
        df = df[df["status"] == "ok"]
    if not include_invalid and "validity" in df:
        df = df[df["validity"].fillna("n/a") != "invalid"]
    return of_version(df, commit, label).reset_index(drop=True)
