"""The page of a comparison (:mod:`.compare`): the differences first, each with what its test found;
then breakpoints, findings side by side, and each pair of runs with its figures and flame graphs.

Figures are drawn from JSON with the page's ``assets/plotly.min.js`` when their section is opened, so
a comparison of two whole reports stays quick to load.
"""

from __future__ import annotations

import html
import json

import jinja2
from markupsafe import Markup

from .. import fmt
from ..analysis import findings as fnd
from ..stats.methods import Method
from ..stats.significance import ALPHA, MIN_N, SAMPLE_TEST, Direction

DIRECTION_STYLE = {
    Direction.HIGHER: ("#b35900", "#fff1e0"),
    Direction.LOWER: ("#0b5cad", "#e6f0fb"),
    Direction.NONE: ("#1a7f37", "#e8f5e9"),
    Direction.EQUIVALENT: ("#1a7f37", "#e8f5e9"),
    Direction.TOO_FEW: ("#666", "#f0f0f0"),
    Direction.NOT_TESTED: ("#888", "#fafafa"),
}
_ORDER = {
    Direction.HIGHER: 0,
    Direction.LOWER: 0,
    Direction.NONE: 1,
    Direction.EQUIVALENT: 1,
    Direction.TOO_FEW: 2,
    Direction.NOT_TESTED: 3,
}


def _method_text(method: str) -> str:
    return Method(method).description if method in Method._value2member_map_ else method


def direction_badge(d: Direction) -> str:
    fg, bg = DIRECTION_STYLE.get(d, ("#444", "#eee"))
    text = {Direction.HIGHER: "B higher", Direction.LOWER: "B lower"}.get(d, str(d))
    return (
        f"<span class='direction direction-{html.escape(str(d).replace(' ', '-'))}' style='color:{fg};"
        f"background:{bg};border-radius:3px;padding:0 6px;white-space:nowrap;font-weight:600'>"
        f"{html.escape(text)}</span>"
    )


def _num(v, unit: str = "") -> str:
    """A table cell: the unit is in its own column, so milliseconds stay milliseconds here."""
    if v is None or (isinstance(v, float) and v != v):
        return "n/a"
    return f"{v:,.3f}" if "ms" in unit and v < 10 else fmt.number(v)


def summary_table(rows, pair_column: bool = True) -> str:
    """The rows as an HTML table (also what a notebook shows for a :class:`.compare.Comparison`)."""
    if not rows:
        return "<p class='muted'>nothing to compare</p>"
    head = (
        "<tr>"
        + ("<th>runs</th>" if pair_column else "")
        + "<th>what</th><th>A</th><th>B</th><th>unit</th><th>B against A</th><th>evidence</th><th>method</th></tr>"
    )
    body = "".join(
        "<tr>"
        + (f"<td class='mono'>{html.escape(r.pair)}</td>" if pair_column else "")
        + f"<td>{html.escape(r.metric)}</td><td class='num'>{_num(r.a, r.unit)}</td>"
        f"<td class='num'>{_num(r.b, r.unit)}</td><td class='muted'>{html.escape(r.unit)}</td>"
        f"<td>{direction_badge(r.direction)}</td><td class='small'>{html.escape(r.evidence)}</td>"
        f"<td class='small method' title='{html.escape(_method_text(r.method))}'>{html.escape(r.method)}</td></tr>"
        for r in rows
    )
    return f"<table class='rows'>{head}{body}</table>"


TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>perflab comparison: {{ c.b.label }} against {{ c.a.label }}</title>
<script src="assets/plotly.min.js"></script>
<style>
body { font: 14px/1.45 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 24px auto;
       max-width: 1180px; padding: 0 16px; color: #222; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #eee; }
th { background: #f6f6f6; font-weight: 600; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
code, .mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.muted { color: #777; } .small { font-size: 12px; } .note { color: #9a6700; }
details.pair { border: 1px solid #e3e3e3; border-radius: 4px; margin: 8px 0; padding: 4px 10px; }
details.pair > summary { cursor: pointer; font-weight: 600; padding: 4px 0; }
.figure { margin: 6px 0; } .flame { margin: 10px 0; }
</style>
</head>
<body>
<h1>perflab comparison</h1>
<p><b>B</b> <span class="mono">{{ c.b.path }}</span> against <b>A</b> <span class="mono">{{ c.a.path }}</span></p>
<table>
<tr><th></th><th>A</th><th>B</th></tr>
<tr><th>what</th><td>{{ side_text(c.a) }}</td><td>{{ side_text(c.b) }}</td></tr>
<tr><th>git commit</th><td class="mono">{{ c.a.commit or "unknown" }}</td><td class="mono">{{ c.b.commit or "unknown" }}</td></tr>
{% if c.a.kind == "report" %}<tr><th>plan, started</th><td>{{ c.a.report.plan }}, {{ c.a.report.started }}</td><td>{{ c.b.report.plan }}, {{ c.b.report.started }}</td></tr>{% endif %}
</table>

<h2>Differences</h2>
{% if single %}
{{ table(c.rows, false) }}
{% elif found %}
<p>{{ found|length }} of the {{ tested }} comparisons that could be tested show a difference{% if too_few %}
({{ too_few }} more had too few samples to test){% endif %}:</p>
{{ table(found, true) }}
{% else %}
<p>None of the {{ tested }} comparisons that could be tested shows a difference{% if too_few %} ({{ too_few }} more
had too few samples to test){% endif %}; every pair of runs is below.</p>
{% endif %}

{% if breakpoints %}
<h2>Breakpoints</h2>
<table>
<tr><th>runs</th><th>workload, connections, mode</th><th>A</th><th>B</th><th>B against A</th><th>evidence</th><th>method</th></tr>
{% for name, ra, rb, direction, evidence, method in breakpoints %}
<tr><td class="mono">{{ name }}</td><td>{{ what(ra) }}{% if what(rb) != what(ra) %} (A)<br>{{ what(rb) }} (B){% endif %}</td>
<td class="num">{{ bp(ra) }}</td><td class="num">{{ bp(rb) }}</td><td>{{ badge(direction) }}</td><td class="small">{{ evidence }}</td><td class="small">{{ method }}</td></tr>
{% endfor %}
</table>
{% endif %}

{% if c.findings %}
<h2>Findings side by side</h2>
<table>
<tr><th>notebook</th><th>A</th><th>B</th></tr>
{% for f in c.findings %}
<tr><td>{{ f.title }}<br><span class="muted mono">{{ f.notebook }}</span></td>
<td>{% if f.a %}{{ f.a.answer }}{% if f.a.key_number %}<br><span class="small">{{ f.a.key_number.label }}: <b>{{ key_text(f.a.key_number) }}</b></span>{% endif %}{% else %}<span class="muted">no finding</span>{% endif %}</td>
<td>{% if f.b %}{{ f.b.answer }}{% if f.b.key_number %}<br><span class="small">{{ f.b.key_number.label }}: <b>{{ key_text(f.b.key_number) }}</b></span>{% endif %}{% else %}<span class="muted">no finding</span>{% endif %}</td></tr>
{% endfor %}
</table>
{% endif %}

<h2>{% if single %}The runs{% else %}Run by run{% endif %}</h2>
{% if not single %}<p class="muted">Runs with the same name in both reports; open one for its figures and flame graphs.</p>{% endif %}
{% for p in c.pairs %}
<details class="pair"{% if single %} open{% endif %}>
<summary>{{ p.name }} <span class="muted small">{{ counts(p) }}</span></summary>
<p class="small mono">A: {{ p.a.id }} ({{ p.a.kind }}, {{ p.a.meta.status }}) {{ vbadge(p.a.validity) }}<br>B: {{ p.b.id }} ({{ p.b.kind }}, {{ p.b.meta.status }}) {{ vbadge(p.b.validity) }}</p>
{% for n in p.notes %}<p class="note small">{{ n }}</p>{% endfor %}
{% if not single %}{{ table(p.rows, false) }}{% endif %}
{% for title, fig in p.figures.items() %}<div class="figure lazy-figure" style="height:{{ fig.layout.height or 460 }}px" data-figure="{{ fig_ids[p.name][title] }}"></div>{% endfor %}
{% for f in p.flamegraphs %}
<div class="flame"><b>{{ f.event }} profile, B against A</b>:
{% if f.href %}<a href="{{ f.href }}" target="_blank" rel="noopener">async-profiler's differential flame graph</a> (B's shape; red grew, blue shrank){% else %}<span class="note">no differential flame graph: {{ f.error or "not requested" }}</span>{% endif %}
<div>{{ raw(f.preview_html) }}</div>
<table class="small"><tr><th>category</th><th>A</th><th>B</th><th>change</th></tr>
{% for r in f.categories %}{% if r.A > 0.0005 or r.B > 0.0005 %}<tr><td>{{ r.category }}</td><td class="num">{{ pct(r.A) }}</td><td class="num">{{ pct(r.B) }}</td><td class="num">{{ pp(r.change) }}</td></tr>{% endif %}{% endfor %}
</table><p class="muted small">Shares of one profile each: no test; a change of a few points can be noise.</p></div>
{% endfor %}
</details>
{% endfor %}
{% if c.only_a %}<p class="small">Only in A: <span class="mono">{{ c.only_a|join(", ") }}</span></p>{% endif %}
{% if c.only_b %}<p class="small">Only in B: <span class="mono">{{ c.only_b|join(", ") }}</span></p>{% endif %}
{% if c.a.missing or c.b.missing %}<p class="small note">Runs the reports name but whose directories are gone: {{ (c.a.missing + c.b.missing)|join(", ") }}</p>{% endif %}

<h2>How differences are judged</h2>
<p class="small">Per-interval latencies and throughput: a {{ test }} at alpha {{ alpha }}; B is called higher or lower
only when both reject "no difference", and with fewer than {{ min_n }} intervals on a side nothing is claimed
("too few samples"). Intervals of one run are not independent, which makes the test somewhat optimistic.
Breakpoints: different only when their intervals (highest passing to lowest failing rate, or the interval the
search reports) do not overlap; an interval with no failing rate above it is open. Single numbers (a run's p99
or max) are shown for reading and not tested.</p>
<p class="small">Every row names its method. <b>Sequential</b> methods compare runs measured one after the other:
on a machine whose speed changes for seconds at a time (<code>perflab host</code>) a slow phase during one run
and not the other shows up as a difference. An A/B run (<code>perflab ab</code>) measures both sides
<b>interleaved</b> in balanced A B B A blocks and tests the pairs' ratios (a Wilcoxon signed-rank test on their
logarithms, a bootstrap interval of the median ratio, a stop rule whose false claims are bounded); its rows are
its own verdicts.</p>
<script>
/* figures are drawn when their section opens (a closed <details> has no size to draw into) */
(function () {
  var figures = {{ figures }};
  function draw(el) {
    if (el.getAttribute('data-drawn') || !window.Plotly) return;
    var f = figures[el.getAttribute('data-figure')];
    el.classList.add('plotly-graph-div');
    Plotly.newPlot(el, f.data, f.layout, {responsive: true});
    el.setAttribute('data-drawn', '1');
  }
  document.querySelectorAll('details.pair').forEach(function (d) {
    function open() { if (d.open) d.querySelectorAll('.lazy-figure').forEach(draw); }
    d.addEventListener('toggle', open);
    open();
  });
})();
</script>
</body>
</html>
"""


def _side_text(s) -> str:
    if s.kind == "ab":
        run = next(iter(s.runs.values()))
        side = s.ab_side or "A"
        return f"side {side} of A/B run {run.name}: {(run.params.get(side.lower()) or {}).get('label', side)}"
    if s.kind == "report":
        n = len((s.report or {}).get("notebooks", []))
        return f"report folder, {n} notebooks, {len(s.runs)} runs"
    run = next(iter(s.runs.values()))
    return f"{run.kind} run {run.name}, {run.meta.get('created_at', '')}"


def _counts(p) -> str:
    c: dict = {}
    for r in p.rows:
        if r.direction is not Direction.NOT_TESTED:
            c[r.direction] = c.get(r.direction, 0) + 1
    parts = [
        f"{n} {'B higher' if d is Direction.HIGHER else 'B lower' if d is Direction.LOWER else d}" for d, n in c.items()
    ]
    return "(" + ", ".join(parts) + ")" if parts else ""


def _bp(r: dict) -> Markup:
    if r.get("rate") is None:
        return Markup("none passed")
    return Markup(f"<b>{fmt.number(r['rate'])}</b> {html.escape(fmt.interval(r.get('interval')))}")


def render(c) -> str:
    figures, fig_ids = {}, {}
    for k, p in enumerate(c.pairs):
        fig_ids[p.name] = {}
        for title, fig in p.figures.items():
            key = f"f{k}-{len(fig_ids[p.name])}"
            fig_ids[p.name][title] = key
            figures[key] = json.loads(fig.to_json())
    tested = [r for r in c.rows if r.direction not in (Direction.NOT_TESTED, Direction.TOO_FEW)]
    found = sorted([r for r in tested if r.direction.significant], key=lambda r: _ORDER[r.direction])
    env = jinja2.Environment(autoescape=True, undefined=jinja2.ChainableUndefined)
    return env.from_string(TEMPLATE).render(
        c=c,
        single=len(c.pairs) == 1 and c.a.kind in ("run", "ab"),
        found=found,
        tested=len(tested),
        too_few=sum(r.direction is Direction.TOO_FEW for r in c.rows),
        breakpoints=[(p.name, *b) for p in c.pairs for b in p.breakpoints],
        fig_ids=fig_ids,
        figures=Markup(json.dumps(figures, separators=(",", ":")).replace("</", "<\\/")),
        table=lambda rows, pair_column: Markup(
            summary_table(sorted(rows, key=lambda r: _ORDER[r.direction]) if pair_column else rows, pair_column)
        ),
        badge=lambda d: Markup(direction_badge(d)),
        vbadge=lambda v: Markup(fnd.validity_badge(v)),
        raw=Markup,
        side_text=_side_text,
        what=lambda r: f"{r['workload']}, {r['connections']} conn, {r['mode']}",
        counts=_counts,
        bp=_bp,
        key_text=fnd.key_number_text,
        pct=lambda v: f"{100 * v:.1f}%",
        pp=lambda v: f"{100 * v:+.1f} pp",
        test=SAMPLE_TEST,
        alpha=ALPHA,
        min_n=MIN_N,
    )


def write_page(c) -> None:
    c.path.write_text(render(c), encoding="utf-8")
