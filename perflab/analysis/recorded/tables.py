"""Everything recorded so far, as the summary notebook shows it: the index's tables
(:func:`perflab.records.recorded`) turned into what its tables, figures and sentences take.

* :func:`update_index` — the index brought up to date with the run directories, and a line saying what it holds
* :func:`configuration` — the one label of a server configuration: ``sync / lsm / 4 workers / queue 128``
* :func:`runs_by_kind`, :func:`newest_runs` — the ``runs`` table counted and listed
* :func:`breakpoint_rows`, :func:`latest`, :func:`searched_again`, :func:`breakpoint_frame` — recorded
  searches as the findings' breakpoint rows (the configuration in ``mode``)
* :func:`fixed_rate_runs` — the fixed-rate runs of the ``loads`` table
* :func:`mean_categories` — the mean share of each profile category, per configuration
"""

from __future__ import annotations

import math

import pandas as pd

from ... import fmt, paths, records

#: what a validity level reads when a run recorded none
NOT_ASSESSED = "not assessed"


def update_index() -> str:
    """Bring the DuckDB index up to date with the run directories; 'data root: /x/data; index tables: loads, runs'."""
    records.update_index()
    return f"data root: {paths.data_root()}; index tables: {', '.join(records.tables()) or 'none'}"


def _text(v) -> str | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def _whole(v) -> int | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


def configuration(df: pd.DataFrame) -> pd.Series:
    """Each row's server configuration: mode / backend, and for ``async`` (the one mode with an executor) its
    workers when the run set them and its queue capacity (``async / lsm / 4 workers / queue 128``); ``your
    server`` for a server perflab did not build."""

    def label(r) -> str:
        mode = _text(r.get("server_mode"))
        parts = [p for p in (mode, _text(r.get("server_backend"))) if p]
        if not parts:
            return "your server"
        if mode == "async":
            workers, queue = _whole(r.get("server_workers")), _whole(r.get("server_queue"))
            parts += ([fmt.count(workers, "worker")] if workers else []) + ([f"queue {queue}"] if queue else [])
        return " / ".join(parts)

    return pd.Series([label(r) for r in df.to_dict("records")], index=df.index, dtype=object)


def _validity(df: pd.DataFrame) -> pd.Series:
    v = df["validity"] if "validity" in df else pd.Series(index=df.index, dtype=object)
    return v.fillna(NOT_ASSESSED)


def runs_by_kind(runs: pd.DataFrame) -> pd.DataFrame:
    """How many runs of each kind (experiment, breakpoint...) have each validity level."""
    return runs.assign(validity=_validity(runs)).groupby(["kind", "validity"]).size().rename("runs").reset_index()


def newest_runs(runs: pd.DataFrame, n: int) -> pd.DataFrame:
    """The ``n`` newest runs, newest first: identity, status, validity, placement, commit, configuration."""
    cols = [
        "run_id",
        "kind",
        "name",
        "status",
        "validity",
        "placement",
        "created_at",
        "elapsed_s",
        "version_commit",
        "version_label",
    ]
    out = runs.assign(validity=_validity(runs), configuration=configuration(runs))
    return out.sort_values("created_at", ascending=False)[[c for c in cols + ["configuration"] if c in out]].head(n)


def breakpoint_rows(searches: pd.DataFrame) -> list[dict]:
    """Every recorded search of the ``breakpoints`` table, oldest first, as a breakpoint row
    (:func:`perflab.analysis.findings.check_breakpoint`'s keys) whose ``mode`` is its
    :func:`configuration`, with ``created_at``, ``version_commit`` and ``run_id``."""
    if searches is None or searches.empty:
        return []
    df = searches.sort_values("created_at", kind="stable")
    rows = []
    for r, cfg in zip(df.to_dict("records"), configuration(df)):
        rate = r.get("breakpoint_rate")
        rate = None if rate is None or (isinstance(rate, float) and math.isnan(rate)) else float(rate)
        lo, hi = (
            None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
            for v in (r.get("lo"), r.get("hi"))
        )
        rows.append(
            {
                "workload": str(r.get("workload")),
                "connections": _whole(r.get("connections")),
                "mode": cfg,
                "rate": rate,
                "interval": [lo, hi],
                "verdict": _text(r.get("verdict")),
                "validity": _text(r.get("validity")),
                "run_id": r.get("run_id"),
                "created_at": str(r.get("created_at")),
                "version_commit": _text(r.get("version_commit")),
            }
        )
    return rows


def _key(row: dict) -> tuple:
    return row["workload"], row["connections"], row["mode"]


def latest(rows: list[dict]) -> list[dict]:
    """The newest row of each workload, connection count and configuration (``rows`` oldest first)."""
    newest = {}
    for r in rows:
        newest[_key(r)] = r
    return list(newest.values())


def searched_again(rows: list[dict]) -> bool:
    """Whether the record holds more than the latest search of each configuration, or searches at more
    than one commit: the cases a figure over time says something."""
    return len(rows) > len(latest(rows)) or len({r.get("version_commit") for r in rows}) > 1


def breakpoint_frame(rows: list[dict]) -> pd.DataFrame:
    """Breakpoint rows as a table: workload, connections, configuration, breakpoint, interval, outcome,
    validity, run."""
    return pd.DataFrame(
        [
            {
                "workload": r["workload"],
                "connections": r["connections"],
                "configuration": r["mode"],
                "breakpoint, req/s": r["rate"],
                "interval, req/s": fmt.interval(r["interval"]),
                "outcome": r["verdict"],
                "validity": r["validity"] or NOT_ASSESSED,
                "run": r["run_id"],
            }
            for r in rows
        ]
    )


def fixed_rate_runs(loads: pd.DataFrame) -> pd.DataFrame:
    """The ``loads`` rows of fixed-rate runs (``kind`` experiment; a breakpoint's probes are left out),
    with the script's file name (``no script`` for a load of a plain path), the :func:`configuration` and the validity level (``not assessed`` when
    none was recorded)."""
    if loads is None or loads.empty:
        return pd.DataFrame()
    out = loads[loads["kind"] == "experiment"].copy()
    if out.empty:
        return out
    out["script"] = out["script"].map(lambda s: _text(s).rsplit("/", 1)[-1] if _text(s) else "no script")
    out["configuration"] = configuration(out)
    out["validity"] = _validity(out)
    return out.reset_index(drop=True)


def mean_categories(categories: pd.DataFrame, event: str = "cpu") -> dict[str, pd.DataFrame]:
    """Per configuration, each category's share of all the samples of its ``event`` profiles together (pooled, so
    every share has the samples behind it): configuration -> ``category, samples, share, profiles`` (the number of
    profiles), the shape :func:`perflab.analysis.profiles.category_bars` takes."""
    if categories is None or categories.empty:
        return {}
    cats = categories[categories["event"] == event]
    if cats.empty:
        return {}
    cats = cats.assign(configuration=configuration(cats))
    out = {}
    for cfg, g in cats.groupby("configuration", sort=True):
        pooled = g.groupby("category", sort=False)["samples"].sum().reset_index()
        total = pooled["samples"].sum()
        out[cfg] = pooled.assign(share=pooled["samples"] / total if total else 0.0, profiles=g["run_id"].nunique())
    return out
