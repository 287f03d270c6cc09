"""`perflab report --project` on a course server as a student runs it: tests/servers/course compiled into its own git
repository (four commits: its stages, each built with the file's [server] build), a perflab.toml beside it.

Every notebook either runs or says on the index page why it does not apply, the command exits 0, and nothing a
reader sees (the pages' text and outputs, the index, the Markdown report) speaks of the built-in server: no
memtables, SSTables, flushes. 08 compares this stage (6) with the previous one its classes hold (1) and heads the
index; 09 measures the repository's own commits; 02 asked the server for /v0/status and says it answered 400.
The Markdown report is rendered to HTML by a real Markdown renderer and loaded in headless chromium: every image
loads, every link points at a file that is there."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from rendered import check_markdown
from tiny_report import SEARCH

from perflab import paths
from perflab.analysis.latency.stable import RECORD
from perflab.config.project import Project
from perflab.lab.stable import pick
from perflab.report import facts, plans

pytestmark = pytest.mark.browser

SOURCES = Path(__file__).resolve().parents[1] / "servers" / "course"
#: what a page about a server of yours must never say: the built-in server's storage and the server itself
#: the built-in server's words in prose; not inside a name of code (a profile's frames are the server's own: the
#: kernel's skb_defer_free_flush, a student's dao/MemTable.put)
BUILT_IN = re.compile(r"(?<![\w/.:$])(memtable|sstable|flush(es|ed|ing)?|built-in server)(?![\w(])", re.IGNORECASE)
SLA = "200ms"
#: the searches' settings: 02's, and 01's before its stable runs (seconds each: one probe after the ramp, holds of 0.5 s)
TINY_SEARCH = {
    **SEARCH,
    "start_rate": 300,
    "repeats": 1,
    "max_probes": 2,
    "server_warmup": 0.5,
    "cooldown": 0,
    "sustain": 0.5,
    "hold_windows": 1,
    "sustain_tries": 2,
    "quiet_wait": 1,
}
#: 01 runs at this share of each breakpoint found (the course's "stable rate below the breakpoint")
FRACTION = 0.7
TINY = {
    "name": "tiny-course",
    "caveat": "A tiny plan's numbers: the test suite's.",
    "notebooks": [
        {
            "notebook": "01-stable-load",
            "parameters": {
                "duration": 1,
                "warmup": 0.5,
                "put_rate": 300,
                "get_rate": 300,
                # the course's first stage: one connection, profiled, at a share of its breakpoint (the search's own
                # estimate: no holds, seconds saved; two probes more than 02's, as a 1-connection ramp tends to
                # overshoot and two bracket probes above the breakpoint leave no number)
                "stable_fraction": FRACTION,
                "search": {**TINY_SEARCH, "sustain": 0, "max_probes": 4},
                "sla_p99": SLA,
                "connections": [1],
                "prefill_keys": 1000,
                "profile_events": "cpu,alloc",
                "alloc_bytes": "8k",  # enough alloc samples in a 1 s window for a flame graph of each operation
                "memtable_size": "64k",
            },
        },  # the built-in server's: dropped for this one
        {
            "notebook": "02-breakpoint",
            "parameters": {
                **TINY_SEARCH,
                "connections": [4],
                "prefill_keys": 1000,
                "include_ceiling": True,
                "sla_p99": SLA,
            },
        },
        {"notebook": "03-sync-vs-async", "parameters": {}},
        {"notebook": "04-executor-tuning", "parameters": {}},
        {"notebook": "05-storage", "parameters": {}},
        # 07 runs a course server of stage >= 3 as 3 nodes (not in this report: minutes of cluster runs; the plan's
        # choice is test_a_stage_6_course_server_is_a_cluster_and_its_range_leads's)
        {
            "notebook": "08-ab",
            "parameters": {"a": {"mode": "sync"}, "script": "status.lua"},
            "yours": {
                "script": "get-random.lua",
                "prefill_keys": 500,
                "rates": [300],
                "connections": 4,
                "threads": 2,
                "metric": "p50",
                "probe_duration": "300ms",
                "warmup": "150ms",
                "min_pairs": 2,
                "max_pairs": 4,
                "alpha": 0.05,
                "budget": None,
                "idle_pairs": 0,
                "server_warmup": "500ms",
                "sla_p99": SLA,
            },
        },
        {
            "notebook": "09-history",
            "parameters": {"planted": 2},
            "yours": {
                "script": "put.lua",
                "commits": 4,
                "rate": 300,
                "connections": 2,
                "threads": 2,
                "repeats": 2,
                "probe_duration": "200ms",
                "warmup": "100ms",
                "server_warmup": "500ms",
                "max_pairs": 8,
                "alpha": 0.05,
                "margin": 0.5,
                "budget": None,
            },
        },
        {"notebook": "06-summary", "parameters": {}, "after": True},
    ],
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=student", "-c", "user.email=s@example.org", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def student(server_build, tmp_path_factory) -> Path:
    """A student's repository: the course-style server's sources in four commits (the last three touch a comment),
    its build output in build/classes (ignored by git), and its perflab.toml (built by javac, as Gradle would)."""
    repo = tmp_path_factory.mktemp("student")
    (repo / "src").mkdir()
    subprocess.run(["cp", "-r", f"{SOURCES}/ru", str(repo / "src")], check=True)
    lib = paths.course_dir() / "lib" / "*"
    build = f"rm -rf build/classes && javac -nowarn -d build/classes -cp '{lib}' $(find src -name '*.java')"
    (repo / "perflab.toml").write_text(
        f'label = "perflabstudent"\n[server]\ncourse = "build/classes"\nbuild = "{build}"\n'
    )
    (repo / ".gitignore").write_text("build/\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "stage 1")
    service = repo / "src/ru/vk/itmo/test/perflabstudent/StudentService.java"
    for n in (2, 3, 4):
        service.write_text(service.read_text() + f"// stage {n}\n")
        _git(repo, "commit", "-q", "-am", f"stage {n}")
    subprocess.run(["bash", "-c", build], cwd=repo, check=True, capture_output=True, timeout=300)
    return repo


@pytest.fixture(scope="module")
def report(student, tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("course-report")
    plan = work / "plan.json"
    plan.write_text(json.dumps(TINY))
    env = {
        **os.environ,
        "PERFLAB_DATA": str(work / "data"),
        "PERFLAB_REPORT": str(work / "report"),
        "PYTHONPATH": str(paths.repo_root()),
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "perflab",
            "report",
            "--plan",
            str(plan),
            "--no-progress",
            "--all",  # every notebook, not only what stage 6 asks (the stage's plan: test_stage_plan.py)
            "--project",
            str(student / "perflab.toml"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=1200,
        cwd=str(student),
    )
    assert proc.returncode == 0, proc.stderr[-6000:]
    return Path(proc.stdout.strip().splitlines()[-1]).parent


def _seen(nb_path: Path) -> str:
    """What a reader of the page sees: its Markdown and every output (the code is folded away)."""
    nb = nbformat.read(str(nb_path), as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            out.append(cell.source)
            continue
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") if isinstance(o.get("text"), str) else "".join(o.get("text") or []))
            out.append(f"{o.get('ename', '')}: {o.get('evalue', '')}")
            for mime, value in (o.get("data") or {}).items():
                if mime.startswith("image/"):
                    continue
                out.append(value if isinstance(value, str) else json.dumps(value))
    return "\n".join(out)


def _text(page: str) -> str:
    """An HTML page's text without its scripts, styles and folded code."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    page = re.sub(r"<details class=\"perflab-code\".*?</details>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_a_stage_6_course_server_is_a_cluster_and_its_range_leads(student):
    """The stage comes from the factory (@ServiceFactory(stage = 6)): its report runs notebook 10 first, leaves out
    what stage 6 does not ask (--all runs it), and the cluster notebook takes its nodes without a [cluster] table."""
    project = Project.load(student / "perflab.toml")
    assert project.stage == 6 and project.cluster is None
    plan = plans.QUICK.for_project(project)
    assert plan.notebooks[0].notebook == "10-range" and plan.lead == "10-range" and plan.language == "ru"
    left = {s.notebook: s.not_applicable for s in plan.notebooks}
    assert left["01-stable-load"] == "не входит в задание этапа 6 (`perflab report --all` запустит и его)"
    every = {s.notebook: s.not_applicable for s in plans.QUICK.for_project(project, every=True).notebooks}
    assert every["07-cluster"] is None and every["01-stable-load"] is None


def test_every_notebook_runs_or_says_why_not_and_the_stages_lead(report):
    data = json.loads((report / "report.json").read_text())
    by = {n["notebook"]: n for n in data["notebooks"]}
    assert data["failed"] == []
    for name in ("01-stable-load", "02-breakpoint", "06-summary", "08-ab", "09-history"):
        assert by[name]["status"] == "ok", (name, by[name]["error"])
    for name in ("03-sync-vs-async", "04-executor-tuning", "05-storage"):
        assert by[name]["status"] == "not applicable" and "perflab ab --a-project" in by[name]["error"]
        assert by[name]["effective_parameters"] == {} and by[name]["question"] == ""
    assert "07-cluster" not in by
    # only what reached the server is listed: the plan's memtable_size did not
    assert "memtable_size" not in by["01-stable-load"]["effective_parameters"]
    assert "mode" not in by["01-stable-load"]["effective_parameters"]
    assert "a" not in by["08-ab"]["effective_parameters"]
    # each question states what ran
    assert "one run per connection count (1)" in by["01-stable-load"]["question"]
    assert "with 4 connections" in by["02-breakpoint"]["question"]
    assert "at 300 req/s of get-random.lua with 4 connections" in by["08-ab"]["question"]
    assert "across the last 4 commits of your repository" in by["09-history"]["question"]
    # 08: this stage (6) against the previous one its build output holds (1), and it heads the index
    assert data["lead"] == "08-ab"
    answer = by["08-ab"]["finding"]["answer"]
    assert answer.startswith("perflabstudent against perflabstudent, stage 1: "), answer
    index = (report / "index.html").read_text()
    assert index.index('id="lead"') < index.index('id="findings"')
    # 02 asked for the course API's /v0/status, which this server answers 400, and says so
    assert "`GET /v0/status` answered 400" in _seen(report / by["02-breakpoint"]["ipynb"])
    # 09 measured the repository's own four commits
    page09 = _seen(report / by["09-history"]["ipynb"])
    assert "The history of " in page09 and "4 commits from" in page09


def test_01_runs_each_operation_at_the_share_of_the_breakpoint_its_own_search_found(report):
    """01 with stable_fraction: each operation's breakpoint searched first with the most connections (a run of the
    notebook), its stable runs at the fraction of what that search found (or of its lower bound, or the fixed rate
    when it gave neither), each run's record naming the search and judging the run."""
    data = json.loads((report / "report.json").read_text())
    n = next(x for x in data["notebooks"] if x["notebook"] == "01-stable-load")
    metas = facts.metas(data, report, n)
    searches = {m["_run"]["id"]: m["results"] for m in metas if m.get("kind") == "breakpoint"}
    stable = [m for m in metas if m.get("kind") == "experiment"]
    assert len(searches) == 2 and len(stable) == 2, [m.get("kind") for m in metas]
    for m in stable:
        rec = m[RECORD]
        row = searches[rec["search_run"]]
        assert row["workload"] == rec["op"] and row["connections"] == rec["connections"] == 1, (row, rec)
        assert rec["fraction"] == FRACTION and rec["breakpoint"]["rate"] == row["breakpoint_rate"], (row, rec)
        assert rec == {**rec, **pick(rec["breakpoint"], FRACTION, 300)}, rec
        assert m["results"]["target_rate"] == rec["rate"] and m["results"]["connections"] == rec["run"]["connections"]
        assert rec["run"]["run"] == m["_run"]["id"] and rec["run"]["kept_up"] in (True, False, None), rec["run"]


def test_no_page_speaks_of_the_built_in_server(report):
    data = json.loads((report / "report.json").read_text())
    seen = {"index.html": _text((report / "index.html").read_text()), "report.md": (report / "report.md").read_text()}
    for n in data["notebooks"]:
        if n.get("ipynb"):
            seen[n["ipynb"]] = _seen(report / n["ipynb"])
            seen[n["html"]] = _text((report / n["html"]).read_text())
    # nor of the lab's own words for itself (its seed reports, its quick plan as a tour)
    internal = {where: sorted(set(re.findall(r"\b(?:seeds|tour)\b", text, re.I))) for where, text in seen.items()}
    assert {w: f for w, f in internal.items() if f} == {}
    found = {where: sorted({m.group(0).lower() for m in BUILT_IN.finditer(text)}) for where, text in seen.items()}
    assert {w: f for w, f in found.items() if f} == {}, {
        w: [ln for ln in seen[w].splitlines() if BUILT_IN.search(ln)][:5] for w, f in found.items() if f
    }


def _latin_words(text: str, names: list[str]) -> list[str]:
    """The words in Latin letters left in ``text`` once its code (fenced, inline, ``<code>``), link targets, file
    names, ``names`` (the server's, the machine's, the tools') and the technical words a Russian report writes
    as they are (PUT, CPU, async-profiler) are taken out: English sentences, if any are left."""
    text = re.sub(r"(`{3,}).*?\1", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)
    for name in sorted((n for n in names if n), key=len, reverse=True):
        text = text.replace(name, " ")
    text = re.sub(r"\S+\.(md|json|html|ipynb|lua|toml|png|svg)\b|\b\d\d-[a-z0-9-]+", " ", text)
    return [w for w in re.findall(r"[A-Za-z][A-Za-z-]*[A-Za-z]", text) if w not in TECHNICAL]


#: what a Russian report writes in Latin letters: methods, units, tools, the course's API
TECHNICAL = {
    *"PUT GET DELETE CPU JIT JDK API UTC HdrHistogram async-profiler perflab wrk2 wrk chromium headless".split(),
    *"B A p50 p99 p99.9 Markdown git".split(),
}


def _html_text(page: str) -> str:
    """What a reader of an HTML page reads, less what the page shows as code (class mono, err; <code>)."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S | re.I)
    page = re.sub(r"<code>.*?</code>", " ", page, flags=re.S)
    page = re.sub(r"<(span|div|a|td)\b[^>]*class=\"[^\"]*\b(mono|err)\b[^\"]*\"[^>]*>.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_a_course_servers_report_is_in_russian_with_its_numbers_first_and_no_internal_words(report):
    """A course server's report defaults to Russian: report.md and the index page say every sentence in
    Russian (no English word outside code, numbers, units and names), the student's numbers before a short
    method; no page of it speaks of seeds or tours."""
    data = json.loads((report / "report.json").read_text())
    assert data["language"] == "ru"
    m = data["machine"]
    names = [
        data["target"],
        data["target"].split(" (")[0],  # the server's name
        data["caveat"],
        data["plan"],
        data["command"],
        *(str(x) for kv in (data.get("tools") or {}).items() for x in kv),
        *(str(m.get(k) or "") for k in ("cpu_model", "os", "kernel", "arch", "hostname")),
    ]
    md = (report / "report.md").read_text()
    assert md.startswith("# Отчёт о нагрузочном тестировании: perflabstudent")
    assert md.index("## Результаты") < md.index("## 1. Стабильная нагрузка") < md.index("## Методика")
    assert "| нагрузка | соединений | темп, запр/с |" in md and "консольный вывод генератора нагрузки" in md
    assert "## Что не запускалось и почему" in md
    # 01: each operation's stable rate and why, then whether its run held it, in Russian; both operations' consoles;
    # the cpu and alloc flame graphs of the profiled runs (one connection, as the course's first stage asks)
    for op in ("PUT", "GET"):
        said = re.search(rf"^{op}: точка разладки \(1 соединение\) (— [\d\s\xa0]+ запр/с|не найдена: ).*$", md, re.M)
        assert said, md[:6000]
        assert re.search(
            r"стабильный темп — 70\s?% от (неё|нижней границы|этой границы)|постоянным темпом 300 запр/с", said[0]
        ), said[0]
        assert re.search(r"1 соединение: (прогон (не )?выдержал этот темп|о прогоне нельзя судить)", said[0]), said[0]
        assert f"**{op}, 1 соединение**, консольный вывод генератора нагрузки:" in md
    by = {n["notebook"]: n for n in data["notebooks"]}
    for m in facts.metas(data, report, by["01-stable-load"]):
        if m.get("kind") != "experiment":
            continue
        # each profiled run's flame graphs, each captioned by its own event; an alloc graph wherever async-profiler
        # wrote one (a window with too few allocations has none: a 1 s window of PUTs may not fill one TLAB)
        run, op = m["_run"]["id"], m[RECORD]["op"]
        wrote = {e: any((Path(data["data_root"]) / "runs" / run).glob(f"profile-*-{e}.html")) for e in ("cpu", "alloc")}
        assert wrote["cpu"], run
        for event, profile in (("cpu", "Профиль CPU"), ("alloc", "Профиль аллокаций")):
            link = f"[{profile}: {op}, 1 соединение](flamegraphs/{run}-profile-cpu-alloc-{event}.html)"
            assert (link in md) == wrote[event], (link, wrote)
    assert _latin_words(md, names) == [], [ln for ln in md.splitlines() if _latin_words(ln, names)][:8]
    index = _html_text((report / "index.html").read_text())
    assert "Точки разладки" in index and "Методика" in index
    assert _latin_words(index, names) == [], [ln for ln in index.splitlines() if _latin_words(ln, names)][:8]
    for text in (md, index):
        assert not re.search(r"\b(seeds|tour|built-in)\b", text, re.I)  # (a seed=1 of a console is code)


def test_the_markdown_report_renders_with_every_image_and_link(report, tmp_path):
    # written again into a folder of the student's choosing, in English (--lang en), it stands alone there: one
    # writing (its figures drawn in a chromium) checks both; the Russian one is the batch's (the test above)
    out = tmp_path / "reports" / "stage6"
    subprocess.run(
        [sys.executable, "-m", "perflab", "markdown", str(report), "--out", str(out), "--lang", "en"],
        check=True,
        capture_output=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(paths.repo_root())},
    )
    md = (out / "report.md").read_text()
    assert md.index("## Findings") < md.index("## 1. Stable load") < md.index("## Method")
    assert "**Question:** at a stable rate below the breakpoint, how fast does your server answer" in md
    assert md.count("](figures/") >= 5 and "](flamegraphs/" in md
    # the generator's console in code blocks, its command above it, as the course's reports show wrk2's
    assert re.search(r"```text\n\$ perflab-load -t 1 -c 1 -d 1s -R \d+ -s put.lua .*\nRunning 1s test @ ", md), md[
        :3000
    ]
    # 01's rate and why, in English too
    assert re.search(r"^PUT: (the breakpoint with 1 connection is|no breakpoint with 1 connection: )", md, re.M), md
    checked = check_markdown(out / "report.md", tmp_path / "rendered.png")
    assert checked["images"] >= 5 and checked["broken_images"] == [], checked
    assert checked["links"] >= 1 and checked["broken_links"] == [], checked
    assert checked["errors"] == [], checked
