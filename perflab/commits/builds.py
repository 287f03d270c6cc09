"""Servers at commits, each built apart once and kept: the one build cache, ``<data root>/builds/``.

A commit is exported with ``git archive`` into a directory of its own and built there; the working tree and
the repository's own build are never touched, and a commit that cannot be exported or built raises
:class:`~perflab.errors.BuildError` naming it, with the build log's tail, before any load is sent.

* :class:`Commit` -- the built-in server at a git commit (``perflab ab --a-commit``): the commit's
  ``java-server/`` built with Gradle (``PERFLAB_AB_BUILD`` replaces the command) into
  ``builds/<sha>/perflab-server`` (:meth:`BuildCache.server`).
* :class:`Builds` -- the commits of one repository as what a comparison takes for a side: the built-in
  server's (a perflab checkout: a :class:`Commit`), or your repository's (one with a ``perflab.toml``): the
  whole commit exported into ``builds/<sha>-<build hash>/tree``, built there with ``build`` (or the project
  file's ``[server] build``), and run as that commit's project file declares it, its paths resolved inside the
  exported tree (a course server's ``course = "build/classes/java/main"`` is that commit's build output). A
  commit without the file uses the working tree's copy, read in the commit's tree (:meth:`BuildCache.tree`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import children, paths
from ..config import ServerConfig
from ..config.project import Project, build_command
from ..config.regress import RepoParams
from ..errors import BuildError
from .git import Revision, export, holds

#: replaces the build command of a commit (a shell command, run in the commit's exported java-server/)
BUILD_ENV = "PERFLAB_AB_BUILD"
BUILD_COMMAND = "gradle --console=plain --no-daemon -q installDist"
#: where a build leaves the server, relative to java-server/ (docs/contracts/server.md section 1)
INSTALL = Path("build/install/perflab-server")
#: what marks the built-in server's install directory built from a commit (its content: the commit)
BUILT_SERVER = ".built"
#: what marks your repository's tree whose build finished (its content: the build command)
_BUILT_TREE = ".perflab-built"


@dataclass(frozen=True)
class Commit:
    """The built-in server at git commit ``rev`` (any name git resolves: a hash, a tag, ``HEAD~1``) of
    ``repo`` (default: this checkout), run with ``config`` (its other fields as any built-in configuration)."""

    rev: str
    config: ServerConfig = field(default_factory=ServerConfig)
    repo: str | None = None

    def __post_init__(self):
        if not isinstance(self.rev, str) or not self.rev.strip():
            raise ValueError(f"commit: expected a git revision (hash, tag, branch), got {self.rev!r}")
        if not isinstance(self.config, ServerConfig):
            raise ValueError(f"commit config: must be a ServerConfig, got {type(self.config).__name__}")
        if self.repo is not None and not (Path(self.repo) / ".git").exists():
            raise ValueError(f"commit repo: {self.repo} is not a git repository")


def built_commit(install) -> str | None:
    """The commit the built-in server's ``install`` directory was built from (:meth:`BuildCache.server` marks it),
    ``None`` for any other build."""
    try:
        sha = (Path(install) / BUILT_SERVER).read_text().strip()
    except OSError:
        return None
    return sha if re.fullmatch(r"[0-9a-f]{40}", sha) else None


def run_build(command: str, cwd: Path, log: Path, timeout_s: float = 1800) -> int:
    """Run the shell ``command`` in ``cwd`` with its output in ``log`` (its process group stopped on any
    interruption); its exit status."""
    with open(log, "wb") as out:
        out.write(f"# {command} (in {cwd})\n".encode())
        out.flush()
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        children.register(proc)
        try:
            rc = proc.wait(timeout=timeout_s)
        except BaseException:
            children.kill_group(proc, 2)
            raise
        children.unregister(proc)
    return rc


def _build(command: str, cwd: Path, log: Path, who: str) -> None:
    rc = run_build(command, cwd, log)
    if rc != 0:
        raise BuildError(f"{who} cannot be built: `{command}` exited with status {rc} (log: {log})", children.tail(log))


class BuildCache:
    """The builds of commits under ``root`` (``<data root>/builds``), each made once in a directory of its own
    and renamed into place when it finished (two processes building one commit at once: one of them wins)."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _once(self, home: Path, name: str, marker: str, make: Callable[[Path, Path], tuple[Path, str]]) -> Path:
        """``home/name``, made once: ``make(work, log)`` builds in a fresh directory under ``home`` and returns
        the directory that becomes ``home/name`` and what its ``marker`` file says."""
        done = home / name
        if (done / marker).is_file():
            return done
        home.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="build-", dir=home))
        try:
            built, stamp = make(work, home / "build.log")
            (built / marker).write_text(stamp + "\n")
            try:
                os.rename(built, done)
            except OSError:
                if not (done / marker).is_file():  # not a concurrent build of the same commit that won
                    raise
            return done
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def server(self, sha: str, repo: Path | None = None, what: str = "commit") -> Path:
        """The install directory of the built-in server at commit ``sha`` of ``repo`` (default: this checkout),
        built once into ``<sha>/perflab-server``."""
        repo = repo or paths.repo_root()

        def make(work: Path, log: Path) -> tuple[Path, str]:
            export(repo, sha, work, "java-server", what)
            src = work / "java-server"
            _build(os.environ.get(BUILD_ENV) or BUILD_COMMAND, src, log, f"{what} {sha[:12]}")
            if not any((src / INSTALL / "lib").glob("*.jar")):
                raise BuildError(
                    f"{what} {sha[:12]} cannot be built: the build left no {INSTALL}/lib/*.jar (log: {log})",
                    children.tail(log),
                )
            return src / INSTALL, sha

        return self._once(self.root / sha, "perflab-server", BUILT_SERVER, make)

    def tree(self, sha: str, repo: Path, project: str, command: str | None, what: str) -> Path:
        """Commit ``sha`` of ``repo`` exported whole and built with ``command`` (or its ``project`` file's
        ``[server] build``), once per command, into ``<sha>-<hash of the command>/tree``."""
        key = hashlib.sha256((command or "").encode()).hexdigest()[:8]

        def make(work: Path, log: Path) -> tuple[Path, str]:
            export(repo, sha, work, what=what)
            declared = work / project
            if not declared.is_file():  # the working tree's declaration, read in this commit's tree
                mine = repo / project
                if not mine.is_file():
                    raise BuildError(
                        f"{what}: no {project} in the commit nor in the working tree ({repo}) to say "
                        f"how to run the server"
                    )
                shutil.copyfile(mine, declared)
            try:
                build = command or build_command(declared)
            except ValueError as e:
                raise BuildError(f"{what}: {e}") from None
            if build:
                _build(build, work, log, what)
            return work, build or ""

        return self._once(self.root / f"{sha}-{key}", "tree", _BUILT_TREE, make)


class Builds:
    """The commits of one repository as sides (see the module docstring): ``repo`` says whose, ``server`` is
    the built-in server's configuration (its other fields), ``cache`` where builds are kept."""

    def __init__(self, repo: RepoParams, server: ServerConfig, cache: Path):
        if not isinstance(repo, RepoParams):
            raise ValueError(f"repo must be a RepoParams, got {type(repo).__name__}")
        if not isinstance(server, ServerConfig):
            raise ValueError(
                f"server must be a ServerConfig (the built-in server's fields), got {type(server).__name__}"
            )
        self.params = repo
        self.path = Path(repo.repo).resolve() if repo.repo else paths.repo_root()
        if not (self.path / ".git").exists():
            raise ValueError(f"repo: {self.path} is not a git repository")
        self.server = server
        self.cache = BuildCache(cache)
        # yours when it declares a server (in the working tree, or in HEAD); else a perflab checkout
        self.yours = repo.repo is not None and (
            (self.path / repo.project).is_file() or holds(self.path, "HEAD", repo.project)
        )

    @property
    def what(self) -> str:
        """Whose server it is, in words."""
        return (
            f"your server ({self.path}, {self.params.project})"
            if self.yours
            else f"the built-in server ({self.path / 'java-server'})"
        )

    def to_dict(self) -> dict:
        return {
            "repo": str(self.path),
            "yours": self.yours,
            "project": self.params.project if self.yours else None,
            "build": self.params.build,
        }

    def side(self, rev: Revision):
        """``rev`` built (or found in the cache) as what :func:`perflab.compare_ab` takes for a side."""
        what = f"commit {rev.short}"
        if not self.yours:
            self.cache.server(rev.sha, self.path, what=what)
            return Commit(rev.sha, self.server, repo=str(self.path))
        tree = self.cache.tree(rev.sha, self.path, self.params.project, self.params.build, what)
        try:
            project = Project.load(tree / self.params.project)
        except ValueError as e:
            raise BuildError(
                f"{what}: its {self.params.project} does not declare a server perflab can run: {e}"
            ) from None
        return project.server.replace(label=f"{what} ({project.name})")
