"""The DuckDB index over every run: ``<data root>/index.duckdb``, kept up to date from the run directories.

Each run writes its index rows to ``tables/<table>.jsonl`` (:meth:`perflab.records.run.Run.add_rows`);
:func:`update_index` reads each run's ``meta.json`` and those rows into DuckDB once, and again only when its
``meta.json`` changes (or while it runs), so a query over many runs reads only what is new; the index can
always be built afresh from the runs and is never the only copy of anything. Tables: ``runs`` (one row per
run: identity, status, environment highlights and every parameter flattened with its group as prefix),
``loads``, ``breakpoints``, ``intervals``, ``stats``, ``events``, ``profiles``, ``categories`` (every row
joined with its run's ``runs`` row), ``index_info`` (when it was last brought up to date, how many runs);
``data/README.md`` lists their columns. Column types: :mod:`.columns`.
"""

from __future__ import annotations

import fcntl
import os
import secrets
from contextlib import contextmanager
from pathlib import Path

import pandas as pd

from .. import paths
from .refresh import create, refresh, usable

INDEX_FILE = "index.duckdb"
#: held while the index is updated (alone) or read (shared)
LOCK_FILE = "index.lock"


@contextmanager
def _locked(root: Path, exclusive: bool):
    """``<data root>/index.lock``: an update holds it alone, readers together (two reports at once in one
    checkout share a data root, and DuckDB lets no process read a file another one writes)."""
    with open(root / LOCK_FILE, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def update_index(data_root=None, full: bool = False) -> Path:
    """Bring ``<data root>/index.duckdb`` up to date with the run directories and return its path.

    Only what changed is read: runs that are new, whose ``meta.json`` changed since the index last read them,
    or that were still running then (their rows may have grown); the rows of runs that are gone are dropped.
    ``full=True`` (or an index of another layout, or of another data root) builds it afresh from every run,
    into a new file renamed into place. An update holds ``index.lock`` alone and is one transaction, so a
    reader never sees half of one and a crash leaves the index as it was.
    """
    import duckdb  # in here: ~0.2 s to import, and only the index needs it

    root = paths.data_root(data_root)
    target = root / INDEX_FILE
    with _locked(root, exclusive=True):
        if not full and target.exists():
            try:
                con = duckdb.connect(str(target))
            except duckdb.Error:
                con = None  # not a DuckDB file this version reads: built afresh below
            if con is not None:
                try:
                    if usable(con, root):
                        refresh(con, root)
                        return target
                finally:
                    con.close()
        tmp = root / f".{INDEX_FILE}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
        try:
            con = duckdb.connect(str(tmp))
            try:
                create(con, root)
                refresh(con, root)
            finally:
                con.close()
            Path(f"{target}.wal").unlink(missing_ok=True)  # the old file's log must not be replayed on the new one
            os.replace(tmp, target)
        finally:
            for leftover in (tmp, Path(f"{tmp}.wal")):
                leftover.unlink(missing_ok=True)
    return target


@contextmanager
def _reading(data_root, update: bool):
    """A read-only connection to the index (brought up to date first unless ``update=False``), under the
    shared lock."""
    import duckdb

    root = paths.data_root(data_root)
    if update or not (root / INDEX_FILE).exists():
        update_index(root)
    with _locked(root, exclusive=False):
        con = duckdb.connect(str(root / INDEX_FILE), read_only=True)
        try:
            yield con
        finally:
            con.close()


def query(sql: str, data_root=None, update: bool = True, params: list | None = None) -> pd.DataFrame:
    """Run SQL on the index and return a DataFrame, e.g.
    ``query("SELECT server_workers, connections, breakpoint_rate FROM breakpoints WHERE workload='GET'")``;
    the index is brought up to date first unless ``update=False``."""
    if not isinstance(sql, str) or not sql.strip():
        raise ValueError("sql must be a non-empty SQL string")
    with _reading(data_root, update) as con:
        return con.execute(sql, params or []).df()


def tables(data_root=None, update: bool = False) -> list[str]:
    """Names of the index's tables."""
    with _reading(data_root, update) as con:
        return _tables(con)


def _tables(con) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1"
        ).fetchall()
    ]


def list_runs(data_root=None) -> pd.DataFrame:
    """Every run's ``runs`` row, failed, interrupted and invalid ones too, oldest first."""
    return recorded("runs", data_root, include_failed=True, include_invalid=True)


def recorded(
    table: str,
    data_root=None,
    since_days: float | None = None,
    include_failed: bool = False,
    include_invalid: bool = False,
    update: bool = True,
    commit: str | None = None,
    label: str | None = None,
) -> pd.DataFrame:
    """Every row of index table ``table`` (empty when nothing of that kind is recorded yet), oldest first,
    without failed or interrupted runs and without runs whose validity is ``invalid`` unless asked, and only
    runs created in the last ``since_days`` days when given, and only those that measured the server at
    ``commit`` (a hash or its prefix) and/or with the version ``label`` when given. The index is brought up to
    date first unless ``update=False``; DuckDB keeps only the rows asked for, so pandas gets no others.

    The runs of the window that were left out for their status or validity are named in the frame's
    ``attrs["left_out"]`` (:data:`LEFT_OUT_COLUMNS` of their ``runs`` rows, oldest first), so what is said of
    the rows can count every run recorded and say why some are not in them."""
    if not isinstance(table, str) or not table.isidentifier():
        raise ValueError(f"table must be the name of an index table, got {table!r}")
    with _reading(data_root, update) as con:
        tables = _tables(con)
        if table not in tables:
            return pd.DataFrame()
        where, params = [], []  # every table has its run's columns (status, validity, created_at, version_*)
        if since_days is not None:
            where.append("TRY_CAST(created_at AS TIMESTAMPTZ) >= ?")
            params.append((pd.Timestamp.now(tz="UTC") - pd.Timedelta(days=since_days)).to_pydatetime())
        if commit is not None:
            where.append("starts_with(version_commit, ?)")
            params.append(str(commit).strip().lower())
        if label is not None:
            where.append("version_label = ?")
            params.append(label)
        kept = (["status = 'ok'"] if not include_failed else []) + (
            ["validity IS DISTINCT FROM 'invalid'"] if not include_invalid else []
        )
        sql = (
            f'SELECT * FROM "{table}"'
            + (" WHERE " + " AND ".join(where + kept) if where + kept else "")
            + " ORDER BY created_at"
        )
        df = con.execute(sql, params).df()
        left: list[dict] = []
        if kept and "runs" in tables:
            cols = ", ".join(LEFT_OUT_COLUMNS)
            sql = (
                f'SELECT {cols} FROM "runs" WHERE '
                + " AND ".join(where + [f"NOT ({' AND '.join(kept)})"])
                + " ORDER BY created_at"
            )
            left = [
                {k: (None if v is None or (isinstance(v, float) and v != v) else v) for k, v in r.items()}
                for r in con.execute(sql, params).df().to_dict("records")
            ]
        df.attrs["left_out"] = left
        return df


#: what :func:`recorded` says of each run it left out (``attrs["left_out"]``)
LEFT_OUT_COLUMNS = ("run_id", "kind", "status", "validity", "validity_reasons", "error", "created_at", "version_commit")
