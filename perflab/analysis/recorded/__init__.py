"""Everything the lab recorded on this machine (notebook 06), from the runs index (DuckDB,
:func:`perflab.recorded`): the runs by kind and validity, every configuration's latest breakpoint compared
(by their intervals), the fixed-rate runs, where each configuration's CPU time goes::

    where = recorded.where(since, include_failed, include_invalid, commit, label)
    print(recorded.update_index())
    recorded.runs(pl.recorded("runs", **where), max_rows).show()
    recorded.breakpoints(pl.recorded("breakpoints", **where), max_rows).show()
    recorded.fixed_rate(pl.recorded("loads", **where)).show()
    recorded.categories(pl.recorded("categories", **where)).show()
    recorded.answer(pl.recorded("runs", **where), pl.recorded("breakpoints", **where)).show()

The index's tables become rows and tables in :mod:`.tables`, sentences in :mod:`.sentences`, figures in
:mod:`.figures`.
"""

from __future__ import annotations

import pandas as pd

from ...config.fields import param
from ...config.project import Project
from ...config.version import Version
from ..breakpoints import breakpoint_overview
from ..findings import Finding, highest, key_breakpoint, validity_of
from ..profiles import category_bars
from ..section import Section
from .figures import breakpoints_over_time, fixed_rate_scatter
from .sentences import (
    answer_recorded,
    compare_configurations,
    describe_fixed_rate_runs,
    describe_mean_categories,
    describe_recorded_runs,
)
from .tables import (
    breakpoint_frame,
    breakpoint_rows,
    fixed_rate_runs,
    latest,
    mean_categories,
    newest_runs,
    runs_by_kind,
    searched_again,
    update_index,
)

__all__ = ["where", "update_index", "runs", "breakpoints", "fixed_rate", "categories", "answer"]

#: seconds in a day (:func:`perflab.recorded` counts its window in days)
DAY = 86400


def where(since=None, include_failed=False, include_invalid=False, commit=None, label=None, project=None) -> dict:
    """Which runs count (the keyword arguments of :func:`perflab.recorded`), from the notebook's parameters,
    each checked: created within ``since`` (a duration: ``'48h'``, or seconds; ``None``: all), failed or
    interrupted runs too (``include_failed``), runs judged invalid too (``include_invalid``), only runs of the
    server at ``commit`` (a hash or its prefix) or with the version ``label`` (``--version-label``) when given;
    ``project`` (a ``perflab.toml``): only the runs of the server it declares (its name is their version label,
    unless ``label`` says another). The index is brought up to date once, by :func:`update_index`."""
    since = param("since", since, "duration", min=0, min_open=True, optional=True)
    if project is not None and label is None:
        label = Project.load(project).name
        print(f"the runs of {label}")
    version = Version(commit=commit, label=label)
    return dict(
        since_days=since / DAY if since is not None else None,
        include_failed=param("include_failed", include_failed, "bool"),
        include_invalid=param("include_invalid", include_invalid, "bool"),
        update=False,
        commit=version.commit,
        label=version.label,
    )


def runs(recorded: pd.DataFrame, max_rows: int) -> Section:
    """The ``runs`` table: how many of each kind have each validity level, the ``max_rows`` newest, and in a
    sentence how many at how many commits."""
    return Section(
        ([runs_by_kind(recorded), newest_runs(recorded, max_rows)] if len(recorded) else [])
        + [describe_recorded_runs(recorded)]
    )


def _overview(latest_rows: list[dict]):
    return (
        breakpoint_overview(
            latest_rows, title="Latest breakpoint of each workload and configuration (bars: the interval)"
        )
        if latest_rows
        else None
    )


def breakpoints(recorded: pd.DataFrame, max_rows: int) -> Section:
    """The ``breakpoints`` table: the latest breakpoint of each workload and configuration with its interval,
    every search against when it ran (when one was searched again or at another commit), the configurations
    compared by their intervals, and the latest ones as a table."""
    searches = breakpoint_rows(recorded)
    newest = latest(searches)
    return Section(
        [
            _overview(newest),
            breakpoints_over_time(searches) if searched_again(searches) else None,
            compare_configurations(newest),
            breakpoint_frame(newest).head(max_rows) if newest else None,
        ]
    )


def fixed_rate(recorded: pd.DataFrame) -> Section:
    """The ``loads`` table's fixed-rate runs: p99 against the offered rate, and the highest and median p99."""
    loads = fixed_rate_runs(recorded)
    return Section(([fixed_rate_scatter(loads)] if len(loads) else []) + [describe_fixed_rate_runs(loads)])


def categories(recorded: pd.DataFrame) -> Section:
    """The ``categories`` table: per configuration, the mean share of each category of its cpu profiles."""
    means = mean_categories(recorded)
    return Section(
        ([category_bars(means, title="Mean share of cpu samples per category", by="configuration")] if means else [])
        + [describe_mean_categories(means)]
    )


def answer(recorded_runs: pd.DataFrame, recorded_searches: pd.DataFrame) -> Finding:
    """How many runs at how many commits, by validity, and the highest breakpoint recorded (the key number);
    the latest breakpoints as the preview."""
    searches = breakpoint_rows(recorded_searches)
    return Finding(
        answer_recorded(recorded_runs, searches),
        key_number=key_breakpoint(highest(searches), "highest breakpoint ({workload}, {connections} conn, {mode})"),
        validity=validity_of(*recorded_runs.get("validity", [])),
        preview=_overview(latest(searches)),
    )
