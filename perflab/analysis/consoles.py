"""A load generator's console output in a notebook, as a terminal shows it but folded: a closed
``<details>`` whose one-line summary gives requests, rate, p50/p99/max and errors."""

from __future__ import annotations

import html
import shlex
from pathlib import Path

from ..measure.wrk_output import parse_wrk_output


def console_summary(text: str) -> str:
    """One line about a load generator's console output: '3,000 requests in 1.00 s, 2,999.6 req/s,
    p50 0.117 ms, p99 0.720 ms, max 3.49 ms, 0 errors' (whatever of it the text contains)."""
    try:
        w = parse_wrk_output(text)
    except Exception:  # noqa: BLE001 - any text may be shown; the summary is a courtesy
        return ""
    parts = []
    if w.requests is not None:
        parts.append(f"{w.requests:,} requests" + (f" in {w.measured_s:.2f} s" if w.measured_s else ""))
    if w.requests_per_sec is not None:
        parts.append(f"{w.requests_per_sec:,.1f} req/s")
    for p, name in ((50, "p50"), (99, "p99"), (100, "max")):
        v = w.percentile_ms(p)
        if v == v:  # not NaN
            parts.append(f"{name} {v:.3f} ms" if v < 10 else f"{name} {v:.1f} ms")
    if w.requests is not None:
        parts.append(f"{w.errors_total:,} errors")
    return ", ".join(parts)


def console_html(text: str, title: str | None = None, max_lines: int | None = None) -> str:
    """The console output in a closed ``<details>``; its summary line says what the run did."""
    lines = text.rstrip("\n").splitlines()
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(text.splitlines()) - max_lines} more lines in the run's console.txt)"]
    summary = console_summary(text)
    head = html.escape(title) if title else "console output"
    head = f"<b>{head}</b>" + (f": {html.escape(summary)}" if summary else "")
    return (
        f"<details class='perflab-console'><summary>{head} "
        f"<span style='color:#888'>({len(text.splitlines())} lines of console output)</span></summary>"
        f"<pre style='font-size:11px;line-height:1.25;max-height:480px;overflow:auto;margin:0;padding:6px'>"
        f"{html.escape(chr(10).join(lines))}</pre></details>"
    )


#: the output mimetype a console travels in too (its title and whole text: a Markdown report shows it as a code
#: block, as the course's reports show wrk2's)
CONSOLE_MIME = "application/vnd.perflab.console+json"


def console(text: str, title: str | None = None, max_lines: int | None = None, command: str | None = None) -> dict:
    """The output a console leaves in a notebook (a section's part): :func:`console_html`, ``max_lines``
    cutting it; ``command``, the command line that printed it (a Markdown report shows it above, as the
    course's reports show the wrk2 command above its output)."""
    return {
        "text/html": console_html(text, title, max_lines),
        "text/plain": f"{title or 'console output'}: {console_summary(text)}",
        CONSOLE_MIME: {"title": title or "console output", "text": text, "command": command},
    }


def command_line(load) -> str | None:
    """The generator's command line of a load (a :class:`~perflab.measure.result.LoadResult`), as one would type
    it: the script by its name, none of the lab's own output files."""
    params, url = getattr(load, "params", None), getattr(load, "url", None)
    if params is None or not url:
        return None
    words = [Path(w).name if w == params.script else w for w in params.args(url)]
    return shlex.join([params.tool, *words])
