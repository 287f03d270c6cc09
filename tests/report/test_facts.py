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
    # one recording of several events: each event's graph, and the recording's heat map (its first event's)
    assert markdown._flame_title(EN, "r1-nb01-put-4c-profile-cpu-alloc-lock-alloc.html", runs) == (
        "allocation profile: PUT, 64 connections"
    )
    assert markdown._flame_title(EN, "r1-nb01-put-4c-profile-cpu-alloc-lock-heatmap.html", runs) == (
        "CPU profile over time (heat map): PUT, 64 connections"
    )
    scan = [{"id": "r2-nb10-range", "results": {"range": {"status": 200}}}]
    assert markdown._flame_title(RU, "r2-nb10-range-profile-cpu-alloc-lock-lock.html", scan) == (
        "Профиль блокировок: одно чтение всего диапазона"
    )


def _cluster_run(label: str, nodes: int, p99: float, **results) -> dict:
    return {
        "kind": "cluster",
        "cluster": {"nodes": nodes, "ack": 1, "from": 1},
        "results": {"target_rate": 200.0, "p50_ms": 0.5, "p99_ms": p99, **results},
        "_run": {"label": label, "validity": "valid"},
    }


def test_the_cluster_against_one_node_the_fault_run_and_keys_per_node_are_told_in_russian():
    runs = [
        _cluster_run("nb07-warmup", 3, 40.0),  # not a measured run: left out
        _cluster_run("nb07-one-node", 1, 2.3, answers={"requests": 400, "2xx/3xx": 400}),
        _cluster_run("nb07-cluster", 3, 3.72, answers={"requests": 400, "2xx/3xx": 400}),
        _cluster_run(
            "nb07-fault",
            3,
            33.7,
            answers={"requests": 644, "2xx/3xx": 333},
            faults=[{"node": 2, "action": "kill", "at_s": 1.5}, {"node": 2, "action": "restart", "at_s": 3.0}],
            recovery=[{"recovery_s": None}],
            consistency={"counts": {"operations": 440, "missed": 29, "stale": 0, "unavailable": 74}},
            key_distribution={"stored": [650, 700, 650], "owners": None},
        ),
    ]
    finding = {"breakpoints": [{"mode": "1 node", "rate": 18330.0}, {"mode": "3 nodes, 1/1", "rate": 5320.0}]}
    text = _ru("\n".join(facts.cluster_lines(RU, runs, finding)))
    assert "| постоянный темп | 1 узел | 200 | 0,5 | 2,3 | 100 % | валиден |" in text
    assert "| с убитым узлом | 3 узла, `ack` 1 из 1 | 200 | 0,5 | 33,7 | 52 % | валиден |" in text
    assert "40" not in text.split("\n\n")[0]  # the warm-up is no row
    assert "Пропускная способность по оценке рампы: 1 узел: 18 330 запр/с; 3 узла, `ack` 1 из 1: 5 320 запр/с." in text
    assert "успешный ответ получили 333 из 644 запросов. Хвост задержек не восстановился до конца окна." in text
    assert "29 чтений не нашли подтверждённую запись" in text
    assert "Ключей на узлах, по подсчёту самих узлов (`GET /v0/entities`): 650, 700, 650." in text
    assert _ru(facts.summary(RU, {"notebook": "07-cluster"}, runs)) == (
        "1 узел: p99 2,3 мс при 200 запр/с; 3 узла, `ack` 1 из 1: p99 3,72 мс при 200 запр/с."
    )
    unmeasured = [
        {
            **runs[3],
            "results": {**runs[3]["results"], "key_distribution": {"stored": None, "owners": None, "note": "x"}},
        }
    ]
    assert "Ключи по узлам не измерены" in "\n".join(facts.cluster_lines(RU, unmeasured))


def test_a_small_significance_level_is_a_power_of_ten_never_zero():
    assert [facts._level(RU, x) for x in (0.05, 0.001, 5e-4, 1e-6)] == ["0,05", "0,001", "5·10⁻⁴", "10⁻⁶"]


def _scan(range_: dict, heap: dict | None = None) -> list[dict]:
    fill = {"keys": 20421, "bytes": 83817095, "heap_bytes": 64 << 20, "value_size": 4096, "seconds": 30.0}
    return [{"kind": "scan", "results": {"fill": fill, "range": range_, "heap": heap or {"flat": None, "samples": 0}}}]


def test_a_server_with_no_range_endpoint_is_told_as_such_not_as_numbers():
    runs = _scan({"status": 404, "error": None, "faults": [], "ok": False, "quote": "unknown path"})
    lines = [_ru(line) for line in facts.scan_lines(RU, runs)]
    assert lines[0] == "В базе 79,9 МиБ (20 421 ключ, значения по 4 096 байт): 1,25 × кучи сервера (64 МиБ)."
    assert lines[2] == "Сервер ответил 404 на `GET /v0/entities?start=key0`: у него нет эндпоинта диапазона (этап 6)."
    assert not any(line.startswith("|") for line in lines)  # no table of figures that were not measured
    assert facts.scan_summary(EN, runs) == (
        "The server answered 404 to `GET /v0/entities?start=key0`: it has no range endpoint (stage 6)."
    )


def test_a_truncated_range_names_its_faults_in_the_reports_language():
    faults = [
        {"msgid": "chunk {chunk} has no '\\n' between key and value", "values": {"chunk": 17}},
        {"msgid": "the body ends after {chunks} chunks without the last (zero-length) chunk: truncated",
         "values": {"chunks": 40}},
    ]  # fmt: skip
    g = {"status": 200, "error": {"msgid": "no byte came for {seconds} s", "values": {"seconds": "30"}},
         "faults": faults, "ok": False, "entries": 39, "payload_bytes": 160000, "bytes_per_s": 5000.0,
         "entries_per_s": 1.3, "stream_s": 30.2, "ttfb_s": 0.01}  # fmt: skip
    ru = _ru("\n".join(facts.scan_lines(RU, _scan(g))))
    assert "Чтение прервалось раньше конца: ни одного байта за 30 с." in ru
    assert (
        "Проверка чанков нашла: в чанке 17 нет '\\n' между ключом и значением; тело обрывается после 40 чанков без "
        "последнего чанка (нулевой длины): ответ обрезан." in ru
    )
    assert "| 2 ошибки |" in ru and "Куча не замерялась" not in ru
    en = "\n".join(facts.scan_lines(EN, _scan(g, {"unavailable": {"msgid": "the server's pid is not known",
                                                                   "values": {}}, "flat": None})))  # fmt: skip
    assert "The heap was not sampled: the server's pid is not known." in en and "| – | 2 faults |" in en


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
