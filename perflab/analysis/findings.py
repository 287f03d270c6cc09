"""A notebook's findings: the list its Findings section shows, and its answer for the report's index
page (one sentence, the key number, the validity level, the breakpoints it measured, a preview).

Each subject's ``findings(...)`` returns the lines of the list and its ``answer(...)`` a :class:`Finding`;
a notebook ends with::

    findings.show(latency.findings({"PUT": put, "GET": get}, sla), profiles.findings(put | get))
    latency.answer(put | get, sla, "GET p99, 64 connections", many_get).show()

:meth:`Finding.show` shows a highlighted box in the notebook and leaves the same facts machine-readable in
the cell's output (mimetype :data:`MIME`); :func:`read` takes them back from an executed notebook, which is
how the report's index page (:mod:`perflab.report.index_page`) leads with every notebook's answer.

Validity comes from the runs (:class:`perflab.measure.validity.Level`); :func:`validity_of` takes the
worst level of the results behind a finding, or ``None`` when none records one, which pages show as
"not assessed".
"""

from __future__ import annotations

import html
import json
import math
import numbers
from collections.abc import Iterable
from dataclasses import dataclass, replace

import IPython.display as ipd
import plotly.graph_objects as go

from .. import fmt
from ..measure.validity import Level, Validity

__all__ = [
    # what a notebook calls
    "Finding",
    "show",
    "breakpoint_row",
    "RAMP_ESTIMATE",
    "validity_of",
    "key_breakpoint",
    "key_latency",
    "highest",
    "bullets",
    "headline",
    "no_breakpoint",
    "hold_note",
    # what the report reads and renders
    "MIME",
    "make_finding",
    "check_key_number",
    "read",
    "read_all",
    "box_html",
    "summary_html",
    "validity_badge",
    "key_number_text",
    "thumbnail",
]

#: the output mimetype a finding travels in (JSON)
MIME = "application/vnd.perflab.finding+json"
#: the verdict of a breakpoint row that one ramp estimated (no fixed-rate probes, no interval): the report
#: lists such rows apart from the searches' breakpoints
RAMP_ESTIMATE = "ramp estimate"


# --- checking what a notebook passes --------------------------------------------------------------


def _number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v)


def _interval(name: str, iv) -> list | None:
    """``[lo, hi]`` with numbers or ``None`` (an open end); ``None`` for no interval at all."""
    if iv is None:
        return None
    if not isinstance(iv, (list, tuple)) or len(iv) != 2 or not all(v is None or _number(v) for v in iv):
        raise ValueError(f"{name} must be [lo, hi] (numbers, or None for an open end), got {iv!r}")
    lo, hi = (float(v) if v is not None else None for v in iv)
    if lo is not None and hi is not None and lo > hi:
        raise ValueError(f"{name} must have lo <= hi, got {iv!r}")
    return [lo, hi]


def _validity(name: str, v) -> str | None:
    if v is not None and v not in Level._value2member_map_:
        raise ValueError(f"{name} must be one of {', '.join(Level)} or None, got {v!r}")
    return None if v is None else str(v)


def check_key_number(k: dict | None) -> dict | None:
    if k is None:
        return None
    if not isinstance(k, dict):
        raise ValueError(f"key_number must be a dict with label, value, unit (and interval), got {type(k).__name__}")
    if not isinstance(k.get("label"), str) or not k["label"].strip():
        raise ValueError(f"key_number needs a non-empty 'label', got {k.get('label')!r}")
    if k.get("value") is not None and not _number(k["value"]):
        raise ValueError(f"key_number 'value' must be a finite number or None, got {k.get('value')!r}")
    if not isinstance(k.get("unit", ""), str):
        raise ValueError(f"key_number 'unit' must be a string, got {k.get('unit')!r}")
    extra = set(k) - {"label", "value", "unit", "interval", "note"}
    if extra:
        raise ValueError(
            f"key_number: unknown keys {', '.join(sorted(extra))} (known: label, value, unit, interval, note)"
        )
    if k.get("note") is not None and not isinstance(k["note"], str):
        raise ValueError(f"key_number 'note' must be a string, got {k.get('note')!r}")
    out = {
        "label": k["label"].strip(),
        "value": float(k["value"]) if k.get("value") is not None else None,
        "unit": k.get("unit", ""),
        "interval": _interval("key_number 'interval'", k.get("interval")),
    }
    if k.get("note"):
        out["note"] = k["note"]
    return out


def check_breakpoint(row: dict, i: int = 0) -> dict:
    where = f"breakpoints[{i}]"
    if not isinstance(row, dict):
        raise ValueError(f"{where} must be a dict, got {type(row).__name__}")
    if not isinstance(row.get("workload"), str) or not row["workload"]:
        raise ValueError(f"{where} needs a 'workload' (e.g. 'GET'), got {row.get('workload')!r}")
    conns = row.get("connections")
    if conns is not None and (not isinstance(conns, numbers.Integral) or isinstance(conns, bool) or conns < 1):
        raise ValueError(f"{where}: 'connections' must be an integer >= 1, got {conns!r}")
    conns = int(conns) if conns is not None else None
    if row.get("rate") is not None and not _number(row["rate"]):
        raise ValueError(f"{where}: 'rate' must be a number or None (none passed), got {row.get('rate')!r}")
    out = {
        "workload": row["workload"],
        "connections": conns,
        "mode": row.get("mode"),
        "rate": float(row["rate"]) if row.get("rate") is not None else None,
        "interval": _interval(f"{where}: 'interval'", row.get("interval")),
        "verdict": row.get("verdict"),
        "validity": _validity(f"{where}: 'validity'", row.get("validity")),
    }
    for k, v in row.items():  # extra descriptive keys (run_id, label...) travel along
        if k not in out:
            out[k] = v
    return out


def make_finding(
    answer: str,
    key_number: dict | None = None,
    validity: str | None = None,
    breakpoints: list[dict] | None = None,
    preview=None,
) -> dict:
    """The finding as plain JSON, checked: a bad value raises ``ValueError`` naming it."""
    if not isinstance(answer, str) or not answer.strip():
        raise ValueError(f"answer must be a non-empty sentence, got {answer!r}")
    if breakpoints is not None and not isinstance(breakpoints, (list, tuple)):
        raise ValueError(f"breakpoints must be a list of dicts, got {type(breakpoints).__name__}")
    finding = {
        "answer": answer.strip(),
        "key_number": check_key_number(key_number),
        "validity": _validity("validity", validity),
        "breakpoints": [check_breakpoint(r, i) for i, r in enumerate(breakpoints or [])],
    }
    if preview is not None:
        finding["preview"] = thumbnail(preview)
    return finding


def thumbnail(fig, height: int = 220) -> dict:
    """A small static copy of a figure for the index page: its JSON with a compact layout (no
    legend, small margins and fonts, the template reduced to a white background and grey grid)."""
    if isinstance(fig, go.Figure):
        d = json.loads(fig.to_json())
    elif isinstance(fig, dict) and "data" in fig:
        d = json.loads(json.dumps(fig))
    else:
        raise ValueError(f"preview must be a plotly Figure, got {type(fig).__name__}")
    layout = d.setdefault("layout", {})
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    layout.pop("template", None)
    for key, ax in list(layout.items()):
        if key.startswith(("xaxis", "yaxis")) and isinstance(ax, dict):
            ax.setdefault("gridcolor", "#eee")
            ax.setdefault("zerolinecolor", "#ddd")
            t = ax.get("title")
            if isinstance(t, dict):
                t["font"] = {"size": 9}
    layout.update(
        height=height,
        width=None,
        showlegend=False,
        margin={"l": 44, "r": 8, "t": 28, "b": 34},
        font={"size": 9},
        paper_bgcolor="#fff",
        plot_bgcolor="#fff",
        title={"text": text or "", "font": {"size": 11}, "x": 0.01, "xanchor": "left"},
    )
    for ann in layout.get("annotations", []) or []:
        ann["font"] = {"size": 8}
    for tr in d.get("data", []):
        if tr.get("type") in ("icicle", "treemap", "sunburst"):
            tr["textfont"] = {"size": 8}
    return d


# --- showing it ------------------------------------------------------------------------------------


def key_number_text(k: dict | None) -> str:
    """'50,000 req/s (interval [48,000, 52,000])'."""
    if not k:
        return ""
    if k.get("value") is None and k.get("note"):
        return k["note"]  # what a measurement without a number says instead (a search that could not tell)
    if k.get("value") is None and not (k.get("interval") and k["interval"][1] is not None):
        return "n/a"
    text = fmt.estimate(k.get("value"), k.get("interval"), k.get("unit", ""))
    return text + (f"; {k['note']}" if k.get("note") else "")


VALIDITY_STYLE = {
    "valid": ("#1a7f37", "#e8f5e9"),
    "suspect": ("#9a6700", "#fff8c5"),
    "invalid": ("#c62828", "#fdecea"),
    None: ("#666", "#f0f0f0"),
}


def validity_badge(v: str | None, reasons: Iterable[str] = (), label: str | None = None) -> str:
    """The level as a coloured badge, its reasons on hover; ``label``: the level's name in the page's language."""
    fg, bg = VALIDITY_STYLE.get(v, VALIDITY_STYLE[None])
    tip = "; ".join(reasons) if reasons else ("no run recorded a validity level" if v is None else v)
    return (
        f"<span class='perflab-validity perflab-validity-{v or 'none'}' title='{html.escape(tip)}' "
        f"style='color:{fg};background:{bg};border-radius:3px;padding:0 6px;font-weight:600'>"
        f"{html.escape(label or v or 'not assessed')}</span>"
    )


def box_html(f: dict, element_id: str | None = "finding") -> str:
    """The highlighted box a notebook shows for its finding."""
    k = f.get("key_number")
    key = (
        (
            f"<div style='font-size:13px;margin-top:4px'>{html.escape(k['label'])}: "
            f"<b>{html.escape(key_number_text(k))}</b></div>"
        )
        if k
        else ""
    )
    bps = ""
    if f.get("breakpoints"):
        rows = "".join(
            f"<tr><td>{html.escape(str(b['workload']))}</td><td>{b['connections'] or ''}</td>"
            f"<td>{html.escape(str(b.get('mode') or ''))}</td><td style='text-align:right'>{fmt.number(b['rate'])}</td>"
            f"<td>{html.escape(fmt.interval(b.get('interval')))}</td><td>{html.escape(str(b.get('verdict') or ''))}</td>"
            f"<td>{validity_badge(b.get('validity'))}</td></tr>"
            for b in f["breakpoints"]
        )
        bps = (
            "<table style='font-size:12px;margin-top:6px'><tr><th>workload</th><th>connections</th><th>mode</th>"
            "<th>breakpoint, req/s</th><th>interval</th><th>outcome</th><th>validity</th></tr>" + rows + "</table>"
        )
    ident = f" id='{element_id}'" if element_id else ""
    return (
        f"<div class='perflab-finding'{ident} style='border-left:4px solid #1f77b4;background:#f3f8fc;"
        f"padding:8px 12px;margin:8px 0;border-radius:3px'>"
        f"<div style='font-size:12px;color:#1f77b4;font-weight:600;text-transform:uppercase;letter-spacing:.04em'>"
        f"Finding {validity_badge(f.get('validity'))}</div>"
        f"<div style='font-size:15px;margin-top:4px'>{html.escape(f['answer'])}</div>{key}{bps}</div>"
    )


def summary_html(f: dict, anchor: str = "#finding") -> str:
    """The finding at the top of its notebook's page: the sentence, the key number, a link down."""
    k = f.get("key_number")
    key = f" &middot; {html.escape(k['label'])}: <b>{html.escape(key_number_text(k))}</b>" if k else ""
    return (
        f"<div class='perflab-finding-summary' style='border-left:4px solid #1f77b4;background:#f3f8fc;"
        f"padding:8px 12px;border-radius:3px;font-size:14px'>{validity_badge(f.get('validity'))} "
        f"{html.escape(f['answer'])}{key} <a href='{html.escape(anchor)}'>details below</a></div>"
    )


@dataclass(frozen=True)
class Finding:
    """A notebook's answer, as each subject's ``answer(...)`` makes it: ``answer`` (one sentence),
    ``key_number`` (``{"label", "value", "unit", "interval": [lo, hi] (optional)}``), ``validity``
    (``"valid"``, ``"suspect"``, ``"invalid"`` or ``None``: not assessed), ``breakpoints`` (rows
    ``{"workload", "connections", "mode", "rate", "interval", "verdict", "validity"}``: :func:`breakpoint_row`)
    and ``preview`` (a plotly figure for the index page's thumbnail)."""

    answer: str
    key_number: dict | None = None
    validity: str | None = None
    breakpoints: list | None = None
    preview: object = None

    def with_validity_of(self, *results) -> Finding:
        """This finding with the validity of ``results`` counted too (runs the answer does not name but rests
        on)."""
        return replace(self, validity=validity_of(self.validity, *results))

    def show(self) -> None:
        """Display the finding (a highlighted box) and leave it machine-readable in the output
        (:func:`make_finding` gives the stored form, checked: a bad value raises ``ValueError`` naming it).
        Returns nothing, so that as a cell's last line it adds no ``Out[...]``."""
        f = make_finding(self.answer, self.key_number, self.validity, self.breakpoints, self.preview)
        key = f["key_number"]
        plain = f["answer"] + (f" ({key['label']}: {key_number_text(key)})" if key else "")
        ipd.display({MIME: f, "text/html": box_html(f), "text/plain": plain}, raw=True)


def bullets(*groups) -> str:
    """The lines of ``groups`` (lists of sentences; empty ones left out) as one Markdown list."""
    return "\n".join(f"- {line}" for group in groups for line in group if line)


def show(*groups) -> None:
    """A notebook's Findings section: the lines every subject's ``findings(...)`` returned, as one list."""
    text = bullets(*groups)
    if text:
        ipd.display(ipd.Markdown(text))


# --- reading it back -------------------------------------------------------------------------------


def read_all(nb) -> list[dict]:
    """Every finding an executed notebook (a path or an nbformat node) shows, in order."""
    import nbformat  # 0.26 s, and only reading an executed notebook back needs it (not a kernel)

    if not hasattr(nb, "cells"):
        nb = nbformat.read(str(nb), as_version=4)
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = o.get("data") or {}
            if MIME in data and isinstance(data[MIME], dict):
                out.append(dict(data[MIME]))
    return out


def read(nb) -> dict | None:
    """The notebook's finding: the last one it showed, or ``None``."""
    found = read_all(nb)
    return found[-1] if found else None


# --- from results to rows --------------------------------------------------------------------------


def _level(obj) -> str | None:
    """The validity level behind ``obj``: a result with a validity record or level, a run, or a level."""
    v = getattr(obj, "validity", obj)
    if isinstance(v, Validity):
        return v.level
    return v if isinstance(v, str) else None


def validity_of(*results) -> str | None:
    """The worst validity level of the results behind a finding (experiment or breakpoint results, runs,
    levels); ``None`` when none of them records one."""
    return Level.worst(_level(r) for r in results)


def breakpoint_row(
    result, workload: str | None = None, connections: int | None = None, mode: str | None = None, **extra
) -> dict:
    """One breakpoints row from a :class:`perflab.breakpoint.BreakpointResult`: what its run recorded
    (:meth:`perflab.records.Run.breakpoint_row`), with workload, connections and mode overridden when
    given and any ``extra`` descriptive keys."""
    row = result.run.breakpoint_row()
    row.update({k: v for k, v in (("workload", workload), ("connections", connections), ("mode", mode)) if v})
    row.update(extra)
    return check_breakpoint(row)


def highest(rows: list[dict]) -> dict | None:
    """The breakpoint row with the highest rate, ``None`` when no row has one."""
    found = [r for r in rows if r.get("rate") is not None]
    return max(found, key=lambda r: r["rate"]) if found else None


#: other programs' CPU (cores) from which a breakpoint's sentences name it: a tenth of a core
OTHERS_NAMED = 0.1


def no_breakpoint(row: dict) -> str:
    """What a search without a breakpoint says instead: 'cannot tell (12 of 14 probes could not be judged
    (the machine was busy)); kept up at 1,544 req/s at least', 'no rate held for 20 s: below 12,836 req/s',
    'none passed (below 500 req/s)'."""
    kept = f"; kept up at {fmt.rate(row['at_least'])} at least" if row.get("at_least") else ""
    verdict = row.get("verdict")
    if verdict == "cannot-tell":
        return f"cannot tell ({row.get('why') or 'the machine kept the search from measuring'}){kept}"
    if verdict == "generator-limited":
        return f"no breakpoint: {row.get('why') or 'the generator reached its own limit'}{kept}"
    iv = row.get("interval") or (None, None)
    if row.get("held") is False and iv[1] is not None:
        return (
            f"no rate held for {row['sustain_s']:g} s"
            + (" from a fresh start" if row.get("fresh_start") else "")
            + f": the breakpoint is below {fmt.rate(iv[1])}"
            + (f" (the search's short probes said {fmt.rate(row['search_rate'])})" if row.get("search_rate") else "")
        )
    return fmt.estimate(None, iv, "req/s")


def hold_note(row: dict) -> str:
    """'kept up in 2 of 3 windows of 20 s, each from a fresh start', with how far the search's short probes were
    off ('where the search's 1,930 req/s did not: its short probes overestimated the breakpoint by 14%', or
    'above the search's 1,500 req/s: ... underestimated it by 30%'); '' when no window held it."""
    if not row.get("held"):
        return ""
    note = (
        f"{row['held_windows']} of {row['sustain_s']:g} s"
        if row.get("held_windows")
        else f"held for {row['sustain_s']:g} s"
    ) + (", each from a fresh start" if row.get("fresh_start") else "")
    if row.get("overestimate"):
        note += (
            f", where the search's {fmt.rate(row['search_rate'])} did not: its short probes overestimated the "
            f"breakpoint by {fmt.pct(row['overestimate'])}"
        )
    elif row.get("search_rate") and row.get("rate") and row["rate"] > row["search_rate"]:
        note += (
            f", above the search's {fmt.rate(row['search_rate'])}: its short probes underestimated the "
            f"breakpoint by {fmt.pct(row['rate'] / row['search_rate'] - 1)}"
        )
    return note


def others_note(row: dict) -> str:
    """'beside other programs using up to 0.93 of a core (0.88 of a core at the median)'; '' when other
    programs used less than a tenth of a core throughout (or nothing was read)."""
    most = row.get("others_max_cores")
    if most is None or most < OTHERS_NAMED:
        return ""
    return f"beside other programs using up to {most:.2f} of a core" + (
        f" ({row['others_median_cores']:.2f} at the median)" if row.get("others_median_cores") is not None else ""
    )


def headline(row: dict) -> str:
    """A breakpoint (a row, or :func:`row_of` a search) in one phrase: '50,000 req/s (interval [48,000, 52,000],
    resolved; held for 20 s)', or what it says instead of a number (:func:`no_breakpoint`)."""
    if row.get("rate") is None:
        return no_breakpoint(row)
    held, others = hold_note(row), others_note(row)
    return (
        f"{fmt.rate(row['rate'])} (interval {fmt.interval(row.get('interval'))}, {row.get('verdict')}"
        + (f"; {held}" if held else "")
        + (f"; {others}" if others else "")
        + ")"
    )


def key_breakpoint(row: dict | None, label: str) -> dict | None:
    """A breakpoint row as the finding's key number (its rate, or none when nothing passed, and its
    interval); ``label`` is formatted with the row's keys and ``connection_count`` ('64 connections'):
    ``"{workload} breakpoint, {connection_count}"``. ``None`` without a row."""
    if row is None:
        return None
    conns = row.get("connections")
    try:
        text = label.format(**row, connection_count=fmt.count(conns, "connection") if conns else "")
    except KeyError as e:
        raise ValueError(f"label: {label!r} names {e}, which the row does not have ({', '.join(row)})") from None
    key = {"label": text, "value": row.get("rate"), "unit": "req/s", "interval": row.get("interval")}
    if row.get("rate") is None and row.get("verdict") in ("cannot-tell", "generator-limited"):
        key["note"] = no_breakpoint(row)
    elif row.get("held"):
        key["note"] = hold_note(row)
    return key


def key_latency(label: str, result) -> dict:
    """A fixed-rate run's p99 as the finding's key number (ms, to the microsecond)."""
    return {"label": label, "value": round(result.load.p99_ms, 3), "unit": "ms"}
