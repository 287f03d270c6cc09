"""A metric across commits (notebook 09): every commit of a range measured a few times at one rate, the change
points of the series, each checked by an interleaved comparison before it is called a regression
(:func:`perflab.regress.history.run_history`)::

    params = history.params(metric="cpu", repeats=3, max_pairs=32)
    source = history.source(repo, good, bad, project, commits, planted, planted_us)   # checked, nothing made yet
    res = nb.measure_history(source, workload, params, "nb09-history")   # a synthetic history is made there
    history.story(res, source).show()
    history.answer(res, source).show()

By default the history is **synthetic** (:mod:`perflab.regress.synthetic`): ``commits`` commits of a repository
made for the page, each running this checkout's server with a fixed CPU cost per request, commit ``planted``
adding ``planted_us`` microseconds; the page says so and whether the lab found it. Given ``repo`` (and
``project``, your server's ``perflab.toml``), the commits ``good..bad`` of that repository are measured.
Sentences are :mod:`.sentences`' (also what ``perflab history`` prints), the figure :mod:`.figures`'.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...commits.git import first_parent_count, toplevel
from ...config.fields import Spec, convert
from ...config.regress import PROJECT_FILE, HistoryParams
from ...i18n import Sentence
from ...stats.changepoints import MIN_POINTS
from ..ab.verdicts import named
from ..findings import Finding, bullets, validity_of
from ..section import Section
from .figures import history_figure
from .sentences import (
    answer_history,
    bound_sentence,
    candidate_sentence,
    commit_text,
    describe_points,
    history_lines,
    series_sentence,
)

__all__ = ["params", "source", "story", "answer", "Source", "history_figure", "history_lines", "why_not"]

#: the most commits a synthetic history makes
MAX_COMMITS = 40


def params(**fields) -> HistoryParams:
    """The history's parameters (:class:`~perflab.config.regress.HistoryParams`), checked by the config layer."""
    return HistoryParams(**fields)


@dataclass(frozen=True)
class Source:
    """Whose commits: a synthetic history (``repo`` ``None``: ``commits`` made, ``planted`` adding
    ``planted_us`` us of CPU per request), or ``repo``'s ``good..bad`` (its server as ``project`` declares it,
    or the built-in server's ``java-server/`` when it has none)."""

    repo: str | None
    good: str | None
    bad: str
    project: str
    commits: int
    planted: int | None = None
    planted_us: float | None = None

    @property
    def synthetic(self) -> bool:
        return self.repo is None


def source(repo=None, good=None, bad="HEAD", project=None, commits=6, planted=3, planted_us=50) -> Source:
    """The notebook's ``repo``, ``good``, ``bad``, ``project``, ``commits``, ``planted``, ``planted_us`` checked
    (nothing is made or built here). ``project`` alone (a ``perflab.toml`` path, as ``perflab report --project``
    gives it) means its repository; ``good`` ``None`` means ``commits - 1`` commits before ``bad``."""
    commits = convert("commits", Spec("int", "", min=MIN_POINTS, max=MAX_COMMITS), commits)
    if project is not None and repo is None:
        p = Path(project).resolve()
        if not p.is_file():
            raise ValueError(f"project: no file at {project}")
        top = toplevel(p.parent)
        if top is None:
            raise ValueError(f"project: {p.parent} is in no git repository (no commits to measure)")
        repo, project = str(top), os.path.relpath(p, top)
        if good is None:  # a short history is measured whole
            commits = max(MIN_POINTS, min(commits, first_parent_count(top, bad)))
    if repo is None:
        planted = convert("planted", Spec("int", "", min=1, max=commits - 1), planted)
        planted_us = convert("planted_us", Spec("float", "", min=0, min_open=True, max=10_000), planted_us)
        return Source(None, None, "HEAD", PROJECT_FILE, commits, planted, planted_us)
    if not (Path(repo) / ".git").exists():
        raise ValueError(f"repo: {repo} is not a git repository")
    project = os.path.relpath(Path(repo) / project, repo) if project else PROJECT_FILE
    bad = convert("bad", Spec("text", ""), bad)
    return Source(str(Path(repo).resolve()), good or f"{bad}~{commits - 1}", bad, project, commits)


def why_not(project) -> str | None:
    """Why the history cannot measure the commits of your server declared in ``project`` (a
    :class:`~perflab.config.project.Project`), ``None`` when it can: its repository, two commits at least, and a
    build command (each commit is built apart)."""
    top = toplevel(project.path.parent)
    if top is None:
        return Sentence(
            "not applicable: {directory} is in no git repository, so there are no commits of yours to measure (in a "
            "clone of your repository, with [server] build, it measures your stages)",
            directory=str(project.path.parent),
        )
    n = first_parent_count(top)
    if n < MIN_POINTS:
        return f"not applicable: {top} has {n} commit{'' if n == 1 else 's'}; a history needs {MIN_POINTS} at least"
    if project.build is None:
        return (
            "not applicable: each commit is built apart, and the perflab.toml has no [server] build (e.g. "
            '"./gradlew compileJava")'
        )
    return None


def describe_source(res, src: Source) -> str:
    """Where the commits come from; for a synthetic history, that it is one and which commit was planted."""
    run = res.run if hasattr(res, "run") else res
    commits = run.params["commits"]
    if not src.synthetic:
        return (
            f"The history of {src.repo}: {len(commits)} commits from {commit_text(commits[0])} to "
            f"{commit_text(commits[-1])} (first-parent), each built apart and cached."
        )
    return (
        f"**This history is synthetic**: {len(commits)} commits of a repository made for this page "
        f"({run.params['repo']['repo']}), each running this checkout's server with a fixed CPU cost per request "
        f"(`--debug-work-ns`, nothing to compile). Commit {src.planted}, {commit_text(commits[src.planted])}, "
        f"adds {src.planted_us:g} us of CPU per request: the change the lab should find."
    )


def found_planted(res, src: Source) -> str | None:
    """For a synthetic history: whether the lab named the planted commit as a regression."""
    if not src.synthetic:
        return None
    run = res.run if hasattr(res, "run") else res
    planted = run.params["commits"][src.planted]["sha"]
    named_ = run.results["regressions"]
    if named_ == [planted]:
        return f"The lab found the planted commit ({planted[:10]}) and nothing else."
    if planted in named_:
        return f"The lab found the planted commit ({planted[:10]}), and also named {len(named_) - 1} other(s)."
    return f"The lab did not find the planted commit ({planted[:10]})" + (
        f"; it named {', '.join(s[:10] for s in named_)}." if named_ else "."
    )


def points_table(res) -> pd.DataFrame:
    """One row per commit: position, commit, subject, each metric's median and range, or why it was skipped."""
    run = res.run if hasattr(res, "run") else res
    rows = []
    for p in run.results["points"]:
        row = {
            "position": p["position"],
            "commit": p["commit"][:10],
            "subject": p.get("subject"),
            "skipped": p.get("skipped"),
        }
        for m, v in p["metrics"].items():
            unit = "us" if m == "cpu" else "ms"
            row[f"{named(m)}, {unit}"] = round(v["value"], 3)
            row[f"{named(m)} range"] = f"{v['lo']:.3g}-{v['hi']:.3g}"
        rows.append(row)
    return pd.DataFrame(rows)


def story(res, src: Source) -> Section:
    """Where the commits come from, how they were measured, the deciding metric's figure with its change points
    (then the other metrics'), each change point and its check, every commit's numbers."""
    run = res.run if hasattr(res, "run") else res
    r = run.results
    figures = [history_figure(r, m) for m in dict.fromkeys([r["metric"], "cpu", "p50", "p99"])] if r["measured"] else []
    return Section(
        [
            describe_source(run, src),
            series_sentence(run),
            *figures,
            bullets([candidate_sentence(c, r["metric"]) for c in r["candidates"]]),
            bullets(describe_points(run)) if not r["measured"] else None,
            points_table(run),
        ]
    )


def answer(res, src: Source) -> Finding:
    """The answer: the confirmed regressions (or none, and why), the planted commit found or not, the bound;
    the key number: the first confirmed regression's ratio with its interval."""
    run = res.run if hasattr(res, "run") else res
    r = run.results
    text = " ".join(
        x
        for x in (
            answer_history(run) + ".",
            found_planted(run, src),
            bound_sentence(run) + "." if r["checks"] else None,
        )
        if x
    )
    first = next((c for c in r["candidates"] if c["outcome"] == "regression"), None)
    key = None
    if first is not None:
        chk = first["check"]
        key = {
            "label": f"{named(r['metric'])}, {first['commit'][:10]} / the commit before",
            "value": chk["ratio"],
            "unit": "x",
            "interval": list(chk["ci"]),
        }
    checks = [c["check"].get("validity") for c in r["candidates"] if c.get("check")]
    preview = history_figure(r, r["metric"]) if r["measured"] else None
    return Finding(text, key_number=key, validity=validity_of(*[v for v in checks if v]), preview=preview)
