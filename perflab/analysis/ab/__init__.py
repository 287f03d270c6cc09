"""A/B comparisons: two configurations (or commits) of the server measured interleaved, with a paired verdict
that names its method and n; or several configurations, each against one baseline.

One comparison (notebook 08; its sides built by :func:`perflab.lab.notebook.side`)::

    res = pl.compare_ab(side_a, side_b, workload, rates=[5000], params=pl.ABParams(), prefill=prefill)
    ab.comparison(res).show()                      # every verdict in words, B/A of every pair, the table
    ab.answer(res, "get-random", 16).show()

Several against one (03, 04, 05; measured by :func:`perflab.lab.notebook.against`)::

    found = nb.against(servers, workload, "nb03-breakpoint", search=search, params=ab.pairs(pairs))
    ab.comparison(found).show()                    # every configuration's search (or B/A of every pair)
    bps = ab.searches(found)                       # each configuration's search, the baseline's first
    findings.show(ab.findings(found))
    ab.answer(found, "get-random", 64).show()

Why against one baseline: a comparison is interleaved only between the two servers it runs side by side;
two configurations each compared with the baseline were measured one after the other, so no verdict is
drawn between them. The verdicts in words are :mod:`.verdicts`' (also what ``perflab ab`` prints:
:func:`lines`); every function takes a recorded ``ab`` run too (:mod:`.reading`).
"""

from __future__ import annotations

from ...ab.result import ABResult
from ..breakpoints import describe_breakpoints, describe_search_validity
from ..findings import Finding, bullets
from ..section import Section
from .baseline import Comparisons, answer_against, key_against, name_of, search_rows, searches, verdict_lines
from .figures import categories_figure, figure, pairs_figure
from .reading import (
    answer_comparison,
    breakpoint_rows,
    commentary,
    key_number,
    labels_of,
    lines,
    pairs_of,
    table,
    validity,
)
from .sides import family, pairs
from .verdicts import idle_sentence, sentence

__all__ = [
    # what a notebook calls
    "pairs",
    "family",
    "searches",
    "comparison",
    "findings",
    "answer",
    # what the command line, the report and the lab's measuring calls build on
    "Comparisons",
    "name_of",
    "answer_comparison",
    "figure",
    "lines",
    "sentence",
    "idle_sentence",
    "pairs_of",
    "pairs_figure",
    "categories_figure",
]


def comparison(res, what: str = "") -> Section:
    """One comparison: every verdict in words, its figure (B/A of every pair, or both searches' curves) and its
    table. Several against one baseline (:func:`perflab.lab.notebook.against`): their figure (every configuration's
    search, or B/A of every pair), each search in words, and one line per comparison (after ``what``, e.g.
    ``"PUT"``)."""
    if isinstance(res, Comparisons):
        return Section([figure(res), *describe_breakpoints(searches(res)), bullets(verdict_lines(res, what))])
    cats = categories_figure(res)
    return Section([commentary(res), figure(res), *([cats] if cats is not None else []), table(res)])


def findings(results: Comparisons, runs: dict | None = None, what: str = "") -> list[str]:
    """One line per comparison against the baseline, its verdict naming its method (after ``what``); with
    ``runs`` (key -> a fixed-rate run of each configuration), each search's validity next to its run's."""
    return verdict_lines(results, what) + (describe_search_validity(searches(results), runs) if runs else [])


def answer(
    res, workload: str | None = None, connections: int | None = None, what: str = "", stages: bool = False
) -> Finding:
    """The answer of one comparison (its verdict on the stop rule's metric) or of several against one (how
    many differ, and the best), its B/A as the key number, the breakpoints searched (``workload`` with
    ``connections``) and its figure as the preview. ``stages``: the two sides are your stages (B this one, A
    the previous), and the answer opens with them: "alice, stage 5 against alice, stage 4: ..."."""
    if isinstance(res, Comparisons):
        return Finding(
            answer_against(res, what),
            key_number=key_against(res),
            validity=res.validity,
            breakpoints=search_rows(res, workload, connections),
            preview=figure(res),
        )
    text = answer_comparison(res)
    if stages:
        a, b = labels_of(res)
        text = f"{b} against {a}: {text.removesuffix(f' (A = {a}, B = {b}).')}."
    return Finding(
        text,
        key_number=key_number(res),
        validity=validity(res),
        breakpoints=breakpoint_rows(res, workload, connections) if isinstance(res, ABResult) else [],
        preview=figure(res),
    )
