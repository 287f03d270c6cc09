"""A student's numbers in the report's language (perflab.report.facts), from records shaped as the lab writes them;
the whole report in Russian is tests/report/test_report_course.py's."""

from __future__ import annotations

from perflab import i18n
from perflab.report import facts, markdown

RU, EN = i18n.language("ru"), i18n.language("en")
NBSP = "\xa0"


def _ru(text: str) -> str:
    return text.replace(NBSP, " ")


def test_breakpoints_say_their_rate_interval_and_what_held():
    rows = [
        {"workload": "PUT", "connections": 4, "rate": 5126.0, "interval": [5126.0, 5696.0], "held": True,
         "verdict": "resolved", "validity": "suspect"},
        {"workload": "GET", "connections": 64, "rate": None, "interval": [None, 20001.0], "verdict": "none-passed",
         "validity": None},
    ]  # fmt: skip
    assert _ru(facts.breakpoint_summary(RU, rows)) == (
        "Точка разладки: PUT, 4 соединения: 5 126 запр/с; GET, 64 соединения: ни один темп не выдержан (ниже 20 001)."
    )
    table = _ru("\n".join(facts.breakpoint_lines(RU, rows)))
    assert "| PUT | 4 | 5 126 | [5 126; 5 696] | да | найдена | сомнителен |" in table
    assert (
        "| GET | 64 | ни один темп не выдержан (ниже 20 001) | [–; 20 001] | – | ни один темп не выдержан | не оценена |"
        in table
    )
    assert facts.breakpoint_summary(EN, rows[:1]) == "Breakpoint: PUT, 4 connections: 5,126 req/s."


def test_a_stage_against_the_previous_one_is_told_from_its_verdict():
    runs = [
        {"kind": "ab", "results": {"verdicts": [
            {"a": "alice, stage 1", "b": "alice", "metric": "p50", "rate": 300.0, "ratio": 3.04505, "ci_lo": 1.033,
             "ci_hi": 69.98, "n": 4, "p_value": 0.125, "conclusion": "undecided", "level": 0.01, "stop_rule": True},
            {"a": "alice, stage 1", "b": "alice", "metric": "cpu", "rate": 300.0, "ratio": 0.5, "ci_lo": 0.4,
             "ci_hi": 0.6, "n": 12, "p_value": 0.0001, "conclusion": "different", "level": 0.01},
        ]}, "_run": {}},
    ]  # fmt: skip
    assert _ru(facts.ab_summary(RU, runs)) == (
        "`alice` (B) против `alice, stage 1` (A), p50 при 300 запр/с: B/A 3,05× (95% интервал 1,03×–70×, "
        "4 пары вперемежку, p = 0,125): различие не доказано на уровне 0,01."
    )
    table = _ru("\n".join(facts.ab_lines(RU, runs)))
    assert "| CPU на запрос | 300 | 0,5 | [0,4; 0,6] | 12 | < 0,001 | различие доказано |" in table


def test_a_console_and_a_flame_graph_are_named_by_their_load():
    command = "perflab-load -t 2 -c 4 -d 1s -R 300 -s put.lua -L http://127.0.0.1:1/ -- threads=2"
    assert markdown._console_title(RU, command) == "PUT, 4 соединения"
    assert markdown._console_title(RU, "perflab-load -c 1 -s get-random.lua") == "GET, 1 соединение"
    runs = [{"id": "r1-nb01-put-4c", "results": {"script": "put.lua", "connections": 64}}]
    assert (
        markdown._flame_title(RU, "r1-nb01-put-4c-profile-alloc.html", runs) == "Профиль аллокаций: PUT, 64 соединения"
    )
    assert markdown._flame_title(RU, "r1-nb01-put-4c-profile-lock-heatmap.html", runs) == (
        "Профиль блокировок во времени (тепловая карта): PUT, 64 соединения"
    )


def test_the_flame_graphs_of_a_recording_of_several_events_are_named_by_their_own_event():
    runs = [{"id": "r1", "results": {"script": "get-random.lua", "connections": 16}}]
    titles = {
        tail: markdown._flame_title(RU, f"r1-profile-{tail}.html", runs)
        for tail in ("cpu-alloc-cpu", "cpu-alloc-alloc", "cpu-alloc-lock-lock", "cpu-alloc-heatmap")
    }
    assert titles == {
        "cpu-alloc-cpu": "Профиль CPU: GET, 16 соединений",
        "cpu-alloc-alloc": "Профиль аллокаций: GET, 16 соединений",
        "cpu-alloc-lock-lock": "Профиль блокировок: GET, 16 соединений",
        "cpu-alloc-heatmap": "Профиль CPU во времени (тепловая карта): GET, 16 соединений",
    }
    assert markdown._flame_title(RU, "r1-profile-cpu-alloc-cpu-spikes-diff.html", runs).startswith(
        "Профиль CPU: всплески задержки против остального окна"
    )
