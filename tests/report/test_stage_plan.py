"""A course stage's report: what the stage asks runs first, with the parameters that answer it, the rest is left
out saying so (``--all`` runs it), and report.md and the index lead with the asks, each answered or not."""

import sys
from pathlib import Path

import papermill
import pytest

from perflab import i18n
from perflab.config.project import Project
from perflab.report import index_page, markdown, plans, stage
from perflab.report.batch import NotebookResult, Report

TINY_KV = Path(__file__).resolve().parents[1] / "servers" / "tiny_kv.py"


def _project(tmp_path, extra: str = "") -> Project:
    f = tmp_path / "perflab.toml"
    f.write_text(f'{extra}\n[server]\ncommand = "{sys.executable} {TINY_KV} {{port}}"\n')
    return Project.load(f)


def test_every_stage_asks_through_notebooks_that_take_its_parameters():
    declared = {}
    for number, s in stage.STAGES.items():
        assert s.asks and s.number == number
        for name, params in s.parameters.items():
            assert name in s.notebooks, (number, name)  # parameters only for a notebook that answers an ask
            path = plans.notebooks_dir() / f"{name}.ipynb"
            declared.setdefault(name, set(papermill.inspect_notebook(str(path))))
            assert set(params) <= declared[name], (number, name, set(params) - declared[name])
        for a in s.asks:
            assert (plans.notebooks_dir() / f"{a.notebook}.ipynb").is_file(), (number, a.notebook)
            assert i18n.language("ru")(a.text) != a.text, a.text  # every ask said in Russian


def test_stage_one_runs_one_connection_below_the_breakpoint_and_leaves_the_rest_out(tmp_path):
    plan = plans.QUICK.for_project(_project(tmp_path, "stage = 1"))
    names = [s.notebook for s in plan.notebooks]
    assert names[0] == "01-stable-load" and names[-1] == "06-summary"
    first = plan.notebooks[0]
    assert not first.not_applicable and plan.lead == "01-stable-load" and plan.stage == 1
    assert first.parameters["connections"] == [1] and first.parameters["profile_events"] == "cpu,alloc"
    assert 0 < first.parameters["stable_fraction"] < 1
    assert first.parameters["duration"] == "2s"  # the plan's durations stay
    left = {s.notebook: s.not_applicable for s in plan.notebooks[1:-1]}
    assert left["02-breakpoint"] == "not asked by stage 1 (perflab report --all runs it too)"
    assert all(left.values()), left  # nothing else runs
    everything = plans.QUICK.for_project(_project(tmp_path, "stage = 1"), every=True)
    assert not any((s.not_applicable or "").startswith("not asked") for s in everything.notebooks)
    russian = plans.QUICK.for_project(_project(tmp_path, "stage = 1"), language="ru")
    assert russian.notebooks[1].not_applicable.startswith("не входит в задание этапа 1")


def test_stage_two_asks_many_connections_and_locks_then_the_previous_stage(tmp_path):
    plan = plans.STANDARD.for_project(_project(tmp_path, "stage = 2"))
    assert [s.notebook for s in plan.notebooks][:2] == ["01-stable-load", "08-ab"]
    p = plan.notebooks[0].parameters
    assert p["connections"] == [stage.MANY_CONNECTIONS] >= [64] and "lock" in p["profile_events"]
    # no [previous] and no course classes: 08 says why, and the ask says it is not answered
    why = plan.notebooks[1].not_applicable
    assert why and "not asked" not in why


def test_a_server_of_no_stage_gets_the_plan_as_it_is(tmp_path):
    plan = plans.QUICK.for_project(_project(tmp_path))
    assert plan.stage is None
    assert [s.notebook for s in plan.notebooks] == [s.notebook for s in plans.QUICK.notebooks]
    assert not any((s.not_applicable or "").startswith("not asked") for s in plan.notebooks)


@pytest.mark.parametrize(
    "extra, error",
    [("stage = 0", "stage: the course stage your server answers, a number >= 1, got 0"), ('stage = "2"', "got '2'")],
)
def test_a_bad_stage_is_named(tmp_path, extra, error):
    with pytest.raises(ValueError, match=error.replace("(", r"\(").replace(")", r"\)")):
        _project(tmp_path, extra)


def test_report_md_and_the_index_lead_with_the_asks_each_answered_or_why_not(tmp_path):
    nbs = [
        NotebookResult("01-stable-load", "1. Stable load: PUT and GET at a fixed rate", "", status="ok", html="a.html"),
        NotebookResult(
            "08-ab", "8. This stage against the previous one", "", status="not applicable", error="no [previous]"
        ),
    ]
    r = Report(
        "quick", "", str(tmp_path), "2026-12-08T01:00:00+00:00", target="me", stage=2, language="ru", notebooks=nbs
    )
    lines = markdown._asks(i18n.language("ru"), r.to_json())
    assert lines[1] == "## Что просит этап 2"
    assert lines[3].startswith("- Не меньше 64 соединений") and "выполнено в разделе «" in lines[3]
    assert lines[5] == "- Сравнение с предыдущим этапом (синхронным сервером): не выполнено: no [previous]."
    asks = index_page.asks(i18n.language("ru"), r)
    assert [a["status"] for a in asks] == ["answered", "answered", "not applicable"]
    assert asks[0]["html"] == "a.html"
    html = index_page.render(r, plotly_js=None)
    assert "Что просит этап 2" in html and "не выполнено" in html
    assert markdown._asks(i18n.language("ru"), {**r.to_json(), "stage": None}) == []


def test_a_fault_of_the_students_server_is_a_finding_in_words_not_a_failure(tmp_path):
    """A notebook stopped by ServerFault (the server's HTTP broken, diagnosed) is no failed notebook: the asks,
    the findings and the index say what is wrong with the server, in the report's language."""
    said = (
        "ServerFault: each answer carries more headers than the one before (2, 3, 4, 5, 6, 7, 8, 9 headers in 8 "
        "answers) from each request to the next, across connections too: one Response object (or its headers) is "
        "kept for the whole server and every answer adds to it; build a new Response for every request. After about "
        "100 headers an HTTP client (Python's, and many others) refuses the answer (found when the fill could not "
        "write key97: HTTPException after 3 tries)"
    )
    nbs = [
        NotebookResult(
            "01-stable-load", "1. Stable load: PUT and GET at a fixed rate", "", status="server fault", error=said
        )
    ]
    r = Report(
        "quick", "", str(tmp_path), "2026-12-08T01:00:00+00:00", target="me", stage=1, language="ru", notebooks=nbs
    )
    assert r.failed == []
    ru = i18n.language("ru")
    asks = markdown._asks(ru, r.to_json())
    assert "не выполнено: ошибка в вашем сервере: каждый ответ несёт больше заголовков" in asks[3]
    assert "(2, 3, 4, 5, 6, 7, 8, 9 заголовков в 8 ответах)" in asks[3]
    assert asks[4].endswith(": не выполнено, как и выше.") and asks[5].endswith(": не выполнено, как и выше.")
    found = "\n".join(markdown._findings(ru, r.to_json(), {}))
    assert "Ошибка в вашем сервере, найденная лабораторией: каждый ответ несёт больше заголовков" in found
    assert "Failed" not in found and "упал" not in found
    html = index_page.render(r, plotly_js=None)
    assert "ошибка вашего сервера" in html and "создавайте новый Response на каждый запрос" in html


def test_an_ask_the_notebook_ran_but_did_not_measure_says_so():
    """Stage 3's keys per node: the cluster notebook ran, but nodes without the range API could not count theirs."""
    ru, asked = i18n.language("ru"), stage.STAGES[3]
    ran = {"07-cluster": {"status": "ok"}}
    counted = [{"results": {"key_distribution": {"stored": [650, 700, 650], "owners": None}}}]
    silent = [{"results": {"key_distribution": {"stored": None, "owners": None}}}]
    by_ask = lambda runs: {a["ask"]: a for a in stage.told(ru, asked, ran, {"07-cluster": runs})}  # noqa: E731
    assert by_ask(counted)["ключи по узлам"]["status"] == "answered"
    told = by_ask(silent)["ключи по узлам"]
    assert told["status"] == "not measured" and "не отвечают на `GET /v0/entities`" in told["why"]
    assert by_ask(silent)[ru(asked.asks[0].text)]["status"] == "answered"  # the cluster's latency was measured
