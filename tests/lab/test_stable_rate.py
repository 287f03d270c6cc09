"""Notebook 01's stable rate (perflab.lab.stable): its parameters checked, the rate picked from a search's row, and
the sentences that tell it, on the page (perflab.analysis.latency) and in the report's language (perflab.report.facts).
The real searches and runs behind it are tests/report/test_report_course.py's (01 on a course server, in Russian)."""

from __future__ import annotations

import pytest

from perflab import i18n
from perflab.analysis.latency import describe_stable_rate
from perflab.analysis.latency.stable import RECORD
from perflab.lab import stable
from perflab.report import facts

RU = i18n.language("ru")


@pytest.mark.parametrize(
    "value,message",
    [
        (0, "stable_fraction: must be > 0 and < 1 (the share of the breakpoint to run at), or None, got 0"),
        (1, "stable_fraction: must be > 0 and < 1"),
        (1.2, "stable_fraction: must be > 0 and < 1 (the share of the breakpoint to run at), or None, got 1.2"),
        (-0.5, "stable_fraction: must be > 0 and < 1"),
        ("x", "stable_fraction: expected a number, got 'x'"),
        (True, "stable_fraction: expected a number, got True"),
        ([0.7], "stable_fraction: expected a number, got [0.7]"),
    ],
)
def test_a_bad_fraction_is_named(value, message):
    with pytest.raises(ValueError) as e:
        stable.fraction(value)
    assert message in str(e.value)


def test_a_fraction_is_a_share_and_none_keeps_the_fixed_rates():
    assert stable.fraction(None) is None
    assert stable.fraction(0.7) == 0.7 and stable.fraction("70%") == 0.7 and stable.fraction("0.5") == 0.5


def test_the_searches_settings_are_breakpoint_params_checked_by_the_config_layer():
    got = stable.settings({"probe_duration": "1s", "sustain": 0}, 0.05, seed=3)
    assert got["params"].probe_duration == 1.0 and got["params"].sustain == 0 and got["params"].seed == 3
    assert got["criteria"].sla_p99 == 0.05
    assert stable.settings(None, 0.01)["params"].probe_duration == 3.0  # the defaults
    for bad, message in [
        ({"sla_p99": "5ms"}, "search: 'sla_p99' is no BreakpointParams field (the SLA is the notebook's sla_p99)"),
        ({"probe_duration": 0.1}, "search: probe_duration: must be >= 500ms, got 0.1"),
        ("fast", "search: expected a dict of BreakpointParams fields, got str"),
    ]:
        with pytest.raises(ValueError) as e:
            stable.settings(bad, 0.01)
        assert message in str(e.value)


def test_connection_counts_are_checked_and_kept_as_given():
    assert stable.connections([16, 1]) == (16, 1)
    for bad, message in [
        ([], "connections: must name at least one connection count, got an empty list"),
        ([1, 4, 4], "connections: names 4 more than once, got [1, 4, 4]"),
        ([0, 4], "connections[0]: must be >= 1, got 0"),
    ]:
        with pytest.raises(ValueError) as e:
            stable.connections(bad)
        assert message in str(e.value)


def test_the_rate_is_the_share_of_the_breakpoint_else_of_the_lower_bound_else_the_fixed_rate():
    found = {"rate": 10_000.0, "interval": [9_600.0, 10_400.0], "verdict": "resolved", "at_least": 10_000.0}
    assert stable.pick(found, 0.7, 2000) == {"basis": "breakpoint", "basis_rate": 10_000.0, "rate": 7000.0}
    # cannot tell, but it kept up at 1,544 req/s: a share of that
    busy = {"rate": None, "interval": [None, None], "verdict": "cannot-tell", "at_least": 1544.0}
    assert stable.pick(busy, 0.5, 2000) == {"basis": "lower bound", "basis_rate": 1544.0, "rate": 772.0}
    # no rate held: the breakpoint is below 14,501, and nothing is known below: the fixed rate
    below = {"rate": None, "interval": [None, 14_501.0], "verdict": "unresolved", "held": False, "at_least": None}
    assert stable.pick(below, 0.7, 2000) == {"basis": "fixed", "basis_rate": None, "rate": 2000.0}
    # ... unless the fixed rate is not below that bound: a rate known to be above the breakpoint is no stable rate
    assert stable.pick(below, 0.7, 14_501) == {"basis": "upper bound", "basis_rate": 14_501.0, "rate": 10_151.0}
    # a lower bound that is not below the upper one is no bound
    odd = {"rate": None, "interval": [None, 900.0], "verdict": "unresolved", "at_least": 1000.0}
    assert stable.pick(odd, 0.7, 800)["basis"] == "fixed" and stable.pick(odd, 0.7, 2000)["basis"] == "upper bound"
    # a tiny breakpoint still gives a rate the generator can send
    assert stable.pick({"rate": 1.0, "interval": [1.0, 2.0]}, 0.1, 2000)["rate"] == 1.0


def _record(**over) -> dict:
    """A PUT's record as 01 writes it: found 10,000 req/s with 16 connections, runs at 70% of it."""
    rec = {
        "op": "PUT",
        "fraction": 0.7,
        "fixed_rate": 2000.0,
        "connections": 16,
        "search_run": "s1",
        "breakpoint": {"rate": 10_000.0, "interval": [9_600.0, 10_400.0], "verdict": "resolved"},
        "basis": "breakpoint",
        "basis_rate": 10_000.0,
        "rate": 7000.0,
    }
    return {**rec, **over}


def _run(conns: int, kept_up, achieved=1.0, p99=1.2) -> dict:
    return {
        "label": f"PUT, {conns}",
        "connections": conns,
        "run": f"r{conns}",
        "kept_up": kept_up,
        "reason": "ok" if kept_up else "achieved 5,600.0/s = 80.0% of target < 99%; p99 25.00 ms > SLA 10 ms",
        "achieved_ratio": achieved,
        "p99_ms": p99,
        "sla_ms": 10.0,
        "min_achieved": 0.99,
    }


def test_the_page_says_how_the_rate_was_chosen_and_whether_each_run_held_it():
    text = describe_stable_rate({**_record(), "runs": [_run(1, False, 0.8, 25.0), _run(16, True)]})
    assert text.startswith(
        "**PUT**: the breakpoint with 16 connections is 10,000 req/s (interval [9,600, 10,400], resolved); the "
        "stable rate is 70% of it, 7,000 req/s. At that rate, with 1 connection it did not hold it (achieved "
    ), text
    assert text.endswith("with 16 connections it held it (achieved 100%, p99 1.20 ms within the 10.0 ms SLA).")
    fixed = describe_stable_rate(_record(fraction=None, basis="fixed", basis_rate=None, rate=2000.0))
    assert (
        fixed == "**PUT** runs at its fixed rate, 2,000 req/s (no breakpoint searched: `stable_fraction` is not set)."
    )
    below = {"rate": None, "interval": [None, 14_501.0], "verdict": "unresolved", "held": False, "sustain_s": 3}
    text = describe_stable_rate(_record(breakpoint=below, basis="fixed", basis_rate=None, rate=2000.0))
    assert text == (
        "**PUT**: no breakpoint with 16 connections: no rate held for 3 s: the breakpoint is below 14,501 req/s; no "
        "lower bound either, so it runs at its fixed rate, 2,000 req/s."
    )
    none = {"rate": None, "interval": [None, 138.0], "verdict": "none-passed"}
    text = describe_stable_rate(_record(breakpoint=none, basis="upper bound", basis_rate=138.0, rate=97.0))
    assert text == (
        "**PUT**: no breakpoint with 16 connections: none passed (below 138 req/s); no lower bound either, and its "
        "fixed rate, 2,000 req/s, is not below the upper bound the search gives, so the stable rate is 70% of that "
        "bound, 138 req/s: 97 req/s."
    )


def test_the_report_says_it_in_russian_from_the_runs_records():
    """The records as facts.metas reads them: each stable run's meta.json with the record and its own judgement;
    one paragraph per operation, before the table."""
    metas = [
        {"kind": "breakpoint", "results": {}},
        {"kind": "experiment", RECORD: {**_record(), "run": _run(1, False, 0.8, 25.0)}, "results": {}},
        {"kind": "experiment", RECORD: {**_record(), "run": _run(16, True)}, "results": {}},
        {
            "kind": "experiment",
            RECORD: {
                **_record(op="GET", basis="lower bound", basis_rate=1544.0, rate=772.0, fraction=0.5),
                "breakpoint": {"rate": None, "interval": [None, None], "verdict": "cannot-tell", "at_least": 1544.0},
                "run": _run(16, None),
            },
            "results": {},
        },
    ]
    lines = [ln.replace("\xa0", " ") for ln in facts.stable_rate_lines(RU, metas)]
    assert lines == [
        "PUT: точка разладки (16 соединений) — 10 000 запр/с (интервал [9 600; 10 400]); стабильный темп — 70 % от "
        "неё: 7 000 запр/с. 1 соединение: прогон не выдержал этот темп — достигнуто 80 % темпа, меньше 99 %; p99 "
        "25 мс выше порога 10 мс. 16 соединений: прогон выдержал этот темп — достигнуто 100 % темпа, p99 1,2 мс не "
        "выше порога 10 мс.",
        "",
        "GET: точка разладки (16 соединений) не найдена: нельзя сказать; стабильный темп — 50 % от нижней "
        "границы, которую дал поиск (1 544 запр/с): 772 запр/с. 16 соединений: о прогоне нельзя судить — его "
        "измерение недействительно.",
        "",
    ]
    fixed = {"kind": "experiment", RECORD: {**_record(fraction=None, basis="fixed", rate=2000.0), "run": _run(1, True)}}
    assert facts.stable_rate_lines(RU, [fixed])[0].startswith("PUT: нагрузка шла с постоянным темпом 2")
    none = {"rate": None, "interval": [None, 138.0], "verdict": "none-passed"}
    above = {"kind": "experiment", RECORD: _record(breakpoint=none, basis="upper bound", basis_rate=138.0, rate=97.0)}
    assert facts.stable_rate_lines(RU, [above])[0].replace("\xa0", " ") == (
        "PUT: точка разладки (16 соединений) не найдена: ни один темп не выдержан (ниже 138); нижней границы поиск не "
        "дал, а постоянный темп 2 000 запр/с не ниже верхней границы, которую дал поиск, поэтому стабильный темп — "
        "70 % от этой границы (138 запр/с): 97 запр/с."
    )
