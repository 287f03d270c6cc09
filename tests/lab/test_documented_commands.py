"""What the docs show is what runs: every ``perflab ...`` command line of README.md, docs/**/*.md and the
READMEs of notebooks/, report/ and data/ is parsed by the real parser (``perflab.cli.parse``; ``perflab
report``'s own), and the main ones run on small inputs (marked slow: ``make test-all``)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys

import pytest
from support import REPO

from perflab.cli import build_parser, parse

DOCS = [
    REPO / "README.md",
    *sorted((REPO / "docs").rglob("*.md")),
    *(
        p
        for p in (REPO / "notebooks" / "README.md", REPO / "report" / "README.md", REPO / "data" / "README.md")
        if p.is_file()
    ),
]
COMMANDS = set(build_parser()._subparsers._group_actions[0].choices)
#: a line that calls perflab: `perflab`, `python -m perflab`, `.venv/bin/python -m perflab`, after a prompt or
#: environment variables (`PERFLAB_DATA=/tmp/d perflab ...`)
_CALL = re.compile(
    r"^\s*(?:\$\s+)?(?:[A-Z_]+=\S*\s+)*(?:\S*python3?\s+-m\s+perflab|\S*/perflab|perflab)\s+"
    r"([a-z][a-z-]*)\b"
)
_PLACEHOLDER = re.compile(r"<[^>]*>")
SHELLS = ("bash", "sh", "shell", "console")


def _argv(text: str) -> list[str] | None:
    """The arguments after ``perflab`` in a shell line (placeholders <like this> one argument, optional parts
    [like this] given), ``None`` when the line calls no perflab command."""
    m = _CALL.search(text)
    if m is None or m.group(1) not in COMMANDS:
        return None
    rest = text[m.start(1) :]
    rest = _PLACEHOLDER.sub("PLACEHOLDER", rest).replace("[", "").replace("]", "")
    return shlex.split(rest, comments=True)


def documented() -> list[tuple[str, list[str]]]:
    """``(where, argv)`` for every command line in a shell block (```bash; the other fenced blocks hold
    outputs and diagrams), and every inline code span that is a whole command (``perflab run --fill 10000
    -s get-random.lua``, not a mention like ``perflab gate``)."""
    out = []
    for doc in DOCS:
        lines = doc.read_text().splitlines()
        fenced, shell, joined, start = False, False, "", 0
        for i, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                fenced, joined = not fenced, ""
                shell = fenced and line.strip()[3:].strip() in SHELLS
                continue
            if fenced:
                if not shell:
                    continue
                if not joined:
                    start = i
                joined += line.rstrip()
                if joined.endswith("\\"):
                    joined = joined[:-1] + " "
                    continue
                argv = _argv(joined)
                if argv is not None:
                    out.append((f"{doc.relative_to(REPO)}:{start}", argv))
                joined = ""
            else:
                for span in re.findall(r"`([^`]+)`", line):
                    argv = _argv(span)
                    if argv is not None and len(argv) > 1:
                        out.append((f"{doc.relative_to(REPO)}:{i}", argv))
    return out


def _parse(argv: list[str]) -> str | None:
    """``None`` when the real parser takes ``argv``, else its error message."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parse(build_parser(), argv)
    except SystemExit as e:
        return err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else f"exit {e.code}"
    return None


def test_the_docs_show_commands_of_every_kind():
    found = documented()
    kinds = {argv[0] for _, argv in found}
    # the extraction itself must find them: a regex that matched nothing would make the next test pass
    assert (
        len(found) >= 30
        and {"run", "breakpoint", "ab", "gate", "bisect", "history", "report", "hosts", "scheduler", "worker", "certs"}
        <= kinds
    ), sorted(kinds)


def test_every_documented_command_line_is_accepted_by_the_parser():
    refused = [
        f"{where}: perflab {shlex.join(argv)}\n    {why}"
        for where, argv in documented()
        if (why := _parse(argv)) is not None
    ]
    assert not refused, "\n".join(refused)


def test_script_arguments_after_double_dash_for_every_command_that_takes_them():
    p = build_parser()
    for argv, positional in (
        (["bisect", "HEAD~3", "HEAD", "-R", "2k", "-s", "get-random.lua"], ("good", "bad")),
        (["gate", "main", "HEAD", "-c", "16", "-R", "2000"], ("base", "head")),
        (["history", "v1", "v2", "--repeats", "5"], ("good", "bad")),
        (["run", "-R", "100", "-s", "get-random.lua"], ()),
        (["ab", "--a-workers", "1", "--b-workers", "2"], ()),
        (["breakpoint", "-s", "get-random.lua"], ()),
    ):
        a = parse(p, [*argv, "--", "keys=10000", "seed=7"])
        assert a.script_args == ["keys=10000", "seed=7"], argv
        assert [getattr(a, n) for n in positional] == argv[1 : 1 + len(positional)]
        # the script's arguments may also come before the options, without --
        if positional:
            a = parse(p, [*argv[:3], "keys=1", *argv[3:], "--", "seed=7"])
            assert a.script_args == ["keys=1", "seed=7"]
    assert "takes no script arguments" in _parse(["runs", "--", "keys=1"])


def test_a_typed_option_reaches_the_record_typed():
    # -R of gate, bisect and history is read as a rate where the options become parameters: "2k" is 2000.0
    from perflab.config import LoadParams
    from perflab.config.fields import from_arguments
    from perflab.config.regress import AtRate, GateParams
    from perflab.regress.compare import Setup

    a = parse(build_parser(), ["gate", "A", "B", "-R", "2k"])
    assert from_arguments(AtRate, a, "regress_").rate == 2000.0
    assert Setup.of(LoadParams(), None, GateParams, rate="2500").rate == 2500.0  # and from Python
    with pytest.raises(ValueError, match="rate: must be > 0"):
        Setup.of(LoadParams(), None, GateParams, rate="0")


# --- the main documented commands, run on small inputs ------------------------------------------------
def _small(argv: list[str]) -> list[str]:
    """A documented command made small: short loads, few probes and pairs, no prefill of a million keys (the
    shape of the command line is the documentation's)."""
    out, skip, rates = [], False, 0
    shrink = {
        "-d": "1s",
        "--duration": "1s",
        "--warmup": "0",
        "--prefill": "2000",
        "--fill": "500",
        "-c": "2",
        "-t": "1",
        "--pairs": "4",
        "--repeats": "2",
        "--budget": "60s",
    }
    for tok in argv:
        if skip:
            skip = False
            continue
        if tok in shrink:
            out += [tok, shrink[tok]]
            skip = True
        elif tok in ("-R", "--rate"):  # distinct rates stay distinct (an A/B at two rates)
            out += [tok, str(300 + 100 * rates)]
            rates, skip = rates + 1, True
        elif tok.startswith("keys="):
            out.append("keys=500")
        else:
            out.append(tok)
    extra = {
        "run": ["-d", "1s"],
        "profile": ["-d", "1s"],
        "breakpoint": [
            "--max-probes",
            "2",
            "--repeats",
            "1",
            "--probe-duration",
            "1s",
            "--server-warmup",
            "0",
            "--sustain",
            "1s",
            "--hold-windows",
            "1",
            "--sustain-tries",
            "2",
            "--second-opinion",
            "none",
            "--quiet-wait",
            "1s",
        ],
        "ab": ["--probe-duration", "0.5s", "--min-pairs", "2", "--pairs", "4", "--idle-pairs", "0"],
    }.get(out[0], [])
    script = out.index("--") if "--" in out else len(out)  # what follows -- is the script's
    head, tail = out[:script], out[script:]
    for i in range(0, len(extra), 2):
        if extra[i] not in head:
            head += extra[i : i + 2]
    if out[0] in ("breakpoint", "ab") and "--quiet" not in head:
        head.append("--quiet")
    return head + tail


MAIN = ("run", "profile", "breakpoint", "ab", "runs")
_WORD = re.compile(r"^[A-Z]{2,}$")
#: documented commands this test leaves to others: builds of commits (tests/lab/test_ab_server.py, tests/regress),
#: several machines (tests/hosts), clusters (tests/cluster), your project files (tests/lab/test_project.py); and
#: those with a word that stands for yours (SHA, <the ab run>, old/TinyKv.java)
_ELSEWHERE = ("--scheduler", "--nodes", "--a-commit", "--b-commit", "--project", "--a-project", "--b-project")


@pytest.mark.slow
def test_the_main_documented_commands_run(server_build, loadgen_binary, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFLAB_", "DASK_"))}
    env.update(PERFLAB_DATA=str(tmp_path / "data"), PYTHONPATH=str(REPO))
    ran = set()
    for where, argv in documented():
        if argv[0] not in MAIN or any(
            a in _ELSEWHERE or "PLACEHOLDER" in a or "old/" in a or (_WORD.match(a) and a != "HEAD") for a in argv
        ):
            continue
        cmd = _small(argv)
        r = subprocess.run(
            [sys.executable, "-m", "perflab", *cmd], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
        )
        # a search on two connections may find no rate its server keeps up with: exit 1, an answer all the same
        answered = r.returncode == 0 or (cmd[0] == "breakpoint" and r.returncode == 1 and "\nbreakpoint: " in r.stdout)
        assert answered, f"{where}: perflab {shlex.join(cmd)}\n{r.stdout[-2000:]}\n{r.stderr[-3000:]}"
        ran.add(argv[0])
    assert ran == set(MAIN), ran
