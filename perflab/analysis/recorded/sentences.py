"""Everything recorded so far in words: how many runs, the configurations' breakpoints compared (by their
intervals: *sequential intervals*, the searches ran at different times), the fixed-rate runs, where each
configuration's CPU time goes."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ... import fmt
from .. import labels
from ..breakpoints import compare_breakpoint_rows
from ..findings import bullets, highest
from ..profiles import MIN_SAMPLES, describe_categories


def describe_recorded_runs(runs: pd.DataFrame) -> str:
    """'12 runs are counted here, of the server at 2 commits; by validity: valid 9, suspect 3; the newest is
    `<id>`.' from the ``runs`` index table (:func:`perflab.records.recorded`)."""
    if runs is None or runs.empty:
        return "No run is recorded yet: run notebooks 1-5 (or `make report`) first."
    commits = runs["version_commit"].dropna().nunique() if "version_commit" in runs else 0
    newest = runs.sort_values("created_at").iloc[-1]
    return (f"{len(runs)} runs are counted here, of the server at {fmt.count(commits, 'commit')}; by validity: "
            + ", ".join(f"{v} {n}" for v, n in _validity_counts(runs).items())
            + f"; the newest is `{newest['run_id']}`.")


def _validity_counts(df: pd.DataFrame) -> pd.Series:
    v = df["validity"] if "validity" in df else pd.Series(index=df.index, dtype=object)
    return v.fillna("not assessed").value_counts()


def compare_configurations(rows: list[dict]) -> str:
    """For each workload (and connection count) with breakpoints of several configurations (``mode``),
    each compared with the highest, by their intervals, as a Markdown list. ``rows``: the latest
    breakpoint of each workload and configuration (:func:`perflab.analysis.recorded.latest`)."""
    if not rows:
        return "No breakpoint search is recorded yet (notebooks 2-4 record them)."
    lines = []
    by: dict[str, list[dict]] = {}
    for r in rows:
        if r.get("rate") is not None and (r.get("interval") or [None])[0] is not None:
            by.setdefault(labels.row(r), []).append(r)
    for workload, group in by.items():
        best = max(group, key=lambda r: r["rate"])
        lines += [f"{workload}: " + compare_breakpoint_rows(r["mode"], r, best["mode"], best) for r in group
                  if r is not best]
    return bullets(lines) or "Each workload has one configuration recorded: nothing to compare."


def describe_fixed_rate_runs(loads: pd.DataFrame) -> str:
    """'14 fixed-rate runs; the highest p99 is 12.1 ms (put.lua at 3,000 req/s, sync / lsm, validity valid,
    run `<id>`); the median p99 is 1.20 ms.' from :func:`perflab.analysis.recorded.fixed_rate_runs`."""
    if loads is None or loads.empty:
        return "No fixed-rate run is recorded yet (notebooks 1, 3, 4, 5 record them)."
    worst = loads.sort_values("p99_ms", ascending=False).iloc[0]
    return (f"{fmt.count(len(loads), 'fixed-rate run')}; the highest p99 is {fmt.ms(worst['p99_ms'])} "
            f"({worst['script']} at {fmt.rate(worst['target_rate'])}, {worst['configuration']}, validity "
            f"{worst['validity']}, run `{worst['run_id']}`); the median p99 is {fmt.ms(loads['p99_ms'].median())}.")


def describe_mean_categories(means: Mapping[str, pd.DataFrame], event: str = "cpu") -> str:
    """Per configuration, where its profiles' samples go together: '**sync / lsm** (3 profiles): Of the 12,345
    CPU samples, ...', or that they are too few to split. ``means``: :func:`perflab.analysis.recorded.mean_categories`."""
    if not means:
        return f"No {event} profile is recorded yet (notebooks 1 and 3 record them)."
    def one(cfg, m):
        head = f"**{cfg}** ({fmt.count(int(m['profiles'].iloc[0]), 'profile')}): "
        samples = int(m["samples"].sum())
        if samples < MIN_SAMPLES:
            return head + f"{samples:,} {event} samples in all, too few to split by category (at least {MIN_SAMPLES:,})."
        return head + describe_categories(dict(zip(m["category"], m["share"])), event, top=4, samples=samples)
    return "\n\n".join(one(cfg, m) for cfg, m in means.items())


def answer_recorded(runs: pd.DataFrame, rows: list[dict]) -> str:
    """The summary notebook's answer: how many runs at how many commits, by validity, and the highest
    breakpoint recorded."""
    if runs is None or runs.empty:
        return describe_recorded_runs(runs)
    commits = runs["version_commit"].dropna().nunique() if "version_commit" in runs else 0
    text = (f"{len(runs)} runs are counted ({', '.join(f'{n} {v}' for v, n in _validity_counts(runs).items())}) "
            f"of the server at {fmt.count(commits, 'commit')}")
    top = highest(rows)
    if top is not None:
        text += f"; the highest breakpoint is {fmt.rate(top['rate'])} ({labels.row(top)}, {top.get('mode')})"
    return text + "."
