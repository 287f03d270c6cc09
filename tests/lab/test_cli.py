"""python -m perflab: help, subcommands, exit codes for bad input."""

import subprocess
import sys

from conftest import REPO
from perflab.cli import main


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "perflab", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)


def test_help_lists_subcommands():
    r = run("--help")
    assert r.returncode == 0
    for cmd in ("run", "profile", "breakpoint", "prefill", "inspect", "runs", "index", "report"):
        assert cmd in r.stdout


def test_bad_input_exit_2(data_root, capsys):
    assert main(["run", "--backend", "memory", "-R", "0", "-d", "1s"]) == 2
    assert "rate must be > 0, got 0" in capsys.readouterr().err
    assert main(["run", "--mode", "turbo", "-R", "10"]) == 2
    assert "mode must be one of" in capsys.readouterr().err


def test_run_then_runs_and_index(server_build, loadgen_binary, data_root, capsys):
    assert main(["run", "--backend", "memory", "-R", "200", "-d", "1s", "-c", "2", "--name", "cli-smoke"]) == 0
    out = capsys.readouterr().out
    assert "Requests/sec:" in out and "cli-smoke" in out
    assert main(["runs"]) == 0
    assert "cli-smoke" in capsys.readouterr().out
    assert main(["index", "SELECT status, server_backend FROM runs"]) == 0
    out = capsys.readouterr().out
    assert "index.duckdb" in out and "ok" in out and "memory" in out


def test_report_is_dispatched():
    r = run("report", "--help")
    assert r.returncode == 0 and "usage" in r.stdout.lower() and "--plan" in r.stdout


def test_breakpoint_defaults_guard_against_a_cold_first_probe():
    # Without a server warm-up and one retry, a JIT-cold first probe failing at 1000/s ended a
    # search of a ~50k/s server at 969/s.
    from perflab.cli import build_parser
    a = build_parser().parse_args(["breakpoint", "-s", "get-random.lua"])
    assert (a.server_warmup, a.retries, a.warmup) == ("10s", 1, "2s")
    a = build_parser().parse_args(["run", "-R", "10"])
    assert a.warmup == "0s"  # a plain run still records from its first request
