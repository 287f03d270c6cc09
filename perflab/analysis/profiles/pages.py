"""async-profiler's own pages (flame graphs, the CPU heatmap) in a notebook: linked, not embedded, with a
static preview.

The page stays a separate file: the report copies it next to the notebook's page and links it
(:mod:`perflab.report.export`); in JupyterLab the link opens the file itself. The preview tells a reader
what is in one before opening it: a small flame graph drawn as inline SVG (plain SVG and HTML, no script,
a few kilobytes) and the hottest frames. With ``base`` the rectangles are coloured by how much each
frame's share of all samples changed from ``base`` (red grew, blue shrank), as in a differential flame
graph.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd

from ...profiling import flame
from .figures import CATEGORY_COLORS

#: The output a flame graph leaves in the notebook (its file, title and preview), which the export
#: turns into a link to a copy next to the page.
FLAMEGRAPH_MIME = "application/vnd.perflab.flamegraph+json"


def flamegraph_html(info: dict, href: str | None) -> str:
    """The block a flame graph leaves in a page: title, link (or why there is none), preview."""
    title = html.escape(info.get("title") or Path(info.get("path", "")).name)
    if href:
        link = (
            f"<a href='{html.escape(href)}' target='_blank' rel='noopener'>open the interactive flame graph</a>"
            f" <span style='color:#888'>(async-profiler's page: search, zoom)</span>"
        )
    else:
        link = f"<span style='color:#c62828'>flame graph file not found: {html.escape(info.get('path', ''))}</span>"
    return (
        f"<div class='perflab-flamegraph' style='margin:8px 0'><div style='font-weight:600'>{title}</div>"
        f"<div style='margin:2px 0 6px 0'>{link}</div>{info.get('preview_html', '')}</div>"
    )


def flamegraph(
    path: str | os.PathLike,
    title: str | None = None,
    collapsed: str | os.PathLike | None = None,
    base: str | os.PathLike | None = None,
    event: str | None = None,
) -> dict:
    """The output async-profiler's HTML flame graph (``path``) leaves in a notebook (a section's part): a link
    with a preview, not the page itself. The preview is drawn from ``collapsed`` (default: the ``.collapsed``
    file next to ``path``, as async-profiler's runs record it); ``base`` (collapsed stacks) colours it by the
    change against a base profile, for differential graphs."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"flame graph {p} does not exist")
    stacks_path = Path(collapsed) if collapsed else p.with_suffix(".collapsed")
    ev = event or (p.stem.split("-", 1)[1] if p.stem.startswith("profile-") else "cpu")
    if ev not in ("cpu", "alloc", "lock", "wall", "itimer", "ctimer"):
        ev = "cpu"
    preview = ""
    if stacks_path.is_file() and stacks_path.stat().st_size:
        stacks = flame.read_collapsed(stacks_path)
        base_stacks = flame.read_collapsed(Path(base)) if base else None
        preview = (
            "<div style='display:flex;gap:16px;flex-wrap:wrap;align-items:flex-end'>"
            f"<div>{preview_svg(stacks, ev, base=base_stacks)}</div><div>{top_frames_html(stacks)}</div></div>"
        )
    info = {
        "path": str(p.resolve()),
        "title": title or p.name,
        "event": ev,
        "preview_html": preview,
        "collapsed": str(stacks_path.resolve()) if stacks_path.is_file() else None,
    }
    try:  # in JupyterLab the link is relative to the notebook's directory, where the kernel runs
        href = os.path.relpath(p.resolve(), Path.cwd())
    except ValueError:
        href = p.resolve().as_uri()
    return {
        FLAMEGRAPH_MIME: info,
        "text/html": flamegraph_html(info, href),
        "text/plain": f"flame graph: {info['title']} ({info['path']})",
    }


# --- the preview -----------------------------------------------------------------------------------

_ROW = 15  # px per stack level
_FONT = 10  # px
_CHAR = 6.0  # px per character at that font size (approximate, for clipping labels)


def _short(frame: str) -> str:
    """``one/nio/net/Session.process`` -> ``Session.process``; native and kernel frames
    (``finish_task_switch.isra.0_[k]``, ``PhaseIdealLoop::Dominators``) and ``[selector]`` stay."""
    if frame.startswith("[") or frame.endswith("_[k]") or "::" in frame:
        return frame
    if "/" in frame:
        return frame.rsplit("/", 1)[-1]
    parts = frame.split(".")  # one.nio.net.Session.process, as some converters write Java frames
    return ".".join(parts[-2:]) if len(parts) > 2 else frame


def _nodes(stacks: pd.DataFrame, depth: int, min_share: float) -> pd.DataFrame:
    nodes = flame.icicle_nodes(stacks, min_share=min_share, max_depth=depth, threads="group")
    nodes["level"] = nodes["id"].str.count(";")
    return nodes


def _delta_colour(delta_pp: float, limit: float) -> str:
    x = max(-1.0, min(1.0, delta_pp / limit)) if limit > 0 else 0.0
    if x >= 0:  # white -> red
        return f"rgb(255,{int(255 - 180 * x)},{int(255 - 180 * x)})"
    return f"rgb({int(255 + 180 * x)},{int(255 + 180 * x)},255)"


def preview_svg(
    stacks: pd.DataFrame,
    event: str = "cpu",
    width: int = 640,
    depth: int = 14,
    min_share: float = 0.01,
    base: pd.DataFrame | None = None,
) -> str:
    """A flame graph (root at the bottom) of the ``depth`` lowest levels of ``stacks``; frames under
    ``min_share`` of all samples are left out. Colours: categories, or the change against ``base``."""
    nodes = _nodes(stacks, depth, min_share)
    if nodes.empty:
        return "<p class='perflab-muted'>no samples</p>"
    total = float(nodes.loc[nodes["id"] == "all", "value"].iloc[0]) or 1.0
    levels = int(nodes["level"].max()) + 1
    height = levels * _ROW
    deltas = None
    if base is not None:
        b = flame.icicle_nodes(base, min_share=0, threads="group").set_index("id")["share"]
        deltas = (nodes["share"] - nodes["id"].map(b).fillna(0.0)) * 100
        limit = max(float(deltas.abs().max()), 0.5)
    # x offset of each node: its parent's offset plus the widths of its earlier siblings
    x = {"all": 0.0}
    children: dict[str, list] = {}
    for row in nodes.itertuples():
        if row.parent:
            children.setdefault(row.parent, []).append(row)
    rects = []
    for row in nodes.sort_values("level").itertuples():
        x0 = x.get(row.id, 0.0)
        for child in sorted(children.get(row.id, []), key=lambda c: -c.value):
            x[child.id] = x0
            x0 += child.value / total * width
        w = row.value / total * width
        if w < 0.5:
            continue
        y = height - (row.level + 1) * _ROW
        frames = [f for f in row.id.split(";")[1:] if not f.startswith("[")]
        if deltas is not None:
            colour = _delta_colour(float(deltas[row.Index]), limit)
            change = f", {float(deltas[row.Index]):+.1f} pp"
        else:
            cat = flame.classify_stack(frames, event) if row.id != "all" else "other"
            colour = CATEGORY_COLORS.get(cat, "#c7c7c7")
            change = ""
        label = "all" if row.id == "all" else _short(row.label)
        tip = f"{row.label} — {row.share:.1%} of samples{change}"
        text = ""
        fits = int((w - 4) / _CHAR)
        if fits >= 3:
            shown = label if len(label) <= fits else label[: fits - 1] + "…"
            text = (
                f"<text x='{x.get(row.id, 0.0) + 2:.1f}' y='{y + _ROW - 4}' font-size='{_FONT}'>"
                f"{html.escape(shown)}</text>"
            )
        rects.append(
            f"<g><title>{html.escape(tip)}</title><rect x='{x.get(row.id, 0.0):.1f}' y='{y}' "
            f"width='{w:.1f}' height='{_ROW - 1}' fill='{colour}' stroke='#fff' stroke-width='0.5'/>{text}</g>"
        )
    return (
        f"<svg class='perflab-flame-preview' xmlns='http://www.w3.org/2000/svg' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' font-family='sans-serif' role='img' "
        f"aria-label='flame graph preview'>{''.join(rects)}</svg>"
    )


def top_frames_html(stacks: pd.DataFrame, n: int = 6) -> str:
    """The ``n`` frames with the most self samples, as a small table (share of all samples)."""
    frames = flame.frames_table(stacks)
    if frames.empty:
        return ""
    top = frames[frames["self"] > 0].sort_values("self_share", ascending=False).head(n)
    rows = "".join(
        f"<tr><td title='{html.escape(str(r.frame))}'><code>{html.escape(_short(str(r.frame)))}</code></td>"
        f"<td style='text-align:right'>{r.self_share:.1%}</td></tr>"
        for r in top.itertuples()
    )
    return f"<table class='perflab-top-frames'><tr><th>hottest frames (self)</th><th>share</th></tr>{rows}</table>"
