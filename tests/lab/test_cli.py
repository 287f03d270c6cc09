"""python -m perflab: help, subcommands, exit codes for bad input."""

import subprocess
import sys

from support import REPO

from perflab.cli import main
from perflab.records import list_runs


def run(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "perflab", *args], cwd=REPO, capture_output=True, text=True, timeout=300, env=env
    )


def test_help_lists_subcommands():
    r = run("--help")
    assert r.returncode == 0
    for cmd in ("run", "profile", "breakpoint", "prefill", "inspect", "runs", "index", "report"):
        assert cmd in r.stdout


def test_bad_input_exit_2_in_the_same_words_as_python(data_root, capsys):
    assert main(["run", "--backend", "memory", "-R", "0", "-d", "1s"]) == 2
    assert "error: rate: must be > 0, got '0'" in capsys.readouterr().err
    assert main(["run", "--mode", "turbo", "-R", "10"]) == 2
    assert "mode: --mode: expected one of sync, async, virtual, got 'turbo'" in capsys.readouterr().err
    assert main(["run", "--memtable-size", "1k", "-R", "10"]) == 2  # the server's bound, before any JVM starts
    assert "--memtable-size: must be between 64k and 1g, got '1k'" in capsys.readouterr().err
    assert main(["breakpoint", "--start-rate", "5000", "--max-rate", "1000"]) == 2
    assert "start_rate: must be within [min_rate, max_rate]" in capsys.readouterr().err
    assert main(["breakpoint", "--sla", "0"]) == 2
    assert "sla_p99: must be > 0" in capsys.readouterr().err
    assert main(["breakpoint", "--validity-generator-cpu-fail", "2"]) == 2
    assert "generator_cpu_fail: must be > 0 and <= 1" in capsys.readouterr().err
    assert list_runs().empty  # nothing started, nothing recorded


def test_run_then_runs_and_index(server_build, loadgen_binary, data_root, capsys):
    assert main(["run", "--backend", "memory", "-R", "200", "-d", "1s", "-c", "2", "--name", "cli-smoke"]) == 0
    out = capsys.readouterr().out
    assert "Requests/sec:" in out and "cli-smoke" in out
    assert main(["runs"]) == 0
    assert "cli-smoke" in capsys.readouterr().out
    assert main(["index", "SELECT status, server_backend FROM runs"]) == 0
    out = capsys.readouterr().out
    assert "index.duckdb" in out and "ok" in out and "memory" in out


def test_server_host_chooses_a_host_not_the_servers_bind_address(server_build, loadgen_binary, data_root, capsys):
    # --server-host names the host the server runs on (here the in-process one, "local"); it once also landed
    # in the built-in server's own --host and the server exited: "--host: cannot resolve 'local'"
    assert main(["run", "--backend", "memory", "-R", "200", "-d", "1s", "-c", "2", "--server-host", "local"]) == 0
    run = list_runs().iloc[-1]
    assert run["status"] == "ok"


def test_report_is_dispatched():
    r = run("report", "--help")
    assert r.returncode == 0 and "usage" in r.stdout.lower() and "--plan" in r.stdout


def test_every_option_comes_from_a_parameter_field():
    # One option list: the parser is built from the dataclass fields, so the help shows their defaults
    # and an option not given leaves the field's default (the library's and the CLI's are one).
    import dataclasses

    from perflab import BreakpointParams, LoadParams, ServerConfig
    from perflab.cli import build_parser
    from perflab.config.fields import cli_flag

    help_text = build_parser()._subparsers._group_actions[0].choices["breakpoint"].format_help()
    # host and port: the lab's; cluster and self_url: set per node by the lab with --nodes
    for cls, skip in (
        (ServerConfig, {"host", "port", "cluster", "self_url"}),
        (BreakpointParams, {"seed", "seed_arg"}),
        (
            LoadParams,
            {
                "rate",
                "duration",
                "warmup",
                "rate_steps",
                "step_duration",
                "ramp",
                "ramp_curve",
                "stop_on_p99",
                "tool",
                "script_args",
            },
        ),
    ):
        for f in dataclasses.fields(cls):
            if f.name not in skip and cli_flag(f):
                assert cli_flag(f) in help_text, f"{cls.__name__}.{f.name}"
    a = build_parser().parse_args(["breakpoint", "-s", "get-random.lua"])
    assert a.search_retries is None and a.search_warmup is None  # not given: BreakpointParams' defaults apply
    a = build_parser().parse_args(["run", "-R", "10", "--memtable-size", "8m"])
    assert a.server_memtable_size == "8m" and a.load_warmup is None


def test_a_fill_sets_the_keys_the_script_reads_unless_they_are_given():
    # get-random.lua reads a million keys by default: after --fill 10000 only 1% of its reads would find one
    from perflab.cli import build_parser, options, parse

    def load(*argv):
        return options.load(parse(build_parser(), ["breakpoint", "--no-project", *argv]))

    assert load("-s", "get-random.lua", "--fill", "10000").script_arg("keys") == "10000"
    assert load("-s", "get-random.lua", "--prefill", "500").script_arg("keys") == "500"
    # a sequential script counts within the filled keys
    assert load("-s", "get.lua", "--fill", "300").script_arg("count") == "300"
    # what is given wins, and no fill leaves the script's default
    assert load("-s", "get-random.lua", "--fill", "10000", "--", "keys=50").script_args == ("keys=50",)
    assert load("-s", "get-random.lua").script_arg("keys") is None
    # a script with no key space gets nothing
    assert load("-s", "status.lua", "--fill", "100").script_args == ()
