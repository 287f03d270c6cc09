"""A history in words: where its commits come from (a synthetic one says so, and which commit was planted),
each metric across the commits, the change points and what each check said, the answer and its bound. Read
from the recorded ``history`` run, so a run read back tells the same as the command that made it."""

from __future__ import annotations

from ... import fmt
from ...records import Run
from ...regress.history import Found
from ...stats.changepoints import MIN_POINTS
from ..ab.verdicts import named, where
from ..regress import check_sentence, family_bound


def _run(res) -> Run:
    return res.run if hasattr(res, "run") else res


def commit_text(c: dict) -> str:
    """'3f8a13584a (step 3: 50 us of work)'."""
    return (c.get("sha") or c["commit"])[:10] + (f" ({c['subject']})" if c.get("subject") else "")


def _value(metric: str, v: float) -> str:
    return f"{v:,.1f} us" if metric == "cpu" else fmt.ms(v)


def describe_points(res) -> list[str]:
    """One line per commit: each metric's median and the range of its repeats, or why it was skipped."""
    r = _run(res).results
    out = []
    for p in r["points"]:
        who = f"{p['position']}: {commit_text(p)}"
        if p.get("skipped"):
            out.append(f"{who}: skipped, {p['skipped']}")
            continue
        out.append(
            f"{who}: "
            + "; ".join(
                f"{named(m)} {_value(m, v['value'])} ({_value(m, v['lo'])}-{_value(m, v['hi'])} over {len(v['repeats'])})"
                for m, v in p["metrics"].items()
            )
        )
    return out


def candidate_sentence(c: dict, metric: str) -> str:
    """One change point and what its check said."""
    head = (
        f"change point at {commit_text(c)}: the series of {named(metric)} steps {fmt.ratio(c['step'])} "
        f"from the commit before ({c['before'][:10]})"
    )
    check = c.get("check")
    if check is None:
        return f"{head}; not checked"
    said = {
        "regression": "a regression, proven",
        "improvement": "an improvement",
        "not confirmed": "not confirmed: no worse beyond the margin",
        "undecided": "undecided at this precision",
        "unmeasured": "could not be measured",
    }[c["outcome"]]
    return f"{head}; checked interleaved: {said}: {check_sentence(check, c['commit'][:10], c['before'][:10])}"


def series_sentence(res) -> str:
    """How the series was measured and how its change points were found."""
    run = _run(res)
    p, r = run.params, run.results
    h = p["history"]
    return (
        f"{r['measured']} of {len(p['commits'])} commits measured one after the other at {fmt.rate(p['rate'])}, "
        f"each {fmt.count(h['repeats'], 'probe')} of {float(h['probe_duration']):g} s on a server of its own (bars: the "
        f"range of its repeats); change points of {named(r['metric'])} by PELT (ruptures) on the logs, penalty "
        f"{r['penalty']:.3g} from the measured noise (sigma {fmt.pct(r['sigma'])} per commit), steps within "
        f"±{fmt.pct(r['margin'])} left out"
        if r.get("sigma") is not None
        else f"only {r['measured']} of {len(p['commits'])} commits could be measured: change points need at least "
        f"{MIN_POINTS}"
    )


def bound_sentence(res) -> str:
    r = _run(res).results
    return family_bound(r["checks"], "check", r["alpha"], r["bound"], "a history without a change reports a regression")


def answer_history(res) -> str:
    """The history's answer in one sentence."""
    run = _run(res)
    p, r = run.params, run.results
    metric = f"{named(r['metric'])}{where(p.get('rate'))}"
    found = Found(r["found"])
    n = len(p["commits"])
    if found is Found.TOO_FEW:
        return (
            f"too few commits measured: {r['measured']} of {n} (change points need {MIN_POINTS}; the others do "
            f"not build or start)"
        )
    if found is Found.NO_CHANGE_POINT:
        return f"no change point in {metric} across {n} commits (steps within ±{fmt.pct(r['margin'])} are none)"
    regressions = [c for c in r["candidates"] if c["outcome"] == "regression"]
    if regressions:
        return "; ".join(
            f"regression at {commit_text(c)}: {check_sentence(c['check'], c['commit'][:10], c['before'][:10])}"
            for c in regressions
        )
    return (
        f"no regression confirmed in {metric}: {fmt.count(len(r['candidates']), 'change point')} found ("
        + ", ".join(f"{c['commit'][:10]}: {c['outcome']}" for c in r["candidates"])
        + ")"
    )


def history_lines(res) -> list[str]:
    """What ``perflab history`` prints: the range, every point, every change point with its check, the answer,
    the bound."""
    run = _run(res)
    p, r = run.params, run.results
    out = [
        f"history GOOD {commit_text(p['commits'][0])} .. BAD {commit_text(p['commits'][-1])}: "
        f"{len(p['commits'])} commits; {series_sentence(run)}"
    ]
    out += [f"  {x}" for x in describe_points(run)]
    out += [candidate_sentence(c, r["metric"]) for c in r["candidates"]]
    out.append(answer_history(run))
    if r["checks"]:
        out.append(bound_sentence(run))
    out += [f"note: {n}" for n in run.meta.get("warnings") or []]
    return out
