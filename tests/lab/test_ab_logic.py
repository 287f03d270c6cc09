"""perflab ab without a server: the interleaved design, the sides (labels, identical, commits built apart
from the working tree), and bad input refused by name before anything starts or is recorded."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from support import REPO

from perflab import ABParams, Commit, LoadParams, PrefillParams, ServerConfig, SessionOptions, compare_ab, paths
from perflab.ab import SideError, design, sides
from perflab.cli import main
from perflab.commits.builds import BUILD_ENV, BuildCache
from perflab.config import ForeignServer
from perflab.errors import BuildError
from perflab.records import list_runs
from perflab.targets import target_of


def test_blocks_alternate_and_balance_positions():
    assert [design.block_order(i) for i in range(4)] == ["ABBA", "BAAB", "ABBA", "BAAB"]
    for order in design.ORDERS:
        # each side's mean position in the block is the same: a linear drift weighs on both alike
        assert sum(i for i, s in enumerate(order) if s == "A") == sum(i for i, s in enumerate(order) if s == "B")
    p0, p1 = design.pairs_of("ABBA")
    assert (p0.a_pos, p0.b_pos, p0.first) == (0, 1, "A") and (p1.a_pos, p1.b_pos, p1.first) == (3, 2, "B")
    firsts = [p.first for b in range(4) for p in design.pairs_of(design.block_order(b))]
    assert firsts.count("A") == firsts.count("B")  # who goes first within a pair is balanced too
    seq = design.side_sequence()
    assert "".join(next(seq) for _ in range(8)) == "ABBABAAB"
    with pytest.raises(ValueError, match="two A and two B"):
        design.pairs_of("AABB ")
    with pytest.raises(ValueError, match="not a pair"):
        design.pairs_of("AABB")


def test_labels_tell_the_sides_apart_in_their_flags_words():
    a = sides.Side("A", ServerConfig(mode="async", workers=1, debug_delay="4ms"))
    b = sides.Side("B", ServerConfig(mode="async", workers=4, debug_delay="5ms"))
    sides.label((a, b))
    assert (a.label, b.label) == ("workers=1 debug_delay=4ms", "workers=4 debug_delay=5ms")
    same = (sides.Side("A", ServerConfig(backend="memory")), sides.Side("B", ServerConfig(backend="memory")))
    sides.label(same)
    assert (same[0].label, same[1].label) == ("A: backend=memory", "B: backend=memory")
    assert sides.identical(*same) and not sides.identical(a, b)
    f = (sides.Side("A", ForeignServer(command="java Tiny.java {port}")), sides.Side("B", ServerConfig()))
    sides.label(f)
    assert f[0].label == "Tiny.java" and not f[0].builtin and f[0].spec.why_not("pause") is None
    assert "only a server process perflab started" in sides.Side(
        "A", ForeignServer(url="http://127.0.0.1:1")
    ).spec.why_not("pause")


def test_bad_input_is_named_before_anything_starts(data_root):
    load = LoadParams(rate=100)
    mem = ServerConfig(backend="memory")
    cases = [
        (dict(a=mem, b="nonsense"), "url: expected http://HOST:PORT"),
        (dict(a=mem, b=42), "B: expected a ServerConfig, a ForeignServer"),
        (dict(a=mem, b=mem, rates=[100, 0]), "rates[1]: must be > 0"),
        (dict(a=mem, b=mem, rates=[100, 100]), "rates: each rate once"),
        (
            dict(a=mem, b=mem, rates=[100], search=__import__("perflab").BreakpointParams()),
            "rates and search are exclusive",
        ),
        (
            dict(a=mem, b=mem, prefill=PrefillParams(keys=10)),
            "prefill: side A (A: backend=memory): needs a persistent backend (lsm or rocksdb); backend='memory'",
        ),
        (
            dict(a=ForeignServer(command="x {port}"), b=ServerConfig(), prefill=PrefillParams(keys=10)),
            "prefill: side A (x): it writes the built-in server's storage files; fill writes keys through your server's API (fill=N, --fill N)",
        ),
        (dict(a=mem, b=mem, session=SessionOptions(data_dir="/tmp/x")), "data_dir: an A/B comparison gives each side"),
        (
            dict(a=mem, b=mem, session=SessionOptions(scheduler="tcp://10.0.0.1:8786", generators=2)),
            "scheduler, generators: an A/B comparison runs both servers and the generator on this machine",
        ),
        (
            dict(a=mem, b="http://127.0.0.1:1", params=ABParams(restart_per_block=True)),
            "restart_per_block: side B (http://127.0.0.1:1): a server that is already running",
        ),
        (dict(a=mem, b=mem, params="fast"), "params must be a ABParams"),
        (dict(a=Commit("no-such-revision-xyz"), b=mem), "A (--a-commit): 'no-such-revision-xyz' is not a commit"),
    ]
    for kw, message in cases:
        with pytest.raises(ValueError) as e:
            compare_ab(kw.pop("a"), kw.pop("b"), load, progress=False, **kw)
        assert message in str(e.value), (kw, str(e.value))
    with pytest.raises(ValueError, match="warmup: must not be longer than the probe's window"):
        ABParams(probe_duration=0.5, warmup=1)
    with pytest.raises(ValueError, match="min_pairs: must be <= max_pairs"):
        ABParams(min_pairs=40, max_pairs=32)
    assert list_runs(data_root).empty  # nothing started, nothing recorded


def test_cli_bad_input_exits_2_naming_it(data_root, capsys):
    cases = [
        (
            ["--backend", "memory", "--b-mode", "turbo"],
            "side B: mode: --mode: expected one of sync, async, virtual, got 'turbo'",
        ),
        (
            ["--a-server-cmd", "x {port}", "--a-workers", "3"],
            "--workers: option of the built-in server; side A is your server",
        ),
        (["--a-commit", "HEAD", "--a-server-cmd", "x {port}"], "--a-commit and --a-server-cmd/--a-url: give one"),
        (["--a-ready-path", "/x"], "--ready-path: only with --a-server-cmd or --a-url"),
        (["--backend", "memory", "-R", "100,0"], "rates[1]: must be > 0, got '0'"),
        (["--backend", "memory", "--max-probes", "4"], "--max-probes: only with --breakpoint"),
        (["--backend", "memory", "--breakpoint", "-R", "100"], "-R/--rate: a breakpoint comparison searches the rates"),
        (["--backend", "memory", "--pairs", "500"], "max_pairs: must be between 2 and 128, got '500'"),
        (
            ["--backend", "memory", "--prefill", "100"],
            "prefill: side A (A: backend=memory): needs a persistent backend",
        ),
        (["--a-commit", "no-such-revision-xyz"], "'no-such-revision-xyz' is not a commit"),
    ]
    with pytest.raises(SystemExit):  # no host flags: both sides run on this machine
        main(["ab", "--backend", "memory", "--scheduler", "tcp://10.0.0.1:8786"])
    assert "unrecognized arguments: --scheduler" in capsys.readouterr().err
    for args, message in cases:
        assert main(["ab", *args]) == 2, args
        assert message in capsys.readouterr().err, args
    assert list_runs(data_root).empty


def _git(*args):
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def test_a_commit_is_built_in_its_own_directory_and_the_working_tree_is_untouched(tmp_path, monkeypatch):
    # The build command is replaced (PERFLAB_AB_BUILD): a real Gradle build takes minutes; what is tested
    # here is where it runs, what it may touch, and what a failure says. The stand-in copies this
    # checkout's build into the exported tree, where the real one would compile it.
    status, head = _git("status", "--porcelain"), _git("rev-parse", "HEAD").strip()
    worktrees = _git("worktree", "list")
    install = paths.server_install_dir()
    monkeypatch.setenv(BUILD_ENV, f"test -f build.gradle && mkdir -p build/install && cp -r {install} build/install/")
    built = BuildCache(tmp_path / "builds").server(head)
    assert built == tmp_path / "builds" / head / "perflab-server" and any((built / "lib").glob("*.jar"))
    assert "test -f build.gradle" in (tmp_path / "builds" / head / "build.log").read_text()
    side = sides.make_side("A", Commit("HEAD", ServerConfig(backend="memory")), tmp_path / "builds")
    assert side.commit == head and side.target.install_dir == str(built.resolve()) and side.target.backend == "memory"
    target = target_of(Commit("HEAD"), builds=tmp_path / "builds")  # a commit is a target: the built-in server, built
    assert (target.kind, target.commit, target.version_commit()) == ("built-in", head, head) and target.prefills
    monkeypatch.setenv(BUILD_ENV, "exit 7")  # cached: a second use does not build again
    assert BuildCache(tmp_path / "builds").server(head) == built
    parent = _git("rev-parse", "HEAD~1").strip()
    monkeypatch.setenv(BUILD_ENV, "echo compiling; echo 'error: cannot find symbol' >&2; exit 7")
    with pytest.raises(BuildError) as e:
        BuildCache(tmp_path / "builds").server(parent, what="B (--b-commit)")
    assert f"B (--b-commit) {parent[:12]} cannot be built" in str(e.value) and "exited with status 7" in str(e.value)
    assert "error: cannot find symbol" in str(e.value)  # the log's tail comes with the error
    assert not list((tmp_path / "builds" / parent).glob("build-*"))  # the exported tree is removed
    assert _git("status", "--porcelain") == status and _git("rev-parse", "HEAD").strip() == head
    assert _git("worktree", "list") == worktrees


def test_identical_sides_warn_and_a_claim_impossible_with_too_few_pairs_warns(server_build, data_root):
    # both warnings come before anything starts; the side that then fails to start ends the run (its
    # record is tests/lab/test_ab_server.py's)
    bad = ServerConfig(backend="memory", extra_args=("--selectors", "0"))
    with warnings.catch_warnings(record=True) as caught, pytest.raises(SideError):
        warnings.simplefilter("always")
        compare_ab(bad, bad, LoadParams(rate=100), params=ABParams(max_pairs=16, min_pairs=8), progress=False)
    texts = [str(w.message) for w in caught]
    assert any("A and B are the same configuration: this is an A/A comparison" in t for t in texts), texts
    assert any("with at most 16 pairs no difference can be claimed" in t for t in texts), texts


def test_cli_help_derives_each_sides_flags_from_server_config():
    import dataclasses

    from perflab.config.fields import cli_flag

    out = subprocess.run(
        [sys.executable, "-m", "perflab", "ab", "--help"], cwd=REPO, capture_output=True, text=True, timeout=120
    ).stdout
    for f in dataclasses.fields(ServerConfig):
        flag = cli_flag(f)
        if flag and f.name not in ("host", "port"):
            for side in ("a", "b"):
                assert f"--{side}-{flag[2:]}" in out, (side, flag)
    for flag in (
        "--a-commit",
        "--b-server-cmd",
        "--pairs",
        "--budget",
        "--restart-per-block",
        "--idle-pairs",
        "--breakpoint",
        "--metric",
        "--alpha",
        "--margin",
    ):
        assert flag in out, flag
