"""Synthetic git histories of a server with a known CPU cost per request, made in a directory of their own:
cheap to "build" (nothing to compile), real to measure. Notebook 09 makes one by default (the lab checked
against a change it planted), the tests and ``scripts/regress_benchmark.py`` make theirs.

A *declared* history (:func:`declared`) is "your repository": each commit holds a ``perflab.toml`` whose
command runs this checkout's built server JVM with ``--debug-work-ns $(cat work-ns)`` (each request spins
until its thread has used that many nanoseconds of CPU), so a commit that raises ``work-ns`` makes the
server's CPU per request higher by exactly that much. A *built-in* history (:func:`builtin`) is a perflab
checkout's ``java-server/`` whose "build" (``PERFLAB_AB_BUILD``) links this checkout's build.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import paths
from ..commits.git import git as run_git


def git(repo: Path, *args: str) -> str:
    """``git ARGS`` in a synthetic history (its commits authored by "perflab"); its output, an error on failure."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "perflab",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "perflab",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    return run_git(repo, *args, check=True, env=env).stdout


def _init(repo: Path) -> Path:
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


#: the tests' server: small, quick to start, little background CPU (no events, no GC event stream)
TEST_JVM = "-Xmx128m -Xms128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
TEST_SERVER = "--backend memory --mode sync --selectors 1 --events off --gc-events off"


def project_file(install: Path, jvm: str = TEST_JVM, server: str = TEST_SERVER) -> str:
    """The declaration: the built server (``jvm`` flags, ``server`` flags) on a free port, with the commit's
    ``work-ns`` nanoseconds of CPU per request."""
    cmd = (
        f"java {jvm} -cp '{install}/lib/*' perflab.server.Main --port {{port}} {server} --debug-work-ns $(cat work-ns)"
    )
    return (
        'label = "planted"\n[server]\n'
        f'command = "sh -c \\"exec {cmd}\\""\n'
        'ready_path = "/v0/status"\nbuild = "test -f work-ns"\n'
    )


def declared(
    root: Path, costs: list[int], broken: tuple[int, ...] = (), jvm: str = TEST_JVM, server: str = TEST_SERVER
) -> Path:
    """A repository of ``len(costs)`` commits (the first is GOOD): commit ``i`` burns ``costs[i]`` us of CPU
    per request; commits in ``broken`` do not build (their ``work-ns`` is missing, which the build checks);
    ``jvm``, ``server``: the server's flags (:func:`project_file`)."""
    repo = _init(root / "yours")
    (repo / "perflab.toml").write_text(project_file(paths.server_install_dir(), jvm, server))
    for i, cost in enumerate(costs):
        (repo / "notes.txt").write_text(f"step {i}\n")
        work = repo / "work-ns"
        if i in broken:
            work.unlink(missing_ok=True)
        else:
            work.write_text(f"{round(cost * 1000)}\n")
        git(repo, "add", "-A")
        git(
            repo,
            "commit",
            "-q",
            "-m",
            f"step {i}: {cost} us of work per request" + (" (broken)" if i in broken else ""),
        )
    return repo


def builtin(root: Path, commits: int) -> tuple[Path, str]:
    """A perflab checkout's history of ``commits`` commits that change only a tiny file of ``java-server/``,
    and the ``PERFLAB_AB_BUILD`` command that "builds" each one as links to this checkout's server build."""
    repo = _init(root / "checkout")
    (repo / "java-server").mkdir()
    for i in range(commits):
        (repo / "java-server" / "VERSION").write_text(f"{i}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"server step {i}")
    install = paths.server_install_dir()
    build = f"mkdir -p build/install && cp -rs '{install}' build/install/perflab-server"
    return repo, build
