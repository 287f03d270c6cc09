"""``perflab compare A B``: two runs, or two report folders, side by side on one page.

What a student does between two stages of the course, and an engineer between two commits::

    python -m perflab compare report/20260101-120000 report/20260108-120000 -o stage2-vs-stage1.html
    python -m perflab compare data/runs/<run A> data/runs/<run B>

and from a notebook ``compare(a, b)`` (returns a :class:`Comparison`: its page's path, its rows, and a
summary that JupyterLab displays with a link to the page). One **A/B run** (``perflab ab``, kind ``ab``)
is compared by itself: ``perflab compare data/runs/<ab run>`` shows its paired verdicts.

Two **runs** are compared as they are: fixed-rate experiments by their latency spectra, latency over
time and, for every event both profiled, async-profiler's differential flame graph; breakpoint
searches by their breakpoints with intervals, their probes, and the probe at each breakpoint. Two
**report folders** are compared run by run: runs with the same name (``nb01-put-1c-cpu``...) in both,
the last successful one of each name; plus each notebook's finding side by side.

Every difference the page states comes with the finding of the test the commentary uses
(:mod:`perflab.stats.significance`): per-interval latencies by :func:`compare_samples` (Mann-Whitney
U test and a bootstrap interval of the ratio of medians, with n), breakpoints by their intervals
(different only when disjoint, :func:`perflab.stats.significance.compare_intervals`). Single numbers
(a run's p99) are shown for reading, marked as not tested.

Every row names its method (:mod:`perflab.stats.methods`). Two runs measured one after the other can
only be compared as *sequential runs* or *sequential intervals*: a slow phase of the machine during one
of them counts as a difference, which is what an A/B run (*interleaved pairs*, *interleaved searches*)
cancels; its rows are its own paired verdicts. Two A/B runs (the same comparison in two reports) are
compared by the intervals of their ratios.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from .. import fmt, paths
from ..ab.result import recorded_verdicts
from ..analysis import ab
from ..analysis.breakpoints import breakpoint_curve
from ..analysis.latency import latency_timelines, percentile_spectrum
from ..analysis.profiles import preview_svg, top_frames_html
from ..config.ab import METRIC
from ..profiling import bridge, codemap, flame
from ..records import Run, open_run
from ..stats.methods import Method
from ..stats.significance import SAMPLE_TEST, Direction, compare_intervals, compare_samples
from .compare_page import summary_table, write_page
from .export import ensure_plotly_js


class CompareError(ValueError):
    """An input that is neither a run nor a report folder, or two inputs of different kinds."""


# --- the inputs -----------------------------------------------------------------------------------


@dataclass
class Side:
    """One side of a comparison: a run, or a report folder with its runs (name -> run)."""

    spec: str
    kind: str  # "run" | "report" | "ab" (one side of an A/B run)
    path: Path
    runs: dict = field(default_factory=dict)
    report: dict | None = None
    missing: list = field(default_factory=list)  # runs a report names whose directories are gone
    ab_side: str | None = None  # kind "ab": which side of the A/B run

    @property
    def label(self) -> str:
        return self.path.name

    @property
    def commit(self) -> str | None:
        if self.report:
            return (self.report.get("git") or {}).get("commit")
        run = next(iter(self.runs.values()), None)
        return run.commit if run else None


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise CompareError(f"{what}: {path} is not valid JSON ({e})") from None
    except OSError as e:
        raise CompareError(f"{what}: cannot read {path} ({e.strerror})") from None
    if not isinstance(data, dict):
        raise CompareError(f"{what}: {path} does not hold a JSON object")
    return data


def open_side(spec: str | os.PathLike, data_root=None, what: str = "A") -> Side:
    """A run directory (``meta.json``), a run id under the data root, or a report folder
    (``report.json``; its ``index.html`` or ``report.json`` also name it)."""
    p = Path(spec).expanduser()
    if p.is_file() and p.name in ("index.html", "report.json", "meta.json"):
        p = p.parent
    if not p.exists():
        by_id = paths.runs_root(data_root) / str(spec)
        if str(spec) and "/" not in str(spec) and (by_id / "meta.json").is_file():
            p = by_id
        else:
            raise CompareError(
                f"{what}: {spec} does not exist (and is not the id of a run under {paths.runs_root(data_root)})"
            )
    if p.is_file():
        raise CompareError(
            f"{what}: {spec} is a file; give a run directory (with meta.json) or a report folder (with report.json)"
        )
    p = p.resolve()
    if (p / "report.json").is_file():
        report = _read_json(p / "report.json", what)
        if not isinstance(report.get("notebooks"), list):
            raise CompareError(f"{what}: {p / 'report.json'} has no 'notebooks' list: not a perflab report")
        side = Side(str(spec), "report", p, report=report)
        for nb in report["notebooks"]:
            for r in nb.get("runs") or []:
                d = (p / r.get("path", "")).resolve() if r.get("path") else None
                try:
                    run = open_run(d if d is not None and (d / "meta.json").is_file() else str(r.get("id")), data_root)
                except ValueError:
                    side.missing.append(str(r.get("id")))
                    continue
                prev = side.runs.get(run.name)
                # the last successful run of a name (a failed attempt followed by a retry keeps the retry)
                if prev is None or run.status == "ok" or prev.status != "ok":
                    side.runs[run.name] = run
        return side
    if (p / "meta.json").is_file():
        try:
            run = open_run(p)
        except ValueError as e:
            raise CompareError(f"{what}: {e}") from None
        return Side(str(spec), "run", p, runs={run.name: run})
    raise CompareError(f"{what}: {spec} is neither a run directory (no meta.json) nor a report folder (no report.json)")


# --- what is compared -----------------------------------------------------------------------------


@dataclass
class Row:
    """One compared quantity: B against A, with what the test found (``direction``) and its evidence."""

    pair: str
    metric: str
    a: float | None
    b: float | None
    unit: str
    direction: Direction
    evidence: str
    test: str
    method: str = str(Method.SINGLE_VALUES)


@dataclass
class Pair:
    """Two runs set side by side, and what came of it."""

    name: str
    a: Run
    b: Run
    rows: list = field(default_factory=list)
    breakpoints: list = field(default_factory=list)  # (row A, row B, comparison) for breakpoint runs
    figures: dict = field(default_factory=dict)  # title -> plotly figure
    flamegraphs: list = field(default_factory=list)  # {"event", "href" or "error", "preview_html", "categories"}
    notes: list = field(default_factory=list)


def _intervals_rows(name: str, la, lb, where: str = "") -> list[Row]:
    rows = []
    ia, ib = la.intervals, lb.intervals
    for col, metric in (("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")):
        if col not in ia or col not in ib:
            continue
        d = compare_samples(ia[col], ib[col])
        rows.append(
            Row(
                name,
                f"{metric} per interval{where}",
                d.median_a,
                d.median_b,
                "ms (median)",
                d.direction,
                d.evidence,
                SAMPLE_TEST,
                str(Method.SEQUENTIAL_RUNS),
            )
        )
    if "count" in ia and "count" in ib:
        ra = ia["count"] / (ia["end_s"] - ia["start_s"]).where(lambda s: s > 0)
        rb = ib["count"] / (ib["end_s"] - ib["start_s"]).where(lambda s: s > 0)
        d = compare_samples(ra, rb)
        rows.append(
            Row(
                name,
                f"throughput per interval{where}",
                d.median_a,
                d.median_b,
                "responses/s (median)",
                d.direction,
                d.evidence,
                SAMPLE_TEST,
                str(Method.SEQUENTIAL_RUNS),
            )
        )
    for metric, fa in (("p99 of the whole run", lambda r: r.p99_ms), ("max of the whole run", lambda r: r.max_ms)):
        rows.append(
            Row(
                name,
                metric + where,
                fa(la),
                fa(lb),
                "ms",
                Direction.NOT_TESTED,
                "one value per run: no test possible",
                "none",
            )
        )
    rows.append(
        Row(
            name,
            "achieved rate" + where,
            la.achieved_rate,
            lb.achieved_rate,
            "req/s",
            Direction.NOT_TESTED,
            f"target {la.target_rate:,.0f} vs {lb.target_rate:,.0f} req/s; errors {la.errors_total} vs "
            f"{lb.errors_total}",
            "none",
        )
    )
    return rows


def compare_pair(
    name: str, a: Run, b: Run, label_a: str, label_b: str, files_dir: Path | None, page_dir: Path | None
) -> Pair:
    """Compare run ``b`` with run ``a`` (see the module docstring)."""
    pair = Pair(name, a, b)
    for side, run in (("A", a), ("B", b)):
        if run.status != "ok":
            pair.notes.append(f"{side} ({run.id}) has status {run.status!r}: its numbers may be partial")
    if a is b and a.kind == "ab":
        return _ab_pair(name, a, pair)
    if a.kind == "ab" or b.kind == "ab":
        if a.kind != b.kind:
            pair.notes.append(
                f"A is a {a.kind} run and B a {b.kind} run: an A/B comparison is compared only with "
                "another A/B comparison"
            )
            return pair
        return _two_ab_pairs(name, a, b, pair)
    la = lb = None
    if a.kind == "breakpoint" and b.kind == "breakpoint":
        sa, sb = a.search(), b.search()
        ra, rb = sa.row, sb.row
        if ra["rate"] is not None and rb["rate"] is not None:
            c = compare_intervals(ra["interval"], rb["interval"])
            direction, evidence = c.direction, c.evidence
        else:
            direction, evidence = Direction.NOT_TESTED, "a search found no breakpoint (no probed rate passed)"
        pair.breakpoints.append((ra, rb, direction, evidence, str(Method.SEQUENTIAL_INTERVALS)))
        pair.rows.append(
            Row(
                name,
                "breakpoint",
                ra["rate"],
                rb["rate"],
                "req/s",
                direction,
                evidence,
                "intervals compared: different only when disjoint",
                str(Method.SEQUENTIAL_INTERVALS),
            )
        )
        pair.figures["Breakpoint searches"] = breakpoint_curve(
            {label_a: sa, label_b: sb}, title=f"{name}: latency against the offered rate, {label_a} and {label_b}"
        )
        la, lb = sa.at_breakpoint, sb.at_breakpoint
        where = " (the probe at each breakpoint)"
        if la is None or lb is None:
            pair.notes.append("no passing probe at the breakpoint on one side: its spectrum cannot be compared")
    elif a.kind == "breakpoint" or b.kind == "breakpoint":
        pair.notes.append(
            f"A is a {a.kind} run and B a {b.kind} run: only the load at the breakpoint and the "
            "fixed-rate load are compared"
        )
        la = a.search().at_breakpoint if a.kind == "breakpoint" else a.load()
        lb = b.search().at_breakpoint if b.kind == "breakpoint" else b.load()
        where = ""
    else:
        la, lb = a.load(), b.load()
        where = ""
        if la is None or lb is None:
            pair.notes.append("one of the runs recorded no load (no load-console.txt): nothing to compare")
    if la is not None and lb is not None:
        pair.rows += _intervals_rows(name, la, lb, where)
        if not la.spectrum.empty and not lb.spectrum.empty:
            pair.figures["Percentile spectra"] = percentile_spectrum(
                {label_a: la, label_b: lb}, title=f"{name}: latency by percentile{where}, {label_a} and {label_b}"
            )
        if not la.intervals.empty and not lb.intervals.empty:
            pair.figures["Latency over time"] = latency_timelines(
                {label_a: la, label_b: lb}, title=f"{name}: latency over time{where}"
            )
    for event in sorted(set(a.profiles()) & set(b.profiles())):
        pair.flamegraphs.append(_flame_diff(name, a, b, event, files_dir, page_dir))
    return pair


def _where(row: dict) -> str:
    return f" at {fmt.rate(row['rate'])}" if row.get("rate") else ""


def _ab_pair(name: str, run: Run, pair: Pair) -> Pair:
    """One A/B run: its own paired verdicts as rows (A's and B's medians over the pairs it used)."""
    rows = recorded_verdicts(run)
    if not rows:
        pair.notes.append(
            f"the A/B run {run.id} has status {run.status!r} and recorded no verdict: nothing was compared"
        )
        return pair
    method = Method(run.results.get("method"))
    pair.notes.append(f"A = {rows[0]['a']}, B = {rows[0]['b']}; {method.description}")
    pairs = ab.pairs_of(run)
    for r in rows:
        direction = Direction(r["direction"]) if r["direction"] in Direction._value2member_map_ else Direction.NONE
        a_val, b_val, unit = r.get("a_value"), r.get("b_value"), ""
        m = METRIC.get(r["metric"])
        if m is not None and not pairs.empty and f"a_{m.column}" in pairs:
            used = pairs[(pairs["rate"] == r["rate"]) & pairs["used"].astype(bool)]
            a_val, b_val = used[f"a_{m.column}"].median(), used[f"b_{m.column}"].median()
            unit = f"{m.unit} (median of the probes)"
        elif r["metric"] == "category":
            unit = "us per request (median of the pairs)"
        elif r["metric"] == "pass":
            unit = "probes passed"
        elif r["metric"] == "breakpoint":
            unit = "req/s"
        what = f"CPU per request in {r['category']}" if r["metric"] == "category" else r["metric"]
        pair.rows.append(
            Row(name, f"{what}{_where(r)}", a_val, b_val, unit, direction, ab.sentence(r), r["test"], r["method"])
        )
    if not pairs.empty:
        pair.figures["Pairs"] = ab.pairs_figure(run)
    cats = ab.categories_figure(run)
    if cats is not None:
        pair.figures["CPU per request by category"] = cats
    ic = run.results.get("idle_cost")
    if ic:
        metric = run.results.get("metric")
        pair.notes.append(ab.idle_sentence(ic, metric if metric in ic["ratios"] else "p99"))
    return pair


def _two_ab_pairs(name: str, a: Run, b: Run, pair: Pair) -> Pair:
    """Two A/B runs (the same comparison in two reports): their ratios compared by their intervals; they
    were measured one after the other, so the method is sequential."""
    ra = {(r.get("rate"), r["metric"]): r for r in recorded_verdicts(a) if r.get("ratio") is not None}
    rb = {(r.get("rate"), r["metric"]): r for r in recorded_verdicts(b) if r.get("ratio") is not None}
    for key in [k for k in ra if k in rb]:
        x, y = ra[key], rb[key]
        ia, ib = (x["ci_lo"], x["ci_hi"]), (y["ci_lo"], y["ci_hi"])
        try:
            c = compare_intervals(ia, ib)
            direction, evidence = c.direction, c.evidence
        except ValueError:
            direction, evidence = Direction.NOT_TESTED, "an interval is missing"
        pair.rows.append(
            Row(
                name,
                f"B/A ratio of {key[1]}{_where(x)}",
                x["ratio"],
                y["ratio"],
                "x",
                direction,
                f"{evidence} (each an A/B run's own {x['method']} interval)",
                "intervals compared: different only when disjoint",
                str(Method.SEQUENTIAL_INTERVALS),
            )
        )
    if not pair.rows:
        pair.notes.append("the two A/B runs share no verdict (rate and metric) to compare")
    return pair


def _flame_diff(name: str, a: Run, b: Run, event: str, files_dir: Path | None, page_dir: Path | None) -> dict:
    """async-profiler's differential flame graph of ``event`` (B's shape coloured by growth against A),
    our static preview of it, and the categories' shares side by side."""
    ca, cb = a.profiles()[event], b.profiles()[event]
    sa, sb = flame.read_collapsed(ca), flame.read_collapsed(cb)
    out = {"event": event, "preview_html": preview_svg(sb, event, base=sa) + top_frames_html(sb)}
    # each run's categories by the map it was recorded with (a server of its own has other categories)
    cat_a = flame.categorize(sa, event, code_map=codemap.read(a.dir)).set_index("category")["share"]
    cat_b = flame.categorize(sb, event, code_map=codemap.read(b.dir)).set_index("category")["share"]
    cats = pd.DataFrame({"A": cat_a, "B": cat_b}).fillna(0.0)
    cats["change"] = cats["B"] - cats["A"]
    out["categories"] = (
        cats.reindex(cats["change"].abs().sort_values(ascending=False).index)
        .reset_index(names="category")
        .to_dict("records")
    )
    if files_dir is not None:
        target = files_dir / re.sub(r"[^A-Za-z0-9_.-]+", "-", f"diff-{a.id}-vs-{b.id}-{event}.html")
        try:
            bridge.diff_html(ca, cb, target, title=f"{name}: {event}, B against A (red: grew)")
            out["href"] = os.path.relpath(target, page_dir) if page_dir else str(target)
        except Exception as e:  # noqa: BLE001 - a missing JVM costs the linked graph, not the page
            out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return out


def _finding_rows(a: Side, b: Side) -> list[dict]:
    fa = {n["notebook"]: n for n in (a.report or {}).get("notebooks", [])}
    fb = {n["notebook"]: n for n in (b.report or {}).get("notebooks", [])}
    return [
        {
            "notebook": k,
            "title": (fb.get(k) or fa.get(k) or {}).get("title", k),
            "a": (fa.get(k) or {}).get("finding"),
            "b": (fb.get(k) or {}).get("finding"),
        }
        for k in dict.fromkeys([*fa, *fb])
    ]


# --- the result -----------------------------------------------------------------------------------


@dataclass
class Comparison:
    """What :func:`compare` wrote: the page and the rows on it."""

    path: Path
    a: Side
    b: Side
    pairs: list
    only_a: list
    only_b: list
    findings: list

    @property
    def rows(self) -> list[Row]:
        return [r for p in self.pairs for r in p.rows]

    def to_dict(self) -> dict:
        return {
            "page": str(self.path),
            "a": str(self.a.path),
            "b": str(self.b.path),
            "rows": [asdict(r) for r in self.rows],
            "only_in_a": self.only_a,
            "only_in_b": self.only_b,
        }

    def _repr_html_(self) -> str:
        try:
            href = os.path.relpath(self.path, Path.cwd())
        except ValueError:
            href = self.path.as_uri()
        return (
            f"<p>Comparison of <b>{self.a.label}</b> (A) and <b>{self.b.label}</b> (B): "
            f"<a href='{href}' target='_blank'>{self.path.name}</a></p>" + summary_table(self.rows)
        )

    def __repr__(self) -> str:
        return f"<Comparison {self.a.label} vs {self.b.label}: {len(self.rows)} rows, page {self.path}>"


def default_output(a: Side, b: Side) -> Path:
    return paths.report_root() / "compare" / f"{a.label}-vs-{b.label}.html"


def compare(
    a: str | os.PathLike,
    b: str | os.PathLike | None = None,
    output: str | os.PathLike | None = None,
    data_root=None,
    flamegraphs: bool = True,
) -> Comparison:
    """Compare B with A (two runs, or two report folders; or, without ``b``, the two sides of one A/B run)
    and write the page (``output``, default ``<report root>/compare/<A>-vs-<B>.html``) with
    ``assets/plotly.min.js`` and the differential flame graphs (``flamegraphs/``) next to it. Bad inputs
    raise :class:`CompareError` naming the problem."""
    if b is None:
        return _compare_ab_run(a, output, data_root)
    sa, sb = open_side(a, data_root, "A"), open_side(b, data_root, "B")
    if sa.kind != sb.kind:
        raise CompareError(f"compare two runs or two report folders: A ({a}) is a {sa.kind}, B ({b}) is a {sb.kind}")
    if sa.path == sb.path:
        raise CompareError(f"A and B are the same {sa.kind}: {sa.path}")
    out = Path(output) if output else default_output(sa, sb)
    if out.suffix.lower() not in (".html", ".htm"):
        raise CompareError(f"-o: the page must end with .html, got {out}")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    files = out.parent / "flamegraphs" if flamegraphs else None
    if files is not None:
        files.mkdir(exist_ok=True)
    pairs, only_a, only_b = [], [], []
    if sa.kind == "run":
        ra, rb = next(iter(sa.runs.values())), next(iter(sb.runs.values()))
        name = ra.name if ra.name == rb.name else f"{ra.name} / {rb.name}"
        pairs.append(compare_pair(name, ra, rb, "A", "B", files, out.parent))
    else:
        for name in sa.runs:
            if name in sb.runs:
                pairs.append(compare_pair(name, sa.runs[name], sb.runs[name], "A", "B", files, out.parent))
            else:
                only_a.append(name)
        only_b = [n for n in sb.runs if n not in sa.runs]
    ensure_plotly_js(out.parent)
    result = Comparison(out, sa, sb, pairs, only_a, only_b, _finding_rows(sa, sb) if sa.kind == "report" else [])
    write_page(result)
    return result


def _compare_ab_run(spec, output, data_root) -> Comparison:
    """The page of one A/B run: its two sides and its paired verdicts."""
    side = open_side(spec, data_root, "A")
    run = next(iter(side.runs.values())) if side.kind == "run" else None
    if run is None or run.kind != "ab":
        what = f"a {run.kind} run" if run is not None else "a report folder"
        raise CompareError(
            f"B: missing; one argument must be an A/B run (perflab ab), and {spec} is {what}: give "
            f"two runs or two report folders"
        )
    sa = Side(str(spec), "ab", side.path, runs={run.name: run}, ab_side="A")
    sb = Side(str(spec), "ab", side.path, runs={run.name: run}, ab_side="B")
    out = Path(output) if output else paths.report_root() / "compare" / f"{run.id}.html"
    if out.suffix.lower() not in (".html", ".htm"):
        raise CompareError(f"-o: the page must end with .html, got {out}")
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    pairs = [compare_pair(run.name, run, run, "A", "B", None, out.parent)]
    ensure_plotly_js(out.parent)
    result = Comparison(out, sa, sb, pairs, [], [], [])
    write_page(result)
    return result
