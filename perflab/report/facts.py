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
from ..i18n import Language, Sentence
from ..server import protocol

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


#: a notebook's status when the server's own bug stopped it (:class:`perflab.errors.ServerFault`): a finding of the
#: report, not its failure
SERVER_FAULT = "server fault"


def server_fault(t: Language, error: str | None) -> str:
    """A notebook's stop at a fault of the server (``ServerFault: <English sentence>``) in the report's language."""
    text = (error or "").removeprefix("ServerFault: ")
    fault = protocol.fault_of(text)
    return fault.say(t) if fault is not None else text


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
    # a run the server's fault stopped before its load (a fill that failed) recorded no load: no row
    rows = [m for m in runs if m.get("kind") == "experiment" and isinstance(m.get("results"), dict)]
    rows = [m for m in rows if m["results"].get("script")]
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
        if m.get("kind") == "experiment" and isinstance(x := m.get("results"), dict) and x.get("script")
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


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _level(t: Language, x: float) -> str:
    """A significance level as it is read: 0.05, 0.001, and smaller ones as a power of ten (1·10⁻⁶), never 0."""
    if x >= 0.001 or x <= 0:
        return t.number(x, 3)
    mantissa, exponent = f"{x:.0e}".split("e")
    power = "10" + str(int(exponent)).translate(_SUPERSCRIPT)
    return power if mantissa == "1" else f"{mantissa}·{power}"


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
        said = t("no difference established at the level {level}", level=_level(t, v.get("level") or 0))
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


# --- 07: the cluster -----------------------------------------------------------------------------------------


def _cluster_runs(runs: list[dict]) -> list[dict]:
    """The cluster notebook's fixed-rate runs (one node, the cluster, each ack/from, the fault run), not its
    warm-up and ramps."""
    skip = ("warmup", "ramp")
    return [
        m
        for m in runs
        if m.get("kind") == "cluster"
        and isinstance(m.get("results"), dict)
        and not any(w in str(m["_run"].get("label") or "") for w in skip)
    ]


def _setup(t: Language, m: dict) -> str:
    c = m.get("cluster") or {}
    nodes = int(c.get("nodes") or 1)
    if nodes == 1:
        return t.plural("{n} node", "{n} nodes", 1)
    return t(
        "{nodes}, ack {ack} of {frm}",
        nodes=t.plural("{n} node", "{n} nodes", nodes),
        ack=c.get("ack"),
        frm=c.get("from"),
    )


def cluster_lines(t: Language, runs: list[dict], finding: dict | None = None) -> list[str]:
    """The cluster against one node, each ack/from and the fault run as a table; the fault run, the consistency
    check, the keys per node and the ramps' capacity estimates as sentences."""
    rows = _cluster_runs(runs)
    if not rows:
        return []
    lines = _head(
        (
            t("run"),
            t("nodes"),
            t("rate, req/s"),
            "p50, " + t("ms"),
            "p99, " + t("ms"),
            t("answered 2xx"),
            t("validity"),
        ),
        "llrrrrl",
    )
    for m in rows:
        x = m["results"]
        answers = x.get("answers") or {}
        ok = answers.get("2xx/3xx")
        share = t.percent(ok / answers["requests"]) if ok is not None and answers.get("requests") else "–"
        label = str(m["_run"].get("label") or "")
        run = t("with a node killed") if x.get("faults") else t("ack/from") if "quorum" in label else t("fixed rate")
        lines.append(
            f"| {run} | {_setup(t, m)} | {t.number(x.get('target_rate') or 0)} | {_ms(t, x.get('p50_ms'))} | "
            f"{_ms(t, x.get('p99_ms'))} | {share} | {validity(t, m['_run'].get('validity'))} |"
        )
    told = [s for s in (_capacity(t, finding), *(_fault(t, m) for m in rows if m["results"].get("faults"))) if s]
    return lines + ([""] + told if told else [])


def cluster_summary(t: Language, runs: list[dict]) -> str:
    rows = [m for m in _cluster_runs(runs) if not m["results"].get("faults")][:2]
    if not rows:
        return ""
    return (
        "; ".join(
            t(
                "{setup}: p99 {p99} ms at {rate} req/s",
                setup=_setup(t, m),
                p99=_ms(t, m["results"].get("p99_ms")),
                rate=t.number(m["results"].get("target_rate") or 0),
            )
            for m in rows
        )
        + "."
    )


def _capacity(t: Language, finding: dict | None) -> str:
    est = [b for b in (finding or {}).get("breakpoints") or [] if b.get("rate") is not None]
    if not est:
        return ""
    return t(
        "Capacity as the ramps estimate it: {list}.",
        list="; ".join(f"{_mode(t, b.get('mode'))}: {t.number(b['rate'])} " + t("req/s") for b in est),
    )


def _mode(t: Language, mode: str | None) -> str:
    """A capacity row's setup ("1 node", "3 nodes, 2/3") in the report's language."""
    m = re.fullmatch(r"(\d+) nodes?(?:, (\d+)/(\d+))?", str(mode or ""))
    if m is None:
        return str(mode or "")
    nodes = t.plural("{n} node", "{n} nodes", int(m[1]))
    return t("{nodes}, ack {ack} of {frm}", nodes=nodes, ack=m[2], frm=m[3]) if m[2] else nodes


def _fault(t: Language, m: dict) -> str:
    x = m["results"]
    kill = next((f for f in x.get("faults") or [] if f.get("action") == "kill"), {})
    back = next((f for f in x.get("faults") or [] if f.get("action") == "restart"), {})
    answers = x.get("answers") or {}
    said = [
        t(
            "Node {node} killed {at} s into the window and started again {back} s in: {ok} of {n} requests got a "
            "successful answer.",
            node=kill.get("node", "?"),
            at=t.number(kill.get("at_s") or 0, 1),
            back=t.number(back.get("at_s") or 0, 1),
            ok=t.number(answers.get("2xx/3xx") or 0),
            n=t.number(answers.get("requests") or 0),
        )
    ]
    rec = next((r for r in x.get("recovery") or []), None)
    if rec is not None:
        said.append(
            t("The tail recovered {s} s after the restart.", s=t.number(rec["recovery_s"], 1))
            if rec.get("recovery_s") is not None
            else t("The tail did not recover within the window.")
        )
    c = x.get("consistency") or {}
    counts = c.get("counts") or {}
    if counts:
        said.append(
            t(
                "The consistency check ({ops} operations on keys of its own): {missed} reads missed an acknowledged "
                "write, {stale} read an older value, {unavailable} got no answer.",
                ops=t.number(counts.get("operations") or 0),
                missed=t.number(counts.get("missed") or 0),
                stale=t.number(counts.get("stale") or 0),
                unavailable=t.number(counts.get("unavailable") or 0),
            )
        )
    d = x.get("key_distribution") or {}
    stored = d.get("stored")
    if stored and all(v is not None for v in stored):
        said.append(
            t(
                "Keys per node, as each node counted them (GET /v0/entities): {counts}.",
                counts=", ".join(t.number(v) for v in stored),
            )
        )
    elif d.get("owners"):
        said.append(
            t("Keys per node, by the routing function: {counts}.", counts=", ".join(t.number(v) for v in d["owners"]))
        )
    elif d:
        said.append(
            t(
                "Keys per node not measured: the nodes route keys their own way and none answered GET /v0/entities "
                "(the course's range API, stage 6)."
            )
        )
    return " ".join(said)


# --- 10: the whole range read once from a database beyond the heap -----------------------------------------


def _scan(runs: list[dict]) -> dict | None:
    return next((m.get("results") for m in runs if m.get("kind") == "scan" and m.get("results")), None)


def _mib(t: Language, nbytes) -> str:
    return t("{n} MiB", n=t.number(nbytes / (1 << 20), 1)) if nbytes is not None else "–"


def fault_said(t: Language, rec: dict | None) -> str:
    """A fault of the range read (or why something was not measured), as its run recorded it
    (:meth:`perflab.i18n.Sentence.record`), in the report's language."""
    return Sentence.of_record(rec).say(t) if rec else ""


def _read_sentence(t: Language, g: dict) -> str:
    if g.get("status") is None:
        return t("The range read got no answer: {error}.", error=fault_said(t, g.get("error")))
    if g["status"] != 200:
        if g["status"] in (400, 404, 405):
            return t(
                "The server answered {status} to `GET /v0/entities?start=key0`: it has no range endpoint (stage 6).",
                status=g["status"],
            )
        return t("The server answered {status} to `GET /v0/entities?start=key0`.", status=g["status"])
    text = t(
        "One request read {entries}, {data} in {seconds} s ({rate} per second, {eps} entries per second); "
        "the first byte came after {ttfb} ms.",
        entries=t.plural("{n} entry", "{n} entries", g["entries"]),
        data=_mib(t, g["payload_bytes"]),
        seconds=t.number(g["stream_s"] or 0, 2),
        rate=_mib(t, g["bytes_per_s"] or 0),
        eps=t.number(g["entries_per_s"] or 0),
        ttfb=t.significant((g["ttfb_s"] or 0) * 1000),
    )
    if g.get("error"):
        text += " " + t("The read stopped early: {error}.", error=fault_said(t, g["error"]))
    return text


def _check_sentence(t: Language, g: dict) -> str:
    if g.get("status") != 200:
        return ""
    if g.get("ok"):
        return t(
            "The chunk check passed: the body is chunked, each chunk is `key\\nvalue`, the keys ascend, every key "
            "written is there once with the value written."
        )
    return t(
        "The chunk check found: {faults}.", faults="; ".join(fault_said(t, f) for f in g["faults"] or [g["error"]] if f)
    )


def _heap_sentence(t: Language, h: dict) -> str:
    if h.get("unavailable"):
        return t("The heap was not sampled: {why}.", why=fault_said(t, h["unavailable"]))
    if h.get("flat") is None:
        return t("The read was too short for the heap's samples ({n} inside it).", n=h.get("samples", 0))
    values = dict(
        kept=_mib(t, h["old_kept_bytes"]),
        grew=_mib(t, h["old_growth_bytes"]),
        share=t.percent(h["old_kept_bytes"] / h["range_bytes"] if h["range_bytes"] else 0),
        range=_mib(t, h["range_bytes"]),
        start=_mib(t, h["used_start_bytes"]),
        peak=_mib(t, h["used_peak_bytes"]),
    )
    if h["flat"]:
        return t(
            "The heap stayed flat: its old generation kept {kept} above its start to the end of the read (at its "
            "peak {grew}), {share} of the range's {range}; the heap in use went from {start} to at most {peak}.",
            **values,
        )
    return t(
        "The heap did not stay flat: its old generation kept {kept} above its start to the end of the read (at its "
        "peak {grew}), {share} of the range's {range}: the server holds the range in memory instead of streaming "
        "it; the heap in use went from {start} to at most {peak}.",
        **values,
    )


def scan_lines(t: Language, runs: list[dict]) -> list[str]:
    """The fill against the heap, the read, the chunk check and the heap in sentences, then the figures' table."""
    res = _scan(runs)
    if not res:
        return []
    f, g, h = res["fill"], res["range"], res["heap"]
    sentences = [
        t(
            "The database holds {data} ({keys}, values of {value} bytes): {share} × the server's heap of {heap}.",
            data=_mib(t, f["bytes"]),
            keys=t.plural("{n} key", "{n} keys", f["keys"]),
            value=t.number(f["value_size"]),
            share=t.number(f["bytes"] / f["heap_bytes"], 2),
            heap=_mib(t, f["heap_bytes"]),
        ),
        _read_sentence(t, g),
        _check_sentence(t, g),
        _heap_sentence(t, h),
    ]
    lines = [line for s in sentences if s for line in (s, "")]
    if g.get("status") != 200:
        return lines[:-1]
    flat = {True: t("yes"), False: t("no")}.get(h.get("flat"), "–")
    check = t("passed") if g.get("ok") else t.plural("{n} fault", "{n} faults", len(g["faults"]) or 1)
    mib = lambda v: t.number(v / (1 << 20), 1) if v is not None else "–"  # noqa: E731
    lines += _head(
        (
            t("data, MiB"),
            t("heap, MiB"),
            t("first byte, ms"),
            t("read, s"),
            t("MiB/s"),
            t("entries"),
            t("entries/s"),
            t("heap in use at the start, MiB"),
            t("its peak, MiB"),
            t("kept by the old generation, MiB"),
            t("flat heap"),
            t("chunk check"),
        ),
        "rrrrrrrrrrll",
    )
    lines.append(
        f"| {mib(f['bytes'])} | {mib(f['heap_bytes'])} | {t.significant((g['ttfb_s'] or 0) * 1000)} | "
        f"{t.number(g['stream_s'] or 0, 2)} | {mib(g['bytes_per_s'])} | {t.number(g['entries'])} | "
        f"{t.number(g['entries_per_s'] or 0)} | {mib(h.get('used_start_bytes'))} | {mib(h.get('used_peak_bytes'))} | "
        f"{mib(h.get('old_kept_bytes'))} | {flat} | {check} |"
    )
    return lines


def scan_summary(t: Language, runs: list[dict]) -> str:
    res = _scan(runs)
    if not res:
        return ""
    f, g, h = res["fill"], res["range"], res["heap"]
    if g.get("status") != 200 or g.get("error"):
        return _read_sentence(t, g)
    flat = {True: t("flat"), False: t("holding the range")}.get(h.get("flat"), t("not judged"))
    check = t("passed") if g.get("ok") else t.plural("{n} fault", "{n} faults", len(g["faults"]))
    return t(
        "The whole range ({data}, {share} × the heap) came back in {seconds} s at {rate} per second; chunk check: "
        "{check}; heap: {flat}.",
        data=_mib(t, g["payload_bytes"]),
        share=t.number(f["bytes"] / f["heap_bytes"], 2),
        seconds=t.number(g["stream_s"] or 0, 2),
        rate=_mib(t, g["bytes_per_s"] or 0),
        check=check,
        flat=flat,
    )


# --- every notebook -----------------------------------------------------------------------------------------


def lines(t: Language, n: dict, runs: list[dict]) -> list[str]:
    """The notebook's numbers as Markdown (a table), or nothing when it has none to show here."""
    name = n["notebook"]
    if name.startswith("01"):
        return stable_rate_lines(t, runs) + fixed_rate_lines(t, runs)
    if name.startswith("02"):
        return breakpoint_lines(t, (n.get("finding") or {}).get("breakpoints") or [])
    if name.startswith("07"):
        return cluster_lines(t, runs, n.get("finding"))
    if name.startswith("08"):
        return ab_lines(t, runs)
    if name.startswith("09"):
        return history_lines(t, runs)
    if name.startswith("10"):
        return scan_lines(t, runs)
    return []


def summary(t: Language, n: dict, runs: list[dict]) -> str:
    """The notebook's answer in one sentence of the report's language, from its records."""
    name = n["notebook"]
    if name.startswith("01"):
        said = fixed_rate_summary(t, runs)
    elif name.startswith("02"):
        said = breakpoint_summary(t, (n.get("finding") or {}).get("breakpoints") or [])
    elif name.startswith("07"):
        said = cluster_summary(t, runs)
    elif name.startswith("08"):
        said = ab_summary(t, runs)
    elif name.startswith("09"):
        said = history_summary(t, runs)
    elif name.startswith("10"):
        said = scan_summary(t, runs)
    elif name.startswith("06"):
        said = t("Every run of this server recorded on this machine, on the page {page}.", page=f"`{n.get('html')}`")
    else:
        said = ""
    return said or t("Its answer is on the page {page} (in English).", page=f"`{n.get('html') or n['notebook']}`")
