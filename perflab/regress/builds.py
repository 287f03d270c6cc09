"""Each commit as a side of a comparison, built apart and cached; the working tree is never touched.

* The built-in server (no ``repo``, or a repository without a project file: a perflab checkout): the
  commit's ``java-server/`` built with Gradle (:func:`perflab.ab.sides.build_commit`, ``PERFLAB_AB_BUILD``
  replaces the command), run with the shared configuration, as ``perflab ab --a-commit`` does.
* Your repository (``repo`` with a ``perflab.toml``): the whole commit exported into
  ``<data root>/builds/<sha>-<build hash>/tree``, built there with ``build`` (or the project file's
  ``[server] build``), and run as that commit's project file declares it, its paths resolved inside the
  exported tree (a course server's ``course = "build/classes/java/main"`` is that commit's build output). A
  commit without the file uses the working tree's copy, read in the commit's tree.

A commit that cannot be exported or built raises :class:`~perflab.ab.sides.BuildError` naming it, with the
build log's tail (a bisection skips it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from .. import children, paths
from ..ab.sides import BuildError, Commit, build_commit, export, run_build
from ..config import ServerConfig
from ..config.project import Project, build_command
from ..config.regress import RepoParams
from .commits import Revision, holds

#: what marks a tree whose build finished (its content: the build command)
_BUILT = ".perflab-built"


class Builds:
    """The commits of one repository as sides (see the module docstring): ``repo`` says whose, ``server`` is
    the built-in server's configuration (its other fields), ``cache`` where builds are kept."""

    def __init__(self, repo: RepoParams, server: ServerConfig, cache: Path):
        if not isinstance(repo, RepoParams):
            raise ValueError(f"repo must be a RepoParams, got {type(repo).__name__}")
        if not isinstance(server, ServerConfig):
            raise ValueError(f"server must be a ServerConfig (the built-in server's fields), got "
                             f"{type(server).__name__}")
        self.params = repo
        self.path = Path(repo.repo).resolve() if repo.repo else paths.repo_root()
        if not (self.path / ".git").exists():
            raise ValueError(f"repo: {self.path} is not a git repository")
        self.server = server
        self.cache = Path(cache)
        # yours when it declares a server (in the working tree, or in HEAD); else a perflab checkout
        self.yours = repo.repo is not None and ((self.path / repo.project).is_file()
                                                or holds(self.path, "HEAD", repo.project))

    @property
    def what(self) -> str:
        """Whose server it is, in words."""
        return f"your server ({self.path}, {self.params.project})" if self.yours else \
            f"the built-in server ({self.path / 'java-server'})"

    def to_dict(self) -> dict:
        return {"repo": str(self.path), "yours": self.yours, "project": self.params.project if self.yours else None,
                "build": self.params.build}

    def side(self, rev: Revision):
        """``rev`` built (or found in the cache) as what :func:`perflab.compare_ab` takes for a side."""
        what = f"commit {rev.short}"
        if not self.yours:
            build_commit(rev.sha, self.cache, self.path, what=what)
            return Commit(rev.sha, self.server, repo=str(self.path))
        tree = self._built_tree(rev, what)
        try:
            project = Project.load(tree / self.params.project)
        except ValueError as e:
            raise BuildError(f"{what}: its {self.params.project} does not declare a server perflab can run: {e}") \
                from None
        return project.server.replace(label=f"{what} ({project.name})")

    def _built_tree(self, rev: Revision, what: str) -> Path:
        """The commit's tree, exported and built once per build command (``cache/<sha>-<hash>/tree``)."""
        command = self.params.build
        key = hashlib.sha256((command or "").encode()).hexdigest()[:8]
        home = self.cache / f"{rev.sha}-{key}"
        tree = home / "tree"
        if (tree / _BUILT).is_file():
            return tree
        home.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="build-", dir=home))
        try:
            export(self.path, rev.sha, work, what=what)
            declared = work / self.params.project
            if not declared.is_file():   # the working tree's declaration, read in this commit's tree
                mine = self.path / self.params.project
                if not mine.is_file():
                    raise BuildError(f"{what}: no {self.params.project} in the commit nor in the working tree "
                                     f"({self.path}) to say how to run the server")
                shutil.copyfile(mine, declared)
            try:
                command = command or build_command(declared)
            except ValueError as e:
                raise BuildError(f"{what}: {e}") from None
            log = home / "build.log"
            if command:
                rc = run_build(command, work, log)
                if rc != 0:
                    raise BuildError(f"{what} cannot be built: `{command}` exited with status {rc} (log: {log})",
                                     children.tail(log))
            (work / _BUILT).write_text((command or "") + "\n")
            try:
                os.rename(work, tree)
            except OSError:
                if not (tree / _BUILT).is_file():   # not a concurrent build of the same commit that won
                    raise
            return tree
        finally:
            shutil.rmtree(work, ignore_errors=True)
