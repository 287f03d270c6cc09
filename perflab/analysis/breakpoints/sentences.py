"""Breakpoint searches in words: each search's breakpoint with its interval and why its first failing probe
failed, and breakpoints compared.

Two breakpoints differ only when their intervals are disjoint (:func:`perflab.stats.significance.compare_intervals`),
and a sentence comparing two searches names its method: here *sequential intervals*, the searches one after
the other (the interleaved searches of an A/B comparison are :mod:`perflab.analysis.ab`'s).
"""

from __future__ import annotations

from collections.abc import Mapping

from ... import fmt
from ...breakpoint.run import TIGHT
from ...config.validity import ValidityThresholds
from ...stats.methods import Method
from ...stats.significance import Direction, compare_intervals
from .. import labels
from ..findings import headline, hold_note, no_breakpoint, others_note


def row_of(result) -> dict:
    """A :class:`~perflab.breakpoint.BreakpointResult` as the keys of a breakpoint row the sentences read (the
    recorded row has the same: :meth:`perflab.records.Run.breakpoint_row`)."""
    return {
        "rate": result.rate,
        "interval": list(result.interval),
        "verdict": str(result.outcome),
        "at_least": result.at_least,
        "search_rate": result.search_rate,
        "held": result.held,
        "sustain_s": result.params.sustain if result.holds else None,
        "overestimate": result.overestimate,
        "why": result.why,
        "held_windows": next((r.words for r in result.rates_held if r.rate == result.rate and r.held), None),
        "fresh_start": (result.conditions or {}).get("fresh_start"),
        "others_max_cores": (result.others or {}).get("max_cores"),
        "others_median_cores": (result.others or {}).get("median_cores"),
    }


def estimate(result) -> str:
    """A search's breakpoint in one phrase (:func:`headline`)."""
    return headline(row_of(result))


def host_note(result) -> str | None:
    """What the calibrations before a search's probes say about the machine's own speed during it (``None``
    when it recorded none)."""
    if result.host_spread is None:
        return None
    s, limit = result.host_spread, result.host_limit or ValidityThresholds().host_speed_warn
    word = "changed" if s > limit else "held"
    return (
        f"the machine's speed {word} during the search: a fixed loop before each probe took up to {s:.2f}x its "
        f"fastest time (warn above {limit:g}x)"
    )


def describe_breakpoint(label: str, result) -> str:
    """'**GET, 64 connections** keeps up to 50,000 req/s (interval 48,000-52,000, resolved; probes
    valid); the lowest rate that failed every probe, 52,000 req/s, failed because p99 12.1 ms > 10 ms
    (11 probes).' from a :class:`~perflab.breakpoint.BreakpointResult`."""
    row = row_of(result)
    if result.rate is None:
        text = f"**{label}**: {no_breakpoint(row)}"
    else:
        held = hold_note(row)
        text = (
            f"**{label}** keeps up to {fmt.rate(result.rate)} (interval {fmt.interval(result.interval, 'req/s')}, "
            f"{result.outcome}; probes {result.validity or 'not assessed'}" + (f"; {held}" if held else "") + ")"
        )
    failing = [
        p
        for p in result.probes
        if p.judgement.passed is False and not p.discounted and (result.rate is None or p.rate > result.rate)
    ]
    if failing:
        first = min(failing, key=lambda p: p.rate)
        text += f"; the lowest failing probe, {fmt.rate(first.rate)}, failed because {first.judgement.reason}"
    spoiled = [p for p in result.probes if p.judgement.passed is None or p.discounted]
    if spoiled and result.outcome not in ("cannot-tell", "generator-limited"):
        causes = sorted(
            {
                p.judgement.cause
                or ("it failed while the machine was busier than at its quietest" if p.discounted else "invalid")
                for p in spoiled
            }
        )
        text += f"; {len(spoiled)} probe(s) were not counted ({'; '.join(causes)})"
    text += f" ({len(result.probes)} probes)."
    waited = (getattr(result, "quiet", None) or {}).get("waited_s")
    if waited:
        text += f" It waited {waited:.0f} s in all for quiet moments before its probes."
    host = getattr(result, "host_spread", None)
    if host is not None and host > (result.host_limit or 0):
        note = host_note(result)
        text += f" {note[0].upper()}{note[1:]}, so a repeat moves with it."
    return text


def compare_breakpoints(results: Mapping[str, object], what: str = "breakpoint") -> str:
    """Breakpoints with intervals, each compared with the highest: a difference only when the intervals
    are disjoint, the method named (the searches ran one after the other). 'Breakpoint (sequential
    intervals): async 50,000 req/s (48,000-52,000); sync 31,000 req/s (29,760-32,240), lower (intervals [..]
    and [..] do not overlap).'"""
    vals = {k: r for k, r in results.items() if r is not None and r.rate is not None and r.interval[0] is not None}
    if not vals:
        return f"No {what} was measured."
    order = sorted(vals, key=lambda k: vals[k].rate, reverse=True)
    best = vals[order[0]]

    parts = [f"{order[0]} {fmt.rate(best.rate)} ({fmt.interval(best.interval)})"]
    for k in order[1:]:
        r = vals[k]
        c = compare_intervals(best.interval, r.interval)
        parts.append(f"{k} {fmt.rate(r.rate)} ({fmt.interval(r.interval)}), {c.direction} ({c.evidence})")
    return f"{what[0].upper() + what[1:]} ({Method.SEQUENTIAL_INTERVALS}): " + "; ".join(parts) + "."


def describe_breakpoints(results: Mapping[str, object]) -> list[str]:
    """:func:`describe_breakpoint` of every search (label -> BreakpointResult)."""
    return [describe_breakpoint(k, r) for k, r in results.items()]


def describe_unresolved(results: Mapping[str, object]) -> str:
    """Which searches did not resolve to a tight interval (''  when all did)."""
    loose = [k for k, r in results.items() if not r.converged]
    if not loose:
        return ""
    return f"Not resolved to within ±{TIGHT:.0%}: {', '.join(loose)} (see each one's outcome and interval)."


def describe_search_validity(searches: Mapping[str, object], runs: Mapping[str, object]) -> list[str]:
    """For each label with both a search and a fixed-rate run: 'async: validity of the breakpoint's edge
    probes: valid; of the profile run: suspect: <reason>.'"""
    return [
        f"{k}: validity of the breakpoint's edge probes: {r.validity or 'not assessed'}; of the profile run: "
        f"{runs[k].validity.badge if runs[k].validity is not None else 'not assessed'}."
        for k, r in searches.items()
        if k in runs
    ]


class _Estimate:
    """A breakpoint row seen as a search (``rate``, ``interval``), for :func:`compare_breakpoints`."""

    def __init__(self, row: dict):
        self.rate = row.get("rate")
        self.interval = tuple(row.get("interval") or (None, None))


def _several_placements(rows: list[dict]) -> bool:
    return len({r.get("placement") for r in rows}) > 1


def describe_ceiling_shares(rows: list[dict], ceiling: str = "status") -> list[str]:
    """How close each breakpoint comes to the request-handling ceiling (the row whose workload is
    ``ceiling``, searched at the same placement): 'GET, 64 connections reaches 62% of the request-handling
    ceiling (73,500 req/s) (from the intervals: 55%-70%).' ``rows``: breakpoint rows with ``workload``,
    ``connections``, ``rate``, ``interval`` and ``placement``."""
    several = _several_placements(rows)
    lines = []
    for top in (r for r in rows if r["workload"] == ceiling and r.get("rate")):
        c_lo, c_hi = top.get("interval") or (None, None)
        for r in rows:
            if r["workload"] == ceiling or r.get("placement") != top.get("placement") or not r.get("rate"):
                continue
            lo, hi = r.get("interval") or (None, None)
            span = (
                f" (from the intervals: {fmt.pct(lo / c_hi)}-{fmt.pct(hi / c_lo)})"
                if None not in (lo, hi, c_lo, c_hi)
                else ""
            )
            label = labels.load(r["workload"], r["connections"], r.get("placement") if several else None)
            lines.append(
                f"{label} reaches {fmt.pct(r['rate'] / top['rate'])} of the request-handling ceiling "
                f"({fmt.rate(top['rate'])}){span}."
            )
    return lines


def compare_by_connections(rows: list[dict], ceiling: str = "status") -> list[str]:
    """Each workload's breakpoints at its connection counts compared (:func:`compare_breakpoints`: a
    difference only when the intervals do not overlap), per placement; the ``ceiling`` is left out."""
    several = _several_placements(rows)
    groups: dict[tuple, dict] = {}
    for r in rows:
        if r["workload"] != ceiling:
            groups.setdefault((r["workload"], r.get("placement")), {})[fmt.count(r["connections"], "connection")] = (
                _Estimate(r)
            )
    return [
        compare_breakpoints(same, what=f"{op} breakpoint" + (f" [{p}]" if several else ""))
        for (op, p), same in groups.items()
        if len(same) > 1
    ]


def placement_table(rows: list[dict]) -> str:
    """The same searches at each CPU placement side by side, as a Markdown table with the comparison of
    their breakpoints (a difference only when the intervals do not overlap); ``""`` with one placement."""
    places = list(dict.fromkeys(r.get("placement") for r in rows))
    if len(places) < 2:
        return ""
    searches = list(dict.fromkeys((r["workload"], r["connections"]) for r in rows))
    lines = [
        "**CPU placement.** The same searches with server and generator sharing the CPUs and on "
        "disjoint CPU sets (a difference only when the intervals do not overlap):",
        "",
        "| search | " + " | ".join(places) + " | comparison |",
        "|---|" + "---|" * (len(places) + 1),
    ]
    for op, conns in searches:
        by = {
            p: next(r for r in rows if (r["workload"], r["connections"], r.get("placement")) == (op, conns, p))
            for p in places
        }
        cells = [fmt.estimate(r.get("rate"), r.get("interval"), "req/s") + f", {r.get('verdict')}" for r in by.values()]
        verdict = compare_breakpoints({p: _Estimate(r) for p, r in by.items()})
        lines.append(f"| {labels.load(op, conns)} | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(lines)


def answer_breakpoints(rows: list[dict]) -> str:
    """'PUT, 64 connections keeps up to 41,000 req/s (interval [41,000, 45,000]); GET, 64 connections
    to 52,000 req/s (interval [52,000, open)).' from breakpoint rows (``findings.breakpoint_row``)."""
    if not rows:
        return "No breakpoint was searched."
    parts = []
    for r in rows:
        who = (labels.load(r["workload"], r["connections"]) if r.get("connections") else f"{r['workload']}") + (
            f" ({r['mode']})" if r.get("mode") else ""
        )
        if r.get("rate") is None:
            parts.append(f"{who}: {no_breakpoint(r)}")
        else:
            iv = fmt.interval(r.get("interval"))
            held = hold_note(r)
            parts.append(
                f"{who} keeps up to {fmt.rate(r['rate'])}"
                + (f" (interval {iv})" if iv else "")
                + (f", {held}" if held else "")
            )
    return "; ".join(parts) + "."


def compare_breakpoint_rows(a: str, row_a: dict, b: str, row_b: dict) -> str:
    """Whether ``b``'s breakpoint differs from ``a``'s, by their intervals (different only when they
    do not overlap; an open upper end reaches to infinity), the method named (two searches one after the
    other): 'async's breakpoint is higher than sync's (sequential intervals): intervals [...] and [...] do
    not overlap.'"""
    ia, ib = row_a.get("interval"), row_b.get("interval")
    if row_a.get("rate") is None or row_b.get("rate") is None or not ia or not ib:
        return f"{b} and {a} cannot be compared: one of the searches found no breakpoint."
    c = compare_intervals(ia, ib)
    how = f"({Method.SEQUENTIAL_INTERVALS})"
    if c.direction is Direction.HIGHER:
        return f"{b}'s breakpoint is higher than {a}'s {how}: {c.evidence}."
    if c.direction is Direction.LOWER:
        return f"{b}'s breakpoint is lower than {a}'s {how}: {c.evidence}."
    return f"No difference between the breakpoints of {a} and {b} is detectable {how}: {c.evidence}."


def conditions_note(conditions: dict | None) -> str:
    """How the held windows began, for a reader to reproduce them: 'each from a fresh start (a new server process
    on fresh storage, 10,000 keys filled, 5 s of warm-up at 1,000 req/s)', or why not."""
    c = conditions or {}
    if not c:
        return ""
    if not c.get("fresh_start"):
        return f"on the server as the search left it ({c.get('not_fresh')})"
    began = [
        "a new server process on " + ("fresh storage" if c.get("storage") == "fresh" else f"storage {c.get('storage')}")
    ]
    if c.get("prefill"):
        began.append(f"{c['prefill']:,} keys prefilled")
    if c.get("fill"):
        began.append(f"{c['fill']:,} keys filled through its API")
    began.append(
        f"{c['warmup_s']:g} s of warm-up at {fmt.rate(c['warmup_rate'])}" if c.get("warmup_s") else "no warm-up"
    )
    return f"each from a fresh start ({', '.join(began)})"


def describe_hold(label: str, result) -> str:
    """What holding a search's breakpoint showed: '**GET, 64 connections**: held in 20 s windows, each from a fresh
    start (...): 2,600 req/s fell behind in 2 of 2 windows (p99 over the SLA ...); 2,000 req/s kept up in 2 of 3
    windows (p99 3.20 ms, 100% of the rate)', with how far the search's short probes were off, the rate it lies
    below when none held, and other programs' CPU beside it; '' when no window ran."""
    if not result.holds:
        return ""
    secs = result.holds[0].seconds
    said = []
    for r in sorted(result.rates_held, key=lambda r: -r.rate):
        at = [h for h in result.holds if h.rate == r.rate and h.passed is not None]
        if r.held is None:
            said.append(f"holding {fmt.rate(r.rate)} could not be judged ({result.holds[-1].reason})")
        elif r.held:
            worst = max(at, key=lambda h: h.p99_ms or 0)
            said.append(
                f"{fmt.rate(r.rate)} {r.words} (p99 up to {fmt.ms(worst.p99_ms)}, "
                f"{fmt.pct(min(h.achieved_ratio or 0 for h in at))} of the rate at the least)"
            )
        else:
            said.append(f"{fmt.rate(r.rate)} {r.words} ({next(h.reason for h in at if not h.passed)})")
    if result.held and result.overestimate:
        said[-1] += (
            f": the {result.params.probe_duration:g} s probes overestimated the rate the server sustains by "
            f"{fmt.pct(result.overestimate)}"
        )
    elif result.held and result.search_rate and result.rate > result.search_rate:
        said[-1] += (
            f": the search's {result.params.probe_duration:g} s probes underestimated it by "
            f"{fmt.pct(result.rate / result.search_rate - 1)}"
        )
    elif not result.held and result.hi is not None and result.outcome.value != "cannot-tell":
        said[-1] += f": no rate held, the breakpoint is below {fmt.rate(result.hi)}"
    how = ", ".join(
        t for t in (f"held in {secs:g} s windows", conditions_note(result.conditions), others_note(row_of(result))) if t
    )
    other = getattr(result, "second_opinion", None)
    return (
        f"**{label}**: {how}: "
        + "; ".join(said)
        + "."
        + (f" {other.words()[0].upper()}{other.words()[1:]}." if other else "")
    )
