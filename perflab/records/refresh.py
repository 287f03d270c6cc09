"""Bringing the index (:mod:`.index`) up to date with the run directories: which runs are new, changed or gone,
and their rows into DuckDB.

Each run directory is keyed by its ``meta.json``'s inode, modification time and size (a run that saves its
``meta.json`` writes a new file, :func:`perflab.records.run.dump_json`, so every save changes the key). An
update reads the runs that are new, whose key changed, or that were still running when last read (their rows
may have grown since), and drops the rows of those and of runs gone. The ``runs`` table lives in ``main``;
every other table's rows in the ``run_rows`` schema, read through a view in ``main`` that joins each row with
its run's columns. Column types: :mod:`.columns`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from .. import paths
from .columns import Column, gather, kinds_of
from .run import Run, _now, iter_runs

#: the layout of the index this code writes: an index of another layout is built afresh
FORMAT = 1
#: schemas of the index: each table's rows as the runs wrote them (read through views in ``main``), and what the
#: updates keep (which run files were read, the columns' kinds, the layout and the data root)
ROWS, STATE = "run_rows", "index_state"
#: table names a run's ``tables/`` may not take (the index's own)
RESERVED = {"runs", "index_info"}
#: runs read and written to DuckDB at a time (bounds the memory of a first build over many runs)
BATCH = 1000
#: the ``runs`` columns every run has, in this order (its parameters and results follow)
RUN_COLUMNS = (
    "run_id",
    "kind",
    "name",
    "status",
    "created_at",
    "finished_at",
    "elapsed_s",
    "version_commit",
    "version_label",
    "perflab_commit",
    "perflab_dirty",
    "hostname",
    "cores",
    "java_version",
    "error",
    "dir",
    "validity",
    "validity_reasons",
    "placement",
)


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
    row = {
        "run_id": run.id,
        "kind": run.kind,
        "name": run.name,
        "status": run.status,
        "created_at": m.get("created_at"),
        "finished_at": m.get("finished_at"),
        "elapsed_s": m.get("elapsed_s"),
        "version_commit": run.version["commit"],
        "version_label": run.version["label"],
        "perflab_commit": run.commit,
        "perflab_dirty": (env.get("git") or {}).get("dirty"),
        "hostname": (env.get("machine") or {}).get("hostname"),
        "cores": (env.get("machine") or {}).get("cores"),
        "java_version": (m.get("server") or {}).get("java_version"),
        "error": (m.get("error") or {}).get("message"),
        "dir": str(run.dir),
        "validity": run.validity,
        "validity_reasons": json.dumps(run.validity_reasons),
        "placement": (m.get("placement") or {}).get("mode"),
    }
    for group, vals in run.params.items():
        if isinstance(vals, dict):
            _flat(group + "_", vals, row)
        else:
            row[group] = json.dumps(vals) if isinstance(vals, list) else vals
    _flat("result_", run.results, row)
    return row


def _read_rows(f: Path) -> list[dict]:
    """The rows of one ``tables/<table>.jsonl``; a torn last line (a run that crashed, or that is writing it
    now) is left out."""
    lines = [line for line in map(str.strip, f.read_text().splitlines()) if line]
    try:  # all at once, the quick way, where every line is a whole object
        if not all(line[0] == "{" and line[-1] == "}" for line in lines):
            raise ValueError
        rows = json.loads("[" + ",".join(lines) + "]")
    except ValueError:
        rows = []
        for line in lines:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return [r for r in rows if isinstance(r, dict)]


def scan(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every run directory's name -> its ``meta.json``'s (inode, mtime in ns, size): a run that saves its
    ``meta.json`` writes a new file (:func:`perflab.records.run.dump_json`), so a save always changes the key."""
    out = {}
    with os.scandir(paths.runs_root(root)) as entries:
        for e in entries:
            if not e.is_dir():
                continue
            try:
                st = os.stat(os.path.join(e.path, "meta.json"))
            except OSError:
                continue  # being created: its meta.json comes a moment later
            out[e.name] = (st.st_ino, st.st_mtime_ns, st.st_size)
    return out


def create(con, root: Path) -> None:
    con.execute(f"CREATE SCHEMA {ROWS}")
    con.execute(f"CREATE SCHEMA {STATE}")
    con.execute(f"CREATE TABLE {STATE}.info (format INTEGER, root VARCHAR)")
    con.execute(f"INSERT INTO {STATE}.info VALUES (?, ?)", [FORMAT, str(root)])
    con.execute(
        f"CREATE TABLE {STATE}.files (name VARCHAR, run_id VARCHAR, ino BIGINT, mtime_ns BIGINT, size BIGINT, "
        "live BOOLEAN)"
    )
    con.execute(
        f"CREATE TABLE {STATE}.columns (tbl VARCHAR, col VARCHAR, kind VARCHAR, gaps BOOLEAN, absent BOOLEAN, "
        "pos INTEGER)"
    )
    # the columns every reader of an empty index sorts or filters on (notebook 06 on a fresh data root)
    con.execute("CREATE TABLE main.runs (" + ", ".join(f'"{c}" {Column().sql}' for c in RUN_COLUMNS) + ")")
    con.executemany(
        f"INSERT INTO {STATE}.columns VALUES ('runs', ?, 'null', false, false, ?)",
        [[c, i] for i, c in enumerate(RUN_COLUMNS)],
    )
    con.execute("CREATE TABLE main.index_info (built_at VARCHAR, runs BIGINT)")
    con.execute("INSERT INTO main.index_info VALUES (?, 0)", [_now()])


def usable(con, root: Path) -> bool:
    """Whether ``con``'s index was built by this code for this data root (the ``dir`` column names it)."""
    try:
        return con.execute(f"SELECT format, root FROM {STATE}.info").fetchall() == [(FORMAT, str(root))]
    except Exception:  # an index of an older layout, or none yet
        return False


class _Tables:
    """The index's tables as this update sees them: each one's columns (:class:`~.columns.Column`, in order)
    and where its rows are stored (``runs`` in ``main``, every other table in the ``rows`` schema, read through
    a view that joins its run's columns)."""

    def __init__(self, con):
        self.con = con
        self.columns: dict[str, dict[str, Column]] = {}
        for tbl, col, kind, gaps, absent in con.execute(
            f"SELECT tbl, col, kind, gaps, absent FROM {STATE}.columns ORDER BY tbl, pos"
        ).fetchall():
            self.columns.setdefault(tbl, {})[col] = Column(kind, gaps, absent)
        self.schema_changed = False

    @staticmethod
    def where(tbl: str) -> str:
        return "main.runs" if tbl == "runs" else f'{ROWS}."{tbl}"'

    def drop_rows(self, run_ids: list[str]) -> None:
        if not run_ids:
            return
        self.con.execute("CREATE OR REPLACE TEMP TABLE gone AS SELECT unnest(?::VARCHAR[]) AS run_id", [run_ids])
        for tbl in list(self.columns):
            self.con.execute(f"DELETE FROM {self.where(tbl)} WHERE run_id IN (SELECT run_id FROM gone)")
            if tbl != "runs" and not self.con.execute(f"SELECT count(*) FROM {self.where(tbl)}").fetchall()[0][0]:
                self.con.execute(f"DROP TABLE {self.where(tbl)}")  # as a build from the runs left would have none
                del self.columns[tbl]
                self.schema_changed = True
        self.con.execute("DROP TABLE gone")

    def append(self, tbl: str, rows: list[dict]) -> None:
        """Add ``rows`` to table ``tbl``: new columns added, columns whose type the rows widen altered first."""
        if not rows:
            return
        known = self.columns.get(tbl)
        had_rows = known is not None and bool(
            self.con.execute(f"SELECT count(*) FROM {self.where(tbl)}").fetchall()[0][0]
        )
        batch = gather(rows)
        cols = dict(known or {})
        for name in dict.fromkeys([*cols, *batch]):
            values, absent = batch.get(name, ([], True))
            cols[name] = cols.get(name, Column()).widened(
                kinds_of(values), None in values, absent or (had_rows and name not in cols)
            )
        if known is None:
            self.con.execute(
                f"CREATE TABLE {self.where(tbl)} (" + ", ".join(f'"{n}" {c.sql}' for n, c in cols.items()) + ")"
            )
        else:
            for name, c in cols.items():
                if name not in known:
                    self.con.execute(f'ALTER TABLE {self.where(tbl)} ADD COLUMN "{name}" {c.sql}')
                elif c.sql != known[name].sql:
                    self.con.execute(
                        f'ALTER TABLE {self.where(tbl)} ALTER "{name}" SET DATA TYPE {c.sql} '
                        f"USING {c.cast_from(known[name], name)}"
                    )
        self.schema_changed |= cols != known
        self.con.register("batch", pd.DataFrame({n: cols[n].stored(values) for n, (values, _) in batch.items()}))
        self.con.execute(f"INSERT INTO {self.where(tbl)} BY NAME SELECT * FROM batch")
        self.con.unregister("batch")
        self.columns[tbl] = cols

    def save(self) -> None:
        """When a table's columns changed: every table's columns, and the views: each table's rows with its
        run's columns (those the table has too keep the table's value), in the order they were added."""
        if not self.schema_changed:
            return
        self.con.execute(f"DELETE FROM {STATE}.columns")
        catalog = pd.DataFrame(
            [
                (tbl, n, c.kind, c.gaps, c.absent, i)
                for tbl, cols in self.columns.items()
                for i, (n, c) in enumerate(cols.items())
            ],
            columns=["tbl", "col", "kind", "gaps", "absent", "pos"],
        )
        self.con.register("catalog", catalog)
        self.con.execute(f"INSERT INTO {STATE}.columns BY NAME SELECT * FROM catalog")
        self.con.unregister("catalog")
        for (view,) in self.con.execute(
            "SELECT view_name FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
        ).fetchall():
            self.con.execute(f'DROP VIEW main."{view}"')
        run_cols = list(self.columns["runs"])
        for tbl, cols in self.columns.items():
            if tbl == "runs":
                continue
            extra = ", ".join(f'r."{c}"' for c in run_cols if c not in cols)
            self.con.execute(
                f'CREATE VIEW main."{tbl}" AS SELECT t.*{", " + extra if extra else ""} '
                f"FROM {self.where(tbl)} t LEFT JOIN main.runs r ON r.run_id = t.run_id ORDER BY t.rowid"
            )


def refresh(con, root: Path) -> bool:
    """Bring the index in ``con`` up to the run directories: drop the rows of runs gone, changed or still
    running when last read, read those and the new ones; one transaction. Whether anything changed."""
    found = scan(root)
    known = {
        name: (run_id, (ino, mtime, size), live)
        for name, run_id, ino, mtime, size, live in con.execute(
            f"SELECT name, run_id, ino, mtime_ns, size, live FROM {STATE}.files"
        ).fetchall()
    }
    stale = {n for n, (_, key, live) in known.items() if live or found.get(n) != key}
    gone_ids = {known[n][0] for n in stale}
    stale |= {n for n, (run_id, _, _) in known.items() if run_id in gone_ids}  # copies that share a run id
    fresh = sorted(n for n in found if n not in known or n in stale)
    if not stale and not fresh:
        return False
    con.execute("BEGIN")
    try:
        tables = _Tables(con)
        tables.drop_rows(sorted({known[n][0] for n in stale}))
        if stale:
            con.execute(f"DELETE FROM {STATE}.files WHERE name IN (SELECT unnest(?::VARCHAR[]))", [sorted(stale)])
        for i in range(0, len(fresh), BATCH):
            _read(tables, root, fresh[i : i + BATCH], found)
        tables.save()
        n = con.execute("SELECT count(*) FROM main.runs").fetchall()[0][0]
        con.execute("DELETE FROM main.index_info")
        con.execute("INSERT INTO main.index_info VALUES (?, ?)", [_now(), n])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def _read(tables: _Tables, root: Path, names: list[str], keys: dict) -> None:
    """Read runs ``names`` into ``tables``: their ``runs`` rows and every table's rows, and their keys."""
    run_rows, files, table_rows = [], [], {}
    for run in iter_runs(root, names):
        run_rows.append(run_row(run))
        files.append([run.dir.name, run.id, *keys[run.dir.name], run.status == "running"])
        tdir = run.dir / "tables"
        try:
            jsonl = sorted(f for f in os.listdir(tdir) if f.endswith(".jsonl"))
        except OSError:
            jsonl = []  # a run that wrote no rows
        for f in jsonl:
            if f[:-6] not in RESERVED:
                table_rows.setdefault(f[:-6], []).extend(_read_rows(tdir / f))
    tables.append("runs", run_rows)
    for name, rows in sorted(table_rows.items()):
        tables.append(name, rows)
    if files:
        tables.con.register("files", pd.DataFrame(files, columns=["name", "run_id", "ino", "mtime_ns", "size", "live"]))
        tables.con.execute(f"INSERT INTO {STATE}.files BY NAME SELECT * FROM files")
        tables.con.unregister("files")
