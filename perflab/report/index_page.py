"""The report's index page (``index.html``) and its machine-readable twin (``report.json``).

The page leads with the results: each notebook's finding (its answer in one sentence, the key
number with its interval, the validity level, a link), the breakpoints of all notebooks in one
table and one chart, and small previews of the notebooks' figures. The record follows: status and
time of each notebook, its runs, its parameters, the machine, versions and git commit, screenshots.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import nbformat
from markupsafe import Markup, escape

from .. import fmt, i18n
from ..analysis import findings as fnd
from ..analysis.breakpoints import breakpoint_overview
from . import aim, facts, stage
from .export import ensure_plotly_js

TEMPLATE = r"""<!DOCTYPE html>
<html lang="{{ lang }}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{{ _("perflab report {started} ({plan})", started=started, plan=r.plan) }}</title>
{% if plotly_js %}<script src="{{ plotly_js }}"></script>{% endif %}
<style>
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
h2.record { margin-top: 48px; color: #555; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #eee; }
th { background: #f6f6f6; font-weight: 600; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; font-weight: 600; } .failed { color: #c62828; font-weight: 600; }
.err { color: #c62828; font-family: monospace; white-space: pre-wrap; font-size: 12px; }
code, .mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
details { margin: 2px 0; } summary { cursor: pointer; color: #555; }
.muted { color: #777; } .small { font-size: 12px; } .banner { padding: 8px 12px; border-radius: 4px; margin: 12px 0; }
.banner.failed { background: #fdecea; } .banner.ok { background: #e8f5e9; }
.answer { font-size: 14px; } .key { white-space: nowrap; }
.findings td:first-child { width: 190px; } .findings td.validity { width: 110px; }
.previews { display: grid; grid-template-columns: repeat(auto-fill, minmax(350px, 1fr)); gap: 12px; }
.card { border: 1px solid #e3e3e3; border-radius: 4px; padding: 6px 8px; }
.card .plotly-graph-div { height: 220px; }
img.shot { max-width: 240px; border: 1px solid #ccc; }
.caveat { padding: 6px 10px; background: #fff8e1; border-left: 4px solid #f0b400; }
.lead { padding: 8px 12px; margin: 12px 0; border: 1px solid #c8dcf0; border-left: 4px solid #1f77b4; background: #f4f9ff; }
.lead .answer { font-size: 16px; margin: 4px 0; }
</style>
</head>
<body>
<h1>{{ _("perflab lab report") }}</h1>
<div class="muted">{{ _("plan") }} <b>{{ r.plan }}</b>{% if r.plan_description %} &mdash; {{ _(r.plan_description) }}{% endif %}{% if r.target %} &middot; {{ _("target:") }} <span class="mono">{{ r.target }}</span>{% endif %}
&middot; {{ _("started {started} UTC", started=started) }} &middot; {{ _("{seconds} s in total", seconds=dec(r.seconds)) }}
&middot; {{ _("commit") }} <span class="mono">{{ (r.git.commit or "unknown")[:10] }}</span>{% if r.git.dirty %} {{ _("(with uncommitted changes)") }}{% endif %}
&middot; {{ cores(r.machine.cores) }}{% if r.load_start %} &middot; {{ _("load average {start} at the start, {end} at the end", start=r.load_start[0], end=(r.load_end or ["?"])[0]) }}{% endif %}</div>
{% if r.caveat %}<p class="caveat">{{ _(r.caveat)|inline_code }}</p>{% endif %}
{% if asks %}
<h2 id="stage">{{ _("What stage {n} asks", n=r.stage) }}</h2>
<ul class="asks">
{% for a in asks %}<li>{{ a.ask }} &mdash; {% if a.status == "answered" %}<span class="ok">{{ _("answered") }}</span>{% if a.html %}: <a href="{{ a.html }}">{{ a.title }}</a>{% endif %}{% elif a.status == "server fault" %}<span class="failed">{{ _("your server's fault") }}</span>: {{ a.why }}{% elif a.status == "not measured" %}<span class="failed">{{ _("not measured") }}</span>: {{ a.why|inline_code }}{% elif a.status == "failed" %}<span class="failed">{{ _("not answered: the notebook failed") }}</span>{% if a.why %} <span class="err">{{ a.why }}</span>{% endif %}{% else %}<span class="muted">{{ _("not answered") }}: {{ a.why|inline_code }}</span>{% endif %}</li>
{% endfor %}</ul>
{% endif %}
{% if lead %}
<div class="lead" id="lead"><div class="muted small">{% if lead.html %}<a href="{{ lead.html }}">{{ _(lead.title) }}</a>{% else %}{{ _(lead.title) }}{% endif %}</div>
<p class="answer">{{ answer(lead)|inline_code }}</p>
{% if lead.finding.key_number and english %}<div><span class="muted small">{{ lead.finding.key_number.label }}</span> <b>{{ key_text(lead.finding.key_number) }}</b> &middot; {{ badge(lead.validity, validity_reasons(lead)) }}</div>{% endif %}</div>
{% endif %}

{% if failed %}
<div class="banner failed">{{ _("{failed} of {total} notebooks failed:", failed=failed|length, total=r.notebooks|length) }}
{% for n in failed %}<b>{{ n.notebook }}</b>{% if not loop.last %}, {% endif %}{% endfor %}. {{ _("Their pages show the outputs up to the failing cell; the other notebooks are complete.") }}</div>
{% else %}
<div class="banner ok">{% if skipped %}{{ _("All {n} notebooks that apply ran to the end.", n=r.notebooks|length - skipped|length) }}{% else %}{{ _("All {n} notebooks ran to the end.", n=r.notebooks|length) }}{% endif %}</div>
{% endif %}
{% if skipped %}
<div class="banner">{% if r.target %}{{ _("{skipped} of {total} notebooks do not apply to {target} and were not run:", skipped=skipped|length, total=r.notebooks|length, target=r.target) }}{% else %}{{ _("{skipped} of {total} notebooks do not apply to this target and were not run:", skipped=skipped|length, total=r.notebooks|length) }}{% endif %}
{% for n in skipped %}<b>{{ n.notebook }}</b>{% if not loop.last %}, {% endif %}{% endfor %}.</div>
{% endif %}

<h2 id="findings">{{ _("Findings") }}</h2>
<table class="findings">
<tr><th>{{ _("notebook") }}</th><th>{{ _("answer") }}</th>{% if english %}<th>{{ _("key number") }}</th>{% endif %}<th>{{ _("validity") }}</th></tr>
{% for n in r.notebooks %}
<tr>
<td>{% if n.html %}<a href="{{ n.html }}">{{ _(n.title) }}</a>{% else %}{{ _(n.title) }}{% endif %}<br><span class="muted mono">{{ n.notebook }}</span></td>
<td class="answer">{% if n.finding %}{{ answer(n)|inline_code }}{% elif n.status == "not applicable" %}<span class="muted">{{ _(n.error)|inline_code }}</span>{% elif n.status == "server fault" %}<span class="failed">{{ _("your server's fault") }}</span>: {{ fault(n.error) }}{% elif n.status != "ok" %}<span class="failed">{{ _("failed") }}</span>
 {{ _("before its finding") }}{% if n.error %}: <span class="err">{{ n.error }}</span>{% endif %}{% else %}<span class="muted">{{ _("the notebook states no finding") }}</span>{% endif %}</td>
{% if english %}<td class="key">{% if n.finding and n.finding.key_number %}<span class="muted small">{{ n.finding.key_number.label }}</span><br>
<b>{{ key_text(n.finding.key_number) }}</b>{% endif %}</td>{% endif %}
<td class="validity">{{ badge(n.validity, validity_reasons(n)) }}{% if n.runs_validity %}<div class="muted small">{{ runs_validity_text(n) }}</div>{% endif %}</td>
</tr>
{% endfor %}
</table>
<p class="muted small">{{ _("Validity: the lab's judgement of the runs behind a finding (valid, suspect, invalid); \"not assessed\" when the runs recorded none. Hover a level for its reasons.") }}</p>

{% if breakpoints %}
<h2 id="breakpoints">{{ _("Breakpoints") }}</h2>
<table>
<tr><th>{{ _("workload") }}</th><th>{{ _("connections") }}</th><th>{{ _("mode") }}</th><th>{{ _("breakpoint") }}</th><th>{{ _("interval") }}</th><th>{{ _("outcome") }}</th><th>{{ _("validity") }}</th><th>{{ _("from") }}</th></tr>
{% for b in breakpoints %}
<tr><td>{{ b.workload }}</td><td class="num">{{ b.connections or "" }}</td><td>{{ b.mode or "" }}</td>
<td class="num">{% if b.rate is not none %}<b>{{ num(b.rate) }}</b> {{ _("req/s") }}{% if b.held %}<br><span class="small">{{ hold_note(b) }}</span>{% endif %}{% else %}<span class="failed">{{ no_breakpoint(b) }}</span>{% endif %}</td><td class="num">{{ interval(b.interval) }}</td>
<td>{{ _(b.verdict) if b.verdict else "" }}</td><td>{{ badge(b.validity) }}</td>
<td class="small">{% if b.page %}<a href="{{ b.page }}">{{ b.notebook }}</a>{% else %}{{ b.notebook }}{% endif %}{% if b.run_path %} &middot; <a class="mono" href="{{ b.run_path }}/">run</a>{% endif %}</td></tr>
{% endfor %}
</table>
{% if overview %}<div class="card"><div id="breakpoint-overview" class="plotly-graph-div" style="height:{{ overview_height }}px"></div></div>{% endif %}
{% endif %}
{% if estimates %}
<h2 id="ramp-estimates">{{ _("Ramp estimates") }}</h2>
<p class="muted small">{{ _("One exponential ramp each, no fixed-rate probes: an estimate without an interval, not a breakpoint, and no difference is claimed between them.") }}</p>
<table>
<tr><th>{{ _("workload") }}</th><th>{{ _("connections") }}</th><th>{{ _("mode") }}</th><th>{{ _("estimate") }}</th><th>{{ _("validity") }}</th><th>{{ _("from") }}</th></tr>
{% for b in estimates %}
<tr><td>{{ b.workload }}</td><td class="num">{{ b.connections or "" }}</td><td>{{ b.mode or "" }}</td>
<td class="num">{% if b.rate is not none %}~{{ num(b.rate) }} {{ _("req/s") }}{% else %}<span class="failed">{{ _("broke at once") }}</span>{% endif %}</td><td>{{ badge(b.validity) }}</td>
<td class="small">{% if b.page %}<a href="{{ b.page }}">{{ b.notebook }}</a>{% else %}{{ b.notebook }}{% endif %}{% if b.run_path %} &middot; <a class="mono" href="{{ b.run_path }}/">run</a>{% endif %}</td></tr>
{% endfor %}
</table>
{% endif %}

{% if previews %}
<h2 id="previews">{{ _("At a glance") }}</h2>
<div class="previews">
{% for p in previews %}<div class="card"><div class="small"><a href="{{ p.href }}">{{ _(p.title) }}</a></div>
<div id="preview-{{ loop.index }}" class="plotly-graph-div"></div></div>
{% endfor %}
</div>
{% endif %}

{% if method %}<h2 id="method">{{ _("Method") }}</h2>
<ul>{% for line in method %}<li>{{ _(line) }}</li>{% endfor %}</ul>{% endif %}
<h2 class="record" id="record">{{ _("The record") }}</h2>
<h2>{{ _("Notebooks") }}</h2>
<table>
<tr><th>#</th><th>{{ _("notebook") }}</th><th>{{ _("question") }}</th><th>{{ _("status") }}</th><th>{{ _("time") }}</th><th>{{ _("runs recorded") }}</th></tr>
{% for n in r.notebooks %}
<tr>
<td>{{ loop.index }}</td>
<td>{% if n.html %}<a href="{{ n.html }}">{{ _(n.title) }}</a>{% else %}{{ _(n.title) }}{% endif %}<br>
<span class="muted mono">{{ n.notebook }}</span>{% if n.ipynb %} &middot; <a class="mono" href="{{ n.ipynb }}">.ipynb</a>{% endif %}</td>
<td>{{ question(n)|inline_code }}</td>
<td>{% if n.status == "ok" and not n.export_error %}<span class="ok">{{ _("ok") }}</span>{% elif n.status == "not applicable" %}<span class="muted">{{ _("not applicable") }}</span>{% elif n.status == "server fault" %}<span class="failed">{{ _("your server's fault") }}</span>{% else %}<span class="failed">{{ _("failed") }}</span>{% endif %}
{% if n.error and n.status != "not applicable" %}<div class="err">{{ n.error }}{% if n.error_cell is not none %} ({{ _("cell") }} {{ n.error_cell }}){% endif %}</div>{% endif %}
{% if n.export_error %}<div class="err">{{ _("export:") }} {{ n.export_error }}</div>{% endif %}
{% if n.missing_files %}<div class="err">{{ _("files not found for the page:") }} {{ n.missing_files|join(", ") }}</div>{% endif %}
{% if n.browser and english %}<div class="muted small">chromium: {{ n.browser.summary }}</div>{% endif %}</td>
<td>{{ _("{seconds} s", seconds=dec(n.seconds)) }}{% if n.html_bytes %}<br><span class="muted">{{ _("{mb} MB page", mb=dec(n.html_bytes / 1048576, 2)) }}</span>{% endif %}
{% if n.flamegraphs %}<br><span class="muted">{{ plural("{n} flame graph", "{n} flame graphs", n.flamegraphs|length) }}</span>{% endif %}</td>
<td>{% if n.runs %}<details><summary>{{ plural("{n} run", "{n} runs", n.runs|length) }}</summary>
{% for run in n.runs %}<a class="mono" href="{{ run.path }}/">{{ run.id }}</a>{% if run.status and run.status != "ok" %} <span class="failed">{{ run.status }}</span>{% endif %}{% if run.validity and run.validity != "valid" %} {{ badge(run.validity, run.validity_reasons) }}{% endif %}<br>{% endfor %}
</details>{% else %}<span class="muted">{{ _("none") }}</span>{% endif %}</td>
</tr>
{% endfor %}
</table>

<h2>{{ _("Parameters") }}</h2>
<p class="muted">{{ _("What each notebook ran with: its parameters cell's defaults, overridden by the plan (bold).") }}</p>
<table>
<tr><th>{{ _("notebook") }}</th><th>{{ _("parameters") }}</th></tr>
{% for n in r.notebooks %}
<tr><td class="mono">{{ n.notebook }}</td><td class="mono">
{% for k, v in n.effective_parameters.items() %}{% if k in n.parameters %}<b>{{ k }}={{ v }}</b>{% else %}{{ k }}={{ v }}{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}
</td></tr>
{% endfor %}
</table>

<h2>{{ _("Where and with what it ran") }}</h2>
<table>
<tr><th>{{ _("git commit") }}</th><td class="mono">{{ r.git.commit }}{% if r.git.branch %} ({{ r.git.branch }}){% endif %}{% if r.git.dirty %} <b>{{ _("with uncommitted changes") }}</b>{% endif %}</td></tr>
<tr><th>{{ _("machine") }}</th><td>{{ cores(r.machine.cores) }}, {{ r.machine.cpu_model }}, {{ _("{gib} GiB", gib=gib(r.machine.memory_bytes)) }},
{{ r.machine.os }}, {{ _("kernel") }} {{ r.machine.kernel }} ({{ r.machine.arch }}), {{ _("host") }} <span class="mono">{{ r.machine.hostname }}</span></td></tr>
{% if r.load_start %}<tr><th>{{ _("machine load") }}</th><td>{{ _("load average (1, 5, 15 min) {start} when the batch started, {end} when it ended: other processes on the machine share its cores with the experiments", start=r.load_start|join(", "), end=(r.load_end or [])|join(", ")) }}</td></tr>{% endif %}
<tr><th>{{ _("versions") }}</th><td class="mono">python {{ r.python.python }}{% for k, v in (r.tools or {}).items() if v %}<br>{{ k }} {{ v }}{% endfor %}{% for k, v in (r.python.packages or {}).items() if v %}<br>{{ k }} {{ v }}{% endfor %}</td></tr>
<tr><th>{{ _("command") }}</th><td class="mono">{{ r.command }}</td></tr>
<tr><th>{{ _("raw data") }}</th><td><span class="mono">{{ r.data_root }}</span> {{ _("(runs linked above, relative to this folder)") }}</td></tr>
{% if english %}<tr><th>browser check</th><td>{{ r.browser_check }}</td></tr>{% endif %}
<tr><th>Markdown</th><td>{% if r.markdown.startswith("report.md") %}<a href="report.md">report.md</a>{% if english %}: {{ r.markdown[9:] }}{% endif %}{% elif english %}{{ r.markdown }}{% else %}<span class="err">{{ r.markdown }}</span>{% endif %}</td></tr>
</table>

{% if shots %}
<h2>{{ _("Screenshots") }}</h2>
<p class="muted">{{ _("How headless chromium rendered each page (first screen):") }} <span class="mono">screenshots/</span></p>
{% for name, path in shots %}<a href="{{ path }}"><img class="shot" src="{{ path }}" alt="{{ name }}" title="{{ name }}"></a> {% endfor %}
{% endif %}

<p class="muted">{{ _("Machine-readable:") }} <a href="report.json">report.json</a>.</p>
{% if figures %}
<script>
/* Previews are static thumbnails; each links to its page. */
(function () {
  var figures = {{ figures }};
  Object.keys(figures).forEach(function (id) {
    var f = figures[id], el = document.getElementById(id);
    if (el && window.Plotly) Plotly.newPlot(el, f.data, f.layout, {staticPlot: id !== 'breakpoint-overview', displayModeBar: false, responsive: true});
  });
})();
</script>
{% endif %}
</body>
</html>
"""


def _inline_code(text: str) -> Markup:
    """Escape, then render Markdown's `code` spans as <code>."""
    escaped = str(escape(text or ""))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))


def _script_json(obj) -> Markup:
    """JSON safe inside a <script> element ('</' cannot close it)."""
    return Markup(json.dumps(obj, separators=(",", ":"), default=str).replace("</", "<\\/"))


def _runs_validity_text(t: i18n.Language, n) -> str:
    counts: dict = {}
    for r in n.runs:
        counts[r.get("validity")] = counts.get(r.get("validity"), 0) + 1
    items = (t("{n} {level}", n=c, level=facts.validity(t, v)) for v, c in counts.items())
    return t("runs: {counts}", counts=", ".join(items))


def _validity_reasons(n) -> list[str]:
    return [f"{r['id']}: {why}" for r in n.runs for why in (r.get("validity_reasons") or [])]


def _breakpoint_rows(report) -> list[dict]:
    pages = {n.notebook: n.html for n in report.notebooks}
    runs = {r["id"]: r["path"] for n in report.notebooks for r in n.runs}
    return [{**b, "page": pages.get(b["notebook"]), "run_path": runs.get(b.get("run_id"))} for b in report.breakpoints]


def lead(report):
    """The notebook whose finding heads the page (your stages compared), when it ran and stated one."""
    return next((n for n in report.notebooks if n.notebook == report.lead and n.finding), None)


def asks(t: i18n.Language, report, folder: Path | None = None) -> list[dict]:
    """A course stage's asks and what the report did about each (:func:`perflab.report.stage.told`; with the
    report's ``folder``, an ask that needs a measurement is checked on the runs), with the page and the title of
    the notebook that answers it; none for a report that answers no stage."""
    asked = stage.of(getattr(report, "stage", None))
    if asked is None:
        return []
    ran = {n.notebook: {"status": n.status, "error": n.error} for n in report.notebooks}
    runs = None
    if folder is not None:
        r = report.to_json()
        runs = {n["notebook"]: facts.metas(r, folder, n) for n in r["notebooks"]}
    pages = {n.notebook: (n.html, t(n.title)) for n in report.notebooks}
    return [
        {**a, **dict(zip(("html", "title"), pages.get(a["notebook"], (None, ""))))}
        for a in stage.told(t, asked, ran, runs)
    ]


def _told(t: i18n.Language, report, folder: Path | None) -> tuple[dict, dict]:
    """Each notebook's answer and question in the report's language when it is not English (from the records,
    :mod:`perflab.report.facts`, and the notebook's question template); empty in English (the notebooks' own)."""
    if t.code == i18n.DEFAULT or folder is None:
        return {}, {}
    r = report.to_json()
    answers, questions = {}, {}
    for n in r["notebooks"]:
        if n.get("finding"):
            answers[n["notebook"]] = facts.summary(t, n, facts.metas(r, folder, n))
        if n.get("ipynb") and (folder / n["ipynb"]).is_file():
            nb = nbformat.read(str(folder / n["ipynb"]), as_version=4)
            template = aim.template(nb, aim.YOURS if r.get("target") else aim.BUILTIN)
            questions[n["notebook"]] = aim.fill(t(template), n.get("effective_parameters") or {}, t) if template else ""
    return answers, questions


def render(report, plotly_js: str | None = "assets/plotly.min.js", folder: Path | None = None) -> str:
    """The index page in the report's language (``report.language``); ``folder``, the report's, is where the
    runs and notebooks are read from for a language other than English."""
    t = i18n.language(getattr(report, "language", None) or i18n.DEFAULT)
    english = t.code == i18n.DEFAULT
    answers, questions = _told(t, report, folder)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    env.filters["inline_code"] = _inline_code
    shots = [
        (n.notebook, n.browser["screenshot"]) for n in report.notebooks if n.browser and n.browser.get("screenshot")
    ]
    rows = _breakpoint_rows(report)
    breakpoints = [b for b in rows if b.get("verdict") != fnd.RAMP_ESTIMATE]
    estimates = [b for b in rows if b.get("verdict") == fnd.RAMP_ESTIMATE]
    figures, previews = {}, []
    overview_height = 0
    if breakpoints and any(b.get("rate") is not None for b in breakpoints):
        fig = breakpoint_overview(breakpoints)
        overview_height = int(fig.layout.height)
        figures["breakpoint-overview"] = fnd.thumbnail(fig, height=overview_height)
        figures["breakpoint-overview"]["layout"].update(showlegend=True, margin={"l": 120, "r": 10, "t": 30, "b": 40})
    for n in report.notebooks:
        prev = (n.finding or {}).get("preview")
        if prev:
            previews.append({"title": n.title, "href": n.html or "#"})
            figures[f"preview-{len(previews)}"] = prev
    return env.from_string(TEMPLATE).render(
        r=report,
        lead=lead(report),
        asks=asks(t, report, folder),
        fault=lambda error: facts.server_fault(t, error),
        failed=report.failed,
        skipped=[n for n in report.notebooks if n.status == "not applicable"],
        shots=shots,
        breakpoints=breakpoints,
        estimates=estimates,
        previews=previews,
        overview="breakpoint-overview" in figures,
        overview_height=overview_height,
        figures=_script_json(figures) if figures else None,
        plotly_js=plotly_js if figures else None,
        key_text=fnd.key_number_text,
        num=fmt.number if english else t.number,
        dec=t.number,
        interval=fmt.interval if english else lambda iv: facts.interval(t, iv),
        hold_note=fnd.hold_note if english else lambda b: t("held from fresh starts"),
        no_breakpoint=fnd.no_breakpoint if english else lambda b: facts.breakpoint_cell(t, b),
        gib=lambda b: t.number(b / 2**30, 1) if b else "?",
        badge=lambda v, reasons=(): Markup(fnd.validity_badge(v, reasons, facts.validity(t, v))),
        runs_validity_text=lambda n: _runs_validity_text(t, n),
        validity_reasons=_validity_reasons,
        _=t,
        plural=t.plural,
        lang=t.code,
        english=english,
        started=t.timestamp(report.started),
        cores=lambda c: t.plural("{n} core", "{n} cores", int(c or 0)),
        answer=lambda n: answers.get(n.notebook) or n.finding["answer"],
        question=lambda n: questions.get(n.notebook, n.question),
        method=facts.METHOD if report.target or not english else (),
    )


def write(report, folder: Path) -> Path:
    folder = Path(folder)
    (folder / "report.json").write_text(json.dumps(report.to_json(), indent=2, default=str))
    html = render(report, folder=folder)
    if "assets/plotly.min.js" in html:
        ensure_plotly_js(folder)
    page = folder / "index.html"
    page.write_text(html, encoding="utf-8")
    return page
