"""The report's index page (``index.html``) and its machine-readable twin (``report.json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>perflab report {{ r.started }} ({{ r.plan }})</title>
<style>
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1100px; padding: 0 16px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #eee; }
th { background: #f6f6f6; font-weight: 600; }
.ok { color: #1a7f37; font-weight: 600; } .failed { color: #c62828; font-weight: 600; }
.err { color: #c62828; font-family: monospace; white-space: pre-wrap; font-size: 12px; }
code, .mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
details { margin: 2px 0; } summary { cursor: pointer; color: #555; }
.muted { color: #777; } .banner { padding: 8px 12px; border-radius: 4px; margin: 12px 0; }
.banner.failed { background: #fdecea; } .banner.ok { background: #e8f5e9; }
img.shot { max-width: 240px; border: 1px solid #ccc; }
</style>
</head>
<body>
<h1>perflab lab report</h1>
<div class="muted">plan <b>{{ r.plan }}</b>{% if r.plan_description %} &mdash; {{ r.plan_description }}{% endif %}
&middot; started {{ r.started }} UTC &middot; {{ "%.0f"|format(r.seconds) }} s in total</div>

{% if failed %}
<div class="banner failed">{{ failed|length }} of {{ r.notebooks|length }} notebooks failed:
{% for n in failed %}<b>{{ n.notebook }}</b>{% if not loop.last %}, {% endif %}{% endfor %}. Their pages show the
outputs up to the failing cell; the other notebooks are complete.</div>
{% else %}
<div class="banner ok">All {{ r.notebooks|length }} notebooks ran to the end.</div>
{% endif %}

<h2>Notebooks</h2>
<table>
<tr><th>#</th><th>notebook</th><th>question</th><th>status</th><th>time</th><th>runs recorded</th></tr>
{% for n in r.notebooks %}
<tr>
<td>{{ loop.index }}</td>
<td>{% if n.html %}<a href="{{ n.html }}">{{ n.title }}</a>{% else %}{{ n.title }}{% endif %}<br>
<span class="muted mono">{{ n.notebook }}</span>{% if n.ipynb %} &middot; <a class="mono" href="{{ n.ipynb }}">.ipynb</a>{% endif %}</td>
<td>{{ n.question|inline_code }}</td>
<td>{% if n.status == "ok" and not n.export_error %}<span class="ok">ok</span>{% else %}<span class="failed">failed</span>{% endif %}
{% if n.error %}<div class="err">{{ n.error }}{% if n.error_cell is not none %} (cell {{ n.error_cell }}){% endif %}</div>{% endif %}
{% if n.export_error %}<div class="err">export: {{ n.export_error }}</div>{% endif %}
{% if n.browser %}<div class="muted">chromium: {{ n.browser.summary }}</div>{% endif %}</td>
<td>{{ "%.0f"|format(n.seconds) }} s{% if n.html_bytes %}<br><span class="muted">{{ "%.1f"|format(n.html_bytes / 1048576) }} MB page</span>{% endif %}</td>
<td>{% if n.runs %}<details><summary>{{ n.runs|length }} runs</summary>
{% for run in n.runs %}<a class="mono" href="{{ run.path }}/">{{ run.id }}</a>{% if run.status and run.status != "ok" %} <span class="failed">{{ run.status }}</span>{% endif %}<br>{% endfor %}
</details>{% else %}<span class="muted">none</span>{% endif %}</td>
</tr>
{% endfor %}
</table>

<h2>Parameters</h2>
<p class="muted">What each notebook ran with: its parameters cell's defaults, overridden by the plan (bold).</p>
<table>
<tr><th>notebook</th><th>parameters</th></tr>
{% for n in r.notebooks %}
<tr><td class="mono">{{ n.notebook }}</td><td class="mono">
{% for k, v in n.effective_parameters.items() %}{% if k in n.parameters %}<b>{{ k }}={{ v }}</b>{% else %}{{ k }}={{ v }}{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}
</td></tr>
{% endfor %}
</table>

<h2>Where and with what it ran</h2>
<table>
<tr><th>git commit</th><td class="mono">{{ r.git.commit }}{% if r.git.branch %} ({{ r.git.branch }}){% endif %}{% if r.git.dirty %} <b>with uncommitted changes</b>{% endif %}</td></tr>
<tr><th>machine</th><td>{{ r.machine.cores }} cores, {{ r.machine.cpu_model }}, {{ r.machine.memory_gib }} GiB,
{{ r.machine.os }}, kernel {{ r.machine.kernel }} ({{ r.machine.arch }}), host {{ r.machine.hostname }}</td></tr>
<tr><th>versions</th><td class="mono">{% for k, v in r.versions.items() %}{{ k }} {{ v }}{% if not loop.last %}<br>{% endif %}{% endfor %}</td></tr>
<tr><th>command</th><td class="mono">{{ r.command }}</td></tr>
<tr><th>raw data</th><td class="mono">{{ r.data_root }} (runs linked above, relative to this folder)</td></tr>
<tr><th>browser check</th><td>{{ r.browser_check }}</td></tr>
</table>

{% if shots %}
<h2>Screenshots</h2>
<p class="muted">How headless chromium rendered each page (first screen), in <span class="mono">screenshots/</span>.</p>
{% for name, path in shots %}<a href="{{ path }}"><img class="shot" src="{{ path }}" alt="{{ name }}" title="{{ name }}"></a> {% endfor %}
{% endif %}

<p class="muted">Machine-readable: <a href="report.json">report.json</a>.</p>
</body>
</html>
"""


def _inline_code(text: str) -> Markup:
    """Escape, then render Markdown's `code` spans as <code>."""
    escaped = str(escape(text or ""))
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))


def render(report) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    env.filters["inline_code"] = _inline_code
    shots = [(n.notebook, n.browser["screenshot"]) for n in report.notebooks
             if n.browser and n.browser.get("screenshot")]
    return env.from_string(TEMPLATE).render(r=report, failed=report.failed, shots=shots)


def write(report, folder: Path) -> Path:
    folder = Path(folder)
    (folder / "report.json").write_text(json.dumps(report.to_json(), indent=2, default=str))
    page = folder / "index.html"
    page.write_text(render(report), encoding="utf-8")
    return page
