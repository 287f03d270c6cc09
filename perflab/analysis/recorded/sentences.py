"""Everything recorded so far in words: how many runs, the configurations' breakpoints compared (by their
intervals: *sequential intervals*, the searches ran at different times), the fixed-rate runs, where each
configuration's CPU time goes."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from ... import fmt
from .. import labels
from ..breakpoints import compare_breakpoint_rows
from ..findings import bullets, highest
from ..profiles import MIN_SAMPLES, describe_categories


def _when(created_at) -> pd.Timestamp:
    """A run's creation time, however the index or its record gives it (a timestamp, or ISO text), as one kind of
    value that orders by time (their texts do not: '2026-12-07 20:44' and '2026-12-07T20:44' sort by the
    separator); the earliest possible when it is missing."""
    t = pd.to_datetime(created_at, utc=True, errors="coerce")
    return pd.Timestamp.min.tz_localize("UTC") if pd.isna(t) else t


def describe_recorded_runs(runs: pd.DataFrame) -> str:
    """'13 runs recorded, of the server at 2 commits: 9 valid, 3 suspect, 1 invalid (left out of the tables and
    figures: <why>); the newest is `<id>`.' from the ``runs`` index table
    (:func:`perflab.records.recorded`): every run recorded counts, those it left out (``attrs["left_out"]``)
    with why."""
    left = _left_out(runs)
    if (runs is None or runs.empty) and not left:
        return "No run is recorded yet: run notebooks 1-5 (or `make report`) first."
    counts = [f"{n} {v}" for v, n in _validity_counts(runs).items()] + _left_out_counts(left)
    newest = max(
        [*_rows(runs, "run_id", "created_at"), *((r.get("run_id"), r.get("created_at")) for r in left)],
        key=lambda r: _when(r[1]),
    )
    return f"{_recorded(runs, left)}: {', '.join(counts)}; the newest is `{newest[0]}`."


def _rows(df: pd.DataFrame | None, *cols: str) -> list[tuple]:
    if df is None or df.empty:
        return []
    return list(zip(*(df[c] if c in df else [None] * len(df) for c in cols)))


def _left_out(runs: pd.DataFrame | None) -> list[dict]:
    """The runs :func:`perflab.records.recorded` left out of ``runs`` (failed, interrupted, invalid)."""
    return list(getattr(runs, "attrs", {}).get("left_out") or [])


def _recorded(runs: pd.DataFrame | None, left: list[dict]) -> str:
    """'6 runs recorded, of the server at 1 commit': every run, those left out too."""
    shown = [c for (c,) in _rows(runs, "version_commit")]
    commits = {c for c in shown + [r.get("version_commit") for r in left] if isinstance(c, str) and c}
    n = (0 if runs is None else len(runs)) + len(left)
    return f"{fmt.count(n, 'run')} recorded, of the server at {fmt.count(len(commits), 'commit')}"


def _left_out_counts(left: list[dict], shown: int = 3) -> list[str]:
    """'1 invalid (left out of the tables and figures: p99 rose over the run)', '2 failed (left out ...: <error>;
    <error>)': the runs left out by why, each with its reasons (the first ``shown`` different ones)."""
    groups: dict[str, list[str]] = {}
    for r in left:
        status = r.get("status") or "unknown"
        what = "invalid" if status == "ok" else status
        groups.setdefault(what, []).append(_why(r))
    out = []
    for what, whys in groups.items():
        seen = list(dict.fromkeys(whys))
        more = f"; {len(seen) - shown} more" if len(seen) > shown else ""
        out.append(f"{len(whys)} {what} (left out of the tables and figures: {'; '.join(seen[:shown])}{more})")
    return out


def _why(r: dict) -> str:
    """A left-out run's reason: its validity record's first reason (an invalid run) or its error."""
    if r.get("status") == "ok":
        reasons = r.get("validity_reasons")
        if isinstance(reasons, str):
            try:
                reasons = json.loads(reasons)
            except ValueError:
                reasons = [reasons]
        return str(reasons[0]) if reasons else "no reason recorded"
    return str(r.get("error") or "no error recorded")


def _validity_counts(df: pd.DataFrame | None) -> pd.Series:
    if df is None or df.empty:
        return pd.Series(dtype=int)
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
        lines += [
            f"{workload}: " + compare_breakpoint_rows(r["mode"], r, best["mode"], best) for r in group if r is not best
        ]
    return bullets(lines) or "Each workload has one configuration recorded: nothing to compare."


def describe_fixed_rate_runs(loads: pd.DataFrame) -> str:
    """'14 fixed-rate runs; the highest p99 is 12.1 ms (put.lua at 3,000 req/s, sync / lsm, validity valid,
    run `<id>`); the median p99 is 1.20 ms.' from :func:`perflab.analysis.recorded.fixed_rate_runs`."""
    if loads is None or loads.empty:
        return "No fixed-rate run is recorded yet (notebooks 1, 3, 4, 5 record them)."
    worst = loads.sort_values("p99_ms", ascending=False).iloc[0]
    return (
        f"{fmt.count(len(loads), 'fixed-rate run')}; the highest p99 is {fmt.ms(worst['p99_ms'])} "
        f"({worst['script']} at {fmt.rate(worst['target_rate'])}, {worst['configuration']}, validity "
        f"{worst['validity']}, run `{worst['run_id']}`); the median p99 is {fmt.ms(loads['p99_ms'].median())}."
    )


def describe_mean_categories(means: Mapping[str, pd.DataFrame], event: str = "cpu") -> str:
    """Per configuration, where its profiles' samples go together: '**sync / lsm** (3 profiles): Of the 12,345
    CPU samples, ...', or that they are too few to split. ``means``: :func:`perflab.analysis.recorded.mean_categories`."""
    if not means:
        return f"No {event} profile is recorded yet (notebooks 1 and 3 record them)."

    def one(cfg, m):
        head = f"**{cfg}** ({fmt.count(int(m['profiles'].iloc[0]), 'profile')}): "
        samples = int(m["samples"].sum())
        if samples < MIN_SAMPLES:
            return (
                head + f"{samples:,} {event} samples in all, too few to split by category (at least {MIN_SAMPLES:,})."
            )
        return head + describe_categories(dict(zip(m["category"], m["share"])), event, top=4, samples=samples)

    return "\n\n".join(one(cfg, m) for cfg, m in means.items())


def answer_recorded(runs: pd.DataFrame, rows: list[dict]) -> str:
    """The summary notebook's answer: how many runs at how many commits, by validity, and the highest
    breakpoint recorded."""
    left = _left_out(runs)
    if (runs is None or runs.empty) and not left:
        return describe_recorded_runs(runs)
    counts = [f"{n} {v}" for v, n in _validity_counts(runs).items()] + _left_out_counts(left)
    text = f"{_recorded(runs, left)}: {', '.join(counts)}"
    top = highest(rows)
    if top is not None:
        text += f"; the highest breakpoint is {fmt.rate(top['rate'])} ({labels.row(top)}, {top.get('mode')})"
    return text + "."
