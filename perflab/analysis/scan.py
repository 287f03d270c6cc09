"""Notebook 10 (the course's stage 6): the whole range read once from a database larger than the heap, told.

A scan (:func:`perflab.scan.run_scan`) gives the fill (bytes against the heap), the read (time to first byte, time,
bytes, entries, the chunk check) and the heap over the read (``jstat``). The stories: :func:`fill` (was the
database larger than the heap), :func:`stream` (the read's figures and the chunk check, each fault in words),
:func:`heap` (the heap over the read, and whether it stayed flat); the profiles are :mod:`.profiles`'
(``categories``, ``flamegraphs``); then :func:`findings` and :func:`answer`.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from .. import fmt
from ..i18n import Sentence
from .findings import Finding
from .section import Section

__all__ = ["fill", "stream", "heap", "findings", "answer", "figures_table"]

#: a first byte later than this share of the whole read means the range was built before it was sent
LATE_FIRST_BYTE = 0.5


def _range(r) -> dict:
    return r.run.meta["results"]["range"]


def figures_table(r) -> pd.DataFrame:
    """The read's figures, one row: bare numbers, units as suffixes."""
    g, h = _range(r), r.heap_summary
    return pd.DataFrame(
        [
            {
                "status": g["status"],
                "fill_bytes": r.fill["bytes"],
                "heap_bytes": r.heap_bytes,
                "ttfb_s": g["ttfb_s"],
                "stream_s": g["stream_s"],
                "payload_bytes": g["payload_bytes"],
                "entries": g["entries"],
                "bytes_per_s": g["bytes_per_s"],
                "entries_per_s": g["entries_per_s"],
                "heap_used_start_bytes": h.get("used_start_bytes"),
                "heap_used_peak_bytes": h.get("used_peak_bytes"),
                "heap_old_growth_bytes": h.get("old_growth_bytes"),
                "heap_old_kept_bytes": h.get("old_kept_bytes"),
                "heap_flat": h.get("flat"),
                "faults": len(g["faults"]),
            }
        ]
    )


def fill_sentence(r) -> str:
    f = r.fill
    share = f["bytes"] / r.heap_bytes
    where = (
        "larger than the heap: a server that builds the range in memory cannot answer it"
        if share > 1
        else "no larger than the heap: a server that builds the range in memory may still answer (a "
        "`fill_factor` above 1 tests the streaming the stage asks for)"
    )
    return (
        f"The database holds {fmt.mib(f['bytes'])} ({f['keys']:,} keys, values of {f['value_size']:,} bytes), "
        f"{share:.2f} x the server's heap of {fmt.mib(r.heap_bytes)}: {where}. The fill wrote them in "
        f"{f['seconds']:.1f} s ({fmt.number(f['rate'])} writes/s, {f['retries']} retried)."
    )


def fill(r) -> Section:
    """The fill against the heap."""
    return Section([fill_sentence(r)])


def read_sentence(r) -> str:
    """What the read gave, in one paragraph: the figures, or what went wrong."""
    g = _range(r)
    if g["status"] is None:
        return f"The range read got no answer: {Sentence.of_record(g['error'])}."
    if g["status"] != 200:
        why = "it has no range endpoint (stage 6)" if g["status"] in (400, 404, 405) else "it failed"
        quote = f" Its answer began: `{g['quote'][:120].strip()}`." if g["quote"].strip() else ""
        return f"The server answered {g['status']} to `GET /v0/entities?start=key0`: {why}.{quote}"
    said = (
        f"One `GET /v0/entities?start=key0` read {g['entries']:,} entries, {fmt.mib(g['payload_bytes'])} "
        f"({fmt.mib(g['wire_bytes'])} with the chunks' framing), in {g['stream_s']:.2f} s: "
        f"{fmt.mib(g['bytes_per_s'])}/s, {fmt.number(g['entries_per_s'])} entries/s; the first byte came after "
        f"{fmt.ms(g['ttfb_s'] * 1000)}."
    )
    if g["error"]:
        said += f" The read stopped early: {Sentence.of_record(g['error'])}."
    if g["ttfb_s"] and g["stream_s"] and g["ttfb_s"] > LATE_FIRST_BYTE * g["stream_s"] and g["ttfb_s"] > 0.05:
        said += (
            f" The first byte came only after {fmt.pct(g['ttfb_s'] / g['stream_s'])} of the read: the server "
            f"prepared the range before sending any of it."
        )
    return said


def check_sentence(r) -> str:
    """The chunk check: passed, or its faults."""
    g = _range(r)
    if g["status"] != 200:
        return ""
    if g["ok"]:
        return (
            f"The chunk check passed: the body is chunked, each of its {g['entries']:,} chunks is `key\\nvalue`, "
            f"the keys ascend, every key written is there once with the value written."
        )
    return "The chunk check found: " + "; ".join(Sentence.of_record(f) for f in g["faults"] or [g["error"]] if f) + "."


def stream(r) -> Section:
    """The read's figures, its table and the chunk check."""
    return Section([read_sentence(r), figures_table(r), check_sentence(r)])


def heap_sentence(r) -> str:
    h = r.heap_summary
    if h.get("unavailable"):
        return f"The heap was not sampled: {Sentence.of_record(h['unavailable'])}."
    if h.get("flat") is None:
        return (
            f"The read was too short for the heap's samples ({h.get('samples', 0)} inside it): "
            f"nothing to say about the heap."
        )
    kept, grew = h["old_kept_bytes"], h["old_growth_bytes"]
    share = kept / h["range_bytes"] if h["range_bytes"] else 0.0
    old = (
        f"the old generation kept {fmt.mib(kept)} above its start to the end of the read (at its peak "
        f"{fmt.mib(grew)}), {fmt.pct(share)} of the range's {fmt.mib(h['range_bytes'])}"
    )
    used = (
        f"The heap in use went from {fmt.mib(h['used_start_bytes'])} to a peak of {fmt.mib(h['used_peak_bytes'])} "
        f"({h['young_gcs']} young and {h['full_gcs']} full GCs during the read)."
    )
    if h["flat"]:
        return f"The heap stayed flat: {old} (below {fmt.pct(h['flat_share'])}): the server streams the range. {used}"
    return (
        f"The heap did not stay flat: {old}: the server holds the range (or much of it) in memory instead of "
        f"streaming it. {used}"
    )


def heap_figure(r) -> go.Figure | None:
    """The heap in use and the old generation over the read (0 = the request sent), with the heap's size."""
    df = r.heap
    if df is None or df.empty:
        return None
    g = _range(r)
    fig = go.Figure()
    for col, name in (("used_bytes", "heap in use"), ("old_bytes", "old generation")):
        fig.add_scatter(x=df["t_s"], y=df[col] / (1 << 20), mode="lines+markers", name=name, line_shape="hv")
    fig.add_hline(y=r.heap_bytes / (1 << 20), line_dash="dot", annotation_text="heap (-Xmx)")
    if g["stream_s"]:
        fig.add_vrect(x0=0, x1=g["stream_s"], fillcolor="lightblue", opacity=0.2, line_width=0)
    if g["ttfb_s"]:
        fig.add_vline(x=g["ttfb_s"], line_dash="dash", annotation_text="first byte")
    fig.update_layout(
        title="The server's heap over the range read (shaded: the read)",
        xaxis_title="seconds since the request",
        yaxis_title="MiB",
        height=380,
    )
    return fig


def heap(r) -> Section:
    """The heap over the read: the figure and whether it stayed flat."""
    return Section([p for p in (heap_figure(r), heap_sentence(r)) if p is not None])


def findings(r) -> list[str]:
    """The Findings list's lines: the fill, the read, the check, the heap."""
    return [fill_sentence(r), read_sentence(r), check_sentence(r), heap_sentence(r)]


def answer(r) -> Finding:
    """The notebook's answer: does the server stream the whole range, and how fast."""
    g, h = _range(r), r.heap_summary
    if g["status"] != 200 or g["error"]:
        sentence = read_sentence(r)
    else:
        check = "as the course asks" if g["ok"] else f"with {len(g['faults'])} faults in the chunks"
        flat = {True: "with a flat heap", False: "holding the range in its heap", None: "(heap not judged)"}[
            h.get("flat")
        ]
        sentence = (
            f"The whole range ({fmt.mib(g['payload_bytes'])}, {r.fill['bytes'] / r.heap_bytes:.2f} x the heap) "
            f"came back in {g['stream_s']:.2f} s {check}, {flat}."
        )
    mib_s = g["bytes_per_s"] / (1 << 20) if g["bytes_per_s"] and g["status"] == 200 else None
    return Finding(
        sentence,
        key_number={"label": "range read", "value": mib_s, "unit": "MiB/s"},
        preview=heap_figure(r),
    )
