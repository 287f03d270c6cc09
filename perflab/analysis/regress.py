"""Regression checks in words and figures: ``perflab gate`` (may HEAD go in?) and ``perflab bisect`` (which
commit made the server slower?), read from their recorded runs (:mod:`perflab.regress`), so a run read back
tells the same as the command that made it.

Every sentence names the comparison's method and n, claims a regression only where the comparison's test
claims a difference (:mod:`perflab.regress.verdict`), and says what the false-alarm bound is and why.
"""

from __future__ import annotations

import plotly.graph_objects as go

from .. import fmt
from ..records import Run
from ..regress.bisect import Found
from ..regress.verdict import Outcome
from ..stats.paired import CONFIDENCE, band
from .ab.verdicts import ci_text, named, where


def _run(res) -> Run:
    return res.run if hasattr(res, "run") else res


def _commit(c: dict) -> str:
    """'abc1234567 "the subject"'."""
    subject = c.get("subject") or ""
    return f"{c['sha'][:10]}" + (f" ({subject})" if subject else "")


def check_sentence(check: dict, b: str | None, a: str) -> str:
    """One comparison's verdict on its deciding metric: "HEAD's CPU per request at 2,000 req/s is 1.12x BASE's
    (95% CI 1.08x-1.15x, n = 24 pairs; interleaved pairs, Wilcoxon p = 2.4e-5)"; without ``b`` (the subject is
    said before it): "CPU per request at 2,000 req/s 1.12x BASE's (...)"."""
    what = f"{named(check['metric'])}{where(check.get('rate'))}"
    subject, verb = (f"{b}'s {what}", " is") if b else (what, "")
    lo, hi = check["ci"]
    if check.get("ratio") is None:
        return f"{subject} could not be compared with {a}'s ({check.get('why') or 'no verdict'})"
    if check["metric"] == "breakpoint":
        span = f"interval {fmt.ratio(lo) if lo else '0'}-{fmt.ratio(hi) if hi is not None else 'inf'}"
        return f"{subject}{verb} {fmt.ratio(check['ratio'])} {a}'s ({span}; {check['method']})"
    return (
        f"{subject}{verb} {fmt.ratio(check['ratio'])} {a}'s ({ci_text(lo, hi)}, n = {check['n']} pairs; "
        f"{check['method']}, Wilcoxon p = {fmt.p_sci(check['p_value'])})"
    )


def _worse_end(check: dict) -> str:
    lo, hi = check["ci"]
    return fmt.ratio(lo) if check["metric"] == "breakpoint" else fmt.ratio(hi)


def outcome_phrase(check: dict | None, b: str, a: str, error: str | None = None) -> str:
    """What a check means for B against A, in words."""
    if check is None:
        return f"could not measure: {error or 'no comparison'}"
    outcome, margin = Outcome(check["outcome"]), fmt.pct(check["margin"])
    slower = "lower" if check["metric"] == "breakpoint" else "higher"
    if outcome is Outcome.REGRESSION:
        return (
            f"a regression: {b} is slower than {a} beyond the {margin} margin, and the comparison's test claims it "
            f"(p <= its level {fmt.p_sci(check['level'])})"
        )
    if outcome is Outcome.IMPROVEMENT:
        how = (
            "the comparison's test claims it"
            if check["conclusion"] == "different"
            else f"its interval lies entirely beyond the {margin} margin on the faster side"
        )
        return f"no regression: {b} is faster than {a}, {how}"
    if outcome is Outcome.NOT_WORSE:
        return f"no regression beyond {margin}: the interval's {slower} end, {_worse_end(check)}, lies within it"
    if outcome is Outcome.UNDECIDED:
        return (
            f"undecided: {b} may be up to {_worse_end(check)} {a}'s; at this precision neither a regression "
            f"beyond {margin} nor its absence could be shown"
        )
    return f"could not measure: {check.get('why') or error}"


# --- the gate ------------------------------------------------------------------------------------

EXIT_MEANING = {0: "no regression", 1: "regression", 2: "undecided", 3: "could not measure"}


def gate_lines(res) -> list[str]:
    """What ``perflab gate`` prints: who BASE and HEAD are, the deciding verdict, the outcome with its exit
    status, and the false-alarm bound."""
    run = _run(res)
    p, r = run.params, run.results
    check = r.get("check")
    out = [f"HEAD {_commit(p['head'])} against BASE {_commit(p['base'])}: {_whose(p['repo'])}"]
    if check is not None:
        out.append(check_sentence(check, "HEAD", "BASE"))
    out.append(f"gate: {outcome_phrase(check, 'HEAD', 'BASE', r.get('error'))} (exit {r['exit_code']})")
    out.append(bound_sentence(r["alpha"], check))
    if r.get("ab_run"):
        out.append(f"the comparison: run {r['ab_run']} (perflab compare shows its pairs and every verdict)")
    return out


def bound_sentence(alpha: float, check: dict | None) -> str:
    """The false-alarm bound of a gate and where it comes from (``check``: its deciding verdict, unused since the
    level of one test no longer gives their count: half of alpha goes to the sequential test)."""
    return (
        f"false alarms: a gate of two identical servers fails with probability at most {fmt.p_sci(alpha)} "
        f"(alpha of the comparison: with the not-worse stop, half to a sequential probability ratio test on the "
        f"pairs' signs, which stops a clear regression early, half to exact Wilcoxon signed-rank tests on the pairs' "
        f"log-ratios, Bonferroni over every test it makes; the noise, however heavy, does not change it)"
    )


def _whose(repo: dict) -> str:
    return (
        f"your server ({repo['repo']}, {repo['project']})"
        if repo.get("yours")
        else f"the built-in server of {repo['repo']}"
    )


def gate_markdown(res) -> str:
    """The gate's summary for a pull request (Markdown)."""
    run = _run(res)
    p, r = run.params, run.results
    check = r.get("check")
    code = r["exit_code"]
    head = {0: "passed", 1: "failed: a regression", 2: "undecided", 3: "could not measure"}[code]
    lines = [
        f"### perflab gate: {head}",
        "",
        f"**{outcome_phrase(check, 'HEAD', 'BASE', r.get('error'))}** (exit {code}).",
        "",
    ]
    if check is not None and check.get("ratio") is not None:
        lo, hi = check["ci"]
        lines += [
            f"| metric | HEAD / BASE | {100 * CONFIDENCE:g}% interval | pairs | p | level | margin |",
            "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
            f"| {named(check['metric'])}{where(check.get('rate'))} | {fmt.ratio(check['ratio'])} | "
            f"{fmt.ratio(lo)} - {fmt.ratio(hi)} | {check['n']} | {fmt.p_sci(check['p_value'])} | "
            f"{fmt.p_sci(check['level'])} | ±{fmt.pct(check['margin'])} |",
            "",
        ]
    lines += [f"- HEAD {_commit(p['head'])}, BASE {_commit(p['base'])}; {_whose(p['repo'])}"]
    if check is not None:
        lines.append(f"- {check_sentence(check, 'HEAD', 'BASE')}")
    lines.append(f"- {bound_sentence(r['alpha'], check)}")
    lines.append(
        f"- run `{run.id}`" + (f", comparison `{r['ab_run']}`" if r.get("ab_run") else "") + f", {r['seconds']:.0f} s"
    )
    return "\n".join(lines) + "\n"


# --- the bisection -------------------------------------------------------------------------------


def _position(run: Run, sha: str) -> int:
    return next(i for i, c in enumerate(run.params["commits"]) if c["sha"] == sha)


def step_sentence(run: Run, step: dict) -> str:
    """One step of a bisection: a commit against GOOD, or a commit skipped."""
    commits = run.params["commits"]
    c = commits[step["position"]]
    who = f"{'BAD ' if step['position'] == len(commits) - 1 else ''}{_commit(c)}"
    retry = f" (retry {step['attempt']}: twice the pairs)" if step["attempt"] else ""
    if step.get("skipped"):
        return f"{who}: skipped, {step['skipped']}"
    return f"{who}{retry}: {check_sentence(step, None, 'GOOD')}: {Outcome(step['outcome'])}"


def bisect_lines(res) -> list[str]:
    """What ``perflab bisect`` prints: the range and the metric, the chain of verdicts that led to the answer,
    the answer, and the bound on a false finding."""
    run = _run(res)
    p, r = run.params, run.results
    commits = p["commits"]
    metric = f"{named(p['metric'])}{where(p.get('rate'))}"
    margin = fmt.pct(p["bisect"]["margin"])
    out = [
        f"bisect GOOD {_commit(commits[0])} .. BAD {_commit(commits[-1])}: {len(commits) - 1} commits after GOOD, "
        f"each compared with GOOD on {metric} (slower beyond {margin}); {_whose(p['repo'])}"
    ]
    out += [f"  {step_sentence(run, s)}" for s in r["steps"]]
    out.append(answer(run))
    out.append(bisect_bound(run))
    for note in run.meta.get("warnings") or []:
        out.append(f"note: {note}")
    return out


def family_bound(n: int, noun: str, alpha: float, bound: float, outcome: str) -> str:
    """The bound of ``n`` comparisons (``noun``) each at ``alpha``: ``outcome`` happens by chance with
    probability at most ``bound``."""
    return (
        f"{fmt.count(n, noun)}, each claiming a difference between identical servers with probability at most "
        f"{fmt.p_sci(alpha)}: {outcome} with probability at most {fmt.p_sci(bound)} (Bonferroni)"
    )


def bisect_bound(res) -> str:
    """A bisection's bound on reporting a regression in a history that has none."""
    r = _run(res).results
    return family_bound(
        r["comparisons"], "comparison", r["alpha"], r["bound"], "a history without a regression is reported as one"
    )


def answer(res) -> str:
    """The bisection's answer in one sentence."""
    run = _run(res)
    p, r = run.params, run.results
    commits = p["commits"]
    by_sha = {c["sha"]: c for c in commits}
    margin = fmt.pct(p["bisect"]["margin"])
    metric = named(p["metric"])
    last = {s["commit"]: s for s in r["steps"] if not s.get("skipped")}
    found = Found(r["found"])
    if found is Found.FIRST_SLOWER and r.get("first"):
        s = last[r["first"]]
        return (
            f"first slower commit: {_commit(by_sha[r['first']])}: {check_sentence(s, None, 'GOOD')}; "
            f"every commit before it that was compared is no worse than GOOD beyond {margin}"
        )
    if found is Found.FIRST_SLOWER:
        skipped = [c for c in r["candidates"] if c in r["skipped"]]
        return (
            f"the first slower commit is {_commit(by_sha[r['hi']])} or one of the commits before it that do not "
            f"build: {', '.join(_commit(by_sha[c]) for c in skipped)}"
        )
    bad = last.get(commits[-1]["sha"])
    if found is Found.NO_REGRESSION:
        return (
            f"no regression: BAD is no worse than GOOD beyond {margin} in {metric}: {check_sentence(bad, None, 'GOOD')}"
        )
    if found is Found.GOOD_SLOWER:
        return (
            f"GOOD is slower than BAD, nothing to bisect: {check_sentence(bad, 'BAD', 'GOOD')}; "
            f"{outcome_phrase(bad, 'BAD', 'GOOD').removeprefix('no regression: ')}"
        )
    s = last.get(r["undecided"])
    lo, hi = by_sha[r["lo"]], by_sha[r["hi"]]
    return (
        f"cannot tell between {_commit(lo)} and {_commit(hi)} at this precision: "
        f"{_commit(by_sha[r['undecided']])}: {check_sentence(s, None, 'GOOD')}, neither slower nor shown no "
        f"worse beyond {margin}; the first slower commit is after {lo['sha'][:10]} and at or before "
        f"{hi['sha'][:10]}"
    )


def bisect_figure(res) -> go.Figure:
    """B/A against GOOD of every commit compared (its last comparison), with its interval, on the commits in
    order; the ±margin band, and the first slower commit marked."""
    run = _run(res)
    p, r = run.params, run.results
    commits = p["commits"]
    last = {s["position"]: s for s in r["steps"] if not s.get("skipped")}
    colour = {
        Outcome.REGRESSION: "#d62728",
        Outcome.NOT_WORSE: "#2ca02c",
        Outcome.IMPROVEMENT: "#1f77b4",
        Outcome.UNDECIDED: "#ff7f0e",
        Outcome.UNMEASURED: "#7f7f7f",
    }
    fig = go.Figure()
    for outcome in Outcome:
        pts = sorted(i for i, s in last.items() if Outcome(s["outcome"]) is outcome and s.get("ratio"))
        if not pts:
            continue
        ys = [last[i]["ratio"] for i in pts]
        up = [(last[i]["ci"][1] or last[i]["ratio"]) - last[i]["ratio"] for i in pts]
        down = [last[i]["ratio"] - (last[i]["ci"][0] or last[i]["ratio"]) for i in pts]
        fig.add_trace(
            go.Scatter(
                x=pts,
                y=ys,
                mode="markers",
                name=str(outcome),
                marker=dict(color=colour[outcome], size=10),
                error_y=dict(type="data", array=up, arrayminus=down, visible=True),
                text=[f"{commits[i]['sha'][:10]} {commits[i]['subject']}" for i in pts],
                hovertemplate="%{text}<br>against GOOD %{y:.3f}x<extra></extra>",
            )
        )
    skipped = sorted({_position(run, c) for c in r["skipped"]})
    if skipped:
        fig.add_trace(
            go.Scatter(
                x=skipped,
                y=[1.0] * len(skipped),
                mode="markers",
                name="skipped: does not build",
                marker=dict(color="#7f7f7f", symbol="x", size=10),
                hoverinfo="skip",
            )
        )
    fig.add_hline(y=1.0, line=dict(color="#444", width=1))
    lo, hi = band(p["bisect"]["margin"])
    fig.add_hrect(y0=lo, y1=hi, fillcolor="#2ca02c", opacity=0.08, line_width=0)
    if r.get("first"):
        fig.add_vline(x=_position(run, r["first"]), line=dict(color="#d62728", dash="dash"))
    fig.update_xaxes(
        title="commit (0 = GOOD; in the order they were made)",
        tickmode="array",
        tickvals=list(range(len(commits))),
        ticktext=[c["sha"][:7] for c in commits],
    )
    fig.update_yaxes(title=f"{named(p['metric'])} against GOOD (B/A, log scale)", type="log")
    fig.update_layout(
        title=f"Each commit compared with GOOD: {named(p['metric'])}{where(p.get('rate'))}",
        template="plotly_white",
        height=420,
        hovermode="closest",
    )
    return fig
