"""Run records: one directory per run with ``meta.json`` and raw outputs, and the DuckDB index over them
(:mod:`.store`); what is recorded about the machine and tools (:mod:`.environment`)."""

from .store import (INDEX_FILE, STATUSES, Run, connect, delete_run, dump_json, iter_runs, list_runs,  # noqa: F401
                    load_run, new_run, query, rebuild_index, run_row, runs_dir, tables)
