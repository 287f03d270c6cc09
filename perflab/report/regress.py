"""What regression checks leave for people and for CI: the gate's files (a Markdown summary for the pull
request, JUnit XML and JSON beside it) and a bisection's offline page (the chain of verdicts and the ratio of
every commit compared), from their recorded runs (:mod:`perflab.regress`; the words are
:mod:`perflab.analysis.regress`')."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path
from xml.etree import ElementTree as ET

from ..analysis import regress as words
from ..analysis.ab.verdicts import named, where
from ..records import Run
from ..records.run import clean
from .export import ensure_plotly_js

GATE_FILES = ("gate.md", "gate.xml", "gate.json")


def _run(res) -> Run:
    return res.run if hasattr(res, "run") else res


def write_gate_files(res, out_dir: str | Path | None = None) -> list[Path]:
    """``gate.md``, ``gate.xml`` (JUnit: one test case, failed on a regression, an error when undecided or not
    measured) and ``gate.json`` in the gate's run directory, and copied into ``out_dir`` when given."""
    run = _run(res)
    r = run.results
    md = words.gate_markdown(run)
    lines = words.gate_lines(run)
    check = r.get("check")
    case_name = f"{named(r['metric'])}{where(r.get('rate'))}" if r.get("metric") else "gate"
    suite = ET.Element(
        "testsuite",
        name="perflab gate",
        tests="1",
        failures=str(int(r["exit_code"] == 1)),
        errors=str(int(r["exit_code"] in (2, 3))),
        time=f"{r['seconds']:.1f}",
    )
    case = ET.SubElement(suite, "testcase", classname="perflab.gate", name=case_name, time=f"{r['seconds']:.1f}")
    verdict = words.outcome_phrase(check, "HEAD", "BASE", r.get("error"))
    if r["exit_code"] == 1:
        ET.SubElement(case, "failure", message=verdict, type="regression").text = "\n".join(lines)
    elif r["exit_code"] in (2, 3):
        ET.SubElement(
            case, "error", message=verdict, type=words.EXIT_MEANING[r["exit_code"]].replace(" ", "-")
        ).text = "\n".join(lines)
    ET.SubElement(case, "system-out").text = "\n".join(lines)
    doc = {
        "run": run.id,
        "base": run.params["base"],
        "head": run.params["head"],
        "repo": run.params["repo"],
        "outcome": r["outcome"],
        "exit_code": r["exit_code"],
        "meaning": words.EXIT_MEANING[r["exit_code"]],
        "check": check,
        "alpha": r["alpha"],
        "false_alarm_bound": r["bound"],
        "comparison": r.get("ab_run"),
        "seconds": r["seconds"],
        "error": r.get("error"),
        "lines": lines,
    }
    texts = {
        "gate.md": md,
        "gate.xml": ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n",
        "gate.json": json.dumps(clean(doc), indent=2) + "\n",
    }
    out = []
    for name in GATE_FILES:
        path = run.dir / name
        path.write_text(texts[name])
        run.meta["artifacts"][name.replace(".", "_")] = name
        out.append(path)
    run.save()
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        out = [Path(shutil.copy(p, Path(out_dir) / p.name)) for p in out]
    return out


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>perflab bisect: {title}</title>
<script src="assets/plotly.min.js"></script>
<style>
body {{ font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; color: #222; }}
h1 {{ font-size: 22px; margin-bottom: 4px; }} h2 {{ font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }}
table {{ border-collapse: collapse; width: 100%; margin: 8px 0; }}
th, td {{ text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #eee; }}
th {{ background: #f6f6f6; font-weight: 600; }} td.num {{ text-align: right; white-space: nowrap; }}
.mono {{ font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }}
.answer {{ font-size: 16px; padding: 8px 12px; background: #f6f8fa; border-left: 4px solid #d62728; }}
.muted {{ color: #777; }} .small {{ font-size: 12px; }}
.outcome-regression {{ color: #b00; font-weight: 600; }} .outcome-not-worse {{ color: #1a7f37; }}
.outcome-undecided {{ color: #9a6700; }} .outcome-skipped {{ color: #777; }}
</style>
</head>
<body>
<h1>Which commit made the server slower?</h1>
<p class="muted">{header}</p>
<p class="answer">{answer}</p>
<h2>Every commit compared with GOOD</h2>
{figure}
<h2>The chain of verdicts</h2>
<table><tr><th>step</th><th>commit</th><th>subject</th><th>against GOOD</th><th>interval</th><th>pairs</th>
<th>outcome</th><th>comparison</th></tr>
{rows}
</table>
<p class="small">{bound}</p>
{notes}
<p class="small muted">run {run_id}; every comparison is an <code>ab</code> run of its own (<code>perflab compare
&lt;run&gt;</code> shows its pairs and every verdict).</p>
</body>
</html>
"""


def bisect_page(res, path: str | Path | None = None) -> Path:
    """The bisection's offline page (``bisect.html`` in its run directory, or ``path``), with the shared
    ``assets/plotly.min.js`` beside it."""
    run = _run(res)
    path = Path(path) if path is not None else run.dir / "bisect.html"
    ensure_plotly_js(path.parent)
    commits = run.params["commits"]
    lines = words.bisect_lines(run)
    rows = []
    for k, s in enumerate(run.results["steps"], 1):
        c = commits[s["position"]]
        outcome = "skipped" if s.get("skipped") else s["outcome"]
        ratio = f"{s['ratio']:.3f}x" if s.get("ratio") else "n/a"
        ci = s.get("ci") or [None, None]
        span = f"{ci[0]:.3f}x - {ci[1]:.3f}x" if ci[0] is not None and ci[1] is not None else ""
        detail = html.escape(s.get("skipped") or "")
        rows.append(
            f"<tr><td class='num'>{k}</td><td class='mono'>{c['sha'][:10]}</td><td>{html.escape(c['subject'])}"
            f"</td><td class='num'>{ratio}</td><td class='num'>{span}</td><td class='num'>{s.get('n') or ''}"
            f"</td><td class='outcome-{outcome.replace(' ', '-')}'>{html.escape(outcome)}"
            f"{'<br><span class=small>' + detail + '</span>' if detail else ''}</td>"
            f"<td class='mono small'>{html.escape(s.get('run_id') or '')}</td></tr>"
        )
    figure = words.bisect_figure(run).to_html(full_html=False, include_plotlyjs=False)
    notes = "".join(f"<p class='small'>note: {html.escape(n)}</p>" for n in run.meta.get("warnings") or [])
    path.write_text(
        PAGE.format(
            title=html.escape(f"{commits[0]['sha'][:10]}..{commits[-1]['sha'][:10]}"),
            header=html.escape(lines[0]),
            answer=html.escape(words.answer(run)),
            figure=figure,
            rows="\n".join(rows),
            bound=html.escape(words.bisect_bound(run)),
            notes=notes,
            run_id=html.escape(run.id),
        ),
        encoding="utf-8",
    )
    run.meta["artifacts"]["page"] = path.name if path.parent == run.dir else str(path)
    run.save()
    return path
