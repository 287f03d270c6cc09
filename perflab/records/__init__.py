"""Run records: one directory per run (:mod:`.run`: :class:`Run`, the one way to read a run), the DuckDB
index across them (:mod:`.index`), and what a run records about where it ran (:mod:`.environment`)."""

from .index import list_runs, query, recorded, tables, update_index  # noqa: F401
from .run import STATUSES, RecordedSearch, Run, iter_runs, new_run, open_run, run_names  # noqa: F401
