"""The student's numbers in the report's language, read from the records, not from the notebooks' prose.

A report for a course student is written in the student's language (:mod:`perflab.i18n`). The notebooks' pages
tell in English; what a student hands in (``report.md``, the index's findings) is built here from what the runs
recorded (``meta.json``: rates, connections, percentiles; a comparison's verdicts; a history's points) and from
``report.json`` (breakpoints, key numbers, reasons for "not applicable"), every sentence through the catalog.

Each ``*_lines`` function returns Markdown lines; :func:`summary` one sentence per notebook for the findings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..analysis.latency.stable import BREAKPOINT, LOWER_BOUND, RECORD, UPPER_BOUND
from ..i18n import Language

#: the workload a script sends, by the start of its name (put.lua, get-random.lua, ...)
_WORKLOADS = (("put", "PUT"), ("get", "GET"), ("delete", "DELETE"), ("range", "GET /v0/entities"))
#: the profile's event as the course names it
EVENTS = {"cpu": "CPU profile", "alloc": "allocation profile", "lock": "lock profile", "wall": "wall-clock profile"}


#: the method, in short, after a student's numbers (the notebooks' pages tell it in full)
METHOD = (
    "Every load is open-loop at a fixed rate, as wrk2's: a request's latency counts from when it should have "
    "been sent, so a server that stalls cannot hide it; the percentiles are the generator's HdrHistogram.",
    "Each load first runs unrecorded for its warm-up (JIT, caches); the GETs read random keys of a database "
    "filled through the server's own API before the load.",
    "The breakpoint is the highest fixed rate the server keeps up with: found by search, given with its "
    "interval, and reported only once it held from fresh starts of the server.",
    "The profiles (CPU, allocations, locks) are async-profiler's, of exactly the measured window.",
    "Two stages are compared interleaved (A B B A), so a slow phase of the machine falls on both; a difference "
    "is claimed only with its test.",
    "Every run records its validity (valid, suspect, invalid) with its reasons: whether the generator kept "
    "its schedule, and what else used the machine.",
)


def workload(script: str | None) -> str:
    name = Path(script or "").name
    return next((w for prefix, w in _WORKLOADS if name.startswith(prefix)), f"`{name}`" if name else "?")


def metas(r: dict, report_dir: Path, n: dict) -> list[dict]:
    """The ``meta.json`` of each run the notebook ``n`` recorded, in order (runs no longer on disk left out)."""
    out = []
    for run in n.get("runs") or []:
        for d in (
            report_dir / run["path"] if run.get("path") else None,
            Path(r["data_root"]) / "runs" / run["id"] if r.get("data_root") and run.get("id") else None,
        ):
            meta = d / "meta.json" if d is not None else None
            if meta is not None and meta.is_file():
                try:
                    out.append({**json.loads(meta.read_text()), "_run": run})
                except (OSError, ValueError):
                    pass
                break
    return out


def connections(t: Language, n: int | None) -> str:
    return t.plural("{n} connection", "{n} connections", int(n)) if n else ""


def validity(t: Language, level: str | None) -> str:
    return t(level) if level else t("not assessed")


def _ms(t: Language, v) -> str:
    return t.significant(v) if v is not None else "–"


def interval(t: Language, iv) -> str:
    lo, hi = iv or (None, None)
    return "[" + "; ".join("–" if v is None else t.number(v) for v in (lo, hi)) + "]"


def _head(names: tuple[str, ...], align: str) -> list[str]:
    """A Markdown table's header and its alignment row (``align``: ``l`` or ``r`` per column)."""
    return ["| " + " | ".join(names) + " |", "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]


# --- 01: fixed-rate runs ------------------------------------------------------------------------------------


def fixed_rate_lines(t: Language, runs: list[dict]) -> list[str]:
    """The fixed-rate runs as a table: what was sent, and the latency percentiles the generator recorded."""
    rows = [m for m in runs if m.get("kind") == "experiment" and isinstance(m.get("results"), dict)]
    if not rows:
        return []
    lines = _head(
        (
            t("workload"),
            t("connections"),
            t("rate, req/s"),
            "p50, " + t("ms"),
            "p99, " + t("ms"),
            "p99.9, " + t("ms"),
            t("max, ms"),
            t("requests"),
            t("errors"),
            t("validity"),
        ),
        "lrrrrrrrrl",
    )
    for m in rows:
        x = m["results"]
        lines.append(
            f"| {workload(x.get('script'))} | {x.get('connections') or ''} | {t.number(x.get('target_rate') or 0)} | "
            f"{_ms(t, x.get('p50_ms'))} | {_ms(t, x.get('p99_ms'))} | {_ms(t, x.get('p999_ms'))} | "
            f"{_ms(t, x.get('max_ms'))} | {t.number(x.get('requests') or 0)} | {t.number(x.get('errors') or 0)} | "
            f"{validity(t, m['_run'].get('validity'))} |"
        )
    return lines


def fixed_rate_summary(t: Language, runs: list[dict]) -> str:
    parts = [
        t(
            "{workload}, {connections}: p99 {p99} ms at {rate} req/s",
            workload=workload(x.get("script")),
            connections=connections(t, x.get("connections")),
            p99=_ms(t, x.get("p99_ms")),
            rate=t.number(x.get("target_rate") or 0),
        )
        for m in runs
        if m.get("kind") == "experiment" and isinstance(x := m.get("results"), dict)
    ]
    return "; ".join(parts) + "." if parts else ""


def stable_records(runs: list[dict]) -> list[dict]:
    """How each operation's stable rate was chosen (:mod:`perflab.lab.stable`'s record, in each stable run's
    ``meta.json``), one per operation in the order run, with ``runs``: what each of its runs showed."""
    by_op: dict[str, dict] = {}
    for m in runs:
        rec = m.get(RECORD)
        if m.get("kind") != "experiment" or not isinstance(rec, dict) or not rec.get("op"):
            continue
        entry = by_op.setdefault(rec["op"], {**{k: v for k, v in rec.items() if k != "run"}, "runs": []})
        if isinstance(rec.get("run"), dict):
            entry["runs"].append(rec["run"])
    return list(by_op.values())


def _stable_choice(t: Language, rec: dict) -> str:
    what = {
        "workload": rec["op"],
        "rate": t.number(rec.get("rate") or 0),
        "connections": connections(t, rec.get("connections")),
    }
    if rec.get("fraction") is None:
        return t(
            "{workload} ran at its fixed rate, {rate} req/s (no breakpoint searched: `stable_fraction` is not set).",
            **what,
        )
    row, share = rec.get("breakpoint") or {}, t.percent(rec["fraction"])
    # why there is no number: the machine or the generator kept the search from telling, or no rate held
    why = t(row["verdict"]) if row.get("verdict") in ("cannot-tell", "generator-limited") else breakpoint_cell(t, row)
    if rec.get("basis") == BREAKPOINT:
        return t(
            "{workload}: the breakpoint with {connections} is {breakpoint} req/s (interval {interval}); the stable rate "
            "is {share} of it: {rate} req/s.",
            breakpoint=t.number(rec["basis_rate"]),
            interval=interval(t, row.get("interval")),
            share=share,
            **what,
        )
    if rec.get("basis") == LOWER_BOUND:
        return t(
            "{workload}: no breakpoint with {connections}: {why}; the stable rate is {share} of the lower bound the "
            "search gives, {bound} req/s: {rate} req/s.",
            why=why,
            bound=t.number(rec["basis_rate"]),
            share=share,
            **what,
        )
    if rec.get("basis") == UPPER_BOUND:
        return t(
            "{workload}: no breakpoint with {connections}: {why}; no lower bound either, and its fixed rate, {fixed} "
            "req/s, is not below the upper bound the search gives, so the stable rate is {share} of that bound, "
            "{bound} req/s: {rate} req/s.",
            why=why,
            fixed=t.number(rec.get("fixed_rate") or 0),
            bound=t.number(rec["basis_rate"]),
            share=share,
            **what,
        )
    return t(
        "{workload}: no breakpoint with {connections}: {why}; no lower bound either, so it ran at its fixed rate, "
        "{rate} req/s.",
        why=why,
        **what,
    )


def _stable_run(t: Language, run: dict) -> str:
    """Whether one run held its stable rate, from its judgement (a breakpoint probe's)."""
    conns = connections(t, run.get("connections"))
    achieved, p99, sla = t.percent(run.get("achieved_ratio") or 0), _ms(t, run.get("p99_ms")), _ms(t, run.get("sla_ms"))
    if run.get("kept_up"):
        return t(
            "With {connections} the run held it: {achieved} of the rate achieved, p99 {p99} ms within the SLA of "
            "{sla} ms.",
            connections=conns,
            achieved=achieved,
            p99=p99,
            sla=sla,
        )
    if run.get("kept_up") is None:
        return t("With {connections} the run could not be judged: its measurement is invalid.", connections=conns)
    why = []
    if (run.get("achieved_ratio") or 0) < (run.get("min_achieved") or 0):
        why.append(
            t(
                "{achieved} of the rate achieved, below {min}",
                achieved=achieved,
                min=t.percent(run["min_achieved"]),
            )
        )
    if (run.get("p99_ms") or 0) > (run.get("sla_ms") or float("inf")):
        why.append(t("p99 {p99} ms above the SLA of {sla} ms", p99=p99, sla=sla))
    return t(
        "With {connections} the run did not hold it: {why}.",
        connections=conns,
        why="; ".join(why) or t("errors, missed reads or a growing latency"),
    )


def stable_rate_lines(t: Language, runs: list[dict]) -> list[str]:
    """Each operation's stable rate: how it was chosen (a share of the breakpoint, of the search's lower bound, or
    the fixed rate) and whether each run held it, one paragraph per operation."""
    out = []
    for rec in stable_records(runs):
        out += [" ".join([_stable_choice(t, rec), *(_stable_run(t, r) for r in rec["runs"])]), ""]
    return out


# --- 02: breakpoints ----------------------------------------------------------------------------------------


def breakpoint_cell(t: Language, b: dict) -> str:
    if b.get("rate") is not None:
        return t.number(b["rate"])
    hi = (b.get("interval") or [None, None])[1]
    return t("none held (below {rate})", rate=t.number(hi)) if hi else t("none held")


def breakpoint_lines(t: Language, rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = _head(
        (
            t("workload"),
            t("connections"),
            t("breakpoint, req/s"),
            t("interval"),
            t("held from fresh starts"),
            t("outcome"),
            t("validity"),
        ),
        "lrrllll",
    )
    for b in rows:
        held = t("yes") if b.get("held") else t("no") if b.get("held") is False else "–"
        lines.append(
            f"| {b['workload']} | {b.get('connections') or ''} | {breakpoint_cell(t, b)} | "
            f"{interval(t, b.get('interval'))} | {held} | {t(b['verdict']) if b.get('verdict') else ''} | "
            f"{validity(t, b.get('validity'))} |"
        )
    return lines


def breakpoint_summary(t: Language, rows: list[dict]) -> str:
    parts = [
        t(
            "{workload}, {connections}: {rate}",
            workload=b["workload"],
            connections=connections(t, b.get("connections")),
            rate=(breakpoint_cell(t, b) + " " + t("req/s")) if b.get("rate") is not None else breakpoint_cell(t, b),
        )
        for b in rows
    ]
    return t("Breakpoint: {rows}.", rows="; ".join(parts)) if parts else ""


# --- 08: this stage against the previous one ---------------------------------------------------------------


def _p(t: Language, p: float | None) -> str:
    """A p-value as it is read: three decimals, and below 0.001 only that."""
    return "< " + t.number(0.001, 3) if p is not None and p < 0.001 else t.number(p or 0, 3)


def metric(t: Language, name: str | None) -> str:
    """A compared metric as the report names it: the percentiles as they are, ``cpu`` in words."""
    return t("CPU per request") if name == "cpu" else str(name)


def _verdicts(runs: list[dict]) -> list[dict]:
    return [v for m in runs if m.get("kind") == "ab" for v in (m.get("results") or {}).get("verdicts") or []]


def _verdict_sentence(t: Language, v: dict) -> str:
    conclusion = v.get("conclusion")
    if conclusion == "different":
        said = t("B is faster") if (v.get("ratio") or 1) < 1 else t("B is slower")
    elif conclusion == "equivalent":
        said = t("no difference beyond the margin of {margin}", margin=t.percent(v.get("margin") or 0))
    else:
        said = t("no difference established at the level {level}", level=t.number(v.get("level") or 0, 3))
    return t(
        "`{b}` (B) against `{a}` (A), {metric} at {rate} req/s: B/A {ratio}x "
        "(95% interval {lo}x–{hi}x, {pairs}, p = {p}): {said}.",
        b=v.get("b"),
        a=v.get("a"),
        metric=metric(t, v.get("metric")),
        rate=t.number(v.get("rate") or 0),
        ratio=t.significant(v.get("ratio") or 0),
        lo=t.significant(v.get("ci_lo") or 0),
        hi=t.significant(v.get("ci_hi") or 0),
        pairs=t.plural("{n} interleaved pair", "{n} interleaved pairs", int(v.get("n") or 0)),
        p=_p(t, v.get("p_value")),
        said=said,
    )


def ab_lines(t: Language, runs: list[dict]) -> list[str]:
    vs = _verdicts(runs)
    if not vs:
        return []
    lines = _head(
        (t("metric"), t("rate, req/s"), "B/A", t("95% interval"), t("pairs"), "p", t("conclusion")), "lrrlrrl"
    )
    for v in vs:
        if v.get("metric") == "pass":  # how many probes of each side kept up: counts, not a ratio
            kept = t("A: {a}, B: {b} of {n}", a=v.get("a_value"), b=v.get("b_value"), n=v.get("n"))
            lines.append(
                f"| {t('probes that kept up')} | {t.number(v.get('rate') or 0)} | {kept} | – | {v.get('n')} | "
                f"{_p(t, v.get('p_value'))} | {t(v.get('conclusion') or 'undecided')} |"
            )
            continue
        lines.append(
            f"| {metric(t, v.get('metric'))} | {t.number(v.get('rate') or 0)} | {t.significant(v.get('ratio') or 0)} | "
            f"[{t.significant(v.get('ci_lo') or 0)}; {t.significant(v.get('ci_hi') or 0)}] | {v.get('n')} | "
            f"{_p(t, v.get('p_value'))} | {t(v.get('conclusion') or 'undecided')} |"
        )
    return lines


def ab_summary(t: Language, runs: list[dict]) -> str:
    vs = _verdicts(runs)
    first = next((v for v in vs if v.get("stop_rule")), vs[0] if vs else None)
    return _verdict_sentence(t, first) if first else ""


# --- 09: the history of the repository's commits ------------------------------------------------------------


def _history(runs: list[dict]) -> dict | None:
    return next((m.get("results") for m in runs if m.get("kind") == "history"), None)


def history_lines(t: Language, runs: list[dict]) -> list[str]:
    res = _history(runs)
    if not res or not res.get("points"):
        return []
    lines = _head((t("commit"), t("message"), t("CPU per request, µs"), "p50, " + t("ms"), "p99, " + t("ms")), "llrrr")
    for p in res["points"]:
        m = p.get("metrics") or {}
        val = lambda k: _ms(t, (m.get(k) or {}).get("value"))  # noqa: E731
        subject = re.sub(r"[|`]", " ", p.get("subject") or "")
        lines.append(f"| `{(p.get('commit') or '')[:10]}` | `{subject}` | {val('cpu')} | {val('p50')} | {val('p99')} |")
    return lines


def history_summary(t: Language, runs: list[dict]) -> str:
    res = _history(runs)
    if not res:
        return ""
    return t(
        "{found} across {commits} (CPU per request at {rate} req/s).",
        found=t(res.get("found") or "no change point").capitalize(),
        commits=t.plural("{n} commit", "{n} commits", len(res.get("points") or [])),
        rate=t.number(res.get("rate") or 0),
    )


# --- every notebook -----------------------------------------------------------------------------------------


def lines(t: Language, n: dict, runs: list[dict]) -> list[str]:
    """The notebook's numbers as Markdown (a table), or nothing when it has none to show here."""
    name = n["notebook"]
    if name.startswith("01"):
        return stable_rate_lines(t, runs) + fixed_rate_lines(t, runs)
    if name.startswith("02"):
        return breakpoint_lines(t, (n.get("finding") or {}).get("breakpoints") or [])
    if name.startswith("08"):
        return ab_lines(t, runs)
    if name.startswith("09"):
        return history_lines(t, runs)
    return []


def summary(t: Language, n: dict, runs: list[dict]) -> str:
    """The notebook's answer in one sentence of the report's language, from its records."""
    name = n["notebook"]
    if name.startswith("01"):
        said = fixed_rate_summary(t, runs)
    elif name.startswith("02"):
        said = breakpoint_summary(t, (n.get("finding") or {}).get("breakpoints") or [])
    elif name.startswith("08"):
        said = ab_summary(t, runs)
    elif name.startswith("09"):
        said = history_summary(t, runs)
    elif name.startswith("06"):
        said = t("Every run of this server recorded on this machine, on the page {page}.", page=f"`{n.get('html')}`")
    else:
        said = ""
    return said or t("Its answer is on the page {page} (in English).", page=f"`{n.get('html') or n['notebook']}`")
